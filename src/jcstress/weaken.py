#!/usr/bin/env python3
"""Weakens one memory-ordering access at a time in a scratch clone and runs that row's detectors (issue 46).

The measurement behind docs/TESTING.md, "Weakened orderings". For each row of ROWS: the access is weakened by
one step in the clone's source (a full fence removed, release or acquire to plain, a CAS or an atomic
read-modify-write to a plain load and store), that one file is recompiled into the clone's target/classes,
and then
  * the ordering pin (OrderingPinTest, through surefire) runs once: it is deterministic;
  * each jcstress detector of the row runs with CI's tuned options (pom.xml, jcstress.tuned) and -f FORKS:
    every fork is one CI try, so "caught 20/20" means the forbidden outcome showed up in each of 20 forks.
The file is then restored and recompiled. Run from anywhere; never run it in a working tree you use:

  d=$(mktemp -d) && git clone -q <repo> "$d/wk" && (cd "$d/wk" && mvn -B -q -o -DskipTests test-compile)
  python3 src/jcstress/weaken.py "$d/wk" [--forks 20] [row ids...]
  python3 src/jcstress/weaken.py "$d/wk" --sweep     # every non-plain access of the pinned files, pin only
"""
import argparse
import os
import re
import subprocess
import sys
import time

JAVA = None  # set in main: the JDK 25 java of the clone's src/exec/java25.sh
TUNED = "-f 1 -iters 1 -time 1500 -sc false -jvmArgs -Xmx256m"  # as pom.xml's jcstress.tuned (minus -f)
FLAGS = ["--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"]

Q = "src/main/java/dev/threadpool/internal/queue/"
S = "src/main/java/dev/threadpool/internal/scheduler/"

