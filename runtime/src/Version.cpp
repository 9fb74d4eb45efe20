//===- Version.cpp - kiln_version: the version of the runtime library ----===//
//
// Implements kiln_version(), which returns the KILN_VERSION_STRING of the headers the library was
// built with, so an application can compare the library it runs with to the headers it was
// compiled against.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime.h"

extern "C" const char *kiln_version(void) { return KILN_VERSION_STRING; }
