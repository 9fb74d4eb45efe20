"""Used by programmatic-launch.mlir: every `__global__` function of the dumped CUDA modules in DIR
opens with CALL() (kiln::gridDependencyWait or kiln::gridDependencySync), and there is at least one.

Usage: check_programmatic_launch.py CALL DIR
"""
import glob
import re
import sys

call, folder = sys.argv[1], sys.argv[2]
kernels = 0
for path in sorted(glob.glob(folder + "/module*.cu")):
    text = open(path).read()
    for m in re.finditer(r'extern "C" __global__[^{]*\{\n(.*)\n', text):
        kernels += 1
        if m.group(1).strip() != call + "();":
            sys.exit("%s: kernel body starts with %r, not %s();" % (path, m.group(1), call))
if kernels == 0:
    sys.exit("no kernels in %s" % folder)
print("%d kernels start with %s()" % (kernels, call))
