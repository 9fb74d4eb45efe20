//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// The .npy format: magic "\x93NUMPY", major/minor version bytes, a little-endian header length
// (u16 for version 1.x, u32 for 2.x/3.x), then a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with spaces and a newline,
// then the raw element bytes. The parser accepts exactly that dict (keys in any order) and
// rejects big-endian data, Fortran order (rank >= 2), structured dtypes and size mismatches.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

namespace kiln {
namespace npy {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

/// Parses the header dict of a .npy file.
class HeaderParser {
public:
  HeaderParser(const std::string &text, const std::string &source) : text(text), source(source) {}

  /// Parses the dict; on success fills descr, fortranOrder and shape.
  bool parse(std::string &error) {
    skipSpace();
    if (!consume('{'))
      return fail("header is not a dict", error);
    bool seenDescr = false, seenOrder = false, seenShape = false;
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key))
        return fail("expected a quoted key in the header", error);
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after key '" + key + "'", error);
      skipSpace();
      if (key == "descr") {
        if (peek() == '[')
          return fail("structured dtypes are not supported", error);
        if (!parseString(descr))
          return fail("'descr' is not a string", error);
        seenDescr = true;
      } else if (key == "fortran_order") {
        if (text.compare(pos, 4, "True") == 0) {
          fortranOrder = true;
          pos += 4;
        } else if (text.compare(pos, 5, "False") == 0) {
          fortranOrder = false;
          pos += 5;
        } else {
          return fail("'fortran_order' is not True or False", error);
        }
        seenOrder = true;
      } else if (key == "shape") {
        if (!parseShape(error))
          return false;
        seenShape = true;
      } else {
        return fail("unexpected header key '" + key + "'", error);
      }
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return fail("expected ',' or '}' in the header", error);
    }
    if (!seenDescr || !seenOrder || !seenShape)
      return fail("header lacks one of 'descr', 'fortran_order', 'shape'", error);
    return true;
  }

  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;

private:
  /// Sets `error` to a message naming the file; returns false.
  bool fail(const std::string &message, std::string &error) {
    error = "'" + source + "': malformed .npy header: " + message;
    return false;
  }
  /// The next character, or NUL at the end.
  char peek() const { return pos < text.size() ? text[pos] : '\0'; }
  /// Skips `c` if it is next.
  bool consume(char c) {
    if (peek() != c)
      return false;
    ++pos;
    return true;
  }
  /// Skips whitespace.
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  /// Parses a '...' or "..." Python string literal (no escapes).
  bool parseString(std::string &out) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return false;
    size_t end = text.find(quote, pos + 1);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos + 1, end - pos - 1);
    pos = end + 1;
    return true;
  }
  /// Parses a tuple of non-negative integers into `shape`.
  bool parseShape(std::string &error) {
    if (!consume('('))
      return fail("'shape' is not a tuple", error);
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      if (!std::isdigit(static_cast<unsigned char>(peek())))
        return fail("'shape' entries must be non-negative integers", error);
      uint64_t value = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        value = value * 10 + static_cast<uint64_t>(text[pos++] - '0');
        if (value > static_cast<uint64_t>(INT64_MAX / 10))
          return fail("'shape' entry is too large", error);
      }
      consume('L'); // Python 2 long suffix.
      shape.push_back(static_cast<int64_t>(value));
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume(')'))
        return true;
      return fail("expected ',' or ')' in 'shape'", error);
    }
  }

  const std::string &text;
  const std::string &source;
  size_t pos = 0;
};

} // namespace

uint64_t NpyArray::elementCount() const {
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return count;
}

bool parseNpy(const uint8_t *bytes, size_t size, const std::string &source, NpyArray &out,
              std::string &error) {
  out = NpyArray();
  if (size < kNpyMagicSize + 2 || std::memcmp(bytes, kNpyMagic, kNpyMagicSize) != 0) {
    error = "'" + source + "': not a .npy file (bad magic)";
    return false;
  }
  unsigned major = bytes[6], minor = bytes[7];
  size_t lengthBytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
  if (lengthBytes == 0) {
    error = "'" + source + "': unsupported .npy format version " + std::to_string(major) + "." +
            std::to_string(minor) + " (supported: 1.0, 2.0, 3.0)";
    return false;
  }
  size_t prefix = kNpyMagicSize + 2 + lengthBytes;
  if (size < prefix) {
    error = "'" + source + "': truncated .npy header";
    return false;
  }
  uint64_t headerLength = 0;
  for (size_t i = 0; i < lengthBytes; ++i)
    headerLength |= static_cast<uint64_t>(bytes[kNpyMagicSize + 2 + i]) << (8 * i);
  if (headerLength > size - prefix) {
    error = "'" + source + "': truncated .npy header (header length " +
            std::to_string(headerLength) + " exceeds the file)";
    return false;
  }
  std::string text(reinterpret_cast<const char *>(bytes + prefix),
                   static_cast<size_t>(headerLength));
  HeaderParser parser(text, source);
  if (!parser.parse(error))
    return false;
  kiln_status_t status = kiln_dtype_from_numpy_descr(parser.descr.c_str(), &out.dtype);
  if (status) {
    error = "'" + source + "': " + kiln_status_message(status);
    kiln_status_free(status);
    return false;
  }
  if (parser.fortranOrder && parser.shape.size() > 1) {
    error = "'" + source +
            "': Fortran-order arrays are not supported; save with "
            "numpy.ascontiguousarray";
    return false;
  }
  out.shape = parser.shape;
  uint64_t expected = kiln_dtype_size(out.dtype);
  for (int64_t dim : out.shape)
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(dim), &expected)) {
      error = "'" + source + "': array size overflows";
      return false;
    }
  size_t dataOffset = prefix + static_cast<size_t>(headerLength);
  uint64_t available = size - dataOffset;
  if (available != expected) {
    error = "'" + source + "': data is " + std::to_string(available) + " bytes but " +
            kiln_dtype_name(out.dtype) + "[" + formatShape(out.shape.data(), out.shape.size()) +
            "] needs " + std::to_string(expected) +
            (available < expected ? " (truncated file)" : " (trailing bytes)");
    return false;
  }
  out.data.assign(bytes + dataOffset, bytes + size);
  return true;
}