# id, file, a substring that picks exactly one line, old text in that line, new text, jcstress detectors
ROWS = [
    ("deque-take-fence", Q + "WorkDeque.java", "        VarHandle.fullFence();\n        long t = Mem.getLongOpaqueAt",
     "VarHandle.fullFence();", "/* weakened */", ["WorkDequeTest.TakeVsTwoSteals"]),
    ("deque-take-cas", Q + "WorkDeque.java", "if (!Mem.casLongAt(c, cAddr, Layout.TOP_OFFSET, t, t + 1)) {\n                x =",
     "Mem.casLongAt", "dev.threadpool.internal.memory.PlainRmw.casLongAt", ["WorkDequeTest.LastItemTakeVsSteal"]),
    ("deque-steal-cas", Q + "WorkDeque.java", "if (!Mem.casLongAt(c, cAddr, Layout.TOP_OFFSET, t, t + 1)) {\n            return ABORT",
     "Mem.casLongAt", "dev.threadpool.internal.memory.PlainRmw.casLongAt", ["WorkDequeTest.TwoThievesOneItem"]),
    ("deque-steal-fence", Q + "WorkDeque.java", "        VarHandle.fullFence();\n        // acquire: pairs with push",
     "VarHandle.fullFence();", "/* weakened */", ["WorkDequeTest.TakeVsTwoSteals"]),
    ("deque-push-release", Q + "WorkDeque.java", "        VarHandle.releaseFence();\n        Mem.setLongOpaqueAt(c, cAddr, Layout.BOTTOM",
     "VarHandle.releaseFence();", "/* weakened */", ["WorkDequeTest.StealSeesPushedValue"]),
    ("deque-steal-bottom-acquire", Q + "WorkDeque.java", "long b = Mem.getLongAcquireAt(c, cAddr, Layout.BOTTOM_OFFSET);",
     "getLongAcquireAt", "getLongPlainAt", []),
    ("deque-grow-release", Q + "WorkDeque.java", "Mem.setLongReleaseAt(ctl, ctlAddr, Layout.ARRAY_OFFSET, g + 1);",
     "setLongReleaseAt", "setLongPlainAt", []),
    ("ring-pop-cas", Q + "RingQueue.java", "            if (Mem.casLongAt(s, a, Layout.HEAD_OFFSET, h, h + 1)) {",
     "Mem.casLongAt", "dev.threadpool.internal.memory.PlainRmw.casLongAt", ["RingQueueTest.LastEntryPopVsSteal"]),
    ("ring-steal-cas", Q + "RingQueue.java", "            if (Mem.casLong(s, Layout.HEAD_OFFSET, h, h + 1)) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["RingQueueTest.TwoThievesOneEntry"]),
    ("ring-stealhalf-cas", Q + "RingQueue.java", "            if (Mem.casLong(s, Layout.HEAD_OFFSET, h, h + n)) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["RingQueueTest.TwoStealHalves"]),
    ("ring-push-release", Q + "RingQueue.java", "Mem.setLongReleaseAt(",
     "setLongReleaseAt", "setLongPlainAt", []),
    ("bounded-push-cas", Q + "BoundedRing.java", "if (Mem.casLong(s, Layout.TAIL_OFFSET, pos, pos + 1)) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["BoundedRingTest.TwoProducers"]),
    ("bounded-pop-cas", Q + "BoundedRing.java", "if (Mem.casLongAt(seg, base, Layout.HEAD_OFFSET, pos, pos + 1)) {",
     "Mem.casLongAt", "dev.threadpool.internal.memory.PlainRmw.casLongAt", ["BoundedRingTest.LastEntryTwoConsumers"]),
    ("bounded-publish-release", Q + "BoundedRing.java", "    private void publish(",
     None, None, []),
    ("batches-take-cas", Q + "CarriedBatches.java", "if (Mem.casLong(seg, off, s, s + 1)) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["CarriedBatchesTest.OwnerTakeVsThief"]),
    ("batches-refill-publish", Q + "CarriedBatches.java", "Mem.getAndSetLong(seg, off, state(gen(s) + 1, n, 1));",
     "Mem.getAndSetLong(seg, off, state(gen(s) + 1, n, 1));", "Mem.setLongRelease(seg, off, state(gen(s) + 1, n, 1));",
     ["CarriedBatchesTest.RefillVsIdleRecheck"]),
    ("lifo-take-getandset", Q + "LifoSlot.java", "return Mem.getAndSetLong(seg, off, QueueEntry.EMPTY);",
     "Mem.getAndSetLong", "dev.threadpool.internal.memory.PlainRmw.getAndSetLong", ["LifoSlotTest.TwoTakes"]),
    ("lifo-put-getandset", Q + "LifoSlot.java", "return Mem.getAndSetLong(seg, offset(slot), entry);",
     "Mem.getAndSetLong", "dev.threadpool.internal.memory.PlainRmw.getAndSetLong", ["LifoSlotTest.PutVsTake", "WorkStealingParkTest.LifoPutVsPark"]),
    ("freelist-pop-cas", S + "Freelist.java", "            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, next))) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["DescriptorTableTest.LastSlotTwoAcquirers"]),
    ("freelist-push-cas", S + "Freelist.java", "            if (Mem.casLong(h, Layout.FREE_HEAD_OFFSET, top, head((int) (top >>> 32) + 1, idx))) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["DescriptorTableTest.TwoReleases"]),
    ("table-start-cas", S + "DescriptorTable.java", "} else if (!Mem.casLong(table, d, c, (c & ~STATE_MASK) | RUNNING)) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["DescriptorTableTest.StartVsCancel"]),
    ("table-cancel-cas", S + "DescriptorTable.java", "if (Mem.casLong(table, d, c, (c & ~STATE_MASK) | CANCELLED)) {",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["DescriptorTableTest.StartVsCancel"]),
    ("park-announce", S + "ParkingLot.java", "Mem.getAndOrLong(seg, Layout.IDLE_MASK_OFFSET, 1L << i);",
     "Mem.getAndOrLong", "dev.threadpool.internal.memory.PlainRmw.getAndOrLong", ["ParkHandshakeTest.SubmitVsPark"]),
    ("park-wake-claim", S + "ParkingLot.java", "long prev = Mem.getAndAndLong(s, Layout.IDLE_MASK_OFFSET, ~bit);\n",
     "Mem.getAndAndLong", "dev.threadpool.internal.memory.PlainRmw.getAndAndLong", ["ParkHandshakeTest.TwoWakersOneSleeper"]),
    ("ws-signal-fence", S + "WorkStealingScheduler.java", "        VarHandle.fullFence();\n        wake.signalWork();",
     "VarHandle.fullFence();", "/* weakened */", []),
    ("ws-chain-fence", S + "WorkStealingScheduler.java", "        VarHandle.fullFence();\n        wake.wakeOneIfIdle();",
     "VarHandle.fullFence();", "/* weakened */", []),
    ("join-complete", S + "JoinDeques.java", "long old = Mem.getAndSetLong(words, Layout.word(idx), DONE);",
     "Mem.getAndSetLong", "dev.threadpool.internal.memory.PlainRmw.getAndSetLong", ["JoinProtocolTest.CompletionVsPark"]),
    ("join-mark-parked", S + "JoinDeques.java", "return Mem.casLong(words, Layout.word(idx), seen, seen | PARKED);",
     "Mem.casLong", "dev.threadpool.internal.memory.PlainRmw.casLong", ["JoinProtocolTest.CompletionVsPark"]),
    ("join-mark-stolen", S + "JoinDeques.java", "Mem.setLongRelease(words, Layout.word(idx), stolen(thief));",
     "setLongRelease", "setLongPlain", []),
    ("join-word-acquire", S + "JoinDeques.java", "return Mem.getLongAcquire(words, Layout.word(idx));",
     "getLongAcquire", "getLongPlain", []),
]

# CAS and read-modify-write weakened to a plain load and a plain store (compiled into the clone only).
PLAIN_RMW = """package dev.threadpool.internal.memory;

import java.lang.foreign.MemorySegment;

/** issue 46 weakening driver only: CAS and atomic read-modify-writes as a plain load then a plain store. */
public final class PlainRmw {
    private PlainRmw() {}
    public static boolean casLong(MemorySegment s, long off, long e, long v) {
        if (Mem.getLongPlain(s, off) != e) return false;
        Mem.setLongPlain(s, off, v);
        return true;
    }
    public static boolean casLongAt(MemorySegment s, long base, long off, long e, long v) {
        if (Mem.getLongPlainAt(s, base, off) != e) return false;
        Mem.setLongPlainAt(s, base, off, v);
        return true;
    }
    public static boolean casLongAt(long address, long e, long v) {
        if (Mem.getLongPlainAt(address) != e) return false;
        Mem.setLongPlainAt(address, v);
        return true;
    }
    public static long getAndAddLong(MemorySegment s, long off, long d) {
        long o = Mem.getLongPlain(s, off); Mem.setLongPlain(s, off, o + d); return o;
    }
    public static long getAndSetLong(MemorySegment s, long off, long v) {
        long o = Mem.getLongPlain(s, off); Mem.setLongPlain(s, off, v); return o;
    }
    public static long getAndOrLong(MemorySegment s, long off, long b) {
        long o = Mem.getLongPlain(s, off); Mem.setLongPlain(s, off, o | b); return o;
    }
    public static long getAndAndLong(MemorySegment s, long off, long b) {
        long o = Mem.getLongPlain(s, off); Mem.setLongPlain(s, off, o & b); return o;
    }
}
"""


# The sweep (--sweep): every non-plain access of these files, one at a time, weakened by one step and checked
# by the ordering pin alone (OrderingPinTest --check: the test's own comparison, one JVM per weakening).
SWEEP_FILES = [Q + f for f in ("WorkDeque.java", "RingQueue.java", "BoundedRing.java", "CarriedBatches.java",
                               "CarriedRings.java", "LifoSlot.java")] + \
              [S + f for f in ("Freelist.java", "DescriptorTable.java", "DescCache.java", "ParkingLot.java",
                               "WakeCoalescer.java", "Idle.java", "WorkerLoop.java", "WorkStealingScheduler.java",
                               "GlobalQueueScheduler.java", "JoinDeques.java", "Joining.java", "SpaceWaiters.java")]
RMW = "dev.threadpool.internal.memory.PlainRmw."
WEAKER = [  # (pattern, one step weaker)
    # (a masked raw load, Mem.getLongOpaqueAtMasked, weakens to the plain raw load of the same address)
    (r"\bMem\.(get|set)(Long|Int)(Acquire|Release|Opaque)(At)?(?:Masked)?\(",
     lambda m: f"Mem.{m[1]}{m[2]}Plain{m[4] or ''}("),
    (r"\bMem\.getLongVolatile(At)?\(", lambda m: f"Mem.getLongAcquire{m[1] or ''}("),
    (r"\bMem\.setLongVolatile\(", lambda m: "Mem.setLongRelease("),
    (r"\bMem\.(casLong(At)?|getAnd(Set|Or|And|Add)Long)\(", lambda m: RMW + m[1] + "("),
    (r"\bVarHandle\.(full|release|acquire)Fence\(\);", lambda m: "/* weakened */"),
    (r"\b([A-Z_]+)\.setRelease\(", lambda m: m[1] + ".set("),
    (r"\b([A-Z_]+)\.getAcquire\(", lambda m: m[1] + ".get("),
]


def sweep_sites(src):
    """(offset, end, original, weakened, line number) for every non-plain access in code (not in comments)."""
    sites, off = [], 0
    for n, line in enumerate(src.split("\n"), 1):
        code = line.split("//")[0]
        if not code.strip().startswith(("*", "/*")):
            for pat, rep in WEAKER:
                for m in re.finditer(pat, code):
                    sites.append((off + m.start(), off + m.end(), m.group(0), rep(m), n))
        off += len(line) + 1
    return sorted(sites)


def sweep(wk, javac, classes, deps, rmw, logs):
    tmp = os.path.join(logs, "sweep-classes")
    cp = tmp + ":" + os.path.join(wk, "target", "test-classes") + ":" + classes + ":" + deps
    mi = os.path.join(classes, "module-info.class")
    os.rename(mi, mi + ".aside")  # class-path compilation, as in javac_into
    total = caught = 0
    try:
        for path in SWEEP_FILES:
            f = os.path.join(wk, path)
            orig = open(f).read()
            for start, end, was, now, line in sweep_sites(orig):
                subprocess.run(["rm", "-rf", tmp])
                os.makedirs(tmp)
                open(f, "w").write(orig[:start] + now + orig[end:])
                try:
                    rc = sh([javac, "--release", "25", "-nowarn", "-cp", classes + ":" + deps, "-d", tmp,
                             "-implicit:none", f, rmw], wk, os.path.join(logs, "sweep-javac.log"))
                finally:
                    open(f, "w").write(orig)
                if rc != 0:
                    print(f"- {path.split('/')[-1]}:{line} `{was}` -> `{now}`: javac failed", flush=True)
                    continue
                rc = sh([JAVA] + FLAGS + ["-cp", cp, "dev.threadpool.internal.OrderingPinTest", "--check"], wk,
                        os.path.join(logs, "sweep-check.log"))
                total += 1
                caught += rc == 1
                print(f"- {path.split('/')[-1]}:{line} `{was}` -> `{now}`: "
                      f"{'caught' if rc == 1 else 'NOT caught (rc ' + str(rc) + ')'}", flush=True)
    finally:
        os.rename(mi + ".aside", mi)
    print(f"sweep: the pin caught {caught} of {total} one-step weakenings")


def sh(cmd, cwd, log, timeout=None):
    """Runs cmd with its output in log; on timeout kills its process group (a weakened structure may make a
    jcstress actor spin forever) and returns 124."""
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            return p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
            f.write("\nweaken.py: timed out after %s s, killed\n" % timeout)
            return 124


def javac_into(javac, classes, deps, files, log, cwd):
    """Compiles files into classes on the class path: module-info.class is set aside meanwhile (javac would
    otherwise compile in module mode and want every module dependency on a module path)."""
    mi = os.path.join(classes, "module-info.class")
    os.rename(mi, mi + ".aside")
    try:
        return sh([javac, "--release", "25", "-nowarn", "-cp", classes + ":" + deps, "-d", classes,
                   "-implicit:none"] + files, cwd, log)
    finally:
        os.rename(mi + ".aside", mi)


def weaken(src, locator, old, new):
    i = src.find(locator)
    if i < 0 or src.find(locator, i + 1) >= 0:
        raise SystemExit("locator not found exactly once: " + locator)
    if old is None:  # bounded-publish-release: the release store inside publish(...)
        j = src.index("setLongReleaseAt", i)
        return src[:j] + "setLongPlainAt" + src[j + len("setLongReleaseAt"):]
    j = src.index(old, i)
    return src[:j] + new + src[j + len(old):]


def main():
    global JAVA
    ap = argparse.ArgumentParser()
    ap.add_argument("clone")
    ap.add_argument("--forks", type=int, default=20)
    ap.add_argument("--no-jcstress", action="store_true")
    ap.add_argument("--sweep", action="store_true", help="every non-plain access, pin only")
    ap.add_argument("rows", nargs="*")
    a = ap.parse_intermixed_args()
    wk = os.path.abspath(a.clone)
    logs = os.path.join(wk, "target", "weaken")
    os.makedirs(logs, exist_ok=True)
    JAVA = subprocess.run(["bash", "-c", "src/exec/java25.sh -XshowSettings:properties -version 2>&1 | "
                           "sed -n 's/^ *java.home = //p'"], cwd=wk, capture_output=True, text=True).stdout.strip()
    JAVA = os.path.join(JAVA, "bin", "java")
    javac = JAVA[:-len("java")] + "javac"
    cpfile = os.path.join(logs, "cp.txt")
    if not os.path.exists(cpfile):
        sh(["mvn", "-B", "-q", "-o", "dependency:build-classpath", "-Dmdep.includeScope=test",
            "-Dmdep.outputFile=" + cpfile], wk, os.path.join(logs, "cp.log"))
    deps = open(cpfile).read().strip()
    classes = os.path.join(wk, "target", "classes")
    cp = os.path.join(wk, "target", "test-classes") + ":" + classes + ":" + deps
    rmw = os.path.join(logs, "PlainRmw.java")
    open(rmw, "w").write(PLAIN_RMW)
    if a.sweep:
        return sweep(wk, javac, classes, deps, rmw, logs)
    rows = [r for r in ROWS if not a.rows or r[0] in a.rows]
    print("| row | pin (OrderingPinTest) | jcstress detector: forks caught |")
    print("|---|---|---|")
    for rid, path, loc, old, new, tests in rows:
        f = os.path.join(wk, path)
        orig = open(f).read()
        try:
            open(f, "w").write(weaken(orig, loc, old, new))
            rc = javac_into(javac, classes, deps, [f, rmw], os.path.join(logs, rid + "-javac.log"), wk)
            if rc != 0:
                print(f"| {rid} | javac failed, see {logs}/{rid}-javac.log | |", flush=True)
                continue
            pinlog = os.path.join(logs, rid + "-pin.log")
            rc = sh(["mvn", "-B", "-o", "validate", "surefire:test", "-Dtest=OrderingPinTest",
                     "-Dsurefire.failIfNoSpecifiedTests=false"], wk, pinlog)
            failed = "The memory ordering of" in open(pinlog).read()  # the pin's own failure, not a crash
            pin = "NOT caught" if rc == 0 else "caught 1/1" if failed else f"error, see {pinlog}"
            det = []
            for t in ([] if a.no_jcstress else tests):
                log = os.path.join(logs, rid + "-" + t + ".log")
                t0 = time.time()
                sh([JAVA] + FLAGS + ["-cp", cp, "org.openjdk.jcstress.Main"] + TUNED.split()[2:]
                   + ["-f", str(a.forks), "-t", "dev.threadpool.jcstress." + t + "$", "-r", os.path.join(logs, "r")],
                   wk, log, timeout=60 + 15 * a.forks)
                m = re.findall(r"\(Results: (\d+) planned; (\d+) passed, (\d+) failed", open(log).read())
                caught = f"{m[-1][2]}/{m[-1][0]}" if m else "no result"
                det.append(f"{t} {caught} ({time.time() - t0:.0f} s)")
            print(f"| {rid} | {pin} | {'; '.join(det) if det else '-'} |", flush=True)
        finally:
            open(f, "w").write(orig)
            javac_into(javac, classes, deps, [f], os.path.join(logs, rid + "-restore.log"), wk)
            p = os.path.join(classes, "dev", "threadpool", "internal", "memory", "PlainRmw.class")
            if os.path.exists(p):
                os.remove(p)


if __name__ == "__main__":
    sys.exit(main())
