#!/usr/bin/env python3
"""Charts and ratio tables from the benchmark suite's JMH JSON (python3 standard library only).

    python3 src/jmh/bench_charts.py [--in target/jmh] [--out docs/bench] [--mode full|quick]

Reads from --in (written by src/jmh/run-benchmarks.sh):

  <Class>.r<N>.<pool>.json   JMH -rf json of one (class, pool) invocation in round N (the current protocol);
                             also read: <Class>.r<N>.json (one invocation per class and round) and <Class>.json
                             (no round in the name: round 1). Every fork in a file belongs to that file's round.
  latency.csv                LatencyBench's HdrHistogram rows, one per fork: benchmark, pool, threads, count,
                             p50_ns, p90_ns, p99_ns, p999_ns, max_ns, mean_ns[, round] (no round: unpaired)
  idle_cpu.csv               IdleCpu's rows: round, pool, mode (idle | sparse), percent_of_one_core[, tasks_per_s]

and writes into --out:

  throughput-ratio.svg     every workload with a FJP side, each pool against FJP: the median of the per-round
                           ratios (> 1: faster than FJP; time-per-op workloads as FJP's time / the pool's), whiskers
                           from the worst to the best round
  alloc-per-task.svg       gc.alloc.rate.norm (bytes per task) per workload and pool, median over forks
  latency-percentiles.svg  p50 / p99 / p99.9 submit-to-start latency per pool (median over forks, log scale)
  ratios.md                the markdown tables for docs/BENCHMARKS.md (ratios, targets, latency, idle CPU,
                           allocation; for a workload with a SERIAL side, its speed-up, efficiency and bytes per
                           split)

Statistics. This box's forks are bimodal (slow periods of seconds to tens of seconds slow every pool alike), so
a mean over iterations with JMH's ± understates the spread. A fork's score is the mean of its own measurement
iterations; a pool's figure is the median, min and max of its forks. A ratio pairs our fork with the peer's fork
of the same round (the same period of the box) and reports the median, the worst and the best of those per-round
ratios. The verdict rule (NOISE_BAND, verdict()) is stated in the generated text.

Pools are recognised by the value of a benchmark parameter (normally "pool"): ours are GLOBAL_QUEUE,
WORK_STEALING, LANE_EXTENSION (a suffix such as _SPIN names an idle strategy, WS_RING is WORK_STEALING_RING), the
peers FJP (or FORK_JOIN*), TPE_LBQ, TPE_ABQ and DISRUPTOR_*, and SERIAL, the floor of RecursiveShapesBench (the
same splits as plain calls on the calling thread): no ratio is taken against it in the ratio table; the efficiency
table divides by it. Any benchmark method and parameter is picked up
generically: a method is a workload, a parameter other than the pool and threads that varies makes a workload
of its own ("flood_1m [batch=64]").
"""

import argparse
import csv
import fnmatch
import glob
import html
import json
import math
import os
import re
import statistics
import sys

OURS = ("GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION")
TPE_PEERS = ("TPE_LBQ", "TPE_ABQ")
# RecursiveShapesBench's floor: the same splits as plain recursion on the calling thread.
FLOOR = "SERIAL"
PREFERRED_ORDER = ["GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION",
                   "GLOBAL_QUEUE_SPIN", "WORK_STEALING_SPIN", "LANE_EXTENSION_SPIN",
                   "FJP", "TPE_LBQ", "TPE_ABQ", "DISRUPTOR_BUSY", "DISRUPTOR_BUSY_MULTI",
                   "DISRUPTOR_BLOCKING", FLOOR]
COLORS = {
    "GLOBAL_QUEUE": "#1f77b4", "WORK_STEALING": "#2ca02c", "LANE_EXTENSION": "#9467bd",
    "GLOBAL_QUEUE_SPIN": "#6baed6", "WORK_STEALING_SPIN": "#98df8a", "LANE_EXTENSION_SPIN": "#c5b0d5",
    "FJP": "#d62728", "TPE_LBQ": "#ff7f0e", "TPE_ABQ": "#bcbd22",
    "DISRUPTOR_BUSY": "#7f7f7f", "DISRUPTOR_BUSY_MULTI": "#525252", "DISRUPTOR_BLOCKING": "#b0b0b0",
    FLOOR: "#000000",
}
FALLBACK_COLORS = ["#17becf", "#e377c2", "#8c564b", "#aec7e8", "#ffbb78"]
# The A/A control (RecursiveShapesBench's and FanoutBench's AA_ pools): a side built again by the same code under this prefix, one
# more fork of every round. No target is judged on a twin; twin_table pairs it with the side it repeats.
TWIN_PREFIX = "AA_"

# ---- what the report judges ---------------------------------------------------------------------------------

# A median ratio this far above a goal is a difference even when one round fell below it; within it of the goal,
# a ratio is not a difference. From the spread of per-round ratios of identical code on this box (two full runs of
# the same commit moved ratios by up to about 0.3).
NOISE_BAND = 0.3
# Fewer paired forks (rounds) than this and a verdict is shown but not of record: the full protocol has 5 rounds.
FORKS_OF_RECORD = 5

# Pool patterns (fnmatch) a target applies to; a pattern starting with "!" excludes.
ALL_OURS = ("GLOBAL_QUEUE*", "WORK_STEALING*", "LANE_EXTENSION*")
PARK = ALL_OURS + ("!*_SPIN",)
SPIN = ("*_SPIN",)
FORK_JOIN_SIDES = ("WORK_STEALING*", "LANE_EXTENSION", "!*_SPIN")


def target(workload, peer, goal=None, median=None, worst=None, pools=ALL_OURS, issue="", metric="score",
           peer_label=None, reference=False):
    """One row of TARGETS. goal: ratio >= goal under verdict()'s rule (worst >= goal, or median > goal + band).
    median / worst instead: a two-part target, met only when the plain median >= median and the worst round >=
    worst (either may be left out). metric: "score" for JMH workloads, "p50" / "p99" for latency.csv rows (the
    ratio is then peer / ours). reference: a row shown beside a target and judged by nobody."""
    return {"workload": workload, "peer": peer, "goal": goal, "median": median, "worst": worst, "pools": pools,
            "issue": issue, "metric": metric, "peer_label": peer_label or peer, "reference": reference}


