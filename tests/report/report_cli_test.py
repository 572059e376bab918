#!/usr/bin/env python3
"""collbench-report as a person runs it: exit codes 0/1/2/3, messages, --format gbench, and
other tools' output (nccl-tests, OSU) read beside collbench's.

usage: report_cli_test.py COLLBENCH_REPORT FIXTURES SCRATCH
"""
import collections
import csv
import json
import os
import shutil
import subprocess
import sys
import unittest

BIN, FIXTURES, SCRATCH = sys.argv[1:4]


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def nccl_tests_rows(path):
    """(bytes, out-of-place time, in-place time) of an nccl-tests text table."""
    rows = []
    with open(path) as f:
        for line in f:
            words = line.split(":", 1)[-1].split() if line.startswith("[") else line.split()
            if len(words) == 13 and words[0].isdigit():
                rows.append((int(words[0]), float(words[5]), float(words[9])))
    return rows


def collbench_line(size, placement, time_us, run_id="00000000000000c1", labels=None):
    """A collbench result row (all_reduce, float, 2 ranks on 1 node, NCCL) with its iterations."""
    algbw = size / time_us / 1e3
    return json.dumps({
        "schema": {"name": "collbench-results", "version": 1}, "record": "result",
        "run_id": run_id, **({"labels": labels} if labels else {}), "test": "all_reduce", "backend": "nccl", "dtype": "float",
        "op": "sum", "root": None, "bytes": size, "count": size // 4, "nranks": 2, "nodes": 1,
        "placement": placement, "mode": "batch", "iterations": 20, "warmup": 5,
        "graph_launches": 0, "window": None, "pair": None,
        "time_us": {"reported": time_us, "slowest": time_us, "mean": time_us, "fastest": time_us,
                    "per_iteration": {"n": 20, "min": time_us * 0.99, "p50": time_us,
                                      "p99": time_us * 1.02, "max": time_us * 1.03,
                                      "mean": time_us, "cv": 0.01}},
        "algbw_gbps": algbw, "busbw_gbps": algbw, "slowest_rank": 0, "slowest_host": "lab",
        "wrong": 0, "status": "ok"}) + "\n"


