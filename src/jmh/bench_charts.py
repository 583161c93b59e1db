#!/usr/bin/env python3
"""Charts and ratio tables from the benchmark suite's JMH JSON (python3 standard library only).

    python3 src/jmh/bench_charts.py [--in target/jmh] [--out docs/bench] [--mode full|quick]

Reads every *.json JMH result in --in (written by src/jmh/run-benchmarks.sh with -rf json; a pool that ran in
several rounds, one JSON per class and round, is merged as JMH merges forks) and the HdrHistogram rows of
LatencyBench (--in/latency.csv), and writes into --out:

  throughput-ratio.svg   every throughput workload, each pool's tasks/s relative to ForkJoinPool (= 1.0)
  alloc-per-task.svg     gc.alloc.rate.norm (bytes per task) per workload and pool
  latency-percentiles.svg  p50 / p99 / p99.9 / max submit-to-start latency per pool (log scale)
  ratios.md              the markdown tables for docs/BENCHMARKS.md (ratios, targets, latency, allocation)

The tables are also printed. Pools are recognised by the value of a benchmark parameter (normally "pool"):
ours are GLOBAL_QUEUE, WORK_STEALING, LANE_EXTENSION (a suffix such as _SPIN names an idle strategy), the peers
FJP (or FORK_JOIN*), TPE_LBQ, TPE_ABQ and DISRUPTOR_*. Any other benchmark class (FanoutBench, RangeBench, ...)
is picked up the same way, by its method names as workload names.
"""

import argparse
import csv
import glob
import html
import json
import math
import os
import statistics
import sys

OURS = ("GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION")
REFERENCE = "FJP"
TPE_PEERS = ("TPE_LBQ", "TPE_ABQ")
PREFERRED_ORDER = ["GLOBAL_QUEUE", "WORK_STEALING", "LANE_EXTENSION",
                   "GLOBAL_QUEUE_SPIN", "WORK_STEALING_SPIN", "LANE_EXTENSION_SPIN",
                   "FJP", "TPE_LBQ", "TPE_ABQ", "DISRUPTOR_BUSY", "DISRUPTOR_BUSY_MULTI",
                   "DISRUPTOR_BLOCKING"]
COLORS = {
    "GLOBAL_QUEUE": "#1f77b4", "WORK_STEALING": "#2ca02c", "LANE_EXTENSION": "#9467bd",
    "GLOBAL_QUEUE_SPIN": "#6baed6", "WORK_STEALING_SPIN": "#98df8a", "LANE_EXTENSION_SPIN": "#c5b0d5",
    "FJP": "#d62728", "TPE_LBQ": "#ff7f0e", "TPE_ABQ": "#bcbd22",
    "DISRUPTOR_BUSY": "#7f7f7f", "DISRUPTOR_BUSY_MULTI": "#525252", "DISRUPTOR_BLOCKING": "#b0b0b0",
}
FALLBACK_COLORS = ["#17becf", "#e377c2", "#8c564b", "#aec7e8", "#ffbb78"]

# The issues' targets: (workload, peer, minimum ratio ours/peer for throughput): issue 7's floods against the
# TPEs, issue 15's floods, burst and taskPerIndex.
THROUGHPUT_TARGETS = [
    ("flood_1m", "FJP", 1.5), ("flood_1m_batched", "FJP", 2.0),
    ("flood_1m", "TPE_LBQ", 3.0), ("flood_1m", "TPE_ABQ", 3.0),
    ("flood_1m_batched", "TPE_LBQ", 3.0), ("flood_1m_batched", "TPE_ABQ", 3.0),
    ("burst_bounded", "FJP", 1.0), ("burst_bounded", "TPE_ABQ", 1.5), ("taskPerIndex", "FJP", 1.0),
]
FANOUT_PREFIX = "fanout"  # any fanout_* workload: "no slower than FJP" (ratio >= 1.0)


def canonical_pool(value):
    """The pool name for a parameter value (upper case; FORK_JOIN* becomes FJP*), or None."""
    up = str(value).upper()
    for alias in ("FORK_JOIN", "FORKJOIN"):
        if up.startswith(alias):
            up = "FJP" + up[len(alias):]
    if up.startswith("WS_"):  # FanoutBench's WS_RING / WS_CHASE_LEV: WORK_STEALING with that queue kind
        up = "WORK_STEALING_" + up[len("WS_"):]
    for prefix in OURS + ("FJP", "TPE", "DISRUPTOR"):
        if up == prefix or up.startswith(prefix + "_"):
            return up
    return None