# issue 49: RecursiveShapesBench's six programs, the same splits on every side. Every shape: median >= 1.0x FJP and
# worst round >= 0.9x on every variant; tiny tasks and quadrature median >= 1.3x; LANE_EXTENSION within 10 % of
# WORK_STEALING (its per-round ratio to WORK_STEALING_RING, the same queue kind, >= 0.9; LANE_EXTENSION_FORK's to
# WORK_STEALING_RING_FORK). The FJP targets take every form of ours, join(fn, ctx, l, r) and the _FORK sides alike.
RECURSIVE_SHAPES = ("fib", "quadrature", "queens", "reduce", "stencil", "matmul")


def recursive_shape_targets():
    return ([target(w, "FJP", median=1.3 if w in ("fib", "quadrature") else 1.0, worst=0.9, issue="49")
             for w in RECURSIVE_SHAPES]
            + [target(w, "WORK_STEALING_RING", goal=0.9, pools=("LANE_EXTENSION",), issue="49")
               for w in RECURSIVE_SHAPES]
            # the fork-handle sides (RecursiveShapesBench's _FORK pools) against their own kind
            + [target(w, "WORK_STEALING_RING_FORK", goal=0.9, pools=("LANE_EXTENSION_FORK",), issue="49")
               for w in RECURSIVE_SHAPES])


TARGETS = [
    # issue 43: the floods, counted the same way on every side (Fairness)
    target("flood_1m", "FJP", goal=2.0, issue="43"),
    target("flood_1m", "TPE_ABQ", goal=1.5, issue="43"),
    # the FJP side batches too (one external task forking its children); TPE has no batch API, so no TPE target
    target("flood_1m_batched", "FJP", goal=2.0, issue="43"),
    # FJP has no bounded queue: its producers never wait (the "no back-pressure" reference)
    target("burst_bounded", "FJP", goal=1.0, issue="15", peer_label="FJP (unbounded)"),
    target("burst_bounded", "TPE_ABQ", goal=1.5, issue="15"),
    target("taskPerIndex", "FJP", goal=1.0, issue="15"),
    target("tree_join_fresh", "FJP", median=1.3, worst=1.0, pools=FORK_JOIN_SIDES, issue="43"),
    target("tree_join_fresh", "FJP", goal=1.0, pools=("GLOBAL_QUEUE",), issue="43"),
    target("tree_join_reused", "FJP", median=1.5, pools=FORK_JOIN_SIDES, issue="43"),
    target("wsum", "FJP", goal=1.0, issue="43"),
    *recursive_shape_targets(),
    target("wake_latency", "FJP", goal=1.0, pools=PARK, issue="43", metric="p50"),
    target("wake_latency", "FJP", pools=PARK, issue="15", metric="p99", reference=True),
    target("ping_pong", "FJP", goal=1.0, pools=PARK, issue="15", metric="p50"),
    target("ping_pong", "FJP", goal=1.0, pools=PARK, issue="15", metric="p99"),
    target("ping_pong", "DISRUPTOR_BUSY", goal=1.0, pools=SPIN, issue="15", metric="p99"),
    # the multi-producer Disruptor: the contract of submit from any thread; shown beside the target above
    target("ping_pong", "DISRUPTOR_BUSY_MULTI", pools=SPIN, issue="15", metric="p99", reference=True),
]

# Splits one op of a RecursiveShapesBench workload makes at its LARGE size, the same on every side
# (RecursiveShapesBench.splits; RecursiveShapesBenchTest checks that these are its numbers): the efficiency table's
# bytes per split are gc.alloc.rate.norm (bytes per op) / splits. Key: (class, method).
SPLITS = {
    ("RecursiveShapesBench", "fib"): 39_088_168,
    ("RecursiveShapesBench", "quadrature"): 1_704_059,
    ("RecursiveShapesBench", "queens"): 9_631,
    ("RecursiveShapesBench", "reduce"): 2_047,
    ("RecursiveShapesBench", "stencil"): 12_600,
    ("RecursiveShapesBench", "matmul"): 1_755,
}

# LANE_EXTENSION's join rows: true of every committed run (its blocking worker began to steal halves in 6c63cf3).
LANE_JOIN_NOTE = ("one of its n threads is its blocking-lane worker, which steals join halves from 6c63cf3 on "
                  "(in runs before, it did not)")

