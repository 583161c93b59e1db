#!/usr/bin/env bash
# Runs the benchmark suite against ForkJoinPool / ThreadPoolExecutor / the Disruptor and renders the charts.
# See docs/BENCHMARKS.md for the protocol.
#
#   src/jmh/run-benchmarks.sh            # full protocol (5 rounds); JSON in target/jmh/, charts + table in docs/bench/
#   src/jmh/run-benchmarks.sh --quick    # smoke: 1 round, 1 x 1 s warm-up and measurement; charts in target/jmh/charts/
#   src/jmh/run-benchmarks.sh --quick --only PoolFloodBench,BurstBench -- -p pool=GLOBAL_QUEUE,FJP
#
# Each round runs one JMH invocation (one fork, -f 1) per (class, pool), the pairs of the round in a random order,
# and IdleCpu once; a pool's forks are a round apart and no pool always runs first or after the same peer.
#
# Options:
#   --quick          smoke run (CI-style check that everything runs; the figures mean little)
#   --only A,B       run only these classes (simple names; IdleCpu is one of them)
#   --no-charts      do not run the chart script afterwards
#   --charts-out DIR where the chart script writes (default: docs/bench for full runs, target/jmh/charts for quick)
#   --rounds N       full protocol: N rounds, each running every (class, pool) once (default 5)
#   --seed N         seed of the per-round shuffles (default: from the clock; printed, so a run can be repeated)
#   -- ARGS...       passed to JMH as they are, after the protocol's own: options the protocol does not set,
#                    e.g. -p threads=4 (JMH refuses an option given twice, so they cannot replace -f or -i).
#                    -p pool=A,B restricts the pools (of every class that has them, and of IdleCpu); the script
#                    takes it out and sets -p pool per invocation.
#
# Files (target/jmh/): <Class>.r<round>.<pool>.json and .log per invocation, order.r<round>.txt (the round's
# order), latency.csv (LatencyBench, with a round column), idle_cpu.csv (round,pool,mode,percent_of_one_core,
# tasks_per_s) and idle_cpu.r<round>.log.
#
# Environment: JMH_JAVA = the java binary (JDK 25+) to run with; by default the first JDK 25+ found in
# $JAVA_HOME, on PATH or under /usr/lib/jvm. BENCH_PROTOCOL_OVERRIDE = JMH options that replace the full
# protocol's per-fork iterations (e.g. "-wi 1 -w 1s -i 1 -r 1s" for a short multi-round check; its figures are
# not of record). Every JMH invocation runs with BENCH_ROUND=<round> (LatencyBench writes it to latency.csv).
#
# A class named with --only that does not exist in this build is skipped with a note.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)

# Every workload class, in run order.
# Every workload class; IdleCpu is a main (not JMH), run once per round.
ALL_CLASSES=(PoolFloodBench BatchFloodBench BurstBench FanoutBench RangeBench LatencyBench IdleCpu)

quick=0
charts=1
charts_out=""
only=""
rounds_opt=""
seed=""
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) quick=1 ;;
        --full) quick=0 ;;
        --no-charts) charts=0 ;;
        --charts-out) charts_out="$2"; shift ;;
        --only) only="$2"; shift ;;
        --rounds) rounds_opt="$2"; shift ;;
        --seed) seed="$2"; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,33p' "$0"; exit 0 ;;
        *) echo "unknown option: $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

# ---- protocol --------------------------------------------------------------------------------------------
# Full: ROUNDS rounds; each round runs every (class, pool) once, one fork of 2 x 1 s warm-up + 3 x 1 s
# measurement, in an order shuffled per round. This box has slow periods of seconds to tens of seconds that slow
# every pool alike (PERFORMANCE_TRACKING 51, 52) and its forks are bimodal: forks a round apart sample the box
# independently, the chart script pairs ours and a peer's fork of the same round (the same period, as near as one
# round allows), and the shuffle keeps a fixed order (FJP always right after ours, a class always first after the
# build) from biasing a ratio. Five forks a pool give a median and a worst round worth reading; three
# measurement iterations a fork (was five) keep 5 rounds at about the time the 2-round protocol took.
if [[ $quick == 1 ]]; then
    rounds=1
    protocol=(-wi 1 -w 1s -i 1 -r 1s)
    idle_seconds=1
    mode=quick
