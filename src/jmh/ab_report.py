#!/usr/bin/env python3
"""The report of src/jmh/ab.sh: per-fork medians of two revisions side by side, and a verdict per row.

Reads DIR/{A,B}-<k>.json (one JMH fork each) and DIR/latency-{A,B}.csv (LatencyBench's HdrHistogram rows, one
per fork). A row is one benchmark, parameter set and metric. For each side it lists the medians of the fork's
measurement iterations, then the verdict: a difference is called only when the two ranges of fork medians do
not overlap (with 4 forks a side that is a sign test at p = 2/70 ~ 0.03), otherwise "within the noise".

    python3 src/jmh/ab_report.py target/ab/run-YYYYmmdd-HHMMSS
"""
import csv
import glob
import json
import os
import re
import statistics
import sys


def key_of(bench):
    name = bench["benchmark"].rsplit(".", 2)
    short = ".".join(name[-2:])
    params = ",".join(f"{k}={v}" for k, v in sorted((bench.get("params") or {}).items()))
    return short, params


def fork_medians(path_glob):
    """{(bench, params, metric, unit): [median of fork 1, median of fork 2, ...]} in fork order."""
    rows = {}
    files = sorted(glob.glob(path_glob), key=lambda p: int(re.search(r"-(\d+)\.json$", p).group(1)))
    for path in files:
        with open(path) as f:
            data = json.load(f)
        for bench in data:
            short, params = key_of(bench)
            metrics = [("score", bench["primaryMetric"])]
            metrics += sorted((bench.get("secondaryMetrics") or {}).items())
            for mname, m in metrics:
                raw = m.get("rawData") or []
                values = [v for fork in raw for v in fork]
                if not values:
                    continue
                k = (short, params, mname, m.get("scoreUnit", ""))
                rows.setdefault(k, []).append(statistics.median(values))
    return rows


def latency_rows(path):
    """{(bench, params, metric, 'ns'): [value per fork]} from LatencyBench's CSV (p50 and p99 per fork)."""
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for r in csv.DictReader(f):
            params = f"pool={r['pool']},threads={r['threads']}"
            for col in ("p50_ns", "p99_ns"):
                rows.setdefault((r["benchmark"], params, "hdr." + col[:-3], "ns"), []).append(float(r[col]))
    return rows


def fmt(v):
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 100:
        return f"{v:,.0f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def verdict(a, b):
    if not a or not b:
        return "one side missing"
    if min(a) > max(b):
        return f"A > B (medians {statistics.median(a) / statistics.median(b):.2f}x)"
    if max(a) < min(b):
        return f"A < B (medians {statistics.median(a) / statistics.median(b):.2f}x)"
    return "within the noise"


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    d = sys.argv[1]
    a = fork_medians(os.path.join(d, "A-*.json"))
    b = fork_medians(os.path.join(d, "B-*.json"))
    a.update(latency_rows(os.path.join(d, "latency-A.csv")))
    b.update(latency_rows(os.path.join(d, "latency-B.csv")))
    keys = sorted(set(a) | set(b))
    if not keys:
        print(f"no results in {d}")
        sys.exit(1)
    print(f"{'benchmark':<34} {'params':<44} {'metric':<26} {'unit':<10} {'A forks':<40} {'B forks':<40} verdict")
    for k in keys:
        bench, params, metric, unit = k
        av, bv = a.get(k, []), b.get(k, [])
        print(f"{bench:<34} {params:<44} {metric:<26} {unit:<10} "
              f"{' '.join(fmt(v) for v in av):<40} {' '.join(fmt(v) for v in bv):<40} {verdict(av, bv)}")


if __name__ == "__main__":
    main()