def is_ours(pool):
    return any(pool == o or pool.startswith(o + "_") for o in OURS)


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

class Result:
    def __init__(self, entry):
        full = entry["benchmark"]
        parts = full.split(".")
        self.klass, self.method = parts[-2], parts[-1]
        self.mode = entry["mode"]
        params = entry.get("params") or {}
        # The pool parameter: "pool" if present, else the first parameter whose value names a pool.
        keys = (["pool"] if "pool" in params else []) + sorted(k for k in params if k != "pool")
        pool_key = next((k for k in keys if canonical_pool(params[k]) is not None), None)
        self.pool = canonical_pool(params[pool_key]) if pool_key else None
        rest = [f"{k}={params[k]}" for k in sorted(params) if k not in (pool_key, "threads")]
        self.threads = params.get("threads", "")
        self.extra = ",".join(rest)
        pm = entry["primaryMetric"]
        self.score = float(pm["score"])
        err = pm.get("scoreError")
        self.error = float(err) if isinstance(err, (int, float)) and not math.isnan(err) else None
        self.unit = pm["scoreUnit"]
        sec = entry.get("secondaryMetrics") or {}
        norm = sec.get("gc.alloc.rate.norm")
        self.alloc = float(norm["score"]) if norm else None
        self.forks = entry.get("forks")
        # one list of iteration scores per fork; what merge_rounds pools when a pool ran in several rounds
        raw = pm.get("rawData")
        self.raw = raw if isinstance(raw, list) else None

    @property
    def workload(self):
        return self.method + (f" [{self.extra}]" if self.extra else "")

    @property
    def higher_is_better(self):
        return self.mode == "thrpt"


# Student's t at 0.9995 (a two-sided 99.9 % interval, JMH's scoreError) by degrees of freedom.
T_999 = {1: 636.62, 2: 31.599, 3: 12.924, 4: 8.610, 5: 6.869, 6: 5.959, 7: 5.408, 8: 5.041, 9: 4.781,
         10: 4.587, 11: 4.437, 12: 4.318, 13: 4.221, 14: 4.140, 15: 4.073, 16: 4.015, 17: 3.965, 18: 3.922,
         19: 3.883, 20: 3.850, 21: 3.819, 22: 3.792, 23: 3.768, 24: 3.745, 25: 3.725, 26: 3.707, 27: 3.690,
         28: 3.674, 29: 3.659, 30: 3.646}


def t_999(df):
    if df in T_999:
        return T_999[df]
    for bound, value in ((40, 3.551), (60, 3.460), (120, 3.373)):
        if df <= bound:
            return value
    return 3.291


def merge_rounds(results):
    """One Result per pool and workload: the full protocol runs each pool once per round (one JSON per class
    and round), and a pool's rounds are merged here as JMH merges forks: the score is the mean of every
    iteration of every round, the error JMH's 99.9 % half-width over them, the allocation the mean per fork."""
    groups = {}
    for r in results:
        groups.setdefault((r.klass, r.method, r.mode, r.pool, r.threads, r.extra), []).append(r)
    merged = []
    for rs in groups.values():
        if len(rs) == 1:
            merged.append(rs[0])
            continue
        m = rs[0]
        values = [v for r in rs for fork in (r.raw or []) for v in fork]
        if len(values) >= 2:
            m.score = statistics.fmean(values)
            m.error = t_999(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
        else:
            m.score = statistics.fmean(r.score for r in rs)
            m.error = None
        allocs = [(r.alloc, r.forks or 1) for r in rs if r.alloc is not None]
        m.alloc = sum(a * w for a, w in allocs) / sum(w for _, w in allocs) if allocs else None
        m.forks = sum(r.forks or 1 for r in rs)
        merged.append(m)
    return merged


def read_results(in_dir):
    results = []
    for path in sorted(glob.glob(os.path.join(in_dir, "*.json"))):
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"skipping {path}: {e}", file=sys.stderr)
            continue
        if not isinstance(data, list):
            continue
        for entry in data:
            if isinstance(entry, dict) and "primaryMetric" in entry:
                r = Result(entry)
                if r.pool is not None:
                    results.append(r)
    results = merge_rounds(results)
    # Show only the extra parameters that vary within a workload (flood_1m has a batch parameter it ignores).
    seen = {}
    for r in results:
        for kv in filter(None, r.extra.split(",")):
            k, v = kv.split("=", 1)
            seen.setdefault((r.klass, r.method, k), set()).add(v)
    for r in results:
        kept = [kv for kv in filter(None, r.extra.split(","))
                if len(seen[(r.klass, r.method, kv.split("=", 1)[0])]) > 1]
        r.extra = ",".join(kept)
    # LatencyBench's JMH score is a probe round trip, not the latency: its figures come from latency.csv.
    return [r for r in results if r.klass != "LatencyBench"]


