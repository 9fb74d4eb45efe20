#!/usr/bin/env python3
"""Prints the summary of a kiln ctest run from ctest's JUnit report (scripts/test.sh uses it).

One line per ctest test (unit tests folded into one line), with the counts each tool printed
(lit's totals, the ptxas check's and the e2e test's closing lines), then the closing line
`kiln: N passed, N failed, N skipped`. Exit status 1 when any test failed or none ran.
"""
import re
import sys
import xml.etree.ElementTree as ET


def detail(name, out):
    """A short description of what a test reported, from its captured output."""
    if name == "lit":
        total = re.search(r"Total Discovered Tests:\s*(\d+)", out)
        parts = re.findall(r"^\s+(Passed|Failed|Unsupported|Expectedly Failed|Unresolved|Timed Out)\s*:\s*(\d+)",
                           out, re.M)
        if total:
            return "%s lit tests: %s" % (total.group(1), ", ".join("%s %s" % (n, k.lower()) for k, n in parts))
        if "did not discover any tests" in out:
            return "no lit tests found"
    for pattern in (r"^(SKIP: .*)$", r"^(ptxas-check: .*)$", r"^(e2e: .*)$", r"^(compile-only: .*)$",
                    r"^(\d+ graphs, worst .*)$", r"^(bench-peers: .*)$", r"^(PASS|FAIL.*)$"):
        m = re.search(pattern, out, re.M)
        if m:
            return re.split(r" \(|; ", m.group(1))[0][:100]
    return ""


def main(path):
    cases = ET.parse(path).getroot().iter("testcase")
    rows, unit = [], {"passed": 0, "failed": 0, "skipped": 0}
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failed_names = []
    for case in cases:
        name = case.get("name", "?")
        status = case.get("status", "")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            state = "failed"
        elif case.find("skipped") is not None or status in ("notrun", "disabled", "skipped"):
            state = "skipped"
        else:
            state = "passed"
        counts[state] += 1
        if state == "failed":
            failed_names.append(name)
        out = "".join(e.text or "" for e in case.iter("system-out"))
        if "." not in name:
            rows.append((name, state, detail(name, out)))
        else:  # GoogleTest cases (Suite.Test) folded into one line
            unit[state] += 1

    print()
    print("=" * 30 + " kiln test summary " + "=" * 30)
    for name, state, info in rows:
        print("  %-14s %-8s %s" % (name, state, info))
    if sum(unit.values()):
        print("  %-14s %-8s %d passed, %d failed, %d skipped" % (
            "unit (gtest)", "failed" if unit["failed"] else "passed", unit["passed"], unit["failed"], unit["skipped"]))
    if failed_names:
        print("  failed: " + ", ".join(failed_names))
    print("  (gpu-labelled tests skip without a GPU; docs/gpu.md runs them on one)")
    print("=" * 79)
    print("kiln: %d passed, %d failed, %d skipped" % (counts["passed"], counts["failed"], counts["skipped"]))
    return 1 if counts["failed"] or not counts["passed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