# How the sides of a workload differ, shown in the ratio table's "note" column. Key: a workload's method name,
# or (method, pool) for a note on one pool's row only (looked up first).
NOTES = {
    "flood_1m": "every pool counts on the same WaitGroup, one done() per task; FJP and TPE_LBQ unbounded",
    "flood_1m_batched": "ours: submitBatch of 256; FJP: one external task that forks its 256 children inside "
                        "the pool (children reused with reinitialize()); TPE: no batch API",
    "flood_1m_shared_counter": "every pool counts on one shared atomic counter: the JDK pools' cheapest form "
                               "(an extra row, labelled)",
    "burst_bounded": "ours and the TPEs hold the same number of tasks; FJP has no bound: its producers never wait",
    "parallelFor": "ours: guided claims and the caller takes part; FJP: binary split to the grain, the invoking "
                   "thread waits",
    "range_split": "the same binary split to the same grain on both sides, both callers waiting",
    "taskPerIndex": "one capturing lambda per index on both sides, counted on a WaitGroup; FJP unbounded",
    "tree_join_reused": "one prebuilt tree of 2^20 leaves on both sides; FJP reinitializes each node after its "
                        "invokeAll, inside the timing",
    "tree_join_fresh": "both sides create every node as they recurse, as a user's recursive algorithm does",
    "wsum": "ours submits the right half detached, counted on a WaitGroup; FJP: fork / compute / join",
    "wsum_join": "both sides: a binary split, join(left, right) / invokeAll(left, right)",
    "tree": "ours submits both children detached (WaitGroup); FJP: invokeAll",
    "tree_join_args": "ours: join(fn, ctx, l, r), no node object (the range in the half's long); FJP: a fresh "
                      "RecursiveAction per node; every leaf counts its runs in one shared long[] on both sides",
    "tree_join_args_reused": "ours: join(fn, ctx, l, r), no node object; FJP: one prebuilt tree of "
                             "RecursiveActions, reinitialized after each invokeAll; leaf counts as tree_join_args",
    "orders_1m": "every side runs the same order handler, which counts on one WaitGroup; ours in argument form "
                 "(_LAMBDA: a capturing lambda per order, as FJP and TPE); the Disruptor: publishEvent, 2 handlers "
                 "taking sequences mod 2; FJP unbounded",
    "fib": "Fibonacci, threshold 2: ours join(fn, ctx, n - 2, n - 1), leaves add into per-worker accumulators; FJP "
           "forks n - 1 as a RecursiveAction, n - 2 in place, the result in the task; SERIAL: plain recursion",
    "quadrature": "adaptive Simpson, double results summed up the tree in the same order on every side: ours keeps "
                  "them in per-worker stacks of node slots; FJP in the forked task's field",
    "queens": "counting n-queens (14), the top 4 rows split: ours counts into per-worker accumulators; FJP returns "
              "the count in the forked task",
    "reduce": "sum of 2^23 longs, leaves of 4096: ours into per-worker accumulators; FJP in the forked task",
    "stencil": "1-D Jacobi, 200 steps, each step a split from the caller (the barrier): ours join from outside, "
               "FJP invoke",
    "matmul": "512 x 512 doubles, quadrant split to 32 x 32 blocks, the k halves in order: no results to return",
    ("tree_join_reused", "LANE_EXTENSION"): LANE_JOIN_NOTE,
    ("tree_join_fresh", "LANE_EXTENSION"): LANE_JOIN_NOTE,
    ("wsum_join", "LANE_EXTENSION"): LANE_JOIN_NOTE,
    ("tree_join_args", "LANE_EXTENSION"): LANE_JOIN_NOTE,
    ("tree_join_args_reused", "LANE_EXTENSION"): LANE_JOIN_NOTE,
}

# A peer's name in one workload's rows of the ratio table: (method, pool) -> label.
POOL_LABELS = {("burst_bounded", "FJP"): "FJP (unbounded)"}

# Ratio cells that have no ratio, with the text shown instead: (method, peer) -> text.
NO_RATIO = {
    ("flood_1m_batched", "TPE_LBQ"): "no batch API",
    ("flood_1m_batched", "TPE_ABQ"): "no batch API",
}


def canonical_pool(value):
    """The pool name for a parameter value (upper case; FORK_JOIN* becomes FJP*), or None."""
    up = str(value).upper()
    if up.startswith(TWIN_PREFIX):
        base = canonical_pool(up[len(TWIN_PREFIX):])
        return TWIN_PREFIX + base if base else None
    for alias in ("FORK_JOIN", "FORKJOIN"):
        if up.startswith(alias):
            up = "FJP" + up[len(alias):]
    if up.startswith("WS_"):  # FanoutBench's WS_RING / WS_CHASE_LEV: WORK_STEALING with that queue kind
        up = "WORK_STEALING_" + up[len("WS_"):]
    if up == FLOOR:
        return up
    for prefix in OURS + ("FJP", "TPE", "DISRUPTOR"):
        if up == prefix or up.startswith(prefix + "_"):
            return up
    return None


def twin_of(pool):
    """The side an A/A twin repeats (AA_X: X), or None for any other pool."""
    return pool[len(TWIN_PREFIX):] if pool.startswith(TWIN_PREFIX) else None


def is_ours(pool):
    return any(pool == o or pool.startswith(o + "_") for o in OURS)


def applies(patterns, pool):
    """Whether a target's pool patterns take this pool: one of the positive patterns, none of the "!" ones."""
    if not is_ours(pool):
        return False
    yes = [p for p in patterns if not p.startswith("!")]
    no = [p[1:] for p in patterns if p.startswith("!")]
    return any(fnmatch.fnmatchcase(pool, p) for p in yes) and not any(fnmatch.fnmatchcase(pool, p) for p in no)


def pool_order(pools):
    known = [p for p in PREFERRED_ORDER if p in pools]
    return known + sorted(p for p in pools if p not in PREFERRED_ORDER)


def color(pool, _cache={}):
    if pool in COLORS:
        return COLORS[pool]
    if pool not in _cache:
        _cache[pool] = FALLBACK_COLORS[len(_cache) % len(FALLBACK_COLORS)]
    return _cache[pool]


# ---- reading --------------------------------------------------------------------------------------------

ROUND_IN_NAME = re.compile(r"\.r(\d+)(?:\.|$)")


def round_of(path):
    """The round in a file name (<Class>.r<N>.json, <Class>.r<N>.<pool>.json); none: round 1."""
    m = ROUND_IN_NAME.search(os.path.basename(path)[:-len(".json")])
    return int(m.group(1)) if m else 1


def fork_means(raw):
    """One mean per fork from JMH's rawData (a list of iteration scores per fork)."""
    if not isinstance(raw, list):
        return []
    return [statistics.fmean(fork) for fork in raw if isinstance(fork, list) and fork]


class Series:
    """One (class, workload, pool): its forks as (round, score, alloc) and what is needed to judge them."""

    def __init__(self, klass, method, params, pool, mode, unit, threads=0):
        self.klass, self.method, self.params, self.pool = klass, method, params, pool
        self.mode, self.unit = mode, unit
        self.threads = threads  # the "threads" parameter (0: one per CPU of the machine that ran it)
        self.extra = ""  # the parameters that vary within the workload, set by read_results
        self.forks = []

    @property
    def workload(self):
        return self.method + (f" [{self.extra}]" if self.extra else "")

    @property
    def higher_is_better(self):
        return self.mode == "thrpt"

    @property
    def scores(self):
        return [s for _, s, _ in self.forks]

    @property
    def allocs(self):
        return [a for _, _, a in self.forks if a is not None]


