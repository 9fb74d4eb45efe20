"""kiln element types and their NumPy counterparts.

kiln's dtype names are the runtime's (``kiln_dtype_name``): f32, f16, bf16, i64, i32, i16, i8,
u64, u32, u16, u8, bool. NumPy has no bfloat16; bf16 tensors on the host are
``ml_dtypes.bfloat16`` arrays when ml_dtypes is installed (it comes with onnx and JAX), else
uint16 arrays holding the bits.
"""

from __future__ import annotations

import numpy as np

try:  # optional: NumPy's bfloat16 as JAX and onnx use it
    import ml_dtypes as _ml_dtypes

    _BFLOAT16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BFLOAT16 = None

_NUMPY = {
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "i64": np.dtype(np.int64),
    "i32": np.dtype(np.int32),
    "i16": np.dtype(np.int16),
    "i8": np.dtype(np.int8),
    "u64": np.dtype(np.uint64),
    "u32": np.dtype(np.uint32),
    "u16": np.dtype(np.uint16),
    "u8": np.dtype(np.uint8),
    "bool": np.dtype(np.bool_),
}


def numpy_dtype(kiln_dtype: str) -> np.dtype:
    """The NumPy dtype for host arrays of `kiln_dtype` (bf16: ml_dtypes.bfloat16, or uint16
    holding the bits when ml_dtypes is missing)."""
    if kiln_dtype == "bf16":
        return _BFLOAT16 if _BFLOAT16 is not None else np.dtype(np.uint16)
    return _NUMPY[kiln_dtype]


def is_bfloat16(dtype: np.dtype) -> bool:
    """True for ml_dtypes.bfloat16."""
    return _BFLOAT16 is not None and dtype == _BFLOAT16


def as_host_view(array: np.ndarray) -> tuple[np.ndarray, bool]:
    """The array to hand to the extension and whether it carries bf16 bits: NumPy cannot export
    bfloat16 through DLPack, so a bfloat16 array goes as its uint16 view."""
    if is_bfloat16(array.dtype):
        return array.view(np.uint16), True
    return array, False


def numpy_name(kiln_dtype: str) -> str:
    """NumPy's name of a kiln dtype ("i64" -> "int64", "bf16" -> "bfloat16"), for messages."""
    if kiln_dtype in ("bool", "bf16"):
        return "bool" if kiln_dtype == "bool" else "bfloat16"
    return {"f": "float", "i": "int", "u": "uint"}[kiln_dtype[0]] + kiln_dtype[1:]


def is_tensor_dtype(dtype: np.dtype) -> bool:
    """True for NumPy dtypes DLPack carries (bool, integers, floats, complex) and bfloat16; the
    extension names those it does not take itself ("float64[2, 8]")."""
    return dtype.kind in "biufc" or is_bfloat16(dtype)


def dtype_label(dtype: np.dtype) -> str:
    """A NumPy dtype as messages name it: "object", "datetime64[s]", "str", "bytes"."""
    return {"U": "str", "S": "bytes"}.get(dtype.kind, dtype.name)
