#!/usr/bin/env python3
"""Checks the constants kiln folds from the Casts of cast_rounding.onnx's initializer.

Reads the imported graph printed with hex constants (`kiln-compile --emit=graph
--print-constants | kiln-opt --mlir-print-elementsattrs-with-hex-if-larger=0`) on stdin, finds
the returned constant of each output `c_<suffix>` and compares it bit for bit (NaN with NaN, the
sign of zero included) with cast_values.references(cast_values.special_values()). Prints one
line per output and exits 1 on any difference (lit: cast-rounding.mlir).
"""
import re
import sys

import numpy as np

import cast_values

DTYPES = {"f32": np.float32, "f16": np.float16}


def main():
    text = sys.stdin.read()
    header = re.search(r"func\.func @main\((.*)\) -> \((.*)\) \{", text)
    names = re.findall(r'kiln\.name = "([^"]+)"', header.group(2))
    returned = re.search(r"^\s*return (.*?) :", text, re.M).group(1).split(", ")
    constants = {m.group(1): (m.group(2), m.group(3)) for m in re.finditer(
        r'^\s*(%\d+) = kiln\.constant dense<"0x([0-9A-F]+)"> : tensor<\d+x(\w+)>', text, re.M)}
    refs = cast_values.references(cast_values.special_values())
    failures = 0
    for name, value in zip(names, returned):
        if not name.startswith("c_"):
            continue
        if value not in constants:
            print(f"{name}: not folded to a constant ({value})")
            failures += 1
            continue
        hexdata, elem = constants[value]
        out = np.frombuffer(bytes.fromhex(hexdata), DTYPES[elem])
        ref = refs[name[2:]]
        bad = cast_values.mismatches(out, ref)
        if bad.size:
            failures += 1
            print(f"{name}: {bad.size} of {ref.size} differ: " + ", ".join(
                f"[{i}] {cast_values.special_values()[i]!r} -> {out[i]!r}, want {ref[i]!r}"
                for i in bad[:8]))
        else:
            print(f"{name}: {ref.size} values ok")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
