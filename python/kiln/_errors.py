"""Exceptions of the kiln package.

Every runtime failure carries the C API's status (``kiln_status_t``): its code picks the subclass
and its message is the exception's text, unchanged. Compile failures raise :class:`CompileError`
(or :class:`CompileOptionError` for a bad option value) with kiln-compile's diagnostics.
"""

from __future__ import annotations


class Error(Exception):
    """Base class of every kiln error. ``code`` is the status code name ("INVALID_ARGUMENT",
    ...); ``message`` the runtime's or compiler's message (also ``str(error)``)."""

    code: str = "UNKNOWN"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class InvalidArgumentError(Error, ValueError):
    """A caller-supplied argument is wrong: a tensor of the wrong dtype or shape, bad params."""

    code = "INVALID_ARGUMENT"


class InvalidArgumentTypeError(InvalidArgumentError, TypeError):
    """An argument of the wrong Python type: None or a str where a tensor goes, a float where an
    int goes. Both a :class:`InvalidArgumentError` and a TypeError."""


class NotFoundError(Error, LookupError):
    """A named input, output or program does not exist (the message lists those that do)."""

    code = "NOT_FOUND"


class FileError(Error, OSError):
    """A file could not be opened, read or mapped (KILN_IO_ERROR)."""

    code = "IO_ERROR"


class InvalidArtifactError(Error):
    """The artifact file is malformed."""

    code = "INVALID_ARTIFACT"


class UnsupportedVersionError(InvalidArtifactError):
    """The artifact's format version is outside what this runtime reads."""

    code = "UNSUPPORTED_VERSION"


class UnavailableError(Error, RuntimeError):
    """The CUDA driver or the requested device is not available (no GPU)."""

    code = "UNAVAILABLE"


class CudaError(Error, RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""

    code = "CUDA_ERROR"


class ResourceExhaustedError(Error, MemoryError):
    """Host or device memory could not be allocated, or the KV cache is full."""

    code = "RESOURCE_EXHAUSTED"


class FailedPreconditionError(Error, RuntimeError):
    """The call is not valid in the object's state (e.g. an input never set before a run)."""

    code = "FAILED_PRECONDITION"


class InternalError(Error, RuntimeError):
    """An internal invariant failed (a bug in kiln)."""

    code = "INTERNAL"


class DeadlineExceededError(Error, TimeoutError):
    """A tensor-parallel wait did not finish in time."""

    code = "DEADLINE_EXCEEDED"


class CompileError(Error):
    """kiln.compile failed. ``str(error)`` is what kiln-compile prints: every diagnostic line
    (``model.onnx: error: node 'x' (MatMul): ...``) then the summary; ``diagnostics`` holds the
    lines and ``summary`` the last one."""

    code = "COMPILE_ERROR"

    def __init__(self, message: str, diagnostics: list[str] | None = None, summary: str = ""):
        super().__init__(message)
        self.diagnostics = list(diagnostics or [])
        self.summary = summary or message


class CompileOptionError(CompileError, ValueError):
    """A bad option value of kiln.compile (shape spec, target, precision, ...), found before the
    model is read (kiln-compile's usage errors, exit status 2)."""

    code = "COMPILE_OPTION_ERROR"


class CompileOptionTypeError(CompileOptionError, TypeError):
    """An option of kiln.compile given a value of the wrong Python type (precision=None,
    max_seq_len=64.7, shapes=5). Both a :class:`CompileOptionError` and a TypeError."""


class CompilerNotAvailableError(Error, ImportError):
    """kiln.compile was called in the runtime-only package (kiln-runtime), which has no
    compiler."""

    code = "COMPILER_NOT_AVAILABLE"


_BY_CODE = {
    cls.code: cls
    for cls in (
        InvalidArgumentError,
        NotFoundError,
        FileError,
        InvalidArtifactError,
        UnsupportedVersionError,
        UnavailableError,
        CudaError,
        ResourceExhaustedError,
        FailedPreconditionError,
        InternalError,
        DeadlineExceededError,
    )
}


def error_class(code_name: str) -> type[Error]:
    """The exception class of a kiln_status_code_name (used by the extension module)."""
    return _BY_CODE.get(code_name, Error)
