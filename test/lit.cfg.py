# -*- Python -*-
# kiln lit configuration: .mlir tests under test/dialect, test/passes, test/onnx and test/codegen,
# run with kiln-opt / kiln-compile from the build tree and FileCheck / not from LLVM 22.
#
# Substitutions: %python (the test venv's python), %cuda_home, %models (shared models dir, may not
# exist: gate such tests with `REQUIRES: models`), %kiln_src_root. Features: `gpu` when nvidia-smi
# lists a GPU, `models` when the shared models are present, `ptxas` when CUDA's ptxas exists.
import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config

config.name = "kiln"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "e2e", "unit", "CMakeLists.txt"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.kiln_obj_root, "test")

# Tools: build/bin first, then LLVM's (FileCheck, not, count, split-file).
llvm_config.with_system_environment(["HOME", "TMP", "TEMP", "CUDA_HOME", "KILN_MODELS_DIR"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.kiln_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = ["kiln-opt", "kiln-compile", "FileCheck", "not", "count", "split-file"]
tool_dirs = [config.kiln_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    [t for t in tools if any(os.path.exists(os.path.join(d, t)) for d in tool_dirs)], tool_dirs)

python = config.python_executable
if not python or not os.path.exists(python):
    venv_python = os.path.join(config.kiln_src_root, ".venv", "bin", "python3")
    python = venv_python if os.path.exists(venv_python) else (shutil.which("python3") or "python3")
# use_default_substitutions() maps %python to lit's own interpreter; the tests want the venv's.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", python))
config.substitutions.append(("%cuda_home", config.cuda_home))
config.substitutions.append(("%kiln_src_root", config.kiln_src_root))

models_dir = os.environ.get(
    "KILN_MODELS_DIR", os.path.join(config.kiln_src_root, "..", "shared", "models"))
config.substitutions.append(("%models", os.path.abspath(models_dir)))
if os.path.isdir(models_dir):
    config.available_features.add("models")

if os.path.exists(os.path.join(config.cuda_home, "bin", "ptxas")):
    config.available_features.add("ptxas")


def _has_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


if _has_gpu():
    config.available_features.add("gpu")
