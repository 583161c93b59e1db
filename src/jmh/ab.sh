#!/usr/bin/env bash
# A/B of two revisions on this noisy box: builds each revision into its own directory, runs their JMH forks
# interleaved (A B A B ...), prints the per-fork medians side by side and calls a difference only when the
# two ranges separate. See docs/BENCHMARKS.md, "A/B between revisions".
#
#   src/jmh/ab.sh REV_A REV_B [--forks N] [JMH args...]
#   src/jmh/ab.sh HEAD~3 HEAD --forks 4 '^dev\.threadpool\.jmh\.PoolFloodBench\.flood_1m$' -p pool=GLOBAL_QUEUE,FJP
#   src/jmh/ab.sh main WORKTREE ...     # WORKTREE: the working tree as it is, uncommitted changes included
#
# REV_* is anything `git rev-parse` takes (a branch of another worktree too: they share one object store), or
# the word WORKTREE. Each revision is exported with `git archive` (WORKTREE: copied, target/ left out) to
# target/ab/<sha>/ and built once there (`mvn -DskipTests validate test-compile`); a later call with the same
# commit reuses the build. The JMH arguments are the same for both sides; each call of JMH runs one fork
# (`-f 1`, so do not pass -f), with -wi 2 -i 3 -w 1s -r 1s unless the arguments say otherwise.
#
# Output: target/ab/run-<time>/{A,B}-<k>.json (and latency-{A,B}.csv for LatencyBench), then a table: one
# row per benchmark, parameter set and metric (JMH's primary score, each of its secondary scores, and for
# LatencyBench the p50/p99 of each fork's HdrHistogram), with each side's per-fork medians, their ranges and
# a verdict: "A > B" or "A < B" when the ranges do not overlap, "within the noise" when they do.
#
# Environment: JMH_JAVA = the java binary (JDK 25+); by default the first JDK 25+ found as run-benchmarks.sh
# finds it. JMH holds /tmp/jmh.lock while it runs, so a second JMH on the machine fails at once: run one at a time.
set -euo pipefail

cd "$(dirname "$0")/../.."
ROOT=$(pwd)

usage() { sed -n '2,24p' "$0"; exit "${1:-0}"; }
[[ $# -ge 1 && ( $1 == -h || $1 == --help ) ]] && usage 0
[[ $# -ge 2 ]] || usage 2
REV_A=$1; REV_B=$2; shift 2
forks=4
args=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --forks) forks="$2"; shift ;;
        -f) echo "ab.sh runs one fork per JMH call: use --forks N, not -f" >&2; exit 2 ;;
        *) args+=("$1") ;;
    esac
    shift
done
[[ $forks =~ ^[1-9][0-9]*$ ]] || { echo "--forks must be a positive integer: forks=$forks" >&2; exit 2; }
[[ ${#args[@]} -gt 0 ]] || { echo "give a benchmark regex, e.g. '^dev\\.threadpool\\.jmh\\.PoolFloodBench\\.flood_1m\$'" >&2; exit 2; }

# Defaults of the protocol, unless the caller set them.
has() { local a; for a in "${args[@]}"; do [[ $a == "$1" ]] && return 0; done; return 1; }
proto=()
has -wi || proto+=(-wi 2)
has -i || proto+=(-i 3)
has -w || proto+=(-w 1s)
has -r || proto+=(-r 1s)

# ---- java (as run-benchmarks.sh finds it) -----------------------------------------------------------------
source "$ROOT/src/jmh/find-java.sh"

# ---- build each revision once ------------------------------------------------------------------------------
# Prints the build directory of revision $1 on stdout; everything else goes to stderr.
build_rev() {
    local rev=$1 id dir
    if [[ $rev == WORKTREE ]]; then
        id="worktree-$(date +%s%N)"
    else
        id=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "not a revision: $rev" >&2; return 1; }
    fi
    dir="$ROOT/target/ab/$id"
    if [[ -f $dir/cp.txt && -d $dir/target/test-classes ]]; then
        echo "== $rev: reusing the build in $dir" >&2
        echo "$dir"; return 0
    fi
    rm -rf "$dir"; mkdir -p "$dir"
    if [[ $rev == WORKTREE ]]; then
        tar -C "$ROOT" --exclude=./target --exclude=./.git -cf - . | tar -C "$dir" -xf -
    else
        git archive "$id" | tar -C "$dir" -xf -
    fi
    echo "== $rev ($id): building in $dir" >&2
    (cd "$dir" && mvn -B -q -DskipTests validate test-compile dependency:build-classpath \
        -Dmdep.outputFile=cp.txt -Dmdep.includeScope=test) >&2
    echo "$dir"
}
DIR_A=$(build_rev "$REV_A")
DIR_B=$(build_rev "$REV_B")

# ---- interleaved forks -------------------------------------------------------------------------------------
OUT="$ROOT/target/ab/run-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
echo "A = $REV_A ($DIR_A)" | tee "$OUT/README"
echo "B = $REV_B ($DIR_B)" | tee -a "$OUT/README"
echo "JMH: ${proto[*]} ${args[*]}; $forks forks per side, interleaved" | tee -a "$OUT/README"
run_fork() { # side dir k
    local side=$1 dir=$2 k=$3
    echo "== fork $k, side $side"
    BENCH_LATENCY_OUT="$OUT/latency-$side.csv" \
        "$JAVA" --enable-native-access=ALL-UNNAMED \
        -cp "$dir/target/test-classes:$dir/target/classes:$(cat "$dir/cp.txt")" \
        org.openjdk.jmh.Main -f 1 "${proto[@]}" "${args[@]}" -rf json -rff "$OUT/$side-$k.json" \
        > "$OUT/$side-$k.log" 2>&1 || { echo "JMH failed: $OUT/$side-$k.log" >&2; tail -20 "$OUT/$side-$k.log" >&2; exit 1; }
}
for ((k = 1; k <= forks; k++)); do
    # Alternate who goes first, so a drift of the box within a round does not favour one side.
    if (( k % 2 == 1 )); then run_fork A "$DIR_A" "$k"; run_fork B "$DIR_B" "$k"
    else run_fork B "$DIR_B" "$k"; run_fork A "$DIR_A" "$k"; fi
done

python3 "$ROOT/src/jmh/ab_report.py" "$OUT" | tee "$OUT/report.txt"