def entry_forks(entry, rnd):
    """[(round, score, alloc)] of one JMH result entry: a fork's score is the mean of its measurement
    iterations, its allocation the mean of its gc.alloc.rate.norm iterations (else the entry's score)."""
    pm = entry["primaryMetric"]
    scores = fork_means(pm.get("rawData")) or [float(pm["score"])]
    norm = (entry.get("secondaryMetrics") or {}).get("gc.alloc.rate.norm")
    allocs = fork_means(norm.get("rawData")) if norm else []
    if len(allocs) != len(scores):
        allocs = [float(norm["score"]) if norm else None] * len(scores)
    return [(rnd, s, a) for s, a in zip(scores, allocs)]


def pool_of(params):
    """(pool key, canonical pool): "pool" if present, else the first parameter whose value names a pool."""
    keys = (["pool"] if "pool" in params else []) + sorted(k for k in params if k != "pool")
    key = next((k for k in keys if canonical_pool(params[k]) is not None), None)
    return key, (canonical_pool(params[key]) if key else None)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"skipping {path}: {e}", file=sys.stderr)
        return []
    return [e for e in data if isinstance(e, dict) and "primaryMetric" in e] if isinstance(data, list) else []


def read_results(in_dir):
    """Every Series of the JMH JSON in in_dir (LatencyBench's left out: its figures come from latency.csv)."""
    series = {}
    for path in sorted(glob.glob(os.path.join(in_dir, "*.json"))):
        rnd = round_of(path)
        for entry in read_json(path):
            parts = entry["benchmark"].split(".")
            params = entry.get("params") or {}
            key_name, pool = pool_of(params)
            if pool is None:
                continue
            rest = tuple(sorted((k, str(v)) for k, v in params.items() if k not in (key_name, "threads")))
            key = (parts[-2], parts[-1], rest, pool)
            if key not in series:
                series[key] = Series(parts[-2], parts[-1], rest, pool, entry["mode"],
                                     entry["primaryMetric"]["scoreUnit"], int(params.get("threads") or 0))
            series[key].forks.extend(entry_forks(entry, rnd))
    result = [s for s in series.values() if s.klass != "LatencyBench"]
    # Show only the extra parameters that vary within a workload (flood_1m has a batch parameter it ignores).
    seen = {}
    for s in result:
        for k, v in s.params:
            seen.setdefault((s.klass, s.method, k), set()).add(v)
    for s in result:
        s.extra = ",".join(f"{k}={v}" for k, v in s.params if len(seen[(s.klass, s.method, k)]) > 1)
    return result


LATENCY_COLS = (("p50", "p50_ns"), ("p90", "p90_ns"), ("p99", "p99_ns"), ("p999", "p999_ns"),
                ("max", "max_ns"), ("mean", "mean_ns"), ("count", "count"))


def read_latency(path):
    """{(benchmark, pool): [fork]}, a fork a dict of LATENCY_COLS' names plus "round" (None when the row has
    no round: rows written before the round column, which pair with nothing)."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            fork = {name: float(row[col]) for name, col in LATENCY_COLS}
            rnd = (row.get("round") or "").strip()
            fork["round"] = int(rnd) if rnd.isdigit() else None
            pool = canonical_pool(row["pool"]) or row["pool"]
            out.setdefault((row["benchmark"], pool), []).append(fork)
    return out


def read_idle_cpu(path):
    """{(pool, mode): [(percent, tasks_per_s or None)]} from idle_cpu.csv, one entry per round."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            try:
                pct = float(row["percent_of_one_core"])
            except (KeyError, ValueError):
                continue
            tps = row.get("tasks_per_s") or ""
            out.setdefault((row["pool"], row["mode"]), []).append((pct, float(tps) if tps else None))
    return out


# ---- statistics -----------------------------------------------------------------------------------------

def spread(values):
    """(median, min, max) of a list of numbers; None when empty."""
    return (statistics.median(values), min(values), max(values)) if values else None


def by_round(forks):
    """{round: median of that round's values} from [(round, value)]; a round with several forks (old JSON
    with -f 2, several forks in one file) counts once, by their median. Forks without a round are left out."""
    rounds = {}
    for rnd, v in forks:
        if rnd is not None:
            rounds.setdefault(rnd, []).append(v)
    return {r: statistics.median(vs) for r, vs in rounds.items()}


class Ratio:
    """Ours against a peer, oriented so > 1 means ours is better. paired: per-round ratios (median, worst,
    best over them, n = rounds paired); otherwise the ratio of the medians over all forks, with no worst."""

    def __init__(self, median, worst=None, best=None, n=0, paired=False):
        self.median, self.worst, self.best, self.n, self.paired = median, worst, best, n, paired


def oriented(ours, peer, higher_is_better):
    if ours <= 0 or peer <= 0:
        return None
    return ours / peer if higher_is_better else peer / ours


def pair_ratio(ours_forks, peer_forks, higher_is_better):
    """Ratio of ours to the peer from [(round, value)] each. Paired by round when at least two rounds have
    both sides (one round is a single comparison with nothing to say how it varies); else the medians."""
    o, p = by_round(ours_forks), by_round(peer_forks)
    common = sorted(set(o) & set(p))
    per_round = [x for x in (oriented(o[r], p[r], higher_is_better) for r in common) if x is not None]
    if len(per_round) >= 2:
        return Ratio(statistics.median(per_round), min(per_round), max(per_round), len(per_round), True)
    if not ours_forks or not peer_forks:
        return None
    x = oriented(statistics.median(v for _, v in ours_forks), statistics.median(v for _, v in peer_forks),
                 higher_is_better)
    if x is None:
        return None
    return Ratio(x, n=min(len(ours_forks), len(peer_forks)))


def series_ratio(ours, peer):
    return pair_ratio([(r, s) for r, s, _ in ours.forks], [(r, s) for r, s, _ in peer.forks],
                      ours.higher_is_better)


