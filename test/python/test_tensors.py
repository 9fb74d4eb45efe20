"""Tensor checks (name, dtype, shape, layout, memory kind), DLPack input and stream handles:
everything Session.run checks before it touches the GPU, through Artifact.check_input /
check_output, which run the same code."""

from __future__ import annotations

import numpy as np
import pytest

import kiln

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


class ForeignTensor:
    """A tensor of some other framework, seen only through the DLPack protocol."""

    def __init__(self, array: np.ndarray, device=None):
        self._array = array
        self._device = device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device or self._array.__dlpack_device__()


def test_host_arrays_pass(gpt2_artifact):
    assert gpt2_artifact.check_input("input_ids", np.zeros((2, 8), np.int64)) == "host"
    assert gpt2_artifact.check_input("input_ids", [[1] * 8, [2] * 8]) == "host"
    assert gpt2_artifact.check_output("last_hidden_state",
                                      np.empty((2, 8, 128), np.float32)) == "host"


def test_read_only_host_arrays_pass(gpt2_artifact, tmp_path):
    # Inputs are only read: arrays NumPy cannot write pass like any other.
    frozen = np.zeros((2, 8), np.int64)
    frozen.flags.writeable = False
    np.save(tmp_path / "ids.npy", np.ones((2, 8), np.int64))
    mapped = np.load(tmp_path / "ids.npy", mmap_mode="r")
    for array in (frozen, np.frombuffer(bytes(2 * 8 * 8), np.int64).reshape(2, 8), mapped):
        assert not array.flags.writeable
        assert gpt2_artifact.check_input("input_ids", array) == "host"


def test_dlpack_host_tensor_passes(gpt2_artifact):
    assert gpt2_artifact.check_input("input_ids",
                                     ForeignTensor(np.zeros((2, 8), np.int64))) == "host"


def test_unknown_input_name(gpt2_artifact):
    with pytest.raises(kiln.NotFoundError) as info:
        gpt2_artifact.check_input("input_idz", np.zeros((2, 8), np.int64))
    assert "input_idz" in str(info.value) and "input_ids" in str(info.value)
    assert isinstance(info.value, LookupError) and info.value.code == "NOT_FOUND"


def test_unknown_output_name(gpt2_artifact):
    with pytest.raises(kiln.NotFoundError, match="logits"):
        gpt2_artifact.check_output("logits", np.empty((2, 8, 128), np.float32))


def test_wrong_dtype(gpt2_artifact):
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_input("input_ids", np.zeros((2, 8), np.int32))
    assert str(info.value) == "input 'input_ids' is i64[2, 8], but the tensor given is i32[2, 8]"
    assert isinstance(info.value, ValueError)


def test_wrong_shape(gpt2_artifact):
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_input("input_ids", np.zeros((1, 8), np.int64))
    assert str(info.value) == "input 'input_ids' is i64[2, 8], but the tensor given is i64[1, 8]"


def test_wrong_output_buffer(gpt2_artifact):
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_output("last_hidden_state", np.empty((2, 8, 128), np.float16))
    assert str(info.value) == ("output 'last_hidden_state' is f32[2, 8, 128], but the tensor "
                               "given is f16[2, 8, 128]")


@pytest.mark.parametrize("dtype, name", [(np.float64, "float64"), (np.complex128, "complex128"),
                                         (np.complex64, "complex64")])
def test_dtype_kiln_does_not_have(gpt2_artifact, dtype, name):
    for tensor in (np.zeros((2, 8), dtype), ForeignTensor(np.zeros((2, 8), dtype))):
        with pytest.raises(kiln.InvalidArgumentError) as info:
            gpt2_artifact.check_input("input_ids", tensor)
        assert str(info.value) == (f"input 'input_ids' is i64[2, 8], but the tensor given is "
                                   f"{name}[2, 8], a dtype kiln does not take: convert it to "
                                   f"int64")
    with pytest.raises(kiln.InvalidArgumentError, match="given is float64.*convert it to float32"):
        gpt2_artifact.check_output("last_hidden_state", np.empty((2, 8, 128)))


