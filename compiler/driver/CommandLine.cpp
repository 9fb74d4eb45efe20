//===- CommandLine.cpp - strict llvm::cl argument checking ----------------===//
//
// Looks every option argument up in cl::getRegisteredOptions() before
// cl::ParseCommandLineOptions runs, so that an unknown option is an error
// instead of a group of one-letter options (see CommandLine.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/CommandLine.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/WithColor.h"

using namespace llvm;

/// The registered options by name (LLVM 22: a DenseMap).
using OptionMap = std::remove_reference_t<decltype(cl::getRegisteredOptions())>;

/// The closest visible option name to `name` within a small edit distance
/// (the alphabetically first of equally close ones), or "" when none is close.
static std::string nearestOption(StringRef name, const OptionMap &options) {
  unsigned best = std::max<unsigned>(2, name.size() / 3) + 1;
  std::string nearest;
  for (const auto &[key, option] : options) {
    if (option->getOptionHiddenFlag() != cl::NotHidden || key.empty())
      continue;
    unsigned distance = name.edit_distance(key, /*AllowReplacements=*/true, best);
    if (distance < best || (distance == best && !nearest.empty() && key < nearest)) {
      best = distance;
      nearest = key.str();
    }
  }
  return nearest;
}

/// Checks the value of enum option `e` at argv[i] (`=value` when `hasValue`, else the next
/// argument, which then is consumed): one of its values, or an error naming them.
static bool checkEnumValue(const kiln::EnumOption &e, StringRef arg, bool hasValue, int argc,
                           const char *const *argv, int &i, StringRef tool, raw_ostream &os) {
  StringRef name = e.option->ArgStr, value;
  std::string expected = llvm::join(e.values, ", ");
  if (hasValue) {
    value = arg.split('=').second;
  } else if (i + 1 >= argc ||
             (StringRef(argv[i + 1]).starts_with("-") && argv[i + 1] != StringRef("-"))) {
    WithColor::error(os, tool) << "--" << name << " needs a value (one of: " << expected << ")\n";
    return false;
  } else {
    value = argv[++i];
  }
  if (llvm::is_contained(e.values, value))
    return true;
  WithColor::error(os, tool) << "invalid value '" << value << "' for --" << name
                             << " (expected one of: " << expected << ")\n";
  return false;
}

bool kiln::checkCommandLine(int argc, const char *const *argv, StringRef tool, raw_ostream &os,
                            ArrayRef<StringRef> lateValueOptions, ArrayRef<EnumOption> enums) {
  OptionMap &options = cl::getRegisteredOptions();
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    if (!arg.starts_with("-") || arg == "-")
      continue;
    StringRef name = arg.drop_front(arg.starts_with("--") ? 2 : 1);
    bool hasValue = name.contains('=');
    name = name.split('=').first;
    // `-h` (llvm::cl's alias of --help) is a cl::DefaultOption, registered
    // only inside ParseCommandLineOptions.
    if (name == "h")
      continue;
    if (llvm::is_contained(lateValueOptions, name)) {
      if (!hasValue)
        ++i;
      continue;
    }
    auto it = name.empty() ? options.end() : options.find(name);
    if (it != options.end()) {
      const cl::Option *option = it->second;
      if (const EnumOption *e =
              llvm::find_if(enums, [&](const EnumOption &o) { return o.option == option; });
          e != enums.end()) {
        if (!checkEnumValue(*e, arg, hasValue, argc, argv, i, tool, os))
          return false;
        continue;
      }
      // "-o FILE": FILE is the option's value even when it starts with '-'.
      if (!hasValue && option->getValueExpectedFlag() == cl::ValueRequired &&
          !option->isPositional())
        ++i;
      continue;
    }
    // A cl::Prefix option takes the rest of the argument as its value (`-DX`).
    bool prefixed = false;
    for (size_t n = name.size(); n-- > 1 && !prefixed;) {
      auto p = options.find(name.take_front(n));
      prefixed = p != options.end() && (p->second->getFormattingFlag() == cl::Prefix ||
                                         p->second->getFormattingFlag() == cl::AlwaysPrefix);
    }
    if (prefixed)
      continue;
    WithColor::error(os, tool) << "unknown option '" << arg << "'";
    if (std::string nearest = nearestOption(name, options); !nearest.empty())
      os << "; did you mean '" << (nearest.size() == 1 ? "-" : "--") << nearest << "'?";
    os << " (" << tool << " --help lists the options)\n";
    return false;
  }
  return true;
}

