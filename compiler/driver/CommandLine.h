//===- CommandLine.h - strict llvm::cl argument checking ----------*- C++ -*-===//
//
// llvm::cl reads an argument it does not know as a group of one-letter
// options whenever its name starts with one (every one-letter option is
// cl::Grouping): `kiln-compile model.onnx --half` was `-h -a -l -f`, i.e.
// `--help`, which printed the help and exited 0 without compiling anything.
// checkCommandLine() rejects such arguments before llvm::cl sees them; the
// tools built on llvm::cl (kiln-compile, kiln-opt) call it first.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_COMMANDLINE_H
#define KILN_COMPILER_DRIVER_COMMANDLINE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

/// An option whose value is one of a fixed set of names (a cl::opt<Enum> with cl::values).
struct EnumOption {
  const llvm::cl::Option *option;
  llvm::SmallVector<llvm::StringRef> values;
};

/// The EnumOption of `option` (its values in declaration order).
template <typename T> EnumOption enumOption(llvm::cl::opt<T> &option) {
  EnumOption e{&option, {}};
  for (unsigned i = 0; i < option.getParser().getNumOptions(); ++i)
    e.values.push_back(option.getParser().getOption(i));
  return e;
}

/// Checks every option argument of `argv` (those starting with '-', up to a
/// `--` that ends the options) against the options registered with llvm::cl
/// at the time of the call: its name (one or two leading dashes, up to an
/// '=') must be a registered option or pass name, or start with a
/// cl::Prefix option's name. Grouped one-letter options (`-hj`) are not
/// accepted. The value of an option that requires one is skipped when it is
/// the next argument (`-o -`). Response files (`@file`) are left to llvm::cl.
/// On the first unknown option prints
///   `<tool>: error: unknown option '<arg>'; did you mean '--<name>'? (<tool> --help lists the options)`
/// (the suggestion only when a visible option is within a small edit
/// distance) to `os` and returns false. Values, positional arguments and
/// their count are left to cl::ParseCommandLineOptions. `lateValueOptions`
/// names options that the caller's parser registers only while parsing
/// (mlir::parseCLIOptions' `-o`); each takes a value. The value of each of the `enums` options
/// (`--name=value` or `--name value`) must be one of its values, since llvm::cl's own messages
/// for them ("Cannot find option named 'x'!", or a following option taken as the value) do not
/// say what is expected: else prints
///   `<tool>: error: invalid value 'x' for --name (expected one of: a, b, c)`
/// or `--name needs a value (one of: a, b, c)` when it is missing or is the next option.
bool checkCommandLine(int argc, const char *const *argv, llvm::StringRef tool,
                      llvm::raw_ostream &os,
                      llvm::ArrayRef<llvm::StringRef> lateValueOptions = {},
                      llvm::ArrayRef<EnumOption> enums = {});

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_COMMANDLINE_H
