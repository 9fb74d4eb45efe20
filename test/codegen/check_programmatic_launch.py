"""Used by programmatic-launch.mlir: every `__global__` function of the dumped CUDA modules in DIR opens
with kiln::gridDependencySync(), and there is at least one."""
import glob
import re
import sys

mode, folder = sys.argv[1], sys.argv[2]
assert mode == "kernels"
kernels = 0
for path in sorted(glob.glob(folder + "/module*.cu")):
    text = open(path).read()
    for m in re.finditer(r'extern "C" __global__[^{]*\{\n(.*)\n', text):
        kernels += 1
        if m.group(1).strip() != "kiln::gridDependencySync();":
            sys.exit("%s: kernel body starts with %r" % (path, m.group(1)))
if kernels == 0:
    sys.exit("no kernels in %s" % folder)
print("%d kernels start with kiln::gridDependencySync()" % kernels)
