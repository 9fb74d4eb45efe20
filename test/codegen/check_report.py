#!/usr/bin/env python3
"""Checks a `kiln-compile --report DIR` directory for report.test.

Reads DIR/report.json and DIR/index.html and fails (exit 1, naming the check) unless:
  - the JSON has the documented keys; every buffer lies inside the arena, its launches are in
    range, and no two buffers that are live at the same launch overlap in the arena;
  - the arena size is the highest buffer end, the peak launch is the first launch whose live
    buffers reach it, the intermediate bytes are the sum of the buffers' arena bytes, and the
    largest live sum is right;
  - the page has one <rect class="buffer"> per buffer and one kernel-table row per launch, the
    SVG is well-formed XML (so every name was escaped), and the phase table lists each phase;
  - no raw '<' or '&' from a model name reaches the page (--escaped NAME: NAME must appear only
    HTML-escaped).
Prints "buffers: N", "launches: N", "arena: BYTES", "peak launch: K", "phases: a, b, ...",
"rank: R of W, all-reduces: N" for FileCheck.

Usage: check_report.py DIR [--escaped NAME ...]
"""

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET


def escape(text):
    """HTML escaping as llvm::printHTMLEscaped does it."""
    for raw, entity in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;"),
                        ("'", "&apos;")):
        text = text.replace(raw, entity)
    return text


def fail(message):
    print("check_report: " + message, file=sys.stderr)
    sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--escaped", action="append", default=[])
    args = parser.parse_args()
    with open(os.path.join(args.dir, "report.json")) as f:
        report = json.load(f)
    with open(os.path.join(args.dir, "index.html"), encoding="utf-8") as f:
        page = f.read()

    for key in ("format", "version", "model", "precision", "targets", "arena", "buffers",
                "launches", "phases", "total_ms", "rank", "world_size", "all_reduces_before"):
        if key not in report:
            fail("report.json has no '%s'" % key)
    if report["format"] != "kiln-compile-report" or report["version"] != 1:
        fail("unexpected format/version %r %r" % (report["format"], report["version"]))
    arena = report["arena"]
    buffers, launches = report["buffers"], report["launches"]
    n = len(launches)

    # Buffers inside the arena, launches in range, no overlap while live together.
    for i, b in enumerate(buffers):
        if b["offset"] < 0 or b["offset"] + b["arena_bytes"] > arena["bytes"]:
            fail("buffer %d [%d, %d) outside the %d-byte arena" %
                 (i, b["offset"], b["offset"] + b["arena_bytes"], arena["bytes"]))
        if not 0 <= b["first_launch"] <= b["last_launch"] < n:
            fail("buffer %d launches %d..%d out of range (%d launches)" %
                 (i, b["first_launch"], b["last_launch"], n))
        if b["arena_bytes"] < b["bytes"] or b["arena_bytes"] % arena["alignment"]:
            fail("buffer %d: arena bytes %d not the aligned size of %d" %
                 (i, b["arena_bytes"], b["bytes"]))
        if b["live_to_end"] and not b["output"]:
            fail("buffer %d lives to the end but names no graph output" % i)
    for i, a in enumerate(buffers):
        for j in range(i + 1, len(buffers)):
            b = buffers[j]
            together = a["first_launch"] <= b["last_launch"] and b["first_launch"] <= a["last_launch"]
            overlap = (a["offset"] < b["offset"] + b["arena_bytes"] and
                       b["offset"] < a["offset"] + a["arena_bytes"])
            if together and overlap:
                fail("buffers %d and %d are live together and overlap" % (i, j))

    # Peak and sums.
    top = max((b["offset"] + b["arena_bytes"] for b in buffers), default=0)
    if top != arena["bytes"]:
        fail("arena bytes %d but the highest buffer ends at %d" % (arena["bytes"], top))
    live = [[b for b in buffers if b["first_launch"] <= t <= b["last_launch"]] for t in range(n)]
    tops = [max((b["offset"] + b["arena_bytes"] for b in bs), default=0) for bs in live]
    peak = next((t for t, x in enumerate(tops) if x == arena["bytes"] and x > 0), -1)
    if peak != arena["peak_launch"]:
        fail("peak launch %d, expected %d" % (arena["peak_launch"], peak))
    sums = [sum(b["arena_bytes"] for b in bs) for bs in live]
    if sums and (max(sums) != arena["max_live_bytes"] or
                 sums.index(max(sums)) != arena["max_live_launch"]):
        fail("max live bytes %d at %d, expected %d at %d" %
             (arena["max_live_bytes"], arena["max_live_launch"], max(sums), sums.index(max(sums))))
    if sum(b["arena_bytes"] for b in buffers) != arena["intermediate_bytes"]:
        fail("intermediate bytes are not the sum of the buffers")
    for i, l in enumerate(launches):
        if l["index"] != i or l["bytes_written"] <= 0 or l["flops"] < 0 or len(l["grid"]) != 3:
            fail("launch %d malformed: %r" % (i, l))

    # The page.
    rects = len(re.findall(r'<rect class="buffer[ "]', page))
    if rects != len(buffers):
        fail("%d buffer rects for %d buffers" % (rects, len(buffers)))
    rows = page.count('<tr class="launch">')
    if rows != n:
        fail("%d kernel-table rows for %d launches" % (rows, n))
    svg = re.search(r"<svg id=\"memory-plan\".*?</svg>", page, re.S)
    if not svg:
        fail("no memory-plan SVG")
    try:
        ET.fromstring(svg.group(0))
    except ET.ParseError as e:
        fail("the SVG is not well-formed XML: %s" % e)
    if ("peak-launch" in svg.group(0)) != (arena["peak_launch"] >= 0):
        fail("peak marker present/absent against peak launch %d" % arena["peak_launch"])
    for p in report["phases"]:
        if "<td>%s</td>" % escape(p["name"]) not in page:
            fail("phase '%s' missing from the page" % p["name"])
    if sum(p["ms"] for p in report["phases"]) > report["total_ms"] + 0.5:
        fail("the phases add up to more than the total")
    for name in args.escaped:
        if name in page:
            fail("'%s' appears unescaped in index.html" % name)
        if escape(name) not in page:
            fail("'%s' does not appear escaped in index.html" % name)

    print("buffers: %d" % len(buffers))
    print("launches: %d" % n)
    print("arena: %d" % arena["bytes"])
    print("peak launch: %d" % arena["peak_launch"])
    print("phases: " + ", ".join(p["name"] for p in report["phases"]))
    print("rank: %d of %d, all-reduces: %d" %
          (report["rank"], report["world_size"], len(report["all_reduces_before"])))


if __name__ == "__main__":
    main()