def verdict(ratio, t):
    """The verdict of a target t (see TARGETS) on a Ratio, as text:
    - goal: "met" when the worst per-round ratio >= goal, or the median > goal + NOISE_BAND; "not met (level)"
      when the median is within the band of the goal but the worst is below it; else "not met". Unpaired
      ratios have no worst: only the median's test applies.
    - median / worst (two parts): "met" only when both hold, plain (no band); else "not met" and the part missed.
    With fewer than FORKS_OF_RECORD paired forks: "not of record (N forks)" whatever the figures say; a ratio whose
    rounds do not pair at all: "not of record (unpaired, N forks)"."""
    if t["reference"]:
        return "(reference)"
    if ratio is None:
        return "n/a"
    if not ratio.paired:
        return f"not of record (unpaired, {ratio.n} fork{'' if ratio.n == 1 else 's'})"
    if ratio.n < FORKS_OF_RECORD:
        return f"not of record ({ratio.n} forks)"
    if t["goal"] is not None:
        goal = t["goal"]
        if ratio.worst >= goal or ratio.median > goal + NOISE_BAND:
            return "met"
        if abs(ratio.median - goal) <= NOISE_BAND:
            return "not met (level)"
        return "**not met**"
    missed = []
    if t["median"] is not None and ratio.median < t["median"]:
        missed.append(f"median < {t['median']}")
    if t["worst"] is not None and ratio.worst < t["worst"]:
        missed.append(f"worst < {t['worst']}")
    return "met" if not missed else f"**not met** ({', '.join(missed)})"


# ---- tables ---------------------------------------------------------------------------------------------

def fmt_value(v, unit):
    if unit == "ops/s":
        return f"{v / 1e6:.2f}" if v >= 1e5 else f"{v:,.0f}"
    return f"{v:.3g}"


def fmt_series(s):
    """e.g. "21.30 M/s (19.00-24.10, 5 forks)": median over forks, min-max, fork count."""
    med, lo, hi = spread(s.scores)
    unit = ("M/s" if med >= 1e5 else "/s") if s.unit == "ops/s" else s.unit
    forks = f"{len(s.forks)} fork" + ("s" if len(s.forks) != 1 else "")
    if len(s.forks) == 1:
        return f"{fmt_value(med, s.unit)} {unit} (1 fork)"
    return f"{fmt_value(med, s.unit)} {unit} ({fmt_value(lo, s.unit)}-{fmt_value(hi, s.unit)}, {forks})"


def fmt_x(x):
    """A ratio with two decimals, or two significant digits below 0.1 (a latency ratio can be 0.004)."""
    return f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"


def fmt_ratio(r, bold=True):
    if r is None:
        return "n/a"
    med = f"**{fmt_x(r.median)}x**" if bold else f"{fmt_x(r.median)}x"
    if r.paired:
        return f"{med} ({fmt_x(r.worst)}-{fmt_x(r.best)})"
    return f"{med} (medians)"


WORKLOAD_ORDER = ("flood_1m", "flood_1m_batched", "flood_1m_shared_counter", "burst_bounded", "tree_join",
                  "wsum", "parallelFor", "taskPerIndex")


def workload_rank(method):
    for i, prefix in enumerate(WORKLOAD_ORDER):
        if method == prefix or method.startswith(prefix + "_"):
            return i
    return len(WORKLOAD_ORDER)


def by_workload(results):
    """{(class, workload): {pool: Series}} in the report's order (known workloads first, then by name)."""
    groups = {}
    for s in sorted(results, key=lambda s: (workload_rank(s.method), s.klass, s.workload)):
        groups.setdefault((s.klass, s.workload), {})[s.pool] = s
    return groups


def ratio_cell(s, peer, pools):
    """The cell of our Series s against a peer column: a ratio, "no batch API"-style text, or nothing."""
    if not is_ours(s.pool):
        return ""
    if (s.method, peer) in NO_RATIO:
        return NO_RATIO[(s.method, peer)]
    if peer not in pools:
        return ""
    return fmt_ratio(series_ratio(s, pools[peer]))


def ratio_table(results):
    groups = by_workload(results)
    peers = [p for p in ("FJP",) + TPE_PEERS if any(p in g for g in groups.values())]
    lines = ["| workload | pool | median (min-max, forks) | " + " | ".join(f"vs {p}" for p in peers)
             + " | alloc B/task | note |",
             "|---|---|---:|" + "---:|" * len(peers) + "---:|---|"]
    for (klass, workload), pools in groups.items():
        for i, pool in enumerate(pool_order(pools)):
            s = pools[pool]
            cells = [ratio_cell(s, p, pools) for p in peers]
            # the workload's note once, on its first row; a pool's own note on its row
            note = NOTES.get((s.method, pool)) or (NOTES.get(s.method, "") if i == 0 else "")
            allocs = s.allocs
            alloc = f"{statistics.median(allocs):.2f}" if allocs else ""
            if alloc and not s.higher_is_better:
                alloc += " per op"  # time-per-operation workloads: JMH normalises per invocation, not per task
            name = f"`{pool}`" if is_ours(pool) else POOL_LABELS.get((s.method, pool), pool)
            lines.append(f"| {workload} | {name} | {fmt_series(s)} | " + " | ".join(cells)
                         + f" | {alloc} | {note} |")
    return "\n".join(lines)


def twin_table(results):
    """Each A/A twin against the side it repeats, paired by round as every ratio is (the side's fork / the twin's,
    oriented so that > 1 means the side's fork was the better): identical code, so how far this ratio strays from
    1.0 is the run's own noise for a pool against itself. None when the run has no twin."""
    lines = []
    for (klass, workload), pools in by_workload(results).items():
        for pool in pool_order(pools):
            base = twin_of(pool)
            if base is None or base not in pools:
                continue
            r = series_ratio(pools[base], pools[pool])
            if r is None:
                continue
            forks = f"{r.n} paired" if r.paired else f"{r.n}, unpaired"
            width = f"{r.best / r.worst:.2f}" if r.paired and r.worst > 0 else ""
            name = f"`{base}`" if is_ours(base) else base
            lines.append(f"| {workload} | {name} | {fmt_ratio(r, bold=False)} | {forks} | {width} | "
                         f"{fork_spread(pools[base])} | {fork_spread(pools[pool])} |")
    if not lines:
        return None
    return "\n".join(["| workload | side | side / its twin, median (worst-best) | forks | best / worst | "
                      "max / min of the side's forks | of the twin's |", "|---|---|---:|---:|---:|---:|---:|"]
                     + lines)


