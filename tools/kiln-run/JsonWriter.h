//===- JsonWriter.h - minimal streaming JSON writer for kiln-run -*- C++ -*-===//
//
// kiln-run links only the runtime (no LLVM, so no llvm::json): --json and --trace write their
// documents through this small writer. It tracks commas and nesting, escapes strings per RFC 8259
// (quote, backslash, control characters as \uXXXX; bytes >= 0x80 pass through, so UTF-8 names
// stay readable) and writes non-finite numbers as null, which JSON cannot represent.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILNRUN_JSONWRITER_H
#define KILN_TOOLS_KILNRUN_JSONWRITER_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln {

/// Builds one JSON document in memory; str() returns it. Usage: beginObject(), key("a"),
/// value(1), endObject(). Keys are only valid directly inside objects.
class JsonWriter {
public:
  /// Returns `text` as a JSON string literal, quotes included.
  static std::string quote(const std::string &text) {
    std::string out = "\"";
    for (unsigned char c : text) {
      switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out += escaped;
        } else {
          out += static_cast<char>(c);
        }
      }
    }
    return out + "\"";
  }

  void beginObject() { open('{'); }
  void endObject() { close('}'); }
  void beginArray() { open('['); }
  void endArray() { close(']'); }

  /// Writes an object key; the next call writes its value.
  void key(const std::string &name) {
    separate();
    text += quote(name) + ":";
    afterKey = true;
  }

  void value(const std::string &v) { raw(quote(v)); }
  void value(const char *v) { raw(v ? quote(v) : "null"); }
  void value(bool v) { raw(v ? "true" : "false"); }
  void value(int v) { raw(std::to_string(v)); }
  void value(long v) { raw(std::to_string(v)); }
  void value(long long v) { raw(std::to_string(v)); }
  void value(unsigned v) { raw(std::to_string(v)); }
  void value(unsigned long v) { raw(std::to_string(v)); }
  void value(unsigned long long v) { raw(std::to_string(v)); }
  /// Finite doubles with up to 9 significant digits (enough for a float); NaN/inf as null.
  void value(double v) {
    if (!std::isfinite(v)) {
      raw("null");
      return;
    }
    char number[32];
    std::snprintf(number, sizeof(number), "%.9g", v);
    raw(number);
  }

  /// Shorthand for key(name) + value(v).
  template <typename T> void field(const std::string &name, const T &v) {
    key(name);
    value(v);
  }

  /// The document written so far.
  const std::string &str() const { return text; }

private:
  void separate() {
    if (afterKey) {
      afterKey = false;
      return;
    }
    if (!needComma.empty()) {
      if (needComma.back())
        text += ",";
      needComma.back() = true;
    }
  }
  void raw(const std::string &token) {
    separate();
    text += token;
  }
  void open(char bracket) {
    separate();
    text += bracket;
    needComma.push_back(false);
  }
  void close(char bracket) {
    needComma.pop_back();
    text += bracket;
  }

  std::string text;
  /// Per open container: whether the next element needs a leading comma.
  std::vector<bool> needComma;
  bool afterKey = false;
};

} // namespace kiln

#endif // KILN_TOOLS_KILNRUN_JSONWRITER_H
