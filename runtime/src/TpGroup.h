//===- TpGroup.h - Internals of tensor-parallel groups shared with tests -*- C++ -*-===//
//
// The one piece of kiln_tp_group_* (TpGroup.cpp) that unit tests exercise without GPUs: how the
// statuses of a call made on every rank become the one status a group call returns.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_TPGROUP_H
#define KILN_RUNTIME_SRC_TPGROUP_H

#include "kiln/runtime.h"

#include <vector>

namespace kiln {

/// Combines the statuses of one call made on every rank (entry r is rank r's; NULL succeeded).
/// Takes over and frees all of them (the entries are NULL afterwards). Returns NULL when every
/// rank succeeded, else one status whose message lists each failed rank on its own line, in rank
/// order, as "rank R: <message>", with the code of the first failed rank whose code is not
/// KILN_DEADLINE_EXCEEDED (what a rank gets when a peer failed: a consequence, not the cause),
/// else KILN_DEADLINE_EXCEEDED.
kiln_status_t combineRankStatuses(std::vector<kiln_status_t> &statuses);

} // namespace kiln

#endif // KILN_RUNTIME_SRC_TPGROUP_H