def read_latency(path):
    """{(benchmark, pool): {count, p50, p90, p99, p999, max, mean, forks}}; forks merged (see docs)."""
    rows = {}
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            rows.setdefault((row["benchmark"], row["pool"]), []).append(row)
    merged = {}
    for key, rs in rows.items():
        def med(col):
            return statistics.median(float(r[col]) for r in rs)
        merged[key] = {
            "count": sum(int(r["count"]) for r in rs),
            "p50": med("p50_ns"), "p90": med("p90_ns"), "p99": med("p99_ns"), "p999": med("p999_ns"),
            "max": max(float(r["max_ns"]) for r in rs), "mean": med("mean_ns"), "forks": len(rs),
        }
    return merged


# ---- tables ---------------------------------------------------------------------------------------------

def fmt_score(r):
    s = r.score
    if r.unit == "ops/s":
        txt = f"{s / 1e6:.2f} M/s" if s >= 1e5 else f"{s:,.0f}/s"
    else:
        txt = f"{s:.3g} {r.unit}"
    if r.error is not None and s:
        txt += f" ±{100 * r.error / s:.0f}%"
    return txt


def ratio(ours, peer):
    """> 1 means ours is better, whatever the mode."""
    if ours.score <= 0 or peer.score <= 0:
        return None
    return ours.score / peer.score if ours.higher_is_better else peer.score / ours.score


WORKLOAD_ORDER = ("flood_1m", "flood_1m_batched", "fanout", "range", "burst_bounded")


def workload_rank(workload):
    for i, prefix in enumerate(WORKLOAD_ORDER):
        if workload == prefix or workload.startswith(prefix + " ") or (
                prefix in ("fanout", "range") and workload.startswith(prefix)):
            return i
    return len(WORKLOAD_ORDER)


def by_workload(results):
    groups = {}
    for r in sorted(results, key=lambda r: (workload_rank(r.workload), r.klass, r.workload)):
        groups.setdefault((r.klass, r.workload), {})[r.pool] = r
    return groups


def ratio_table(results):
    groups = by_workload(results)
    peers = [p for p in ("FJP",) + TPE_PEERS if any(p in g for g in groups.values())]
    lines = ["| workload | pool | score | " + " | ".join(f"vs {p}" for p in peers) + " | alloc B/task |",
             "|---|---|---:|" + "---:|" * len(peers) + "---:|"]
    for (klass, workload), pools in groups.items():
        for pool in pool_order(pools):
            r = pools[pool]
            cells = []
            for p in peers:
                if p in pools and p != pool and is_ours(pool):
                    x = ratio(r, pools[p])
                    cells.append(f"**{x:.2f}x**" if x is not None else "n/a")
                else:
                    cells.append("")
            alloc = f"{r.alloc:.2f}" if r.alloc is not None else ""
            if alloc and not r.higher_is_better:
                alloc += " per op"  # time-per-operation workloads: JMH normalises per invocation, not per task
            name = f"`{pool}`" if is_ours(pool) else pool
            lines.append(f"| {workload} | {name} | {fmt_score(r)} | " + " | ".join(cells) + f" | {alloc} |")
    return "\n".join(lines)


