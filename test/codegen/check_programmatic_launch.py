"""Used by programmatic-launch.mlir: every `__global__` function of the dumped CUDA modules in DIR
calls CALL() (kiln::gridDependencyWait or kiln::gridDependencySync) as its first statement, or,
in a few-row GEMM, after nothing but its shared-memory declaration, its preload of a constant
weight into shared memory (kiln::gemmSkinnyTcPreloadB) and its L2 prefetch of the weight
(kiln::gemmSkinnyPrefetchB); and there is at least one kernel.

Usage: check_programmatic_launch.py CALL DIR
"""
import glob
import re
import sys

# Statements allowed before the wait: they touch no global memory that a kernel writes (a prefetch
# reads nothing into registers, a preload copies a constant weight; check_ptx.py checks the PTX
# of every shared model the same way).
BEFORE_WAIT = ("extern __shared__", "kiln::gemmSkinnyPrefetchB<", "kiln::gemmSkinnyTcPreloadB<",
               "kiln::l2PrefetchShare<")

call, folder = sys.argv[1], sys.argv[2]
kernels = prefetching = 0
for path in sorted(glob.glob(folder + "/module*.cu")):
    text = open(path).read()
    for m in re.finditer(r'extern "C" __global__[^{]*\{\n', text):
        kernels += 1
        body = text[m.end():].splitlines()
        i = 0
        while i < len(body) and body[i].strip().startswith(BEFORE_WAIT):
            prefetching += body[i].strip().startswith(BEFORE_WAIT[1:])
            i += 1
        if i == len(body) or body[i].strip() != call + "();":
            sys.exit("%s: kernel body has %r where %s(); belongs" % (
                path, body[i] if i < len(body) else "", call))
if kernels == 0:
    sys.exit("no kernels in %s" % folder)
print("%d kernels call %s() first (%d after an L2 prefetch)" % (kernels, call, prefetching))
