package dev.threadpool;

/**
 * Memory of the whole process, from {@link ThreadPool#processMemory()}. A value the platform could not provide
 * is {@code -1}.
 *
 * <table>
 *   <caption>Sources</caption>
 *   <tr><th>platform</th><th>resident / virtual</th><th>peak resident</th><th>status</th></tr>
 *   <tr><td>Linux</td><td>{@code /proc/self/statm} x page size ({@code sysconf(_SC_PAGESIZE)} via jnr-posix)</td>
 *       <td>{@code getrusage(RUSAGE_SELF).ru_maxrss} (KiB) via jnr-ffi</td><td>tested</td></tr>
 *   <tr><td>macOS</td><td>{@code task_info(MACH_TASK_BASIC_INFO)} via jnr-ffi</td>
 *       <td>{@code ru_maxrss} (bytes on macOS)</td><td>written, untested</td></tr>
 *   <tr><td>Windows</td><td>{@code K32GetProcessMemoryInfo}: WorkingSetSize / PagefileUsage (private
 *       commit, the closest to "virtual")</td><td>PeakWorkingSetSize</td><td>written, untested</td></tr>
 * </table>
 *
 * @param residentBytes     resident set size now, bytes
 * @param peakResidentBytes the largest resident set size so far, bytes, never below {@code residentBytes} of
 *                          the same snapshot (on Linux the kernel's lazily updated high-water mark, raised to
 *                          the resident figure when it lags: two snapshots' peaks can differ by a few pages)
 * @param virtualBytes      virtual size now, bytes (Windows: committed private bytes)
 * @param source            where the figures came from, e.g. {@code "linux: /proc/self/statm + getrusage"}
 */
public record ProcessMemory(long residentBytes, long peakResidentBytes, long virtualBytes, String source) {}
