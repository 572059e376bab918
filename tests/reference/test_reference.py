#!/usr/bin/python3
"""The published reference figures under results/reference/: every file validates against
results/schema/collbench-reference.schema.json, every point names its source (an address, or a
repository and a path) with a quote that locates the figure, no point is listed twice, and sizes,
bandwidths and times are positive. The Checks tests feed inline bad documents to the same checks
to show that each of them can fail.

Run one test: test_reference.py Files.test_every_file_validates_against_the_schema
"""

import copy
import json
import pathlib
import re
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE_DIR = ROOT / "results" / "reference"
SCHEMA_PATH = ROOT / "results" / "schema" / "collbench-reference.schema.json"

# What makes two points the same figure: the setup, the size and the source. Two sources that
# publish the same setup are kept apart: agreeing sources are worth having.
IDENTITY = ("platform", "gpu", "nodes", "gpus_per_node", "test", "nccl_version", "algorithm",
            "size_bytes", "figure")


def load_schema_validator():
    try:
        import jsonschema
    except ImportError:
        return None
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def schema_problems(validator, doc):
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(top)'}: {e.message}"
            for e in validator.iter_errors(doc)]


def source_problems(doc):
    """Every point names where its figure is: an https address or a repository and a path, a
    title, and a quote. Checked here as well as in the schema so that the rule holds even where
    the schema validator is not installed."""
    problems = []
    for i, point in enumerate(doc.get("points", [])):
        source = point.get("source")
        if not isinstance(source, dict):
            problems.append(f"points/{i}: no source")
            continue
        url = source.get("url")
        has_url = isinstance(url, str) and url.startswith("https://")
        has_path = bool(source.get("repository")) and bool(source.get("path"))
        if not has_url and not has_path:
            problems.append(f"points/{i}: the source names neither a URL nor a repository and path")
        quote = source.get("quote")
        if not isinstance(quote, str) or len(quote.strip()) < 8:
            problems.append(f"points/{i}: the source has no quote locating the figure")
        if not source.get("title"):
            problems.append(f"points/{i}: the source has no title")
    return problems


def value_problems(doc):
    """Sizes, bandwidths and times are positive; at least one figure per point; a point without
    a size is a stated figure (a peak said in prose), never a measured row."""
    problems = []
    for i, point in enumerate(doc.get("points", [])):
        size = point.get("size_bytes")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool) or size <= 0):
            problems.append(f"points/{i}: size_bytes {size!r} is not a positive integer")
        if size is None and point.get("figure") != "stated":
            problems.append(f"points/{i}: only a stated figure may go without a size")
        figures = [k for k in ("busbw_gbps", "time_us") if k in point]
        if not figures:
            problems.append(f"points/{i}: neither busbw_gbps nor time_us")
        for k in figures:
            v = point[k]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                problems.append(f"points/{i}: {k} {v!r} is not positive")
    return problems


def point_key(point):
    source = point.get("source") or {}
    where = source.get("url") or f"{source.get('repository')}/{source.get('path')}"
    return tuple(point.get(k) for k in IDENTITY) + (where,)


def duplicate_problems(docs):
    """No figure is listed twice, within a file or across files."""
    seen = {}
    problems = []
    for name, doc in docs:
        for i, point in enumerate(doc.get("points", [])):
            key = point_key(point)
            if key in seen:
                problems.append(f"{name} points/{i} repeats {seen[key]}")
            else:
                seen[key] = f"{name} points/{i}"
    return problems


def reference_files():
    return sorted(REFERENCE_DIR.glob("*.json"))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


GOOD_POINT = {
    "platform": "p5.48xlarge", "gpu": "H100", "nodes": 2, "gpus_per_node": 8,
    "test": "all_reduce", "nccl_version": None, "algorithm": None, "size_bytes": 8,
    "time_us": 69.12, "figure": "measured",
    "source": {"url": "https://example.invalid/readme", "title": "t", "kind": "README",
               "quote": "8  2  float  sum  -1  69.12"},
}


def good_doc():
    return {"schema": {"name": "collbench-reference", "version": 1}, "platform": "example",
            "points": [copy.deepcopy(GOOD_POINT)]}


