"""examples/python/five_minutes.py, docs/python.md's five-minute tour as a script: run as a user
runs it, in a subprocess. The export-and-compile run needs torch, transformers and onnxscript
(examples/export/requirements.txt) and skips without them; steps 3-4 skip inside the script when
there is no GPU. Its files go to a temporary folder under <build>/test-tmp."""

from __future__ import annotations

import importlib.util
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import kiln

from conftest import ROOT

SCRIPT = ROOT / "examples" / "python" / "five_minutes.py"
pytestmark = pytest.mark.skipif(not SCRIPT.is_file(), reason=f"{SCRIPT} not present")


def _test_tmp() -> pathlib.Path:
    """<build>/test-tmp: the build tree whose python/ holds the kiln imported here, else
    <repo>/build."""
    build = pathlib.Path(kiln.__file__).resolve().parents[2]
    if not (build / "CMakeCache.txt").is_file():
        build = ROOT / "build"
    path = build / "test-tmp"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)


def test_five_minutes_out():
    if not kiln.has_compiler():
        pytest.skip("runtime-only package: no kiln.compile")
    missing = [m for m in ("torch", "transformers", "onnxscript")
               if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (the export needs them: "
                    f"pip install -r examples/export/requirements.txt)")
    out = pathlib.Path(tempfile.mkdtemp(prefix="five_minutes-", dir=_test_tmp()))
    result = _run("--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("gpt2.onnx", "gpt2.kiln", "ids.npy", "ref.npy"):
        assert (out / name).stat().st_size > 0, name
    ids, ref = np.load(out / "ids.npy"), np.load(out / "ref.npy")
    assert ids.shape == (1, 128) and ids.dtype == np.int64
    assert ref.shape == (1, 128, 128) and ref.dtype == np.float32
    assert kiln.load(out / "gpt2.kiln").inputs[0].shape == (1, 128)
    assert "2. compiled" in result.stdout
    assert "SKIP steps 3-4" in result.stdout or "rel error" in result.stdout
    shutil.rmtree(out)


def test_five_minutes_missing_artifact(tmp_path):
    result = _run("--artifact", str(tmp_path / "nowhere"))
    assert result.returncode == 2
    assert result.stderr.strip() == f"five_minutes.py: {tmp_path / 'nowhere'}: no such directory " \
                                    f"(--artifact DIR)"
    result = _run("--artifact", str(tmp_path))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and f"{tmp_path / 'gpt2.kiln'}: no such file" in \
        result.stderr
