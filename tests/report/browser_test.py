#!/usr/bin/env python3
"""Opens collbench-report's HTML in a real browser (Debian's chromium, headless, fresh profile,
background networking off) and checks that it loads without console errors, that every chart
is laid out with a non-zero size, and that the page renders to a non-trivial PNG. The screenshots
are kept in ARTIFACTS (report.png, demo.png, compare.png). Exits 77 (CTest: skipped) without
chromium; COLLBENCH_CHROMIUM=/path/to/chromium picks another browser binary.

usage: browser_test.py COLLBENCH_REPORT FIXTURES ARTIFACTS
"""
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
BIN, FIXTURES, ARTIFACTS = sys.argv[1:4]


def find_chromium():
    override = os.environ.get("COLLBENCH_CHROMIUM")
    if override is not None:  # a path, or "none" to see the skip
        return override if os.access(override, os.X_OK) else None
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def chromium(browser, url, *extra, timeout=90):
    """Runs headless chromium with a fresh profile; returns (stdout, stderr)."""
    with tempfile.TemporaryDirectory(prefix="collbench-chromium-") as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--disable-extensions", "--hide-scrollbars", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", *extra, url]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.stdout, p.stderr


def console_problems(stderr):
    """Console messages and blocked loads (a CSP violation is reported on the console)."""
    bad = []
    for line in stderr.splitlines():
        if "CONSOLE" in line or "Uncaught" in line or "Refused to" in line:
            bad.append(line)
    return bad


class SvgCollector(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg" and "chart" in a.get("class", ""):
            self.charts.append((a.get("id"), float(a.get("width", 0)), float(a.get("height", 0))))
        if tag == "script":
            self.scripts += 1


def png_stats(path):
    """(width, height, distinct byte values, share of non-white bytes) of an 8-bit RGB(A) PNG."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    sample = raw[::97]
    non_white = sum(1 for b in sample if b < 240) / max(1, len(sample))
    return width, height, len(set(sample)), non_white


def measure_layout(browser, page, expected):
    """Lays the page out in an iframe of a test-only wrapper page whose script measures every
    chart (the report itself has no scripts) and writes the sizes into its DOM."""
    wrapper = os.path.join(os.path.dirname(page), "measure.html")
    with open(wrapper, "w") as f:
        f.write("""<!DOCTYPE html><html><body>
<iframe id="r" src="%s" style="width:1400px;height:900px"></iframe><pre id="out">pending</pre>
<script>
document.getElementById('r').addEventListener('load', function () {
  var doc = this.contentDocument, sizes = [];
  doc.querySelectorAll('svg.chart').forEach(function (s) {
    var r = s.getBoundingClientRect();
    sizes.push([s.id, Math.round(r.width), Math.round(r.height)]);
  });
  document.getElementById('out').textContent = 'SIZES' + JSON.stringify(sizes) + 'END';
});
</script></body></html>""" % os.path.basename(page))
    stdout, _ = chromium(browser, "file://" + wrapper, "--allow-file-access-from-files", "--dump-dom",
                         "--virtual-time-budget=10000")
    os.remove(wrapper)
    start, end = stdout.find("SIZES"), stdout.find("END", stdout.find("SIZES"))
    assert start >= 0 and end > start, "the measuring page did not report (iframe not loaded?)"
    sizes = json.loads(stdout[start + 5:end])
    assert len(sizes) == expected, f"laid out {len(sizes)} charts, the page has {expected}"
    zero = [s for s in sizes if s[1] <= 0 or s[2] <= 0]
    assert not zero, f"charts with no size: {zero}"
    return sizes


def check_page(browser, page, png, min_charts):
    url = "file://" + page
    dom, log = chromium(browser, url, "--dump-dom")
    problems = console_problems(log)
    assert not problems, "console messages:\n" + "\n".join(problems)
    collector = SvgCollector()
    collector.feed(dom)
    assert collector.scripts == 0, "the report must not contain scripts"
    assert len(collector.charts) >= min_charts, f"{len(collector.charts)} charts in the DOM, want >= {min_charts}"
    for chart_id, w, h in collector.charts:
        assert w > 0 and h > 0, f"chart {chart_id} has no size attributes"
    sizes = measure_layout(browser, page, len(collector.charts))
    _, log = chromium(browser, url, f"--screenshot={png}", "--window-size=1400,3000")
    problems = console_problems(log)
    assert not problems, "console messages:\n" + "\n".join(problems)
    width, height, distinct, non_white = png_stats(png)
    assert (width, height) == (1400, 3000), (width, height)
    assert distinct > 20 and non_white > 0.02, f"the screenshot looks blank ({distinct} values, {non_white:.3f} ink)"
    print(f"ok: {os.path.basename(os.path.dirname(page))}: {len(sizes)} charts laid out, "
          f"smallest {min(s[1] for s in sizes)}x{min(s[2] for s in sizes)} px; screenshot {png}")


def main():
    browser = find_chromium()
    if not browser:
        print("SKIPPED: chromium not found (install Debian's chromium package to run the browser test)")
        return SKIP
    os.makedirs(ARTIFACTS, exist_ok=True)
    report = os.path.join(ARTIFACTS, "report-campaign")
    compare = os.path.join(ARTIFACTS, "report-compare")
    demo = os.path.join(ARTIFACTS, "report-demo")
    for d in (report, compare, demo):
        shutil.rmtree(d, ignore_errors=True)
    subprocess.run([BIN, os.path.join(FIXTURES, "campaign"), "-o", report, "-q"], check=True)
    subprocess.run([BIN, os.path.join(FIXTURES, "demo"), "-o", demo, "-q"], check=True)
    code = subprocess.run([BIN, "--baseline", os.path.join(FIXTURES, "compare", "baseline"), "--candidate",
                           os.path.join(FIXTURES, "compare", "regressed"), "-o", compare, "-q"]).returncode
    assert code == 1, f"the regressed comparison exited {code}"
    check_page(browser, os.path.join(report, "index.html"), os.path.join(ARTIFACTS, "report.png"), 9)
    check_page(browser, os.path.join(demo, "index.html"), os.path.join(ARTIFACTS, "demo.png"), 20)
    check_page(browser, os.path.join(compare, "index.html"), os.path.join(ARTIFACTS, "compare.png"), 4)
    print("1 passed, 0 failed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except AssertionError as e:
        print(f"FAILED: {e}")
        sys.exit(1)