@pytest.mark.parametrize("value, given", [
    ("abc", "'abc'"), (None, "None"), ([[None] * 8] * 2, "[[None, None, "),
    ([[1, 2], [3]], "[[1, 2], [3]] (list)"), (object(), "<object object at "),
])
def test_value_that_is_no_tensor(gpt2_artifact, value, given):
    with pytest.raises(kiln.InvalidArgumentTypeError) as info:
        gpt2_artifact.check_input("input_ids", value)
    message = str(info.value)
    assert message.startswith(f"input 'input_ids' is i64[2, 8], but the value given is {given}")
    assert message.endswith(", not a tensor: pass a NumPy array, a nested list of numbers or a "
                            "DLPack tensor")
    assert isinstance(info.value, TypeError) and isinstance(info.value, kiln.InvalidArgumentError)


@pytest.mark.parametrize("array, label", [
    (np.array([[object()] * 8] * 2), "object"),
    (np.zeros((2, 8), "datetime64[s]"), "datetime64[s]"),
    (np.zeros((2, 8), "timedelta64[ms]"), "timedelta64[ms]"),
    (np.array([["ab"] * 8] * 2), "str"),
])
def test_numpy_dtype_dlpack_cannot_carry(gpt2_artifact, array, label):
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_input("input_ids", array)
    assert str(info.value) == (f"input 'input_ids' is i64[2, 8], but the tensor given is "
                               f"{label}[2, 8], a dtype kiln does not take: convert it to int64")


def test_unknown_name_with_a_bad_value(gpt2_artifact):
    # The name is checked first, with the runtime's message, whatever the value.
    with pytest.raises(kiln.NotFoundError, match="has no input named 'input_idz'"):
        gpt2_artifact.check_input("input_idz", None)
    with pytest.raises(kiln.InvalidArgumentTypeError, match="invalid input name 3 \\(int\\)"):
        gpt2_artifact.check_input(3, np.zeros((2, 8), np.int64))


class RaisingTensor:
    """A DLPack producer whose export fails (as torch's does for a tensor requiring grad)."""

    def __dlpack__(self, **kwargs):
        raise BufferError("cannot export: this tensor requires grad")

    def __dlpack_device__(self):
        return (1, 0)


def test_dlpack_export_error_propagates(gpt2_artifact):
    with pytest.raises(BufferError, match="requires grad"):
        gpt2_artifact.check_input("input_ids", RaisingTensor())


def test_read_only_output_buffer(gpt2_artifact):
    frozen = np.empty((2, 8, 128), np.float32)
    frozen.flags.writeable = False
    with pytest.raises(kiln.InvalidArgumentError) as info:  # outputs must be writable
        gpt2_artifact.check_output("last_hidden_state", frozen)
    assert str(info.value) == ("output 'last_hidden_state' is f32[2, 8, 128], but the NumPy "
                               "array given is read-only: kiln writes the output into it")


@pytest.mark.parametrize("value, shown", [(None, "None"), ([[1.0]], "[[1.0]] (list)")])
def test_output_buffer_that_is_no_array(gpt2_artifact, value, shown):
    # Session.run(outputs={name: None or a list}) would write into a copy the caller never sees.
    with pytest.raises(kiln.InvalidArgumentTypeError) as info:
        gpt2_artifact.check_output("last_hidden_state", value)
    assert str(info.value) == (f"output 'last_hidden_state' is f32[2, 8, 128], but the value "
                               f"given is {shown}, not a buffer kiln can write into: pass a "
                               f"writable NumPy array or a DLPack tensor")


@pytest.mark.parametrize("device, error, message", [
    (2**40, kiln.InvalidArgumentError,
     "invalid device 1099511627776: expected an int from 0 to 2147483647 (a CUDA device "
     "ordinal)"),
    (-1, kiln.InvalidArgumentError, "invalid device -1: expected an int from 0"),
    ("cuda:0", kiln.InvalidArgumentTypeError, "invalid device 'cuda:0': expected an int"),
])
def test_session_device_argument(gpt2_artifact, device, error, message):
    # Checked before the runtime is asked for a device, so no GPU is needed.
    with pytest.raises(error) as info:
        kiln.Session(gpt2_artifact, device=device)
    assert str(info.value).startswith(message)


def test_non_contiguous_dlpack_tensor(gpt2_artifact):
    strided = np.zeros((8, 2), np.int64).T  # shape (2, 8), column-major
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_input("input_ids", ForeignTensor(strided))
    assert str(info.value).startswith("input 'input_ids': the tensor is not row-major contiguous")


