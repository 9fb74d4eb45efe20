#!/usr/bin/env python3
"""Prints the summary of a kiln ctest run from ctest's JUnit report (scripts/test.sh uses it).

One line per ctest test (unit tests folded into one line), with the counts each tool printed
(lit's totals, the ptxas check's and the e2e test's closing lines), then the closing line
`kiln: N passed, N failed, N skipped`. Exit status 1 when any test failed or none ran.

A ctest test that passes may still have skipped parts of its work: the ptxas check and the e2e
tests print `SKIP <model>: not found in DIR` for each shared model that is absent, lit counts the
tests whose `REQUIRES:` features are missing as unsupported (listed with lit's
--show-unsupported). Those are printed under the test's line, grouped by reason, e.g.
`4 skipped, not found in /x: gpt2_tiny_dynamo, ...` and `3 unsupported, no shared models
(KILN_MODELS_DIR): onnx/models.mlir, ...`, and counted in the closing line.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What a missing lit feature (test/lit.cfg.py) means.
FEATURES = {
    "models": "no shared models (KILN_MODELS_DIR)",
    "gpu": "no GPU",
    "ptxas": "no ptxas",
}


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


def names(items, limit=6):
    """'a, b, c' with at most `limit` names, then '+N more'."""
    text = ", ".join(items[:limit])
    return text + (", +%d more" % (len(items) - limit) if len(items) > limit else "")


def skipped_parts(out):
    """[(count, text)] for the SKIP lines of a test's output, grouped by reason:
    `SKIP <name>: <reason>` and `SKIP: <reason>`."""
    by_reason = {}
    for m in re.finditer(r"^SKIP(?: ([^:\n]+))?: (.*)$", out, re.M):
        by_reason.setdefault(m.group(2).strip(), []).append(m.group(1))
    parts = []
    for reason, items in by_reason.items():
        named = [n for n in items if n]
        parts.append((len(items), "%d skipped, %s%s" % (len(items), reason,
                                                          ": " + names(named) if named else "")))
    return parts


def requires(test):
    """The REQUIRES: features of lit test `test` ('onnx/models.mlir'), from its source file."""
    try:
        with open(os.path.join(REPO, "test", test), encoding="utf-8", errors="replace") as f:
            found = re.findall(r"REQUIRES:\s*(.*)$", f.read(), re.M)
    except OSError:
        return ""
    return ", ".join(r.strip() for r in found)


def unsupported_parts(out):
    """[(count, text)] for the tests lit lists under 'Unsupported Tests (N):', grouped by their
    REQUIRES: line."""
    block = re.search(r"^Unsupported Tests \(\d+\):\n((?:  .*\n?)+)", out, re.M)
    if not block:
        return []
    by_need = {}
    for line in block.group(1).splitlines():
        test = line.strip().split(" :: ", 1)[-1]
        by_need.setdefault(requires(test), []).append(test)
    parts = []
    for need, tests in by_need.items():
        features = [f.strip() for f in need.split(",") if f.strip()]
        why = "".join(", " + FEATURES.get(f, "REQUIRES " + f) for f in features)
        parts.append((len(tests), "%d unsupported%s: %s" % (len(tests), why, names(tests))))
    return parts


def main(path):
    cases = ET.parse(path).getroot().iter("testcase")
    rows, unit = [], {"passed": 0, "failed": 0, "skipped": 0}
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    failed_names = []
    inner = 0  # models and lit tests skipped inside tests that ran
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
            # Parts of a test that ran but skipped some of its work (a skipped test's own line
            # says why already).
            parts = [] if state == "skipped" else skipped_parts(out) + unsupported_parts(out)
            inner += sum(n for n, _ in parts)
            rows.append((name, state, detail(name, out), [text for _, text in parts]))
        else:  # GoogleTest cases (Suite.Test) folded into one line
            unit[state] += 1

    print()
    print("=" * 30 + " kiln test summary " + "=" * 30)
    for name, state, info, parts in rows:
        print("  %-14s %-8s %s" % (name, state, info))
        for text in parts:
            print("  %-14s %-8s %s" % ("", "", text))
    if sum(unit.values()):
        print("  %-14s %-8s %d passed, %d failed, %d skipped" % (
            "unit (gtest)", "failed" if unit["failed"] else "passed", unit["passed"], unit["failed"], unit["skipped"]))
    if failed_names:
        print("  failed: " + ", ".join(failed_names))
    print("  (gpu-labelled tests skip without a GPU; docs/gpu.md runs them on one)")
    print("=" * 79)
    print("kiln: %d passed, %d failed, %d skipped%s" % (
        counts["passed"], counts["failed"], counts["skipped"],
        "; %d skipped inside tests that ran (listed above)" % inner if inner else ""))
    return 1 if counts["failed"] or not counts["passed"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
