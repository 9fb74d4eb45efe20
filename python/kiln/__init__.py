"""kiln: compile transformer graphs ahead of time and run them on NVIDIA GPUs.

    import kiln
    artifact = kiln.compile("gpt2.onnx", shapes={"input_ids": (1, 128)}, precision="fp16")
    session = kiln.Session(artifact)                  # CUDA device 0
    out = session.run(input_ids=ids)["last_hidden_state"]

The runtime half (Artifact, Session, generation, profiling) binds the C API of kiln/runtime.h;
kiln.compile binds kiln::compileModel and is absent from the runtime-only package kiln-runtime.
docs/python.md is the guide.
"""

from __future__ import annotations

from . import _runtime
from ._artifact import Artifact, KernelInfo, TensorInfo, load
from ._compile import compile
from ._errors import (
    CompileError,
    CompileOptionError,
    CompileOptionTypeError,
    CompilerNotAvailableError,
    CudaError,
    DeadlineExceededError,
    Error,
    FailedPreconditionError,
    FileError,
    InternalError,
    InvalidArgumentError,
    InvalidArgumentTypeError,
    InvalidArtifactError,
    NotFoundError,
    ResourceExhaustedError,
    UnavailableError,
    UnsupportedVersionError,
)
from ._session import GenerationResult, KernelProfile, Session, TokenStream, stream_handle

__version__ = _runtime.version()


def has_compiler() -> bool:
    """True when kiln.compile is available (the full package; False in kiln-runtime)."""
    from . import _compile
    return _compile._compiler is not None


__all__ = [
    "Artifact", "CompileError", "CompileOptionError", "CompileOptionTypeError",
    "CompilerNotAvailableError", "CudaError", "DeadlineExceededError", "Error",
    "FailedPreconditionError", "FileError", "GenerationResult", "InternalError",
    "InvalidArgumentError", "InvalidArgumentTypeError", "InvalidArtifactError",
    "KernelInfo", "KernelProfile", "NotFoundError", "ResourceExhaustedError", "Session",
    "TensorInfo", "TokenStream", "UnavailableError", "UnsupportedVersionError", "compile",
    "has_compiler", "load", "stream_handle",
]
