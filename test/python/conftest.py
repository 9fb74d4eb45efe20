"""pytest fixtures of the kiln Python package tests (test/python; docs/python.md, "Tests").

The package is imported from the build tree (ctest `python` sets PYTHONPATH=<build>/python). The
models are the repository's small exports: examples/models/gpt2_tiny.onnx (input_ids ->
last_hidden_state) and test/models/gpt2_tiny_causal_dynamo.onnx (input_ids -> logits, for
generation). Fixtures that need a GPU skip when kiln.Session reports no CUDA device
(kiln.UnavailableError from kiln_session_create).

On a GPU machine with only the runtime wheel (kiln-runtime, no compiler), set KILN_TEST_CARRY to
the directory test/python/prepare_gpu_check.py wrote: the artifacts are loaded from there (and
the ONNX models for the onnxruntime references), and the compile tests skip.
"""

from __future__ import annotations

import os
import pathlib

import pytest

import kiln

ROOT = pathlib.Path(__file__).resolve().parents[2]
CARRY = os.environ.get("KILN_TEST_CARRY")
if CARRY:
    GPT2 = pathlib.Path(CARRY) / "gpt2_tiny.onnx"
    GPT2_CAUSAL = pathlib.Path(CARRY) / "gpt2_tiny_causal_dynamo.onnx"
else:
    GPT2 = ROOT / "examples" / "models" / "gpt2_tiny.onnx"
    GPT2_CAUSAL = ROOT / "test" / "models" / "gpt2_tiny_causal_dynamo.onnx"
# The CUDA targets of the test artifacts: sm_90 (the reference GPU) and what KILN_TEST_TARGET says.
TARGETS = os.environ.get("KILN_TEST_TARGET", "sm_90").split(",")


@pytest.fixture(scope="session")
def gpt2_path() -> pathlib.Path:
    return GPT2


@pytest.fixture(scope="session")
def gpt2_artifact() -> kiln.Artifact:
    """gpt2_tiny at batch 2, 8 tokens, fp32."""
    if CARRY:
        return kiln.load(pathlib.Path(CARRY) / "gpt2_tiny_2x8.kiln")
    return kiln.compile(GPT2, shapes={"input_ids": (2, 8)}, target=TARGETS)


@pytest.fixture(scope="session")
def decode_artifact() -> kiln.Artifact:
    """The causal gpt2_tiny as one decode program (kv_cache, batch 1, 64 tokens per sequence)."""
    if CARRY:
        return kiln.load(pathlib.Path(CARRY) / "gpt2_causal_decode.kiln")
    return kiln.compile(GPT2_CAUSAL, shapes="input_ids=1x1", kv_cache=True, max_seq_len=64,
                        target=TARGETS)


def _session_or_skip(artifact: kiln.Artifact) -> kiln.Session:
    try:
        return kiln.Session(artifact)
    except kiln.UnavailableError as error:
        pytest.skip(f"no CUDA device: {error}")


@pytest.fixture
def gpt2_session(gpt2_artifact) -> kiln.Session:
    session = _session_or_skip(gpt2_artifact)
    yield session
    session.close()


@pytest.fixture
def decode_session(decode_artifact) -> kiln.Session:
    session = _session_or_skip(decode_artifact)
    yield session
    session.close()


def pytest_terminal_summary(terminalreporter):
    """One `SKIP <test>: <reason>` line per skipped test, the form scripts/test_summary.py groups
    under the ctest `python` line (e.g. "15 skipped, no CUDA device: ...")."""
    for report in terminalreporter.stats.get("skipped", []):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason[len("Skipped: "):] if reason.startswith("Skipped: ") else reason
        terminalreporter.write_line(f"SKIP {report.nodeid.split('::')[-1]}: {reason}")