else
    rounds=${rounds_opt:-5}
    protocol=(-wi 2 -w 1s -i 3 -r 1s)
    idle_seconds=2
    mode=full
    if [[ -n "${BENCH_PROTOCOL_OVERRIDE:-}" ]]; then
        read -r -a protocol <<< "$BENCH_PROTOCOL_OVERRIDE"
        echo "== BENCH_PROTOCOL_OVERRIDE: ${protocol[*]} per fork (not the protocol of record)"
    fi
fi
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then
    echo "--rounds must be a whole number >= 1, got '$rounds'" >&2
    exit 2
fi
if [[ -z "$seed" ]]; then seed=$(( $(date +%s%N) % 1000000 )); fi
if ! [[ $seed =~ ^[0-9]+$ ]]; then
    echo "--seed must be a whole number, got '$seed'" >&2
    exit 2
fi
if [[ -z "$charts_out" ]]; then
    if [[ $quick == 1 ]]; then charts_out=target/jmh/charts; else charts_out=docs/bench; fi
fi

# A -p pool=A,B among the extra arguments restricts the pools; it is taken out because each invocation sets its
# own -p pool (JMH would refuse the option twice for one parameter).
pool_filter=()
jmh_extra=()
for (( k = 0; k < ${#extra[@]}; k++ )); do
    if [[ ${extra[k]} == -p && $(( k + 1 )) -lt ${#extra[@]} && ${extra[k+1]} == pool=* ]]; then
        IFS=, read -r -a pool_filter <<< "${extra[k+1]#pool=}"
        k=$(( k + 1 ))
    elif [[ ${extra[k]} == -ppool=* ]]; then
        IFS=, read -r -a pool_filter <<< "${extra[k]#-ppool=}"
    else
        jmh_extra+=("${extra[k]}")
    fi
done

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

# The pool values of a class, from JMH's own listing of this build (-lp), so a new method or param value is
# picked up with no change here; the union over the class's methods, in the order listed. Empty when the class
# has no "pool" parameter (it then runs as one invocation, named "all").
class_pools() {
    "$JAVA" "${JVM_FLAGS[@]}" -cp "$CP" org.openjdk.jmh.Main -lp "^dev\.threadpool\.jmh\.$1\." 2>/dev/null |
        sed -n 's/^ *param "pool" = {\(.*\)}$/\1/p' | tr ',' '\n' | sed 's/^ *//; s/ *$//' | awk 'NF && !seen[$0]++'
}

# Keeps the pools the user's -p pool=... names (all when none was given).
filter_pools() {
    local p f
    for p in "$@"; do
        if [[ ${#pool_filter[@]} -eq 0 ]]; then echo "$p"; continue; fi
        for f in "${pool_filter[@]}"; do if [[ $p == "$f" ]]; then echo "$p"; fi; done
    done
}

# IdleCpu's pools: its default set (three PARK pools, FJP, TPE_ABQ), or those of the user's list it can build.
IDLE_POOLS=(GLOBAL_QUEUE WORK_STEALING LANE_EXTENSION FJP TPE_ABQ)
idle_pools() {
    local f
    if [[ ${#pool_filter[@]} -eq 0 ]]; then printf '%s\n' "${IDLE_POOLS[@]}"; return; fi
    for f in "${pool_filter[@]}"; do
        if [[ $f =~ ^((GLOBAL_QUEUE|WORK_STEALING|LANE_EXTENSION)(_SPIN)?|FJP|TPE_LBQ|TPE_ABQ)$ ]]; then echo "$f"; fi
    done
}

# Shuffles the lines of stdin with bash's RANDOM (seeded once from --seed): Fisher-Yates, no other tool needed.
shuffle() {
    local -a items
    local i j t
    mapfile -t items
    for (( i = ${#items[@]} - 1; i > 0; i-- )); do
        j=$(( RANDOM % (i + 1) ))
        t=${items[i]}; items[i]=${items[j]}; items[j]=$t
    done
    if (( ${#items[@]} )); then printf '%s\n' "${items[@]}"; fi
}

export BENCH_LATENCY_OUT="$ROOT/target/jmh/latency.csv"
IDLE_CSV="$ROOT/target/jmh/idle_cpu.csv"
ran=()
skipped=()
failed=()
declare -A status # class -> ok | failed
todo=()
pairs=() # class|pool, every invocation of one round
for c in "${classes[@]}"; do
    if [[ ! -f "target/test-classes/dev/threadpool/jmh/$c.class" ]]; then
        echo "== $c: not in this build, skipped"
        skipped+=("$c")
        continue
    fi
    # a part or round this protocol does not run leaves nothing behind for the chart script
    rm -f "target/jmh/$c".json "target/jmh/$c".*.json "target/jmh/$c"-*.json "target/jmh/$c"*.log
    if [[ $c == IdleCpu ]]; then
        mapfile -t pools < <(idle_pools)
        rm -f "$IDLE_CSV" target/jmh/idle_cpu.*.log
        if [[ ${#pools[@]} -gt 0 ]]; then pairs+=("IdleCpu|${pools[*]}"); fi
    else
        mapfile -t listed < <(class_pools "$c")
        if [[ ${#listed[@]} -eq 0 ]]; then
            pools=(all)
        else
            mapfile -t pools < <(filter_pools "${listed[@]}")
        fi
        for p in "${pools[@]}"; do pairs+=("$c|$p"); done
        if [[ $c == LatencyBench ]]; then rm -f "$BENCH_LATENCY_OUT"; fi
    fi
    if [[ ${#pools[@]} -eq 0 ]]; then
        echo "== $c: none of the pools ${pool_filter[*]} in this class, skipped"
        skipped+=("$c")
        continue
    fi
    todo+=("$c")
    status[$c]=ok
done
rm -f target/jmh/order.r*.txt
RANDOM=$seed
echo "== seed $seed (--seed $seed repeats this run's orders)"

# One JMH invocation: class $1, pool $2 (all: no -p pool), round $3.
run_jmh() {
    local c=$1 p=$2 round=$3 base cmd pool_args=()
    base="target/jmh/$c.r$round.$p"
    if [[ $p != all ]]; then pool_args=(-p "pool=$p"); fi
    cmd=("$JAVA" "${JVM_FLAGS[@]}" -cp "$CP" org.openjdk.jmh.Main "^dev\.threadpool\.jmh\.$c\."
         -f 1 "${protocol[@]}" "${pool_args[@]}" -prof gc -rf json -rff "$base.json" "${jmh_extra[@]}")
    echo "== $c pool=$p, round $round of $rounds ($mode): ${cmd[*]:4}"
    # JMH holds /tmp/jmh.lock while it runs: a second JMH on the machine (another engineer's) makes this one exit
    # at once. That class then counts as failed; the others still run.
    BENCH_ROUND=$round "${cmd[@]}" 2>&1 | tee "$base.log"
}

# IdleCpu once: pools "$1" (space-separated), round $2; its idle_cpu lines appended to idle_cpu.csv.
run_idle() {
    local pools=$1 round=$2 log="target/jmh/idle_cpu.r$2.log"
    read -r -a list <<< "$pools"
    echo "== IdleCpu ${list[*]}, round $round of $rounds ($mode)"
    BENCH_ROUND=$round "$JAVA" "${JVM_FLAGS[@]}" -cp "$CP" dev.threadpool.jmh.IdleCpu --seconds "$idle_seconds" \
        --modes idle,sparse "${list[@]}" 2>&1 | tee "$log" || return 1
    if [[ ! -f "$IDLE_CSV" ]]; then echo "round,pool,mode,percent_of_one_core,tasks_per_s" > "$IDLE_CSV"; fi
    # line: idle_cpu,<pool>,<mode>,<percent>,threads=<n>,tasks_per_s=<x>,seconds=<s>[,...]
    awk -F, -v r="$round" '$1 == "idle_cpu" && NF >= 4 {
            tps = ""; for (i = 5; i <= NF; i++) if ($i ~ /^tasks_per_s=/) tps = substr($i, 13)
            print r "," $2 "," $3 "," $4 "," tps }' "$log" >> "$IDLE_CSV"
}

start_all=$(date +%s)
for (( round = 1; round <= rounds; round++ )); do
    mapfile -t order < <(printf '%s\n' "${pairs[@]}" | shuffle)
    printf '%s\n' "${order[@]}" > "target/jmh/order.r$round.txt"
    echo "== round $round order: ${order[*]}"
    t0=$(date +%s)
    for item in "${order[@]}"; do
        c=${item%%|*}
        p=${item#*|}
        t1=$(date +%s)
        if [[ $c == IdleCpu ]]; then
            run_idle "$p" "$round" && rc=0 || rc=$?
        else
            run_jmh "$c" "$p" "$round" && rc=0 || rc=$?
        fi
        if [[ $rc != 0 ]]; then
            echo "== $c ${p// /,} FAILED in round $round after $(( $(date +%s) - t1 )) s (rc $rc)"
            status[$c]=failed
        fi
    done
    echo "== round $round took $(( $(date +%s) - t0 )) s"
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
