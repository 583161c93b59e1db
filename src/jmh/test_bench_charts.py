"""Tests of bench_charts.py on synthetic JMH JSON and latency.csv (stdlib unittest).

    python3 -m unittest src/jmh/test_bench_charts.py        (from the repository root; a second or two)
"""

import contextlib
import csv
import io
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_charts as bc  # noqa: E402

ROUNDS = 5


def entry(klass, method, pool, forks, mode="thrpt", unit="ops/s", alloc=None, **params):
    """One JMH result entry: forks = one list of iteration scores per fork."""
    e = {"benchmark": f"dev.threadpool.jmh.{klass}.{method}", "mode": mode,
         "params": {"pool": pool, "threads": "0", **params},
         "primaryMetric": {"score": sum(map(sum, forks)) / sum(map(len, forks)), "scoreUnit": unit,
                           "rawData": forks}}
    if alloc is not None:
        e["secondaryMetrics"] = {"gc.alloc.rate.norm": {"score": alloc, "scoreUnit": "B/op",
                                                        "rawData": [[alloc] * len(f) for f in forks]}}
    return e


class Fixture:
    """A temp dir of per-(class, round, pool) JSON files; write() adds one fork of a pool in a round."""

    def __init__(self, tmp):
        self.dir = tmp

    def write(self, klass, method, pool, rnd, iterations, **kw):
        path = os.path.join(self.dir, f"{klass}.r{rnd}.{pool}.json")
        data = []
        if os.path.exists(path):
            with open(path) as f:
                data = json.load(f)
        data.append(entry(klass, method, pool, [iterations], **kw))
        with open(path, "w") as f:
            json.dump(data, f)

    def series(self, method, pool):
        return next(s for s in bc.read_results(self.dir) if s.method == method and s.pool == pool)


def find_row(md, *needles):
    return [line for line in md.splitlines() if all(n in line for n in needles)]


class BenchChartsTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.fx = Fixture(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def flood(self, method, pool, per_round, alloc=0.0):
        for rnd, v in enumerate(per_round, 1):
            self.fx.write("PoolFloodBench", method, pool, rnd, [v, v * 1.02, v * 0.98], alloc=alloc, batch="256")

    def test_fork_median_min_max(self):
        # bimodal forks: three fast, two slow
        self.flood("flood_1m", "GLOBAL_QUEUE", [20e6, 10e6, 21e6, 11e6, 22e6])
        s = self.fx.series("flood_1m", "GLOBAL_QUEUE")
        self.assertEqual(len(s.forks), ROUNDS)
        self.assertEqual(sorted(r for r, _, _ in s.forks), [1, 2, 3, 4, 5])
        med, lo, hi = bc.spread(s.scores)
        self.assertAlmostEqual(med, 20e6)
        self.assertAlmostEqual(lo, 10e6)
        self.assertAlmostEqual(hi, 22e6)
        self.assertEqual(bc.fmt_series(s), "20.00 M/s (10.00-22.00, 5 forks)")

    def test_ratios_pair_by_round(self):
        # ours and FJP both slow in rounds 2 and 4: paired, every round is 2.0x; the medians would say 2.0x too,
        # but min(ours)/max(FJP) would say 1.0x
        self.flood("flood_1m", "GLOBAL_QUEUE", [20e6, 10e6, 20e6, 10e6, 20e6])
        self.flood("flood_1m", "FJP", [10e6, 5e6, 10e6, 5e6, 10e6])
        r = bc.series_ratio(self.fx.series("flood_1m", "GLOBAL_QUEUE"), self.fx.series("flood_1m", "FJP"))
        self.assertTrue(r.paired)
        self.assertEqual(r.n, 5)
        self.assertAlmostEqual(r.median, 2.0)
        self.assertAlmostEqual(r.worst, 2.0)
        self.assertAlmostEqual(r.best, 2.0)

    def test_time_per_op_ratio_is_peer_over_ours(self):
        for rnd, (ours, fjp) in enumerate([(10, 20), (10, 15), (12, 12), (10, 30), (10, 20)], 1):
            self.fx.write("FanoutBench", "wsum", "WS_RING", rnd, [ours], mode="avgt", unit="ms/op")
            self.fx.write("FanoutBench", "wsum", "FORK_JOIN", rnd, [fjp], mode="avgt", unit="ms/op")
        r = bc.series_ratio(self.fx.series("wsum", "WORK_STEALING_RING"), self.fx.series("wsum", "FJP"))
        self.assertAlmostEqual(r.median, 2.0)
        self.assertAlmostEqual(r.worst, 1.0)
        self.assertAlmostEqual(r.best, 3.0)

    def test_unpaired_falls_back_to_medians(self):
        # a quick run: one round, so nothing to pair; the ratio of the medians, no worst
        self.fx.write("BurstBench", "burst_bounded", "GLOBAL_QUEUE", 1, [9e6])
        self.fx.write("BurstBench", "burst_bounded", "FJP", 1, [10e6])
        r = bc.series_ratio(self.fx.series("burst_bounded", "GLOBAL_QUEUE"), self.fx.series("burst_bounded", "FJP"))
        self.assertFalse(r.paired)
        self.assertIsNone(r.worst)
        self.assertAlmostEqual(r.median, 0.9)
        self.assertEqual(bc.fmt_ratio(r, bold=False), "0.90x (medians)")
        self.assertTrue(bc.verdict(r, bc.TARGETS[3]).startswith("not of record"))

    def test_verdicts(self):
        t = bc.target("flood_1m", "FJP", goal=2.0)
        cases = [
            (bc.Ratio(2.1, 2.0, 2.3, 5, True), "met"),              # worst at the goal
            (bc.Ratio(2.4, 1.5, 2.6, 5, True), "met"),              # median above goal + band
            (bc.Ratio(2.2, 1.8, 2.5, 5, True), "not met (level)"),  # median within the band, worst below
            (bc.Ratio(1.8, 1.5, 2.1, 5, True), "not met (level)"),
            (bc.Ratio(1.5, 1.2, 1.7, 5, True), "**not met**"),
            (bc.Ratio(3.0, 3.0, 3.0, 3, True), "not of record (3 forks)"),
            (bc.Ratio(3.0, n=5), "not of record (unpaired, 5 forks)"),
        ]
        for ratio, expected in cases:
            self.assertEqual(bc.verdict(ratio, t), expected, vars(ratio))
        two = bc.target("tree_join_fresh", "FJP", median=1.3, worst=1.0)
        self.assertEqual(bc.verdict(bc.Ratio(1.35, 1.0, 1.6, 5, True), two), "met")
        self.assertIn("median < 1.3", bc.verdict(bc.Ratio(1.29, 1.1, 1.6, 5, True), two))  # no band for parts
        self.assertIn("worst < 1.0", bc.verdict(bc.Ratio(1.6, 0.9, 1.8, 5, True), two))
        self.assertEqual(bc.verdict(bc.Ratio(0.5, 0.4, 0.6, 5, True), bc.TARGETS[-1]), "(reference)")

    def test_report_targets_batched_and_unknown(self):
        self.flood("flood_1m", "GLOBAL_QUEUE", [20e6, 10e6, 21e6, 11e6, 22e6])
        self.flood("flood_1m", "FJP", [9e6, 5e6, 10e6, 6e6, 10e6], alloc=32.0)
        self.flood("flood_1m", "TPE_ABQ", [14e6, 9e6, 15e6, 9e6, 14e6])
        self.flood("flood_1m_batched", "GLOBAL_QUEUE", [25e6] * 5)
        self.flood("flood_1m_batched", "FJP", [10e6] * 5)
        self.flood("flood_1m_batched", "TPE_ABQ", [14e6] * 5)
        for rnd in range(1, 6):
            self.fx.write("NewBench", "brand_new", "GLOBAL_QUEUE", rnd, [3e6])
            self.fx.write("NewBench", "brand_new", "FJP", rnd, [2e6])
        results = bc.read_results(self.fx.dir)
        md = bc.report(results, {}, {}, "full")
        self.assertIn(f"noise band ({bc.NOISE_BAND})", md)
        batched = find_row(md, "| flood_1m_batched | `GLOBAL_QUEUE` |")
        self.assertEqual(len(batched), 1)
        self.assertIn("no batch API", batched[0])
        self.assertIn("submitBatch of 256", batched[0])  # the note column
        self.assertIn("**2.50x** (2.50-2.50)", batched[0])
        self.assertEqual(find_row(md, "flood_1m_batched >=", "TPE"), [])  # no TPE target for batched
        unknown = find_row(md, "| brand_new | `GLOBAL_QUEUE` |")
        self.assertEqual(len(unknown), 1)
        self.assertIn("**1.50x**", unknown[0])
        target = find_row(md, "| flood_1m >= 2.0x FJP | `GLOBAL_QUEUE` |")
        self.assertEqual(len(target), 1)
        # per round 2.22, 2.0, 2.1, 1.83, 2.2: median 2.1 within the band of 2.0, worst below it
        self.assertIn("| not met (level) |", target[0])
        with tempfile.TemporaryDirectory() as out, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(bc.main(["--in", self.fx.dir, "--out", out]), 0)
            with open(os.path.join(out, "throughput-ratio.svg")) as f:
                self.assertIn("median of per-round ratios, 5 forks a pool", f.read())

    def test_latency_pairs_by_round_and_old_json_names(self):
        path = os.path.join(self.fx.dir, "latency.csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow("benchmark,pool,threads,count,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,mean_ns,round".split(","))
            for rnd, (ours, fjp) in enumerate([(2000, 3000), (4000, 5000), (2000, 3000), (4000, 5000),
                                               (2000, 2000)], 1):
                w.writerow(["ping_pong", "GLOBAL_QUEUE", 2, 1000, ours, ours, ours * 2, ours * 3, 9000, ours, rnd])
                w.writerow(["ping_pong", "FJP", 2, 1000, fjp, fjp, fjp * 2, fjp * 3, 9000, fjp, rnd])
        latency = bc.read_latency(path)
        self.assertEqual(len(latency[("ping_pong", "GLOBAL_QUEUE")]), 5)
        md = bc.report([], latency, {}, "full")
        p50 = find_row(md, "ping_pong p50", "`GLOBAL_QUEUE`")
        self.assertEqual(len(p50), 1)
        self.assertIn("1.25x (1.00-1.50)", p50[0])  # per round 1.5, 1.25, 1.5, 1.25, 1.0
        self.assertIn("| met |", p50[0])  # worst 1.0 >= 1.0
        self.assertIn("2.0 (2.0-4.0)", find_row(md, "| ping_pong | `GLOBAL_QUEUE` |")[0])
        # the old layout: one JSON per class, no round in the name, two forks in it (the same round, round 1)
        with open(os.path.join(self.fx.dir, "RangeBench.json"), "w") as f:
            json.dump([entry("RangeBench", "taskPerIndex", "FORK_JOIN", [[50.0], [52.0]], mode="avgt",
                             unit="ms/op")], f)
        s = self.fx.series("taskPerIndex", "FJP")
        self.assertEqual([r for r, _, _ in s.forks], [1, 1])

    def test_recursive_shapes_floor_efficiency_and_bytes_per_split(self):
        splits = bc.SPLITS[("RecursiveShapesBench", "fib")]
        sides = {"SERIAL": (80.0, 0.0), "FORK_JOIN": (60.0, 24.0 * splits), "WS_RING": (50.0, 300.0),
                 "LANE_EXTENSION": (55.0, 300.0)}
        for rnd in range(1, 6):
            for pool, (ms, alloc) in sides.items():
                self.fx.write("RecursiveShapesBench", "fib", pool, rnd, [ms], mode="avgt", unit="ms/op", alloc=alloc,
                              size="LARGE")
        results = bc.read_results(self.fx.dir)
        self.assertEqual(bc.canonical_pool("SERIAL"), "SERIAL")
        self.assertFalse(bc.is_ours("SERIAL"))
        md = bc.report(results, {}, {}, "full", workers=2)
        # the floor is a row of the ratio table, with no ratio against anything
        floor = find_row(md, "| fib | SERIAL |")
        self.assertEqual(len(floor), 2)  # the ratio table's row and the efficiency table's
        self.assertNotIn("x**", floor[0])
        ws = find_row(md, "| fib | `WORK_STEALING_RING` |")
        self.assertIn("**1.20x** (1.20-1.20)", ws[0])  # vs FJP: 60 / 50
        # efficiency table: speed-up 80 / 50, efficiency / 2 workers, bytes per split
        self.assertIn("| 1.60x (1.60-1.60) | 0.80 (0.80-0.80) [n=2] | 0.00 |", ws[1])
        fjp = find_row(md, "| fib | FJP |")
        self.assertIn("| 24.00 |", fjp[1])
        self.assertIn("| 1 (the floor) |  | 0.00 |", floor[1])
        # issue 49's targets: a two-part target against FJP on every variant, LANE_EXTENSION against WORK_STEALING
        t = find_row(md, "| fib median >= 1.3x and worst >= 0.9x FJP | `WORK_STEALING_RING` |")
        self.assertIn("**not met** (median < 1.3)", t[0])
        lane = find_row(md, "| fib >= 0.9x WORK_STEALING_RING | `LANE_EXTENSION` |")
        self.assertIn("0.91x (0.91-0.91)", lane[0])
        self.assertIn("| met |", lane[0])
        # the chart against FJP leaves the floor out
        bars = dict(bc.ratio_bars(bc.by_workload(results)))
        self.assertNotIn("SERIAL", [b[0] for b in bars["fib (time: FJP / pool)"]])
        # another size: no bytes per split (SPLITS counts LARGE's)
        small = [bc.Series("RecursiveShapesBench", "fib", (("size", "SMALL"),), p, "avgt", "ms/op")
                 for p in ("SERIAL", "FJP")]
        for s in small:
            s.forks = [(1, 1.0, 24.0 * splits)]
        self.assertEqual(find_row(bc.efficiency_table(small, 2), "| fib | FJP |")[0].split("|")[-2].strip(), "")
        self.assertIsNone(bc.efficiency_table([s for s in results if s.pool != "SERIAL"], 2))

    def test_twins_pair_with_their_side_and_judge_no_target(self):
        # WS_RING_FORK 50 ms every round; its twin 50, 55, 50, 40, 50: side / twin (time: twin / side) 1.0, 1.1, 1.0,
        # 0.8, 1.0. FJP's twin level with FJP.
        twin_ms = [50.0, 55.0, 50.0, 40.0, 50.0]
        for rnd in range(1, 6):
            for pool, ms in (("FORK_JOIN", 60.0), ("AA_FORK_JOIN", 60.0), ("WS_RING_FORK", 50.0),
                             ("AA_WS_RING_FORK", twin_ms[rnd - 1])):
                self.fx.write("RecursiveShapesBench", "fib", pool, rnd, [ms], mode="avgt", unit="ms/op",
                              size="LARGE")
        self.assertEqual(bc.canonical_pool("AA_WS_RING_FORK"), "AA_WORK_STEALING_RING_FORK")
        self.assertEqual(bc.canonical_pool("AA_FORK_JOIN"), "AA_FJP")
        self.assertIsNone(bc.canonical_pool("AA_NOT_A_POOL"))
        self.assertEqual(bc.twin_of("AA_FJP"), "FJP")
        self.assertIsNone(bc.twin_of("FJP"))
        self.assertFalse(bc.is_ours("AA_WORK_STEALING_RING_FORK"))
        results = bc.read_results(self.fx.dir)
        md = bc.report(results, {}, {}, "full", workers=2)
        # and each side's spread over its forks beside its twin's: 50/50 = 1.00, 55/40 = 1.38
        ws = find_row(md, "| fib | `WORK_STEALING_RING_FORK` | 1.00x (0.80-1.10) | 5 paired | 1.38 | 1.00 | 1.38 |")
        self.assertEqual(len(ws), 1, md)
        self.assertEqual(len(find_row(md, "| fib | FJP | 1.00x (1.00-1.00) | 5 paired | 1.00 | 1.00 | 1.00 |")), 1,
                         md)
        # no target row and no ratio against FJP for a twin; the chart leaves it out
        self.assertEqual(find_row(md, "| `AA_"), [])
        twin_rows = find_row(md, "| fib | AA_WORK_STEALING_RING_FORK |")
        self.assertTrue(twin_rows and "x**" not in twin_rows[0], twin_rows)
        bars = dict(bc.ratio_bars(bc.by_workload(results)))
        self.assertEqual([b[0] for b in bars["fib (time: FJP / pool)"]], ["WORK_STEALING_RING_FORK"])
        # a run with no twin has no A/A section
        self.assertIsNone(bc.twin_table([s for s in results if bc.twin_of(s.pool) is None]))

    def test_idle_cpu_table(self):
        path = os.path.join(self.fx.dir, "idle_cpu.csv")
        with open(path, "w") as f:
            f.write("round,pool,mode,percent_of_one_core,tasks_per_s\n")
            for rnd, pct in enumerate([60.0, 70.0, 65.0], 1):
                f.write(f"{rnd},GLOBAL_QUEUE,sparse,{pct},48000\n{rnd},GLOBAL_QUEUE,idle,0.0,0\n")
        table = bc.idle_cpu_table(bc.read_idle_cpu(path))
        self.assertIn("| `GLOBAL_QUEUE` | sparse | 65.00 (60.00-70.00) | 3 | 48,000 |", table)


if __name__ == "__main__":
    unittest.main()