class Files(unittest.TestCase):
    def setUp(self):
        self.files = reference_files()
        self.assertTrue(self.files, f"no reference files in {REFERENCE_DIR}")

    def test_every_file_validates_against_the_schema(self):
        validator = load_schema_validator()
        if validator is None:
            self.skipTest("python3-jsonschema is not installed")
        for path in self.files:
            with self.subTest(file=path.name):
                self.assertEqual(schema_problems(validator, load(path)), [])

    def test_every_file_is_named_after_its_platform(self):
        for path in self.files:
            with self.subTest(file=path.name):
                self.assertEqual(load(path).get("platform"), path.stem)

    def test_every_point_names_a_source_with_a_locating_quote(self):
        for path in self.files:
            with self.subTest(file=path.name):
                self.assertEqual(source_problems(load(path)), [])

    def test_sizes_bandwidths_and_times_are_positive(self):
        for path in self.files:
            with self.subTest(file=path.name):
                self.assertEqual(value_problems(load(path)), [])

    def test_no_point_is_listed_twice(self):
        self.assertEqual(duplicate_problems([(p.name, load(p)) for p in self.files]), [])

    def test_the_readme_table_lists_every_file_with_its_point_count(self):
        readme = (REFERENCE_DIR / "README.md").read_text(encoding="utf-8")
        listed = {m.group(1): int(m.group(2))
                  for m in re.finditer(r"^\| `([^`]+\.json)` \|[^|]*\| (\d+) \|", readme, re.M)}
        actual = {p.name: len(load(p).get("points", [])) for p in self.files}
        self.assertEqual(listed, actual)


class Checks(unittest.TestCase):
    """Each check fails on an inline bad document; the good one passes them all."""

    def setUp(self):
        self.validator = load_schema_validator()

    def assert_rejected(self, doc, check):
        self.assertNotEqual(check(doc), [])
        if self.validator is not None:
            self.assertNotEqual(schema_problems(self.validator, doc), [])

    def test_the_good_example_passes(self):
        doc = good_doc()
        self.assertEqual(source_problems(doc), [])
        self.assertEqual(value_problems(doc), [])
        if self.validator is not None:
            self.assertEqual(schema_problems(self.validator, doc), [])

    def test_a_point_without_a_source_fails(self):
        doc = good_doc()
        del doc["points"][0]["source"]
        self.assert_rejected(doc, source_problems)

    def test_a_source_without_url_or_repository_path_fails(self):
        doc = good_doc()
        del doc["points"][0]["source"]["url"]
        self.assert_rejected(doc, source_problems)
        doc["points"][0]["source"]["repository"] = "owner/name"
        self.assert_rejected(doc, source_problems)  # a repository without a path
        doc["points"][0]["source"]["path"] = "README.md"
        self.assertEqual(source_problems(doc), [])

    def test_a_source_without_a_quote_fails(self):
        doc = good_doc()
        doc["points"][0]["source"]["quote"] = " "
        self.assert_rejected(doc, source_problems)

    def test_zero_or_negative_figures_fail(self):
        for key, value in (("size_bytes", 0), ("time_us", 0), ("busbw_gbps", -1.0)):
            with self.subTest(key=key):
                doc = good_doc()
                doc["points"][0][key] = value
                self.assert_rejected(doc, value_problems)

    def test_a_point_without_any_figure_fails(self):
        doc = good_doc()
        del doc["points"][0]["time_us"]
        self.assert_rejected(doc, value_problems)

    def test_a_measured_point_without_a_size_fails(self):
        doc = good_doc()
        doc["points"][0]["size_bytes"] = None
        self.assertNotEqual(value_problems(doc), [])
        doc["points"][0]["figure"] = "stated"
        self.assertEqual(value_problems(doc), [])

    def test_an_unknown_member_fails_the_schema(self):
        if self.validator is None:
            self.skipTest("python3-jsonschema is not installed")
        doc = good_doc()
        doc["points"][0]["estimated"] = True
        self.assertNotEqual(schema_problems(self.validator, doc), [])

    def test_a_repeated_point_fails(self):
        doc = good_doc()
        self.assertEqual(duplicate_problems([("a.json", doc)]), [])
        doc["points"].append(copy.deepcopy(GOOD_POINT))
        self.assertNotEqual(duplicate_problems([("a.json", doc)]), [])
        other = good_doc()
        self.assertNotEqual(duplicate_problems([("a.json", good_doc()), ("b.json", other)]), [])


if __name__ == "__main__":
    unittest.main()