def target_table(results, latency):
    groups = by_workload(results)
    lines = ["| target | ours | measured | met |", "|---|---|---:|:---:|"]

    def row(label, pool, value, goal):
        # goal None: a reference row, shown beside a target and judged by nobody
        ok = "(reference)" if goal is None else "yes" if value is not None and value >= goal else "**no**"
        shown = f"{value:.2f}x" if value is not None else "n/a"
        lines.append(f"| {label} | `{pool}` | {shown} | {ok} |")

    for workload, peer, goal in THROUGHPUT_TARGETS:
        for (klass, w), pools in groups.items():
            if w != workload or peer not in pools:
                continue
            for pool in pool_order(pools):
                if is_ours(pool):
                    row(f"{workload} >= {goal}x {peer}", pool, ratio(pools[pool], pools[peer]), goal)
    for (klass, w), pools in groups.items():
        if (w.startswith(FANOUT_PREFIX) or klass == "FanoutBench") and "FJP" in pools:
            for pool in pool_order(pools):
                if is_ours(pool):
                    row(f"{w} no slower than FJP", pool, ratio(pools[pool], pools["FJP"]), 1.0)
    fjp = latency.get(("wake_latency", "FJP"))
    if fjp:
        for (bench, pool), lat in sorted(latency.items(), key=lambda kv: PREFERRED_ORDER.index(kv[0][1])
                                         if kv[0][1] in PREFERRED_ORDER else 99):
            if bench == "wake_latency" and is_ours(pool) and lat["p99"] > 0:
                row("wake_latency p99 no higher than FJP (FJP p99 / ours)", pool, fjp["p99"] / lat["p99"], 1.0)
    # ping_pong (issue 15): PARK pools against FJP at p50 and p99, _SPIN pools against the Disruptor BusySpin at p99
    pp_fjp = latency.get(("ping_pong", "FJP"))
    pp_busy = latency.get(("ping_pong", "DISRUPTOR_BUSY"))
    # the multi-producer Disruptor: what a submit from any thread is; shown beside the target, not a target itself
    pp_multi = latency.get(("ping_pong", "DISRUPTOR_BUSY_MULTI"))
    for (bench, pool), lat in sorted(latency.items(), key=lambda kv: PREFERRED_ORDER.index(kv[0][1])
                                     if kv[0][1] in PREFERRED_ORDER else 99):
        if bench != "ping_pong" or not is_ours(pool):
            continue
        if pool.endswith("_SPIN"):
            if pp_busy and lat["p99"] > 0:
                row("ping_pong p99 no higher than DISRUPTOR_BUSY (its p99 / ours)", pool,
                    pp_busy["p99"] / lat["p99"], 1.0)
            if pp_multi and lat["p99"] > 0:
                row("(reference) ping_pong p99 against DISRUPTOR_BUSY_MULTI (its p99 / ours)", pool,
                    pp_multi["p99"] / lat["p99"], None)
        elif pp_fjp:
            for pct in ("p50", "p99"):
                if lat[pct] > 0:
                    row(f"ping_pong {pct} no higher than FJP (FJP {pct} / ours)", pool, pp_fjp[pct] / lat[pct], 1.0)
    return "\n".join(lines)


def us(ns):
    return f"{ns / 1000:.1f}" if ns < 100_000 else f"{ns / 1000:,.0f}"


