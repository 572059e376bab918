#!/usr/bin/env python3
"""collbench-report as a person runs it: exit codes 0/1/2/3, messages, --format gbench.

usage: report_cli_test.py COLLBENCH_REPORT FIXTURES SCRATCH
"""
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

    def test_help_and_version(self):
        code, stdout, _ = run("--help")
        self.assertEqual(code, 0)
        self.assertIn("--baseline", stdout)
        code, stdout, _ = run("--version")
        self.assertEqual(code, 0)
        self.assertTrue(stdout.startswith("collbench-report "))


if __name__ == "__main__":
    os.makedirs(SCRATCH, exist_ok=True)
    unittest.main(argv=[sys.argv[0], "-v"])
