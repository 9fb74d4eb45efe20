#!/usr/bin/env bash
# scripts/test.sh - set up, build and run every kiln test; prints a summary.
#
# Runs scripts/setup.sh, scripts/build.sh, then `ctest --output-on-failure` in the build tree:
# the lit suites (test/dialect, passes, onnx, codegen), the GoogleTest unit tests, the ptxas check
# of every emitted PTX, and the end-to-end GPU tests (label `gpu`; skipped without a GPU).
# Extra arguments go to ctest (e.g. `scripts/test.sh -L lit` or `-R ptxas`).
# Environment: as scripts/build.sh; KILN_SKIP_SETUP=1 skips setup.sh.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build}"
export KILN_BUILD_DIR="$BUILD"

if [[ "${KILN_SKIP_SETUP:-0}" != 1 ]]; then
  "$ROOT/scripts/setup.sh"
fi
"$ROOT/scripts/build.sh"

PYTHON="$ROOT/.venv/bin/python3"
[[ -x "$PYTHON" ]] || PYTHON=/usr/bin/python3
JUNIT="$BUILD/Testing/kiln-ctest.xml"
rm -f "$JUNIT"

echo "[test] ctest --output-on-failure $*"
set +e
# A passing test's output is kept whole (ctest keeps 1 KiB by default) so that the summary sees its
# closing lines and the SKIP / unsupported lines it reports.
(cd "$BUILD" && ctest --output-on-failure --test-output-size-passed 262144 --output-junit "$JUNIT" "$@")
rc=$?
set -e

if [[ -f "$JUNIT" ]]; then
  "$PYTHON" "$ROOT/scripts/test_summary.py" "$JUNIT" || rc=1
else
  echo "[test] ctest wrote no report ($JUNIT); exit $rc"
  ((rc)) || rc=1
fi
exit "$rc"