def latency_table(latency):
    lines = ["| benchmark | pool | samples | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for bench in ("wake_latency", "ping_pong", "submit_latency"):
        pools = {p: v for (b, p), v in latency.items() if b == bench}
        for pool in pool_order(pools):
            v = pools[pool]
            name = f"`{pool}`" if is_ours(pool) else pool
            lines.append(f"| {bench} | {name} | {v['count']:,} | {us(v['p50'])} | {us(v['p90'])} | "
                         f"{us(v['p99'])} | {us(v['p999'])} | {us(v['max'])} |")
    return "\n".join(lines)


# ---- SVG ------------------------------------------------------------------------------------------------

def esc(s):
    return html.escape(str(s), quote=True)


def hbar_chart(path, title, subtitle, groups, axis_label, log=False, ref=None, value_fmt="{:.2f}"):
    """groups: [(label, [(pool, value)])]; horizontal bars, one row per pool, grouped by label."""
    groups = [(g, [(p, v) for p, v in bars if v is not None and (v > 0 or not log)]) for g, bars in groups]
    groups = [(g, bars) for g, bars in groups if bars]
    if not groups:
        return False
    bar_h, head_h, gap, left, right, top = 14, 16, 10, 170, 100, 58
    plot_w = 560
    rows = sum(len(b) for _, b in groups)
    height = top + rows * bar_h + len(groups) * (gap + head_h) + 50
    width = left + plot_w + right
    values = [v for _, bars in groups for _, v in bars] + ([ref] if ref else [])
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
        for pool, v in bars:
            x0 = x(lo) if log else left
            w = max(x(v) - x0, 1.0)
            out.append(f'<text x="{left - 6}" y="{y + bar_h - 3}" text-anchor="end">{esc(pool)}</text>')
            out.append(f'<rect x="{x0:.1f}" y="{y + 1}" width="{w:.1f}" height="{bar_h - 2}" fill="{color(pool)}">'
                       f'<title>{esc(pool)}: {esc(value_fmt.format(v))}</title></rect>')
            out.append(f'<text x="{x0 + w + 4:.1f}" y="{y + bar_h - 3}" fill="#222">{esc(value_fmt.format(v))}</text>')
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


def charts(results, latency, out_dir, mode):
    groups = by_workload(results)
    run = "smoke run (--quick): 1 fork, 1 x 1 s" if mode == "quick" else "full run"
    made = []
    tp = []
    for (klass, workload), pools in groups.items():
        if "FJP" not in pools or not pools["FJP"].higher_is_better:
            continue
        base = pools["FJP"].score
        tp.append((workload, [(p, pools[p].score / base) for p in pool_order(pools)]))
    if hbar_chart(os.path.join(out_dir, "throughput-ratio.svg"), "Throughput relative to ForkJoinPool",
                  f"tasks/s divided by FJP's in the same run; right of the dashed line = faster than FJP ({run})",
                  tp, "ratio to ForkJoinPool (1.0 = same)", ref=1.0, value_fmt="{:.2f}x"):
        made.append("throughput-ratio.svg")
    al = []
    for (klass, workload), pools in groups.items():
        bars = [(p, pools[p].alloc) for p in pool_order(pools) if pools[p].alloc is not None]
        if bars:
            al.append((workload, [(p, max(v, 0.01)) for p, v in bars]))
    if hbar_chart(os.path.join(out_dir, "alloc-per-task.svg"), "Allocation per task (gc.alloc.rate.norm)",
                  f"bytes allocated per task, all threads, log scale; 0.01 = nothing measurable ({run})",
                  al, "bytes per task", log=True, value_fmt="{:.2f} B"):
        made.append("alloc-per-task.svg")
    lat = []
    for bench, what in (("wake_latency", "idle pool"), ("ping_pong", "one event in flight"),
                        ("submit_latency", "loaded pool")):
        pools = {p: v for (b, p), v in latency.items() if b == bench}
        for pct, key in (("p50", "p50"), ("p99", "p99"), ("p99.9", "p999")):
            bars = [(p, pools[p][key] / 1000) for p in pool_order(pools)]
            if bars:
                lat.append((f"{bench} {pct} ({what})", bars))
    if hbar_chart(os.path.join(out_dir, "latency-percentiles.svg"), "Submit-to-start latency (HdrHistogram)",
                  f"microseconds, log scale, shorter is better ({run})", lat, "µs", log=True,
                  value_fmt="{:.1f} µs"):
        made.append("latency-percentiles.svg")
    return made


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in", dest="in_dir", default="target/jmh")
    ap.add_argument("--out", dest="out_dir", default="docs/bench")
    ap.add_argument("--mode", choices=("full", "quick"), default="full")
    args = ap.parse_args(argv)
    results = read_results(args.in_dir)
    latency = read_latency(os.path.join(args.in_dir, "latency.csv"))
    if not results and not latency:
        print(f"no JMH JSON results or latency.csv in {args.in_dir}", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    made = charts(results, latency, args.out_dir, args.mode)
    label = ("Smoke run (`--quick`: 1 fork, 1 x 1 s warm-up, 1 x 1 s measurement): the figures show the suite "
             "runs, not how fast anything is." if args.mode == "quick" else "Full run (see the protocol).")
    md = ["<!-- generated by src/jmh/bench_charts.py from the JMH JSON; do not edit by hand -->", "", label, "",
          "### Throughput and allocation (ratio > 1: ours is better)", "", ratio_table(results), "",
          "### Targets", "", target_table(results, latency), ""]
    if latency:
        md += ["### Latency percentiles (HdrHistogram, submit to start)", "", latency_table(latency), ""]
    text = "\n".join(md)
    with open(os.path.join(args.out_dir, "ratios.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(text)
    print(f"wrote {', '.join(made + ['ratios.md'])} to {args.out_dir}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
