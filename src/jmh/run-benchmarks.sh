#!/usr/bin/env bash
# Runs the benchmark suite against ForkJoinPool / ThreadPoolExecutor / the Disruptor and renders the charts.
# See docs/BENCHMARKS.md for the protocol.
#
#   src/jmh/run-benchmarks.sh            # full protocol (2 rounds); JSON in target/jmh/, charts + table in docs/bench/
#   src/jmh/run-benchmarks.sh --quick    # smoke: 1 fork, 1 x 1 s warm-up and measurement; charts in target/jmh/charts/
#   src/jmh/run-benchmarks.sh --quick --only PoolFloodBench,BurstBench -- -p pool=GLOBAL_QUEUE,FJP
#
# Options:
#   --quick          smoke run (CI-style check that everything runs; the figures mean little)
#   --only A,B       run only these benchmark classes (simple names)
#   --no-charts      do not run the chart script afterwards
#   --charts-out DIR where the chart script writes (default: docs/bench for full runs, target/jmh/charts for quick)
#   --rounds N       full protocol: N rounds, each running every class with one fork per pool (default 2)
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
rounds_opt=""
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1 ;;
        --full) quick=0 ;;
        --no-charts) charts=0 ;;
        --charts-out) charts_out="$2"; shift ;;
        --only) only="$2"; shift ;;
        --rounds) rounds_opt="$2"; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

# ---- protocol --------------------------------------------------------------------------------------------
# Full: ROUNDS rounds; each round runs every class with one fork per pool (2 x 1 s warm-up + 5 x 1 s
# measurement), so a pool's forks are one round (about 12 minutes) apart instead of back to back. This box
# has slow periods of seconds to tens of seconds that slow every pool alike (PERFORMANCE_TRACKING 51, 52):
# forks run back to back share one period, so one pool's score could come from a slow period and its peer's
# from a fast one; forks a round apart sample the box independently. The chart script merges a pool's forks
# from every round (its score is the mean of all their iterations, as JMH's own over its forks).
# ping_pong, whose p50 flips between two modes with those periods, runs PING_PONG_FORKS forks per round in a
# JMH invocation of its own (the chart script takes the median of its per-fork percentiles).
PING_PONG_FORKS=3
# One fork per pool per JMH invocation (ping_pong's own invocation: PING_PONG_FORKS); the rest of the protocol:
if [[ $quick == 1 ]]; then
    rounds=1
    protocol=(-wi 1 -w 1s -i 1 -r 1s)
    mode=quick
else
    rounds=${rounds_opt:-2}
    protocol=(-wi 2 -w 1s -i 5 -r 1s)
    mode=full
fi
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "--rounds must be a whole number >= 1, got '$rounds'" >&2
    exit 2
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
declare -A status # class -> ok | failed
todo=()
for c in "${classes[@]}"; do
    if [[ ! -f "target/test-classes/dev/threadpool/jmh/$c.class" ]]; then
        echo "== $c: not in this build, skipped"
        skipped+=("$c")
        continue
    fi
    todo+=("$c")
    status[$c]=ok
    # a part or round this protocol does not run leaves nothing behind for the chart script
    rm -f "target/jmh/$c".json "target/jmh/$c".*.json "target/jmh/$c"-*.json "target/jmh/$c"*.log
    if [[ $c == LatencyBench ]]; then
        rm -f "$BENCH_LATENCY_OUT"
    fi
done
start_all=$(date +%s)
for (( round = 1; round <= rounds; round++ )); do
    for c in "${todo[@]}"; do
        # One JMH invocation per class and round, each part as name|regex|forks|more JMH options; in the full
        # protocol LatencyBench's ping_pong gets one of its own (its percentiles go to the same latency.csv, its
        # scores to a JSON of its own).
        parts=("$c|^dev\.threadpool\.jmh\.$c\.|1|")
        if [[ $c == LatencyBench && $mode == full ]]; then
            parts=("$c|^dev\.threadpool\.jmh\.$c\.|1|-e ^dev\.threadpool\.jmh\.$c\.ping_pong\$"
                   "$c-ping_pong|^dev\.threadpool\.jmh\.$c\.ping_pong\$|$PING_PONG_FORKS|")
        fi
        t0=$(date +%s)
        for part in "${parts[@]}"; do
            IFS='|' read -r name regex forks more <<< "$part"
            read -r -a more_args <<< "$more"
            base="target/jmh/$name"
            if (( rounds > 1 )); then base="target/jmh/$name.r$round"; fi
            json="$base.json"
            cmd=("$JAVA" "${JVM_FLAGS[@]}" -cp "$CP" org.openjdk.jmh.Main "$regex"
                 -f "$forks" "${protocol[@]}" "${more_args[@]}" -prof gc -rf json -rff "$json" "${extra[@]}")
            echo "== $name, round $round of $rounds ($mode): ${cmd[*]:4}"
            # JMH holds /tmp/jmh.lock while it runs: a second JMH on the machine (another engineer's) makes this
            # one exit at once. That class then counts as failed; the others still run.
            if ! "${cmd[@]}" 2>&1 | tee "$base.log"; then
                echo "== $name FAILED in round $round after $(( $(date +%s) - t0 )) s (log: $base.log)"
                status[$c]=failed
            fi
        done
        echo "== $c, round $round took $(( $(date +%s) - t0 )) s"
    done
done
for c in "${todo[@]}"; do
    if [[ ${status[$c]} == ok ]]; then ran+=("$c"); else failed+=("$c"); fi
done
echo "== suite ($mode) took $(( $(date +%s) - start_all )) s; ran: ${ran[*]:-none};" \
     "skipped: ${skipped[*]:-none}; failed: ${failed[*]:-none}"

if [[ $charts == 1 && ${#ran[@]} -gt 0 ]]; then
    echo "== charts -> $charts_out"
    python3 src/jmh/bench_charts.py --in target/jmh --out "$charts_out" --mode "$mode"
fi
[[ ${#failed[@]} -eq 0 ]]