def fork_spread(series):
    """max / min of a Series' fork scores (the figure of issue 43's spread target), or "" when it has none."""
    over = spread([v for v in series.scores if v > 0])
    return f"{over[2] / over[1]:.2f}" if over else ""


def target_label(t):
    if t["reference"]:
        return f"(reference) {t['workload']} {t['metric']}: {t['peer_label']} / ours"
    what = t["workload"] if t["metric"] == "score" else f"{t['workload']} {t['metric']} ({t['peer_label']} / ours)"
    if t["goal"] is not None:
        return f"{what} >= {t['goal']}x {t['peer_label'] if t['metric'] == 'score' else ''}".rstrip()
    parts = []
    if t["median"] is not None:
        parts.append(f"median >= {t['median']}x")
    if t["worst"] is not None:
        parts.append(f"worst >= {t['worst']}x")
    peer = t["peer_label"] if t["metric"] == "score" else ""
    return f"{what} {' and '.join(parts)} {peer}".rstrip()


def target_rows(t, results_groups, latency):
    """[(label, pool, Ratio)] of one target: every matching workload (any extra parameter) and pool."""
    rows = []
    if t["metric"] == "score":
        for (klass, w), pools in results_groups.items():
            method = next(iter(pools.values())).method
            if method != t["workload"] or t["peer"] not in pools:
                continue
            label = target_label(t) + (w[len(method):] if w != method else "")
            for pool in pool_order(pools):
                if applies(t["pools"], pool):
                    rows.append((label, pool, series_ratio(pools[pool], pools[t["peer"]])))
        return rows
    peer = latency.get((t["workload"], t["peer"]))
    if not peer:
        return rows
    pools = {p: forks for (b, p), forks in latency.items() if b == t["workload"]}
    for pool in pool_order(pools):
        if applies(t["pools"], pool):
            pct = t["metric"]
            # time: lower is better, so the ratio is peer / ours
            r = pair_ratio([(f["round"], f[pct]) for f in pools[pool]], [(f["round"], f[pct]) for f in peer], False)
            rows.append((target_label(t), pool, r))
    return rows


def target_table(results, latency):
    groups = by_workload(results)
    lines = ["| target | ours | median ratio (worst-best) | forks | verdict | issue |",
             "|---|---|---:|---:|---|---|"]
    for t in TARGETS:
        for label, pool, r in target_rows(t, groups, latency):
            forks = "" if r is None else (f"{r.n} paired" if r.paired else f"{r.n}, unpaired")
            lines.append(f"| {label} | `{pool}` | {fmt_ratio(r, bold=False)} | {forks} | {verdict(r, t)} | "
                         f"{t['issue']} |")
    return "\n".join(lines)


RULE_TEXT = (
    "A pool's figure is the median of its forks (one fork per pool per round), with the range over forks. "
    "A ratio pairs our fork with the peer's fork of the same round and gives the median of the per-round ratios "
    "and, in brackets, the worst and the best round; \"(medians)\" marks a ratio of the two medians where the "
    "rounds do not pair (a quick run, a missing fork). A target `ratio >= goal` is **met** when the worst round "
    f"is at or above the goal, or the median is more than the noise band ({NOISE_BAND}) above it; **not met "
    "(level)** when the median is within the band of the goal but the worst round is below it; otherwise **not "
    "met**. A target with a median part and a worst part is met only when both hold (plain median, no band). "
    f"With fewer than {FORKS_OF_RECORD} paired forks a verdict is **not of record**.")


def us(ns):
    return f"{ns / 1000:.1f}" if ns < 100_000 else f"{ns / 1000:,.0f}"


def fmt_us_spread(values):
    med, lo, hi = spread(values)
    return us(med) if len(values) == 1 else f"{us(med)} ({us(lo)}-{us(hi)})"