@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes not installed")
def test_bfloat16_host_arrays(gpt2_artifact):
    # A bf16 array where f32 is expected is named as bf16 (it crosses as uint16 bits).
    with pytest.raises(kiln.InvalidArgumentError,
                       match=r"is f32\[2, 8, 128\], but the tensor given is bf16\[2, 8, 128\]"):
        gpt2_artifact.check_output("last_hidden_state",
                                   np.empty((2, 8, 128), ml_dtypes.bfloat16))


# ---- streams ---------------------------------------------------------------------------------

class TorchLikeStream:
    cuda_stream = 0x1234


class CupyLikeStream:
    ptr = 0x5678


class ProtocolStream:
    def __cuda_stream__(self):
        return (0, 0x9ABC)


class DefaultStream:
    cuda_stream = 0  # torch's default stream is CUDA's legacy default stream


@pytest.mark.parametrize("stream, handle", [
    (None, 0),                # the session's own stream
    (0, 1),                   # CUDA's legacy default stream -> CU_STREAM_LEGACY
    (0xABC, 0xABC),
    (TorchLikeStream(), 0x1234),
    (CupyLikeStream(), 0x5678),
    (ProtocolStream(), 0x9ABC),
    (DefaultStream(), 1),
])
def test_stream_handle(stream, handle):
    assert kiln.stream_handle(stream) == handle


def test_bad_stream():
    with pytest.raises(TypeError, match="got str"):
        kiln.stream_handle("stream")
    with pytest.raises(ValueError, match="negative"):
        kiln.stream_handle(-1)


def test_errors_are_one_hierarchy():
    for cls in (kiln.InvalidArgumentError, kiln.NotFoundError, kiln.FileError,
                kiln.InvalidArtifactError, kiln.UnsupportedVersionError, kiln.UnavailableError,
                kiln.CudaError, kiln.ResourceExhaustedError, kiln.FailedPreconditionError,
                kiln.InternalError, kiln.DeadlineExceededError, kiln.CompileError,
                kiln.CompileOptionError, kiln.CompilerNotAvailableError):
        assert issubclass(cls, kiln.Error)


def test_token_ids_outside_the_embedding_table(gpt2_artifact):
    # As kiln-run checks its .npy inputs: a kernel would read a clamped row for such an id.
    ids = np.zeros((2, 8), np.int64)
    ids[1, 3] = 1000
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_input("input_ids", ids)
    assert str(info.value) == (
        "input 'input_ids' element [1, 3] is 1000, outside [0, 999], the values the artifact "
        "allows (the input indexes a table of 1000 entries; -1000 to -1 count from the end); 1 "
        "of 16 elements is outside")
    ids[1, 3] = -1000  # counts from the end, as ONNX Gather does
    assert gpt2_artifact.check_input("input_ids", ids) == "host"
    ids[0, 0] = -1001
    with pytest.raises(kiln.InvalidArgumentError, match=r"element \[0, 0\] is -1001"):
        gpt2_artifact.check_input("input_ids", ids)
    # A CPU DLPack tensor is read the same way.
    ids[0, 0] = 5000
    with pytest.raises(kiln.InvalidArgumentError, match=r"element \[0, 0\] is 5000"):
        gpt2_artifact.check_input("input_ids", ForeignTensor(ids))


def test_big_endian_arrays(gpt2_artifact):
    # An input is converted (it is copied in anyway); an output buffer would get the wrong order.
    assert gpt2_artifact.check_input("input_ids", np.zeros((2, 8), ">i8")) == "host"
    big = np.zeros((2, 8), ">i8")
    big[0, 1] = 1000  # read in its own byte order by the value check too
    with pytest.raises(kiln.InvalidArgumentError, match=r"element \[0, 1\] is 1000, outside"):
        gpt2_artifact.check_input("input_ids", big)
    with pytest.raises(kiln.InvalidArgumentError) as info:
        gpt2_artifact.check_output("last_hidden_state", np.zeros((2, 8, 128), ">f4"))
    assert str(info.value) == ("output 'last_hidden_state' is f32[2, 8, 128], but the NumPy "
                               "array given is big-endian (>f4): pass a native (little-endian) "
                               "array")