/// Largest .npy file read (64 GiB): bounds reads of endless special files.
static constexpr size_t kMaxNpyBytes = size_t(1) << 36;

bool readNpyFile(const std::string &path, NpyArray &out, std::string &error) {
  // C stdio, not iostreams: reading a directory or a special file must be an
  // error message, never an exception. O_NONBLOCK: opening a FIFO that no
  // process writes would block forever; with it the open returns and the
  // read sees end of file (a truncated .npy). Reads block again after the
  // open, so a pipe with a writer (--input x=<(...)) is read whole.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    return false;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::FILE *file = ::fdopen(fd, "rb");
  if (!file) {
    error = "cannot open '" + path + "': " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t got;
  while ((got = std::fread(chunk, 1, sizeof(chunk), file)) > 0) {
    if (bytes.size() + got > kMaxNpyBytes) {
      std::fclose(file);
      error = "cannot read '" + path + "': larger than " + std::to_string(kMaxNpyBytes >> 30) +
              " GiB";
      return false;
    }
    bytes.insert(bytes.end(), chunk, chunk + got);
  }
  bool failedRead = std::ferror(file);
  int readErrno = errno;
  std::fclose(file);
  if (failedRead) {
    error = "cannot read '" + path + "': " + std::strerror(readErrno);
    return false;
  }
  return parseNpy(bytes.data(), bytes.size(), path, out, error);
}

bool encodeNpy(kiln_dtype_t dtype, const std::vector<int64_t> &shape, const void *data,
               size_t bytes, std::vector<uint8_t> &out, std::string &error) {
  const char *descr = kiln_dtype_numpy_descr(dtype);
  if (!descr) {
    error = "invalid dtype " + std::to_string(static_cast<int>(dtype));
    return false;
  }
  uint64_t expected = kiln_dtype_size(dtype);
  std::string shapeText = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0 ||
        __builtin_mul_overflow(expected, static_cast<uint64_t>(shape[i]), &expected)) {
      error = "invalid shape";
      return false;
    }
    shapeText += std::to_string(shape[i]) + (shape.size() == 1      ? ","
                                             : i + 1 < shape.size() ? ", "
                                                                    : "");
  }
  shapeText += ")";
  if (expected != bytes) {
    error =
        "buffer is " + std::to_string(bytes) + " bytes, shape needs " + std::to_string(expected);
    return false;
  }
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shapeText + ", }";
  // Pad with spaces so magic + version + length + header + '\n' is a multiple of 64.
  size_t total = kNpyMagicSize + 2 + 2 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xffff) {
    error = "shape too long for a .npy 1.0 header";
    return false;
  }
  size_t prefix = kNpyMagicSize + 4;
  out.assign(prefix + header.size() + bytes, 0);
  std::memcpy(out.data(), kNpyMagic, kNpyMagicSize);
  out[6] = 1; // Version 1.0.
  out[7] = 0;
  out[8] = static_cast<uint8_t>(header.size() & 0xff);
  out[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(out.data() + prefix, header.data(), header.size());
  if (bytes)
    std::memcpy(out.data() + prefix + header.size(), data, bytes);
  return true;
}

bool writeNpyFile(const std::string &path, kiln_dtype_t dtype, const std::vector<int64_t> &shape,
                  const void *data, size_t bytes, std::string &error) {
  std::vector<uint8_t> image;
  if (!encodeNpy(dtype, shape, data, bytes, image, error)) {
    error = "cannot write '" + path + "': " + error;
    return false;
  }
  // A FIFO that no process reads would block the open forever: refuse it.
  struct stat info;
  if (::stat(path.c_str(), &info) == 0 && S_ISFIFO(info.st_mode)) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      error = "cannot write '" + path + "': " +
              (errno == ENXIO ? std::string("it is a FIFO that no process is reading")
                              : std::string(std::strerror(errno)));
      return false;
    }
    ::close(fd);
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) {
    error = "cannot write '" + path + "': " + std::strerror(errno);
    return false;
  }
  file.write(reinterpret_cast<const char *>(image.data()),
             static_cast<std::streamsize>(image.size()));
  if (!file) {
    error = "cannot write '" + path + "'";
    return false;
  }
  return true;
}

std::string formatShape(const int64_t *shape, size_t rank) {
  if (rank == 0)
    return "scalar";
  std::string text;
  for (size_t i = 0; i < rank; ++i)
    text += (i ? "x" : "") + std::to_string(shape[i]);
  return text;
}

} // namespace npy
} // namespace kiln