def latency_table(latency):
    lines = ["| benchmark | pool | forks | samples | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    benches = ["wake_latency", "ping_pong", "submit_latency"]
    benches += sorted({b for b, _ in latency} - set(benches))
    for bench in benches:
        pools = {p: v for (b, p), v in latency.items() if b == bench}
        for pool in pool_order(pools):
            forks = pools[pool]
            name = f"`{pool}`" if is_ours(pool) else pool
            cells = [fmt_us_spread([f[k] for f in forks]) for k in ("p50", "p90", "p99", "p999")]
            lines.append(f"| {bench} | {name} | {len(forks)} | {int(sum(f['count'] for f in forks)):,} | "
                         + " | ".join(cells) + f" | {us(max(f['max'] for f in forks))} |")
    return "\n".join(lines)


def idle_cpu_table(idle):
    lines = ["| pool | mode | % of one core, median (min-max) | rounds | tasks/s submitted (median) |",
             "|---|---|---:|---:|---:|"]
    pools = {p for p, _ in idle}
    for pool in pool_order(pools):
        for mode in ("idle", "sparse") + tuple(sorted({m for p, m in idle if p == pool} - {"idle", "sparse"})):
            rows = idle.get((pool, mode))
            if not rows:
                continue
            med, lo, hi = spread([pct for pct, _ in rows])
            tps = [t for _, t in rows if t is not None]
            rate = f"{statistics.median(tps):,.0f}" if tps and mode != "idle" else ""
            shown = f"{med:.2f}" if len(rows) == 1 else f"{med:.2f} ({lo:.2f}-{hi:.2f})"
            name = f"`{pool}`" if is_ours(pool) else pool
            lines.append(f"| {name} | {mode} | {shown} | {len(rows)} | {rate} |")
    return "\n".join(lines)


# ---- SVG ------------------------------------------------------------------------------------------------

def esc(s):
    return html.escape(str(s), quote=True)


def bar_parts(bar):
    """A bar is (pool, value) or (pool, value, low, high): the latter draws a whisker from low to high."""
    return (bar[0], bar[1], None, None) if len(bar) == 2 else tuple(bar)


def hbar_chart(path, title, subtitle, groups, axis_label, log=False, ref=None, value_fmt="{:.2f}"):
    """groups: [(label, [bar])], bar as in bar_parts; horizontal bars, one row per pool, grouped by label."""
    groups = [(g, [bar_parts(b) for b in bars]) for g, bars in groups]
    groups = [(g, [b for b in bars if b[1] is not None and (b[1] > 0 or not log)]) for g, bars in groups]
    groups = [(g, bars) for g, bars in groups if bars]
    if not groups:
        return False
    bar_h, head_h, gap, left, right, top = 14, 16, 10, 170, 100, 58
    plot_w = 560
    rows = sum(len(b) for _, b in groups)
    height = top + rows * bar_h + len(groups) * (gap + head_h) + 50
    width = left + plot_w + right
    values = [v for _, bars in groups for _, v, _, _ in bars] + ([ref] if ref else [])
    values += [h for _, bars in groups for _, _, _, h in bars if h is not None]
    if log:
        lo = 10 ** math.floor(math.log10(min(values)))
        hi = 10 ** math.ceil(math.log10(max(values)))
        if hi <= lo:
            hi = lo * 10

        def x(v):
            return left + plot_w * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        ticks = [lo * 10 ** i for i in range(int(round(math.log10(hi / lo))) + 1)]
    else:
        hi = max(values) * 1.08 or 1.0
        lo = 0.0
        step = nice_step(hi / 5)

        def x(v):
            return left + plot_w * v / hi
        ticks = [i * step for i in range(int(hi / step) + 1)]
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">{esc(title)}</text>',
           f'<text x="{width / 2}" y="38" text-anchor="middle" fill="#555">{esc(subtitle)}</text>']
    plot_bottom = height - 40
    for t in ticks:
        tx = x(t)
        out.append(f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{plot_bottom}" stroke="#e3e3e3"/>')
        label = f"{t:g}" if not log else tick_label(t)
        out.append(f'<text x="{tx:.1f}" y="{plot_bottom + 14}" text-anchor="middle" fill="#444">{esc(label)}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{plot_bottom + 30}" text-anchor="middle">{esc(axis_label)}</text>')
    y = top
    for label, bars in groups:
        out.append(f'<text x="8" y="{y + 12}" font-weight="bold">{esc(label)}</text>')
        y += head_h
        for pool, v, wlo, whi in bars:
            x0 = x(lo) if log else left
            w = max(x(v) - x0, 1.0)
            shown = value_fmt.format(v)
            if wlo is not None:
                shown += f" ({value_fmt.format(wlo)}-{value_fmt.format(whi)})"
            out.append(f'<text x="{left - 6}" y="{y + bar_h - 3}" text-anchor="end">{esc(pool)}</text>')
            out.append(f'<rect x="{x0:.1f}" y="{y + 1}" width="{w:.1f}" height="{bar_h - 2}" fill="{color(pool)}">'
                       f'<title>{esc(pool)}: {esc(shown)}</title></rect>')
            text_x = x0 + w + 4
            if wlo is not None and wlo > 0:
                xl, xh, ym = x(wlo), x(whi), y + bar_h / 2
                out.append(f'<line x1="{xl:.1f}" y1="{ym:.1f}" x2="{xh:.1f}" y2="{ym:.1f}" stroke="#000"/>')
                for xe in (xl, xh):
                    out.append(f'<line x1="{xe:.1f}" y1="{y + 3}" x2="{xe:.1f}" y2="{y + bar_h - 3}" stroke="#000"/>')
                text_x = max(text_x, xh + 4)
            out.append(f'<text x="{text_x:.1f}" y="{y + bar_h - 3}" fill="#222">{esc(value_fmt.format(v))}</text>')
            y += bar_h
        y += gap
    if ref is not None:
        rx = x(ref)
        out.append(f'<line x1="{rx:.1f}" y1="{top - 6}" x2="{rx:.1f}" y2="{plot_bottom}" stroke="#000" '
                   f'stroke-dasharray="4,3"/>')
    out.append("</svg>")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    return True


def nice_step(raw):
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


def tick_label(t):
    if t >= 1000:
        return f"{t / 1000:g}k" if t < 1e6 else f"{t / 1e6:g}M"
    return f"{t:g}"


def forks_per_pool(results):
    """The usual fork count of a pool (the median over series), for the charts' subtitles."""
    counts = [len(s.forks) for s in results]
    return int(statistics.median(counts)) if counts else 0


def ratio_bars(groups):
    """[(workload, [bar])] of every workload with a FJP side: each other pool's per-round ratio to FJP."""
    out = []
    for (klass, workload), pools in groups.items():
        if "FJP" not in pools:
            continue
        bars = []
        for p in pool_order(pools):
            r = series_ratio(pools[p], pools["FJP"]) if p not in ("FJP", FLOOR) and twin_of(p) is None else None
            if r is not None:
                bars.append((p, r.median, r.worst, r.best) if r.paired else (p, r.median))
        if bars:
            unit = "" if pools["FJP"].higher_is_better else " (time: FJP / pool)"
            out.append((workload + unit, bars))
    return out


def charts(results, latency, out_dir, mode):
    groups = by_workload(results)
    n = forks_per_pool(results)
    forks = f"{n} fork" + ("s" if n != 1 else "") + " a pool"
    run = "smoke run (--quick)" if mode == "quick" else "full run"
    made = []
    if hbar_chart(os.path.join(out_dir, "throughput-ratio.svg"), "Against ForkJoinPool (> 1: faster than FJP)",
                  f"median of per-round ratios, {forks}; whiskers: worst to best round ({run})",
                  ratio_bars(groups), "ratio to ForkJoinPool (1.0 = same)", ref=1.0, value_fmt="{:.2f}x"):
        made.append("throughput-ratio.svg")
    al = []
    for (klass, workload), pools in groups.items():
        bars = [(p, statistics.median(pools[p].allocs)) for p in pool_order(pools) if pools[p].allocs]
        if bars:
            al.append((workload, [(p, max(v, 0.01)) for p, v in bars]))
    if hbar_chart(os.path.join(out_dir, "alloc-per-task.svg"), "Allocation per task (gc.alloc.rate.norm)",
                  f"bytes allocated per task, all threads, median over forks, log scale; 0.01 = nothing "
                  f"measurable ({run})", al, "bytes per task", log=True, value_fmt="{:.2f} B"):
        made.append("alloc-per-task.svg")
    lat = []
    for bench, what in (("wake_latency", "idle pool"), ("ping_pong", "one event in flight"),
                        ("submit_latency", "loaded pool")):
        pools = {p: v for (b, p), v in latency.items() if b == bench}
        for pct, key in (("p50", "p50"), ("p99", "p99"), ("p99.9", "p999")):
            bars = [(p, statistics.median(f[key] for f in pools[p]) / 1000) for p in pool_order(pools)]
            if bars:
                lat.append((f"{bench} {pct} ({what})", bars))
    if hbar_chart(os.path.join(out_dir, "latency-percentiles.svg"), "Submit-to-start latency (HdrHistogram)",
                  f"microseconds, median over forks, log scale, shorter is better ({run})", lat, "µs", log=True,
                  value_fmt="{:.1f} µs"):
        made.append("latency-percentiles.svg")
    return made


def fmt_scaled(r, scale, suffix=""):
    """A Ratio's median (worst-best) times scale, or its median alone where the rounds do not pair."""
    if r is None:
        return "n/a"
    if r.paired:
        return f"{fmt_x(r.median * scale)}{suffix} ({fmt_x(r.worst * scale)}-{fmt_x(r.best * scale)})"
    return f"{fmt_x(r.median * scale)}{suffix} (medians)"


def efficiency_table(results, workers):
    """For every workload with a FLOOR (SERIAL) side: each side's time, its speed-up over the floor (the floor's time
    / its time, paired by round as the ratios are), its efficiency (the speed-up / n, n its threads parameter, 0 read
    as `workers`), and its bytes per split (gc.alloc.rate.norm / SPLITS, at the size SPLITS counts); None when no
    workload has a floor."""
    groups = by_workload(results)
    lines = []
    for (klass, workload), pools in groups.items():
        if FLOOR not in pools:
            continue
        floor = pools[FLOOR]
        for pool in pool_order(pools):
            s = pools[pool]
            splits = SPLITS.get((klass, s.method)) if dict(s.params).get("size", "LARGE") == "LARGE" else None
            allocs = s.allocs
            per_split = f"{statistics.median(allocs) / splits:.2f}" if allocs and splits else ""
            if pool == FLOOR:
                speedup, eff = "1 (the floor)", ""
            else:
                n = s.threads or workers
                r = series_ratio(s, floor)  # time: the floor's / this side's
                speedup, eff = fmt_scaled(r, 1.0, "x"), fmt_scaled(r, 1.0 / n) + f" [n={n}]"
            name = f"`{pool}`" if is_ours(pool) else pool
            lines.append(f"| {workload} | {name} | {fmt_series(s)} | {speedup} | {eff} | {per_split} |")
    if not lines:
        return None
    return "\n".join(["| workload | pool | median (min-max, forks) | speed-up over SERIAL | efficiency "
                      "((SERIAL / n) / time) | B/split |", "|---|---|---:|---:|---:|---:|"] + lines)


def report(results, latency, idle, mode, workers=None):
    """The markdown of ratios.md. workers: n for a side whose threads parameter is 0 (default: this machine's
    CPUs)."""
    workers = workers or os.cpu_count() or 1
    label = ("Smoke run (`--quick`: 1 round, 1 fork a pool, 1 x 1 s warm-up, 1 x 1 s measurement): the figures "
             "show the suite runs, not how fast anything is." if mode == "quick"
             else "Full run (see the protocol).")
    md = ["<!-- generated by src/jmh/bench_charts.py from the JMH JSON; do not edit by hand -->", "", label, "",
          RULE_TEXT, "",
          "### Throughput and allocation (ratio > 1: ours is better)", "", ratio_table(results), "",
          "### Targets", "", target_table(results, latency), ""]
    twins = twin_table(results)
    if twins:
        md += ["### A/A control: each side against its twin (identical code)", "",
               "A twin (`AA_` before a pool's name) is the same side built by the same code, one more fork of every "
               "round in its own place of the round's order; no target is judged on it. A side against its twin "
               "does identical work, so this ratio strays from 1.0 by the run's noise alone: a target's worst-round "
               "part that asks more of a pool against its peer than the worst round here shows for a pool against "
               "itself cannot be told from noise in this run.", "", twins, ""]
    eff = efficiency_table(results, workers)
    if eff:
        md += ["### Recursive shapes: speed-up, efficiency and bytes per split", "",
               "Speed-up: SERIAL's time / the side's, paired by round (median, worst-best); efficiency: the speed-up "
               f"/ n, the side's threads (threads=0 read as {workers}, the CPUs of the machine that drew this table; "
               "--workers N for JSON from another machine); B/split: gc.alloc.rate.norm / the shape's splits.", "",
               eff, ""]
    if latency:
        md += ["### Latency percentiles (HdrHistogram, submit to start; median (min-max) over forks)", "",
               latency_table(latency), ""]
    if idle:
        md += ["### CPU of the pool's threads, idle and under sparse arrivals (IdleCpu)", "", idle_cpu_table(idle),
               ""]
    return "\n".join(md)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in", dest="in_dir", default="target/jmh")
    ap.add_argument("--out", dest="out_dir", default="docs/bench")
    ap.add_argument("--mode", choices=("full", "quick"), default="full")
    ap.add_argument("--workers", type=int, default=None,
                    help="n of the efficiency table for a side run with threads=0 (default: this machine's CPUs)")
    args = ap.parse_args(argv)
    results = read_results(args.in_dir)
    latency = read_latency(os.path.join(args.in_dir, "latency.csv"))
    idle = read_idle_cpu(os.path.join(args.in_dir, "idle_cpu.csv"))
    if not results and not latency and not idle:
        print(f"no JMH JSON results, latency.csv or idle_cpu.csv in {args.in_dir}", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    made = charts(results, latency, args.out_dir, args.mode)
    text = report(results, latency, idle, args.mode, args.workers)
    with open(os.path.join(args.out_dir, "ratios.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"wrote {', '.join(made + ['ratios.md'])} to {args.out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
