#!/usr/bin/env python3
"""Checks kiln-run --json output (launch-names.mlir): it must parse as JSON, every launch must
carry the documented fields with consistent types, and node_count >= len(nodes). Prints one line
per launch, "LAUNCH <index> <layer or -> | <name> | <ops> | <node_count> | flops>0", and the
inputs' value ranges, for FileCheck.

usage: check_launch_json.py FILE.json
"""
import json
import sys

FIELDS = {"index": int, "function": str, "module": str, "grid": list, "block": list,
          "shared_mem_bytes": int, "args": int, "name": str, "layer": str, "ops": list,
          "nodes": list, "node_count": int, "flops": int, "bytes_read": int,
          "bytes_written": int}


def main():
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    artifact = doc["artifact"]
    for tensor in artifact["inputs"]:
        print("INPUT", tensor["name"], tensor["dtype"], tensor.get("value_range"))
    for launch in artifact["launches"]:
        for field, kind in FIELDS.items():
            if not isinstance(launch[field], kind):
                sys.exit(f"launch {launch.get('index')}: {field} is not {kind.__name__}")
        if launch["node_count"] < len(launch["nodes"]):
            sys.exit(f"launch {launch['index']}: node_count < len(nodes)")
        if launch["bytes_written"] <= 0:
            sys.exit(f"launch {launch['index']}: no bytes written")
        print("LAUNCH", launch["index"], launch["layer"] or "-", "|", launch["name"], "|",
              ",".join(launch["ops"]), "|", launch["node_count"], "|",
              "flops>0" if launch["flops"] > 0 else "flops=0")


if __name__ == "__main__":
    main()
