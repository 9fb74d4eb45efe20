//===- Status.cpp - kiln_status_t implementation --------------------------===//
//
// The status object of the C API: a code and a heap-allocated message. A static sentinel status
// stands in when allocating a status itself fails, so error reporting never aborts.
//
//===----------------------------------------------------------------------===//

#include "Status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <new>

/// The object behind kiln_status_t.
struct kiln_status {
  kiln_status_code_t code;
  std::string message;
};

namespace {
/// Returned when a status cannot be allocated; never freed.
kiln_status gOutOfMemoryStatus{KILN_RESOURCE_EXHAUSTED, "out of host memory"};

/// vprintf into a std::string.
std::string vformatString(const char *format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int length = std::vsnprintf(nullptr, 0, format, copy);
  va_end(copy);
  if (length <= 0)
    return std::string();
  std::string result(static_cast<size_t>(length) + 1, '\0');
  std::vsnprintf(&result[0], result.size(), format, args);
  result.resize(static_cast<size_t>(length));
  return result;
}
} // namespace

namespace kiln {

kiln_status_t makeStatus(kiln_status_code_t code, std::string message) {
  if (code == KILN_OK)
    code = KILN_INTERNAL;
  kiln_status *status = new (std::nothrow) kiln_status{code, std::move(message)};
  return status ? status : &gOutOfMemoryStatus;
}

kiln_status_t makeStatusF(kiln_status_code_t code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string message = vformatString(format, args);
  va_end(args);
  return makeStatus(code, std::move(message));
}

kiln_status_t annotateStatus(kiln_status_t status, const std::string &prefix) {
  if (!status || status == &gOutOfMemoryStatus)
    return status;
  status->message.insert(0, prefix);
  return status;
}

std::string formatString(const char *format, ...) {
  va_list args;
  va_start(args, format);
  std::string result = vformatString(format, args);
  va_end(args);
  return result;
}

} // namespace kiln

extern "C" {

kiln_status_code_t kiln_status_code(kiln_status_t status) {
  return status ? status->code : KILN_OK;
}

const char *kiln_status_message(kiln_status_t status) {
  return status ? status->message.c_str() : "";
}

void kiln_status_free(kiln_status_t status) {
  if (status && status != &gOutOfMemoryStatus)
    delete status;
}

const char *kiln_status_code_name(kiln_status_code_t code) {
  // A C caller may pass any int (the "UNKNOWN" case). In C++ an enum without a fixed underlying
  // type holds only the values of its enumerators' bit width, and loading any other value is
  // undefined (UBSan's enum check: "load of value 99"), so read the argument as the int it is.
  static_assert(sizeof(int) == sizeof(kiln_status_code_t), "kiln_status_code_t is an int");
  int value;
  std::memcpy(&value, &code, sizeof(value));
  switch (value) {
  case KILN_OK:
    return "OK";
  case KILN_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case KILN_NOT_FOUND:
    return "NOT_FOUND";
  case KILN_IO_ERROR:
    return "IO_ERROR";
  case KILN_INVALID_ARTIFACT:
    return "INVALID_ARTIFACT";
  case KILN_UNSUPPORTED_VERSION:
    return "UNSUPPORTED_VERSION";
  case KILN_UNAVAILABLE:
    return "UNAVAILABLE";
  case KILN_CUDA_ERROR:
    return "CUDA_ERROR";
  case KILN_RESOURCE_EXHAUSTED:
    return "RESOURCE_EXHAUSTED";
  case KILN_FAILED_PRECONDITION:
    return "FAILED_PRECONDITION";
  case KILN_INTERNAL:
    return "INTERNAL";
  case KILN_DEADLINE_EXCEEDED:
    return "DEADLINE_EXCEEDED";
  }
  return "UNKNOWN";
}

} // extern "C"
