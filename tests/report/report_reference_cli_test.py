#!/usr/bin/env python3
"""collbench-report's reference figures as a person uses them: the published figures found by
default, --verdicts on stdout, --reference with earlier runs, --no-reference, and bad reference
files or misplaced options (exit 2 with one line, nothing written).

usage: report_reference_cli_test.py COLLBENCH_REPORT FIXTURES SCRATCH
"""
import json
import os
import shutil
import subprocess
import sys
import unittest

BIN, FIXTURES, SCRATCH = sys.argv[1:4]
GiB = 1 << 30


def run(*args):
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


def scratch(name):
    path = os.path.join(SCRATCH, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def fixture_context():
    """A real context line of the fixtures, to be reshaped into another platform."""
    path = os.path.join(FIXTURES, "campaign", "nccl-2.20", "nccl-2.20-2n-r0.jsonl")
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if record.get("record") == "context":
                return record
    raise AssertionError("no context line in " + path)


def write_run(directory, run_id, instance_type="p5.48xlarge", nodes=2, per_node=8, busbw=400.0,
              start="2025-03-04T05:06:07Z"):
    """An all_reduce run from 8 B to 2 GiB: `nodes` hosts of `per_node` ranks."""
    nranks = nodes * per_node
    context = fixture_context()
    context.pop("labels", None)
    context.update({"run_id": run_id, "start_time": start, "nranks": nranks, "nodes": nodes})
    context["hosts"] = [{"name": f"node-{h:02}", "instance_type": instance_type,
                         "ranks": list(range(h * per_node, (h + 1) * per_node))}
                        for h in range(nodes)]
    context["ranks"] = [{"rank": r, "host": f"node-{r // per_node:02}", "local_rank": r % per_node,
                         "device": {"model": "NVIDIA H100 80GB HBM3", "index": r % per_node}}
                        for r in range(nranks)]
    factor = 2 * (nranks - 1) / nranks
    lines = [json.dumps(context)]
    for size in (8, 16, 1 << 20, 64 << 20, GiB, 2 * GiB):
        time_us = 60 + size * factor / (busbw * 1e3)
        algbw = size / time_us / 1e3
        lines.append(json.dumps({
            "schema": context["schema"], "record": "result", "run_id": run_id,
            "test": "all_reduce", "backend": "nccl", "dtype": "float", "op": "sum", "root": None,
            "bytes": size, "count": size // 4, "nranks": nranks, "nodes": nodes,
            "placement": "out-of-place", "mode": "batch", "iterations": 20, "warmup": 5,
            "graph_launches": 0, "window": None, "pair": None,
            "time_us": {"reported": time_us, "slowest": time_us, "mean": time_us,
                        "fastest": time_us,
                        "per_iteration": {"n": 20, "min": time_us, "p50": time_us,
                                          "p99": time_us, "max": time_us, "mean": time_us,
                                          "cv": 0.0}},
            "algbw_gbps": algbw, "busbw_gbps": algbw * factor, "slowest_rank": 0,
            "slowest_host": "node-00", "wrong": 0, "status": "ok"}))
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, f"{run_id}.jsonl"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return factor


class Reference(unittest.TestCase):
    def test_published_figures_by_default_and_verdicts_on_stdout(self):
        results = scratch("p5")
        factor = write_run(results, "00000000000000d1")
        out = os.path.join(SCRATCH, "p5-report")
        code, stdout, stderr = run(results, "-o", out, "--verdicts")
        self.assertEqual(code, 0, stderr)
        time_us = 60 + GiB * factor / 400e3
        busbw = GiB / time_us / 1e3 * factor
        verdict = (f"all_reduce at 1 GiB: {100 * busbw / 436.95:.0f}% of the published "
                   "p5.48xlarge 2-node figure (436.95 GB/s, awsome-distributed-training "
                   "micro-benchmarks/nccl-tests/README.md)")
        self.assertIn(verdict, stdout)
        self.assertIn("collbench-report: reference: published figures from ", stdout)
        with open(os.path.join(out, "summary.md")) as f:
            summary = f.read()
        self.assertIn("## Reference figures", summary)
        self.assertIn(verdict, summary)
        with open(os.path.join(out, "index.html")) as f:
            self.assertIn('href="#reference"', f.read())
        with open(os.path.join(out, "busbw-all_reduce.svg")) as f:
            self.assertIn('class="reference-mark"', f.read())
        # Without --verdicts the console keeps its usual two lines.
        code, stdout, _ = run(results, "-o", out)
        self.assertEqual(code, 0)
        self.assertNotIn("all_reduce at 1 GiB", stdout)
        # --no-reference: no section at all.
        code, _, stderr = run(results, "-o", out, "--no-reference")
        self.assertEqual(code, 0, stderr)
        with open(os.path.join(out, "summary.md")) as f:
            self.assertNotIn("Reference figures", f.read())

    def test_no_match_in_words(self):
        results = scratch("g5")
        write_run(results, "00000000000000d2", instance_type="g5.48xlarge")
        code, stdout, stderr = run(results, "-o", os.path.join(SCRATCH, "g5-report"),
                                   "--verdicts")
        self.assertEqual(code, 0, stderr)
        self.assertIn("no published figure for g5.48xlarge on 2 nodes (all_reduce)", stdout)

    def test_tests_without_a_figure_share_one_line(self):
        # all_reduce and all_gather on a platform nobody published: one line names both tests.
        results = scratch("g5-two-tests")
        write_run(results, "00000000000000d5", instance_type="g5.48xlarge")
        path = os.path.join(results, "00000000000000d5.jsonl")
        with open(path) as f:
            lines = f.read().splitlines()
        gathers = [l.replace('"test": "all_reduce"', '"test": "all_gather"').replace('"op": "sum"', '"op": null')
                   for l in lines if '"record": "result"' in l]
        with open(path, "a") as f:
            f.write("\n".join(gathers) + "\n")
        code, stdout, stderr = run(results, "-o", os.path.join(SCRATCH, "g5-two-report"), "--verdicts")
        self.assertEqual(code, 0, stderr)
        misses = [l for l in stdout.splitlines() if "no published figure" in l]
        self.assertEqual(misses, ["  no published figure for g5.48xlarge on 2 nodes (all_reduce, all_gather)"],
                         stdout)

    def test_earlier_runs_as_the_reference(self):
        earlier = scratch("earlier")
        write_run(earlier, "00000000000000e1", busbw=500.0, start="2025-01-02T03:04:05Z")
        results = scratch("now")
        write_run(results, "00000000000000d3", busbw=400.0)
        # --reference takes one directory: the results after it are still the input.
        code, stdout, stderr = run("--reference", earlier, results, "-o",
                                   os.path.join(SCRATCH, "now-report"), "--verdicts")
        self.assertEqual(code, 0, stderr)
        self.assertIn("of your run 00000000000000e1 (2025-01-02)", stdout)
        self.assertIn("all_reduce at 8 B: 1.0× the time of your run 00000000000000e1", stdout)
        self.assertNotIn("published", stdout)

    def test_bad_reference_file_is_one_line_exit_2(self):
        results = scratch("bad-in")
        write_run(results, "00000000000000d4")
        out = os.path.join(SCRATCH, "bad-report")
        shutil.rmtree(out, ignore_errors=True)
        bad = os.path.join(FIXTURES, "reference", "bad")
        code, stdout, stderr = run(results, "-o", out, "--reference", bad)
        self.assertEqual(code, 2)
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertIn("fixture-bad.json: points[0].busbw_gbps: expected a number", stderr)
        self.assertFalse(os.path.exists(out))
        # A file that is not JSON at all, beside a good one.
        mixed = scratch("mixed-reference")
        shutil.copy(os.path.join(FIXTURES, "reference", "published", "fixture-p5.json"), mixed)
        with open(os.path.join(mixed, "notes.json"), "w") as f:
            f.write("{ not json\n")
        code, _, stderr = run(results, "-o", out, "--reference", mixed)
        self.assertEqual(code, 2)
        self.assertEqual(len(stderr.splitlines()), 1, stderr)
        self.assertIn("notes.json: not valid JSON", stderr)

    def test_misplaced_reference_options_exit_2(self):
        results = scratch("usage")
        write_run(results, "00000000000000d5")
        for args in (["--reference", os.path.join(SCRATCH, "does-not-exist")],
                     ["--reference", results, "--no-reference"],
                     ["--verdicts", "--no-reference"],
                     ["--reference", results, "--format", "gbench"]):
            code, _, stderr = run(results, "-o", os.path.join(SCRATCH, "usage-report"), *args)
            self.assertEqual(code, 2, args)
            self.assertEqual(len(stderr.splitlines()), 1, (args, stderr))
        code, _, stderr = run("--baseline", results, "--candidate", results, "--reference",
                              results)
        self.assertEqual(code, 2)
        self.assertEqual(len(stderr.splitlines()), 1, stderr)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
