//===- InputGen.h - generated input tensors for kiln-run ---------*- C++ -*-===//
//
// kiln-run can run a model without .npy files: `--input NAME=random[:SEED]`, `NAME=zeros`,
// `NAME=const:V`, or `--inputs-generate MODE` for every input not given. This library (part of
// kiln_npy, no LLVM) parses those specs and fills the bytes. Random values come from a
// counter-based generator (SplitMix64) so that a seed gives the same tensor on every machine and
// standard library. Integer inputs stay inside the range the artifact records (token ids index an
// embedding table: [0, rows - 1]); integer inputs without a recorded range get 0 or 1 (an
// attention mask), bools false or true, floats uniform in [-1, 1). See docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_INPUTGEN_H
#define KILN_TOOLS_KILNRUN_INPUTGEN_H

#include "kiln/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {
namespace inputgen {

/// How to fill a generated input.
enum class Kind { Random, Zeros, Constant };

/// A parsed generator spec.
struct Spec {
  Kind kind = Kind::Zeros;
  /// Random: the seed (default 0).
  uint64_t seed = 0;
  /// Constant: the value (converted to the input's dtype; integers must be whole numbers).
  double value = 0;
  /// The text as given, for messages ("random:7").
  std::string text;
};

/// Result of parseSpec.
enum class ParseResult {
  /// `text` is a generator spec; `out` is set.
  Spec,
  /// `text` is not a generator spec (a file name).
  NotASpec,
  /// `text` starts like a spec ("random:", "const:") but is malformed; `error` says why.
  Error,
};

/// Parses "random", "random:SEED" (SEED a decimal integer in [0, 2^64)), "zeros", "const:V" (V a
/// finite number). Anything else is NotASpec, except malformed "random:..." and "const:..."
/// texts, which are Error. A file literally named "zeros" or "random" is given as "./zeros".
ParseResult parseSpec(const std::string &text, Spec &out, std::string &error);

/// Inclusive range of allowed values of an integer input (kiln_artifact_input_value_range).
struct Range {
  bool known = false;
  int64_t min = 0;
  int64_t max = 0;
  /// A range [0, R - 1] of an input that indexes a table (Gather), which also takes -R .. -1
  /// (counted from the end). False for a KV-cache step's block table and lengths, whose range
  /// is all they take.
  bool fromEnd = true;
};

/// Fills `out` with `count` elements of `dtype` (little-endian) as `spec` says. `name` is the
/// input's name: it is mixed into the random seed (so two inputs of one run differ) and appears
/// in errors. Integer dtypes: Random draws uniformly from `range` when known, else from {0, 1};
/// Constant must be a whole number representable in the dtype and inside `range` when known.
/// Bool: Random draws {false, true}; Constant must be 0 or 1. Float dtypes (f32, f16, bf16):
/// Random draws uniformly from [-1, 1), Constant is rounded to the nearest value. Returns false
/// with `error` (naming the input, the value and the allowed range) otherwise.
bool generate(const Spec &spec, const std::string &name, kiln_dtype_t dtype, uint64_t count,
              const Range &range, std::vector<uint8_t> &out, std::string &error);

/// IEEE binary16 bits of `value` (round to nearest even; overflow to infinity).
uint16_t floatToHalf(float value);

/// bfloat16 bits of `value` (round to nearest even; NaN stays NaN).
uint16_t floatToBFloat16(float value);

} // namespace inputgen
} // namespace kiln

#endif // KILN_TOOLS_KILNRUN_INPUTGEN_H
