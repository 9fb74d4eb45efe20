//===- JsonWriter.h - minimal streaming JSON writer for kiln-run -*- C++ -*-===//
//
// kiln-run links only the runtime (no LLVM, so no llvm::json): --json and --trace write their
// documents through this small writer. It tracks commas and nesting, escapes strings per RFC 8259
// (quote, backslash, control characters as \uXXXX; well-formed UTF-8 passes through, so UTF-8
// names stay readable, and each byte of an ill-formed sequence becomes U+FFFD, so a damaged
// artifact's names still give valid JSON) and writes non-finite numbers as null, which JSON cannot
// represent.
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
    for (size_t i = 0; i < text.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      if (c >= 0x80) {
        const size_t n = utf8Length(text, i);
        if (n == 0)
          out += "\\ufffd";
        else
          out.append(text, i, n);
        i += n ? n - 1 : 0;
        continue;
      }
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

  /// Length of the well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates, at
  /// most U+10FFFF) that starts at text[i] (a byte >= 0x80), or 0 when it is ill-formed.
  static size_t utf8Length(const std::string &text, size_t i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; // the second byte's range
    if (c >= 0xC2 && c <= 0xDF)
      n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      if (c == 0xE0)
        lo = 0xA0;
      else if (c == 0xED)
        hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      if (c == 0xF0)
        lo = 0x90;
      else if (c == 0xF4)
        hi = 0x8F;
    } else {
      return 0;
    }
    if (i + n > text.size())
      return 0;
    for (size_t k = 1; k < n; ++k) {
      const unsigned char b = static_cast<unsigned char>(text[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF))
        return 0;
    }
    return n;
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
