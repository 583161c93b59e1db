#!/usr/bin/env bash
# Runs the benchmark suite against ForkJoinPool / ThreadPoolExecutor / the Disruptor and renders the charts.
# See docs/BENCHMARKS.md for the protocol.
#
#   src/jmh/run-benchmarks.sh            # full protocol; JSON in target/jmh/, charts + table in docs/bench/
#   src/jmh/run-benchmarks.sh --quick    # smoke: 1 fork, 1 x 1 s warm-up and measurement; charts in target/jmh/charts/
#   src/jmh/run-benchmarks.sh --quick --only PoolFloodBench,BurstBench -- -p pool=GLOBAL_QUEUE,FJP
#
# Options:
#   --quick          smoke run (CI-style check that everything runs; the figures mean little)
#   --only A,B       run only these benchmark classes (simple names)
#   --no-charts      do not run the chart script afterwards
#   --charts-out DIR where the chart script writes (default: docs/bench for full runs, target/jmh/charts for quick)
#   -- ARGS...       passed to JMH as they are, after the protocol's own: options the protocol does not set,
#                    e.g. -p pool=... (JMH refuses an option given twice, so they cannot replace -f or -i)
#
# Environment: JMH_JAVA = the java binary (JDK 25+) to run with; by default the first JDK 25+ found in
# $JAVA_HOME, on PATH or under /usr/lib/jvm.
#
# A class named with --only that does not exist in this build is skipped with a note.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)

# Every workload class, in run order.
ALL_CLASSES=(PoolFloodBench BurstBench FanoutBench RangeBench LatencyBench)

quick=0
charts=1
charts_out=""
only=""
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1 ;;
        --full) quick=0 ;;
        --no-charts) charts=0 ;;
        --charts-out) charts_out="$2"; shift ;;
        --only) only="$2"; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

# ---- protocol --------------------------------------------------------------------------------------------
# Full: 2 forks x (2 x 1 s warm-up + 5 x 1 s measurement), ping_pong 5 forks; docs/BENCHMARKS.md has the time
# budget.
# ping_pong's p50 lands in one of two modes of the box that last tens of seconds and catch every pool alike,
# FJP and the Disruptor too (PERFORMANCE_TRACKING 51): with two forks a side, one slow fork halves a ratio. The
# full protocol gives it PING_PONG_FORKS forks, so the chart script's median of the per-fork percentiles needs
# three forks of five in one mode.
PING_PONG_FORKS=5
if [[ $quick == 1 ]]; then
    forks=1
    protocol=(-wi 1 -w 1s -i 1 -r 1s)
    mode=quick
else
    forks=2
    protocol=(-wi 2 -w 1s -i 5 -r 1s)
    mode=full
fi
if [[ -z "$charts_out" ]]; then
    if [[ $quick == 1 ]]; then charts_out=target/jmh/charts; else charts_out=docs/bench; fi
fi

# ---- java ------------------------------------------------------------------------------------------------
source "$ROOT/src/jmh/find-java.sh"

# ---- build -----------------------------------------------------------------------------------------------
mkdir -p target/jmh
echo "== building (mvn validate test-compile, test class path)"
mvn -B -q -DskipTests validate test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/jmh/classpath.txt -Dmdep.includeScope=test
CP="target/test-classes:target/classes:$(cat target/jmh/classpath.txt)"
JVM_FLAGS=(--enable-native-access=ALL-UNNAMED)

classes=()
if [[ -n "$only" ]]; then IFS=, read -r -a classes <<< "$only"; else classes=("${ALL_CLASSES[@]}"); fi

export BENCH_LATENCY_OUT="$ROOT/target/jmh/latency.csv"
ran=()
skipped=()
failed=()
start_all=$(date +%s)
for c in "${classes[@]}"; do
    if [[ ! -f "target/test-classes/dev/threadpool/jmh/$c.class" ]]; then
        echo "== $c: not in this build, skipped"
        skipped+=("$c")
        continue
    fi
    # One JMH invocation per class; in the full protocol LatencyBench's ping_pong gets one of its own, with
    # PING_PONG_FORKS forks (its percentiles go to the same latency.csv, its scores to a JSON of its own).
    parts=("$c|^dev\.threadpool\.jmh\.$c\.|-f $forks")
    if [[ $c == LatencyBench ]]; then
        rm -f "$BENCH_LATENCY_OUT"
        if [[ $mode == full ]]; then
            parts=("$c|^dev\.threadpool\.jmh\.$c\.|-f $forks -e ^dev\.threadpool\.jmh\.$c\.ping_pong\$"
                   "$c-ping_pong|^dev\.threadpool\.jmh\.$c\.ping_pong\$|-f $PING_PONG_FORKS")
        fi
    fi
    rm -f "target/jmh/$c.json" "target/jmh/$c"-*.json # a part this protocol does not run leaves nothing behind
    ok=1
    t0=$(date +%s)
    for part in "${parts[@]}"; do
        IFS='|' read -r name regex more <<< "$part"
        read -r -a more_args <<< "$more"
        json="target/jmh/$name.json"
        cmd=("$JAVA" "${JVM_FLAGS[@]}" -cp "$CP" org.openjdk.jmh.Main "$regex"
             "${more_args[@]}" "${protocol[@]}" -prof gc -rf json -rff "$json" "${extra[@]}")
        echo "== $name ($mode): ${cmd[*]:4}"
        # JMH holds /tmp/jmh.lock while it runs: a second JMH on the machine (another engineer's) makes this one
        # exit at once. That class then counts as failed; the others still run.
        if ! "${cmd[@]}" 2>&1 | tee "target/jmh/$name.log"; then
            echo "== $name FAILED after $(( $(date +%s) - t0 )) s (log: target/jmh/$name.log)"
            ok=0
        fi
    done
    if [[ $ok == 1 ]]; then
        echo "== $c took $(( $(date +%s) - t0 )) s"
        ran+=("$c")
    else
        failed+=("$c")
    fi
done
echo "== suite ($mode) took $(( $(date +%s) - start_all )) s; ran: ${ran[*]:-none};" \
     "skipped: ${skipped[*]:-none}; failed: ${failed[*]:-none}"

if [[ $charts == 1 && ${#ran[@]} -gt 0 ]]; then
    echo "== charts -> $charts_out"
    python3 src/jmh/bench_charts.py --in target/jmh --out "$charts_out" --mode "$mode"
fi
[[ ${#failed[@]} -eq 0 ]]