def scratch(name):
    path = os.path.join(SCRATCH, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


class Cli(unittest.TestCase):
    def test_report_from_real_demo_results(self):
        out = scratch("demo")
        code, stdout, stderr = run(os.path.join(FIXTURES, "demo"), "-o", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("130 measurements", stdout)
        for name in ("index.html", "results.csv", "summary.md", "busbw-all_reduce.svg", "latency-bibw.svg"):
            self.assertTrue(os.path.getsize(os.path.join(out, name)) > 0, name)
        with open(os.path.join(out, "results.csv")) as f:
            self.assertEqual(len(f.readlines()), 131)  # header + one line per result row

    def test_campaign_manifest_is_not_an_input_problem(self):
        # A collected campaign directory: labelled results beside collbench-sweep's manifest.
        campaign = scratch("campaign-with-manifest")
        for name in os.listdir(os.path.join(FIXTURES, "demo")):
            shutil.copy(os.path.join(FIXTURES, "demo", name), campaign)
        with open(os.path.join(campaign, "manifest.jsonl"), "w") as f:
            f.write(json.dumps({"schema": {"name": "collbench-sweep-manifest", "version": 1},
                                "run": "r0", "event": "submitted"}) + "\n")
        out = scratch("campaign-with-manifest-report")
        code, stdout, stderr = run(campaign, "-o", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("; 0 input problem(s)", stdout + stderr)
        self.assertNotIn("manifest", stderr)
        # Named explicitly, the manifest is diagnosed like any other file that holds no results.
        code, _, stderr = run(os.path.join(campaign, "manifest.jsonl"), "-o", scratch("manifest-only"))
        self.assertEqual(code, 2, stderr)
        self.assertIn("collbench-sweep-manifest", stderr)

    def test_regression_exits_1(self):
        out = scratch("regressed")
        code, stdout, stderr = run("--baseline", os.path.join(FIXTURES, "compare", "baseline"),
                                   "--candidate", os.path.join(FIXTURES, "compare", "regressed"), "-o", out)
        self.assertEqual(code, 1, stderr)
        self.assertIn("REGRESSION: 3 of 23 matched points", stdout)
        self.assertIn("unmatched (only in baseline): sendrecv", stdout)
        self.assertIn("unmatched (only in candidate): sendrecv", stdout)

    def test_noise_exits_0(self):
        out = scratch("noisy")
        code, stdout, stderr = run("--baseline", os.path.join(FIXTURES, "compare", "baseline"),
                                   "--candidate", os.path.join(FIXTURES, "compare", "noisy"), "-o", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("OK: none of 24 matched points", stdout)
        self.assertIn("2 within noise", stdout)

    def test_threshold_option(self):
        out = scratch("loose")
        code, stdout, _ = run("--baseline", os.path.join(FIXTURES, "compare", "baseline"),
                              "--candidate", os.path.join(FIXTURES, "compare", "regressed"),
                              "--threshold", "25%", "-o", out)
        self.assertEqual(code, 0, stdout)

    def test_empty_directory_exits_2(self):
        empty = scratch("empty")
        code, _, stderr = run(empty, "-o", os.path.join(SCRATCH, "never"))
        self.assertEqual(code, 2)
        self.assertIn("no results files", stderr)
        self.assertFalse(os.path.exists(os.path.join(SCRATCH, "never", "index.html")))

    def test_bad_input_is_reported_with_file_and_line(self):
        d = scratch("bad")
        with open(os.path.join(FIXTURES, "demo", "collbench.jsonl")) as f:
            lines = f.readlines()
        with open(os.path.join(d, "cut.jsonl"), "w") as f:
            f.writelines(lines[:10])
            f.write(lines[10][:80])
        code, _, stderr = run(d, "-o", os.path.join(d, "out"))
        self.assertEqual(code, 0)
        self.assertIn("cut.jsonl:11: truncated", stderr)
        code, _, stderr = run(d, "--strict", "-o", os.path.join(d, "out"))
        self.assertEqual(code, 2)
        self.assertIn("--strict", stderr)

    def test_unwritable_output_exits_3(self):
        d = scratch("unwritable")
        blocker = os.path.join(d, "file")
        with open(blocker, "w") as f:
            f.write("x")
        code, _, stderr = run(os.path.join(FIXTURES, "demo"), "-o", os.path.join(blocker, "report"))
        self.assertEqual(code, 3)
        self.assertIn("cannot create the output directory", stderr)

    def test_bad_usage_exits_2(self):
        for args in (["--no-such-flag"], [os.path.join(FIXTURES, "demo"), "--format", "xml"],
                     ["--baseline", "x"], [os.path.join(SCRATCH, "does-not-exist")]):
            code, _, stderr = run(*args)
            self.assertEqual(code, 2, args)
            self.assertTrue(stderr.startswith("collbench-report: "), stderr)

    def test_gbench_format(self):
        d = scratch("gbench")
        path = os.path.join(d, "demo.json")
        code, _, stderr = run(os.path.join(FIXTURES, "demo"), "--format", "gbench", "-o", path)
        self.assertEqual(code, 0, stderr)
        with open(path) as f:
            doc = json.load(f)
        self.assertIn("context", doc)
        self.assertEqual(len(doc["benchmarks"]), 130)
        for b in doc["benchmarks"]:
            for key in ("name", "run_name", "run_type", "iterations", "real_time", "cpu_time", "time_unit"):
                self.assertIn(key, b)
            self.assertEqual(b["time_unit"], "us")
        names = {b["name"] for b in doc["benchmarks"]}
        self.assertIn("all_reduce/float/sum/out-of-place/8", names)
        code, stdout, _ = run(os.path.join(FIXTURES, "demo"), "--format", "gbench")
        self.assertEqual(code, 0)
        self.assertEqual(json.loads(stdout), doc)

    def test_fixtures_follow_the_results_schema(self):
        """The fixtures stand for real collbench output: every line must validate."""
        try:
            import jsonschema
        except ImportError:
            self.skipTest("python3-jsonschema is not installed")
        schema_path = os.path.join(FIXTURES, "..", "..", "..", "results", "schema", "collbench-results.schema.json")
        with open(schema_path) as f:
            validator = jsonschema.Draft202012Validator(json.load(f))
        lines = 0
        for root, _, files in os.walk(FIXTURES):
            for name in sorted(files):
                if not name.endswith(".jsonl"):
                    continue
                with open(os.path.join(root, name)) as f:
                    for number, line in enumerate(f, 1):
                        errors = list(validator.iter_errors(json.loads(line)))
                        self.assertFalse(errors, f"{name}:{number}: {errors[:1]}")
                        lines += 1
        self.assertGreater(lines, 400)

    def test_other_tools_output_beside_collbench(self):
        """A campaign directory with collbench results, nccl-tests and OSU logs, collbench's
        own console log and a manifest: every tool's rows in one report."""
        d = scratch("mixed")
        shutil.copytree(os.path.join(FIXTURES, "demo"), os.path.join(d, "demo"))
        os.makedirs(os.path.join(d, "logs"))
        imports = os.path.join(FIXTURES, "imports")
        for name in ("dgx2-v100-old-format.log", "nccl-tests-2.18-tag-output.log",
                     "all_reduce_perf.json", "osu_latency.txt", "osu_allreduce.txt"):
            shutil.copy(os.path.join(imports, name), os.path.join(d, "logs", name))
        with open(os.path.join(d, "demo", "output.log"), "w") as f:
            f.write("# collbench 0.1.0\n#       size         count      type   redop    root     "
                    "time   algbw   busbw #wrong     time   algbw   busbw #wrong   oop-p50\n")
        with open(os.path.join(d, "manifest.jsonl"), "w") as f:
            f.write(json.dumps({"schema": {"name": "collbench-sweep-manifest", "version": 1}}) + "\n")
        out = scratch("mixed-report")
        code, stdout, stderr = run(d, "-o", out)
        self.assertEqual(code, 0, stderr)
        # One note per file, and one for each nccl-tests log whose rows printed a bandwidth below
        # 5.00, which two decimals round by more than 0.1%: the old log's all_reduce (16 sizes,
        # twice each) and every row of the 2.18 log.
        self.assertIn("; 0 input problem(s), 7 note(s) on other tools' output", stdout)
        self.assertIn("logs/osu_latency.txt: imported: read as OSU text output", stderr)
        self.assertIn("logs/dgx2-v100-old-format.log: imported: 32 row(s) printed a "
                      "bandwidth below 5.00", stderr)
        self.assertIn("logs/nccl-tests-2.18-tag-output.log: imported: 16 row(s) printed a "
                      "bandwidth below 5.00", stderr)
        self.assertNotIn("no context", stderr)
        self.assertNotIn("demo/output.log", stderr)
        with open(os.path.join(out, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        sources = collections.Counter(r["label_source"] for r in rows)
        self.assertEqual(sources, {"": 130, "nccl-tests": 186 + 16 + 6, "osu": 21})
        osu = next(r for r in rows if r["file"] == "mixed/logs/osu_allreduce.txt")
        self.assertEqual((osu["nranks"], osu["busbw_gbps"], osu["time_mean_us"]), ("", "", "11.92"))
        with open(os.path.join(out, "index.html")) as f:
            html = f.read()
        self.assertIn("not recorded (OSU text output)", html)
        self.assertIn("? nodes × ? ranks", html)
        self.assertTrue(os.path.exists(os.path.join(out, "busbw-broadcast.svg")))
        # --strict: the notes are no problem.
        code, _, stderr = run(d, "--strict", "-o", scratch("mixed-strict"))
        self.assertEqual(code, 0, stderr)

    def test_ranks_option_for_runs_that_state_none(self):
        """--ranks N: OSU's all_gather sizes become whole buffers and all_reduce gets a busbw,
        where the output does not state its rank count; a bad value is bad usage."""
        imports = os.path.join(FIXTURES, "imports")
        allgather = os.path.join(imports, "osu_allgather.txt")
        # Without the count the rows are refused, with the fix in the message: no usable rows.
        out = scratch("ranks-none")
        code, _, stderr = run(allgather, "-o", out)
        self.assertEqual(code, 2, stderr)
        self.assertIn("9 row(s) not read: give the rank count with --ranks N", stderr)
        out = scratch("ranks-4")
        code, stdout, stderr = run(allgather, os.path.join(imports, "osu_allreduce-no-hash-ucc981.txt"),
                                   "--ranks", "4", "-o", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("--ranks 4 is used for them (label given=ranks)", stderr)
        with open(os.path.join(out, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 9 + 21)
        gather = [r for r in rows if r["test"] == "all_gather"]
        self.assertEqual([int(r["bytes"]) for r in gather[:3]], [16, 32, 64])  # 4 ranks × 4, 8, 16
        self.assertTrue(all(r["nranks"] == "4" and r["label_given"] == "ranks" for r in rows))
        self.assertTrue(all(r["busbw_gbps"] != "" for r in rows))
        # A count the file states is kept: the mpirun line's 64 ranks.
        out = scratch("ranks-stated")
        code, _, stderr = run(os.path.join(imports, "osu_allgather-64-ranks-mpirun.txt"),
                              "--ranks", "4", "-o", out)
        self.assertEqual(code, 0, stderr)
        self.assertIn("--ranks 4 differs from the 64 rank(s)", stderr)
        with open(os.path.join(out, "results.csv")) as f:
            self.assertEqual({r["nranks"] for r in csv.DictReader(f)}, {"64"})
        for bad in ("0", "-3", "four", "2.5", "99999999999"):
            out = os.path.join(SCRATCH, "ranks-bad")
            shutil.rmtree(out, ignore_errors=True)
            code, stdout, stderr = run(allgather, "--ranks", bad, "-o", out)
            self.assertEqual(code, 2, bad)
            self.assertEqual(stdout, "")
            self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
            self.assertIn(f"--ranks {bad}: give the number of ranks", stderr)
            self.assertFalse(os.path.exists(out))

    def test_nccl_tests_baseline_against_collbench_candidate(self):
        """Years-old nccl-tests output as the baseline of a comparison with a verdict."""
        baseline = os.path.join(FIXTURES, "imports", "nccl-tests-2.18-tag-output.log")
        table = nccl_tests_rows(baseline)
        self.assertEqual(len(table), 8)
        d = scratch("import-compare")
        slower = os.path.join(d, "slower.jsonl")
        same = os.path.join(d, "same.jsonl")
        with open(slower, "w") as s, open(same, "w") as e:
            for size, oop, ip in table:
                factor = 1.25 if size >= 16 << 20 else 1.0  # 20% less bandwidth from 16 MiB on
                s.write(collbench_line(size, "out-of-place", oop * factor))
                s.write(collbench_line(size, "in-place", ip * factor))
                e.write(collbench_line(size, "out-of-place", oop))
                e.write(collbench_line(size, "in-place", ip))
        code, stdout, stderr = run("--baseline", baseline, "--candidate", slower,
                                   "-o", os.path.join(d, "cmp"))
        self.assertEqual(code, 1, stdout + stderr)
        self.assertIn("REGRESSION: 8 of 16 matched points", stdout)
        with open(os.path.join(d, "cmp", "compare.csv")) as f:
            verdicts = collections.Counter(r["verdict"] for r in csv.DictReader(f))
        self.assertEqual(verdicts, {"regression": 8, "same": 8})
        code, stdout, stderr = run("--baseline", baseline, "--candidate", same,
                                   "-o", os.path.join(d, "cmp-same"))
        self.assertEqual(code, 0, stdout + stderr)
        self.assertIn("OK: none of 16 matched points", stdout)
        # nccl-tests' -J JSON of a run against its text: the same numbers.
        code, stdout, stderr = run("--baseline", os.path.join(FIXTURES, "imports", "all_reduce_perf.log"),
                                   "--candidate", os.path.join(FIXTURES, "imports", "all_reduce_perf.json"),
                                   "-o", os.path.join(d, "cmp-json"))
        self.assertEqual(code, 0, stdout + stderr)
        self.assertIn("OK: none of 6 matched points", stdout)

    def test_compare_csv_and_points_csv_give_the_runs_their_spread_and_algbw(self):
        """Three runs against one: the median, the fastest and slowest run and algbw of each side."""
        baseline = os.path.join(FIXTURES, "imports", "nccl-tests-2.18-tag-output.log")
        table = nccl_tests_rows(baseline)
        d = scratch("compare-runs")
        rounds = os.path.join(d, "rounds")
        os.makedirs(rounds)
        for run_id, factor in (("c1", 1.0), ("c2", 1.04), ("c3", 0.98)):
            with open(os.path.join(rounds, f"round-{run_id}.jsonl"), "w") as f:
                for size, oop, _ in table:
                    # Unlabelled, each file would be a variant of its own: as collbench --label writes it.
                    f.write(collbench_line(size, "out-of-place", oop * factor, run_id="00000000000000" + run_id,
                                           labels={"variant": "rounds"}))
        code, stdout, stderr = run("--baseline", baseline, "--candidate", rounds, "-o", os.path.join(d, "cmp"))
        self.assertEqual(code, 0, stdout + stderr)
        with open(os.path.join(d, "cmp", "compare.csv")) as f:
            rows = {int(r["bytes"]): r for r in csv.DictReader(f)
                    if r["status"] == "matched" and r["placement"] == "out-of-place"}
        self.assertEqual(sorted(rows), [size for size, _, _ in table])
        for size, oop, _ in table:
            r = rows[size]
            self.assertEqual((r["baseline_runs"], r["candidate_runs"]), ("1", "3"))
            self.assertAlmostEqual(float(r["candidate_time_us"]), oop, delta=oop * 1e-9)
            self.assertAlmostEqual(float(r["candidate_run_time_min_us"]), oop * 0.98, delta=oop * 1e-9)
            self.assertAlmostEqual(float(r["candidate_run_time_max_us"]), oop * 1.04, delta=oop * 1e-9)
            self.assertEqual(r["baseline_run_time_min_us"], r["baseline_time_us"])
            self.assertEqual(r["baseline_run_time_max_us"], r["baseline_time_us"])
            self.assertAlmostEqual(float(r["candidate_algbw_gbps"]), size / oop / 1e3, delta=size / oop * 1e-9)
            self.assertGreater(float(r["baseline_algbw_gbps"]), 0)
        # The report of the rounds alone: points.csv merges them the same way.
        code, stdout, stderr = run(rounds, "-o", os.path.join(d, "report"), "--no-reference")
        self.assertEqual(code, 0, stdout + stderr)
        with open(os.path.join(d, "report", "points.csv")) as f:
            points = {int(r["bytes"]): r for r in csv.DictReader(f)}
        self.assertEqual(sorted(points), [size for size, _, _ in table])
        for size, oop, _ in table:
            r = points[size]
            self.assertEqual((r["variant"], r["test"], r["placement"], r["nranks"], r["runs"], r["rows"]),
                             ("rounds", "all_reduce", "out-of-place", "2", "3", "3"))
            self.assertAlmostEqual(float(r["time_us"]), oop, delta=oop * 1e-9)
            self.assertAlmostEqual(float(r["run_time_min_us"]), oop * 0.98, delta=oop * 1e-9)
            self.assertAlmostEqual(float(r["run_time_max_us"]), oop * 1.04, delta=oop * 1e-9)
            self.assertAlmostEqual(float(r["algbw_gbps"]), size / oop / 1e3, delta=size / oop * 1e-9)
            self.assertAlmostEqual(float(r["iter_p50_us"]), oop, delta=oop * 1e-9)

    def test_results_csv_shows_the_interval_of_rows_timed_to_a_precision(self):
        d = scratch("precision")
        timed = json.loads(collbench_line(1024, "out-of-place", 10.0))
        timed["schema"]["version"] = 3
        timed["precision"] = {"target": 0.01, "half_width": 0.008, "low_us": 9.92,
                              "high_us": 10.08, "converged": True, "seconds": 0.5}
        with open(os.path.join(d, "results.jsonl"), "w") as f:
            f.write(json.dumps(timed) + "\n" + collbench_line(1024, "in-place", 11.0))
        out = os.path.join(d, "out")
        code, _, stderr = run(os.path.join(d, "results.jsonl"), "-o", out)
        self.assertEqual(code, 0, stderr)
        with open(os.path.join(out, "results.csv")) as f:
            rows = {r["placement"]: r for r in csv.DictReader(f)}
        self.assertEqual((rows["out-of-place"]["precision_target"], rows["out-of-place"]["ci95_low_us"],
                          rows["out-of-place"]["ci95_high_us"], rows["out-of-place"]["converged"]),
                         ("0.01", "9.92", "10.08", "true"))
        self.assertEqual((rows["in-place"]["ci95_low_us"], rows["in-place"]["converged"]), ("", ""))

    def test_help_and_version(self):
        code, stdout, _ = run("--help")
        self.assertEqual(code, 0)
        self.assertIn("--baseline", stdout)
        code, stdout, _ = run("--version")
        self.assertEqual(code, 0)
        self.assertTrue(stdout.startswith("collbench-report "))


def pair_rows(hosts, bad_host=None, bad_link=None):
    """collbench --split pairs rows: a round-robin tournament of `hosts` nodes (one rank each),
    all_reduce at 1, 16 and 256 MiB; pairs with the bad host or on the bad link at half speed."""
    names = ["node-%02d" % i for i in range(hosts)]
    order = list(range(hosts + hosts % 2))
    lines = []
    for rnd in range(len(order) - 1):
        for index in range(len(order) // 2):
            a, b = sorted((order[index], order[-1 - index]))
            if b >= hosts:
                continue
            slow = bad_host in (a, b) or bad_link == (a, b)
            for size in (1 << 20, 16 << 20, 256 << 20):
                busbw = 40.0 * (0.5 if slow else 1.0)
                time_us = size / (busbw * 1e3)
                lines.append(json.dumps({
                    "schema": {"name": "collbench-results", "version": 3}, "record": "result",
                    "run_id": "00000000000000d1", "test": "all_reduce", "backend": "nccl",
                    "dtype": "float", "op": "sum", "root": None, "bytes": size,
                    "count": size // 4, "nranks": hosts, "nodes": hosts,
                    "placement": "out-of-place", "mode": "batch", "iterations": 20,
                    "warmup": 5, "graph_launches": 0, "window": None, "pair": None,
                    "time_us": {"reported": time_us, "slowest": time_us, "mean": time_us,
                                "fastest": time_us,
                                "per_iteration": {"n": 20, "min": time_us, "p50": time_us,
                                                  "p99": time_us, "max": time_us,
                                                  "mean": time_us, "cv": 0.0}},
                    "algbw_gbps": busbw, "busbw_gbps": busbw, "slowest_rank": a,
                    "slowest_host": names[a], "wrong": 0, "status": "ok",
                    "group": {"mode": "pairs", "index": index, "round": rnd,
                              "hosts": [names[a], names[b]], "ranks": [a, b]}}))
        order = [order[0], order[-1]] + order[1:-1]
    return "\n".join(lines) + "\n"


class Suspects(unittest.TestCase):
    def suspects(self, text, *extra):
        base = scratch("suspects")
        with open(os.path.join(base, "pairs.jsonl"), "w") as f:
            f.write(text)
        p = subprocess.run([os.path.abspath(BIN), "pairs.jsonl", "--suspects", *extra],
                           capture_output=True, text=True, timeout=60, cwd=base)
        return p.returncode, p.stdout, p.stderr, base

    def test_hosts_then_link_comments(self):
        code, stdout, stderr, base = self.suspects(pair_rows(6, bad_host=5, bad_link=(0, 1)))
        self.assertEqual(code, 0, stderr)
        self.assertEqual(stdout,
                         "node-05\n# slow link: node-00 <-> node-01: 50% of the median pair\n")
        self.assertIn("slow host node-05: pair evidence", stderr)
        # No report without -o.
        self.assertEqual(sorted(os.listdir(base)), ["pairs.jsonl"])

    def test_one_bad_host_alone(self):
        for hosts in (4, 5, 6):
            code, stdout, stderr, _ = self.suspects(pair_rows(hosts, bad_host=2))
            self.assertEqual((code, stdout), (0, "node-02\n"), (hosts, stderr))

    def test_nothing_when_clean(self):
        code, stdout, stderr, _ = self.suspects(pair_rows(6))
        self.assertEqual((code, stdout), (0, ""), stderr)
        code, stdout, stderr, _ = self.suspects(pair_rows(6, bad_host=1), "-q")
        self.assertEqual((code, stdout), (0, "node-01\n"), stderr)
        self.assertNotIn("slow host", stderr)

    def test_with_output_the_report_has_the_section(self):
        code, stdout, stderr, base = self.suspects(pair_rows(4, bad_host=0), "-o", "out")
        self.assertEqual((code, stdout), (0, "node-00\n"), stderr)
        with open(os.path.join(base, "out", "index.html")) as f:
            html = f.read()
        self.assertIn('<section id="suspects">', html)
        self.assertIn('id="fig-suspects-heatmap"', html)

    def test_usage_errors_exit_2_with_one_line(self):
        for extra in (("--format", "gbench"), ("-o", "-")):
            code, stdout, stderr, _ = self.suspects(pair_rows(4), *extra)
            self.assertEqual(code, 2, extra)
            self.assertEqual(stdout, "")
            self.assertEqual(len(stderr.strip().splitlines()), 1, stderr)
        code, _, stderr = run("--suspects", "--baseline", FIXTURES, "--candidate", FIXTURES)
        self.assertEqual(code, 2)
        self.assertIn("--suspects", stderr)

    def test_help_documents_the_output(self):
        code, stdout, _ = run("--help")
        self.assertEqual(code, 0)
        self.assertIn("--suspects", stdout)
        self.assertIn("# slow link:", stdout)


if __name__ == "__main__":
    os.makedirs(SCRATCH, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"])
