"""kiln.Artifact: a compiled .kiln file, opened and verified by the runtime."""

from __future__ import annotations

import dataclasses
import os
import shutil
from typing import Any, Optional

import numpy as np

from . import _args
from . import _dtypes
from . import _runtime
from ._errors import FileError, InvalidArgumentError, InvalidArgumentTypeError

_ARG_ERRORS = (InvalidArgumentError, InvalidArgumentTypeError)


def _host_view(value: Any) -> Optional[np.ndarray]:
    """A DLPack tensor's values as a NumPy array when they are in host memory (a CPU tensor),
    else None (device memory is not read here)."""
    try:
        device_type = value.__dlpack_device__()[0]
    except Exception:
        return None
    if device_type not in (1, 3):  # kDLCPU, kDLCUDAHost
        return None
    try:
        return np.from_dlpack(value)
    except Exception:
        return None


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """A graph input or output of an artifact.

    name: as in the model. dtype: kiln's dtype name ("f32", "f16", "bf16", "i64", ...).
    shape: static dims, row-major. byte_size: bytes of the whole tensor. role: for inputs of
    ``--kv-cache`` artifacts what the generation runtime puts there ("data" for the application's
    inputs, "key_cache", "block_table", ...); "data" otherwise. value_range: the inclusive range
    of values an index input may hold (token ids into an embedding), or None.
    """

    name: str
    dtype: str
    shape: tuple[int, ...]
    byte_size: int
    role: str = "data"
    value_range: Optional[tuple[int, int]] = None

    @property
    def numpy_dtype(self) -> np.dtype:
        """The NumPy dtype of host arrays for this tensor (see kiln._dtypes.numpy_dtype)."""
        return _dtypes.numpy_dtype(self.dtype)


@dataclasses.dataclass(frozen=True)
class KernelInfo:
    """One kernel launch of the artifact's schedule (kiln_artifact_launch_*).

    name: "<layer>: <fused ops>" ("h.0.attn: matmul+add"; "" in old artifacts). function: the
    CUDA function ("kiln_k3"). grid, block: launch dimensions. shared_mem_bytes: dynamic shared
    memory per block. ops: fused kiln ops in program order. nodes: the ONNX nodes it computes (at
    most 32 stored; node_total counts all). flops, bytes_read, bytes_written: the compiler's
    estimate of its work (multiply-add = 2 FLOPs). programmatic: launched with programmatic
    dependent launch on sm_90+.
    """

    index: int
    name: str
    layer: str
    module: str
    function: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem_bytes: int
    ops: tuple[str, ...]
    nodes: tuple[str, ...]
    node_total: int
    flops: int
    bytes_read: int
    bytes_written: int
    programmatic: bool


class Artifact:
    """A verified, read-only .kiln artifact (memory-mapped; kiln_artifact_open).

    ``Artifact(path)`` (or :func:`kiln.load`) opens and verifies a file; :func:`kiln.compile`
    returns one. Raises :class:`kiln.FileError` when the file cannot be read,
    :class:`kiln.InvalidArtifactError` when it is malformed, with the runtime's message naming the
    file and the defect.
    """

    def __init__(self, path: "str | os.PathLike[str]", *, _handle: Any = None,
                 _owner: Any = None, _report: Optional[dict] = None):
        if _handle is None:
            _handle = _runtime.Artifact(_args.path("path", path, _ARG_ERRORS))
        self._handle = _handle
        # Keeps a temporary directory holding the file alive (artifacts compiled without `output`).
        self._owner = _owner
        self._report = _report

    # ---- what the file holds -----------------------------------------------------------------
    @property
    def path(self) -> str:
        """The path the artifact was opened from."""
        return self._handle.path

    @property
    def producer(self) -> str:
        """The producer string of the index, e.g. "kiln-compile 0.3.0"."""
        return self._handle.producer

    @property
    def inputs(self) -> list[TensorInfo]:
        """Graph inputs, in order."""
        return [TensorInfo(n, d, tuple(s), b, role, tuple(r) if r is not None else None)
                for n, d, s, b, role, r in self._handle.inputs()]

    @property
    def outputs(self) -> list[TensorInfo]:
        """Graph outputs, in order."""
        return [TensorInfo(n, d, tuple(s), b) for n, d, s, b in self._handle.outputs()]

    def input(self, name: str) -> TensorInfo:
        """The input called `name`; :class:`kiln.NotFoundError` listing the inputs otherwise."""
        for info in self.inputs:
            if info.name == name:
                return info
        names = ", ".join(i.name for i in self.inputs)
        from ._errors import NotFoundError
        raise NotFoundError(f"no input named '{name}' (inputs: {names})")

    def output(self, name: str) -> TensorInfo:
        """The output called `name`; :class:`kiln.NotFoundError` listing the outputs otherwise."""
        for info in self.outputs:
            if info.name == name:
                return info
        names = ", ".join(o.name for o in self.outputs)
        from ._errors import NotFoundError
        raise NotFoundError(f"no output named '{name}' (outputs: {names})")

    def check_input(self, name: str, tensor: Any) -> str:
        """Checks `tensor` against input `name` exactly as :meth:`kiln.Session.run` does before it
        copies or binds it, without a GPU: the name (:class:`kiln.NotFoundError` listing the
        inputs), dtype and shape (:class:`kiln.InvalidArgumentError` "input 'input_ids' is
        i64[1, 8], but the tensor given is i32[1, 8]"), row-major layout and the kind of memory.
        Returns "host" (copied in) or "device" (bound in place). `tensor`: a NumPy array or any
        DLPack tensor."""
        return self._check(True, name, tensor)

    def check_output(self, name: str, tensor: Any) -> str:
        """Like :meth:`check_input` for a buffer given to ``Session.run(outputs={name: ...})``."""
        return self._check(False, name, tensor)

    def _check(self, input: bool, name: str, tensor: Any) -> str:
        check = self._handle.check_input if input else self._handle.check_output
        return check(name, *self._tensor(input, name, tensor))

    def _tensor(self, input: bool, name: Any, value: Any, *,
                contiguous: bool = False) -> tuple[Any, bool]:
        """What the extension takes for `value`, given for input (or output) `name`, and whether
        it carries bf16 bits (_dtypes.as_host_view).

        A DLPack object other than a NumPy array goes as its capsule: ``value.__dlpack__()``,
        the call nanobind would make, here so that an exception it raises reaches the caller
        (nanobind swallows it into "incompatible function arguments"). Anything else goes as a
        NumPy array (np.asarray; np.ascontiguousarray with `contiguous`, a copy only when
        needed). A value that is no tensor (None, a str, a list of objects) raises
        :class:`kiln.InvalidArgumentTypeError`, a NumPy array of a dtype DLPack cannot carry
        (object, str, datetime64) :class:`kiln.InvalidArgumentError`, each naming the tensor and
        what it is; the extension checks the dtype and shape of the rest. An output must be a
        NumPy array (writable; InvalidArgumentError otherwise) or a DLPack tensor: anything else
        (None, a list) is InvalidArgumentTypeError, since kiln would write into a copy."""
        if not isinstance(name, str):
            raise InvalidArgumentTypeError(
                f"invalid {'input' if input else 'output'} name {_args.describe(name)}: expected "
                f"a str")
        if hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
            if input:
                self._check_values(name, _host_view(value))
            return value.__dlpack__(), False
        if not input:
            # An output buffer is written: it must be the caller's own array, not a copy made here.
            if not isinstance(value, np.ndarray):
                raise InvalidArgumentTypeError(
                    f"{self._expects(input, name)}, but the value given is "
                    f"{_args.describe(value)}, not a buffer kiln can write into: pass a writable "
                    f"NumPy array or a DLPack tensor")
            if not value.flags.writeable:
                raise InvalidArgumentError(
                    f"{self._expects(input, name)}, but the NumPy array given is read-only: kiln "
                    f"writes the output into it")
        try:
            array = np.ascontiguousarray(value) if contiguous else np.asarray(value)
        except (TypeError, ValueError):  # a ragged nested list, an object NumPy cannot hold
            array = None
        if array is None or (not isinstance(value, np.ndarray) and
                             not _dtypes.is_tensor_dtype(array.dtype)):
            raise InvalidArgumentTypeError(
                f"{self._expects(input, name)}, but the value given is "
                f"{_args.describe(value)}, not a tensor: pass a NumPy array, a nested list of "
                f"numbers or a DLPack tensor")
        if not _dtypes.is_tensor_dtype(array.dtype):
            raise InvalidArgumentError(
                f"{self._expects(input, name)}, but the tensor given is "
                f"{_dtypes.dtype_label(array.dtype)}{list(array.shape)}, a dtype kiln does not "
                f"take: convert it to {_dtypes.numpy_name(self._info(input, name).dtype)}")
        if not array.dtype.isnative:
            # Big-endian data: an input is copied in anyway, so it is converted; an output
            # buffer would be written in the wrong byte order.
            if not input:
                raise InvalidArgumentError(
                    f"{self._expects(input, name)}, but the NumPy array given is big-endian "
                    f"({array.dtype.str}): pass a native (little-endian) array")
            array = array.astype(array.dtype.newbyteorder("="))
        if input:
            self._check_values(name, array)
        return _dtypes.as_host_view(array)

    def _check_values(self, name: str, array: Optional[np.ndarray]) -> None:
        """An integer input with a value range (token ids into an embedding table): every
        element inside it, by the runtime's kiln_artifact_check_input_values (what kiln-run
        checks its .npy inputs with); a range [0, R - 1] of a data input also allows -R..-1
        (ONNX Gather counts them from the end). InvalidArgumentError naming the first element
        outside otherwise (a kernel would read a clamped row). `array`: the host values, or None
        where they are on a device (not checked)."""
        if array is None or array.dtype.kind not in "iu" or array.size == 0:
            return
        for index, info in enumerate(self.inputs):
            if info.name == name:
                break
        else:  # an unknown name: the extension reports it with the input list
            return
        if (info.value_range is None or array.shape != tuple(info.shape) or
                array.dtype.newbyteorder("=") != info.numpy_dtype):
            return  # no range, or a shape or dtype error the extension reports
        little = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<"))
        self._handle.check_input_values(index, little.tobytes())  # InvalidArgumentError

    def _info(self, input: bool, name: str) -> TensorInfo:
        """Input (or output) `name`; the runtime's kiln.NotFoundError listing the names
        otherwise (the message Session.run gives)."""
        for info in self.inputs if input else self.outputs:
            if info.name == name:
                return info
        check = self._handle.check_input if input else self._handle.check_output
        check(name, np.empty(0, np.uint8), False)  # raises NotFoundError
        raise AssertionError(f"the runtime found no error for unknown tensor '{name}'")

    def _expects(self, input: bool, name: str) -> str:
        """ "input 'input_ids' is i64[2, 8]", the start of a tensor error (as the extension's)."""
        info = self._info(input, name)
        return f"{'input' if input else 'output'} '{name}' is {info.dtype}{list(info.shape)}"

    @property
    def kernels(self) -> list[KernelInfo]:
        """The kernel launches of the schedule, in order."""
        return [KernelInfo(index=d["index"], name=d["name"], layer=d["layer"], module=d["module"],
                           function=d["function"], grid=tuple(d["grid"]),
                           block=tuple(d["block"]), shared_mem_bytes=d["shared_mem_bytes"],
                           ops=tuple(d["ops"]), nodes=tuple(d["nodes"]),
                           node_total=d["node_total"], flops=d["flops"],
                           bytes_read=d["bytes_read"], bytes_written=d["bytes_written"],
                           programmatic=d["programmatic"])
                for d in self._handle.launches()]

    @property
    def modules(self) -> list[dict]:
        """CUDA modules: {"name", "ptx_bytes", "cubins": [(arch, bytes), ...]} (arch 90 = sm_90)."""
        return [{"name": n, "ptx_bytes": p, "cubins": [tuple(c) for c in cubins]}
                for n, p, cubins in self._handle.modules()]

    @property
    def arena_bytes(self) -> int:
        """Size of the activation arena a session allocates, in bytes."""
        return self._handle.arena_bytes

    @property
    def weights_bytes(self) -> int:
        """Size of the weight segment, in bytes."""
        return self._handle.weights_bytes

    @property
    def tensor_parallel(self) -> tuple[int, int]:
        """(rank, world size): (0, 1) for a single-GPU artifact."""
        return self._handle.tp_rank, self._handle.tp_world_size

    @property
    def programs(self) -> list[str]:
        """Program names of a ``kv_cache`` artifact compiled from a shape range ("decode_b1",
        "prefill_b1_s256", ...); [""] for an artifact of one program."""
        return [self._handle.program(i).program_name
                for i in range(self._handle.program_count)]

    def program(self, name: str) -> "Artifact":
        """The program called `name` as an artifact of its own (its inputs, outputs, kernels;
        a Session on it runs that program). :class:`kiln.NotFoundError` lists the programs."""
        return Artifact("", _handle=self._handle.find_program(name), _owner=self)

    @property
    def is_generation(self) -> bool:
        """True for artifacts compiled with ``kv_cache=True`` (Session.generate works)."""
        return any(i.role != "data" for i in self.inputs)

    def generation_limits(self) -> dict:
        """What Session.generate accepts, without a GPU: {"max_batch", "max_seq_len",
        "token_range" (inclusive (min, max) of token ids, or None), "kv_blocks", "kv_block_size"
        (the KV cache's blocks that one generate call's sequences share, of kv_block_size tokens:
        each sequence takes whole blocks for its prompt and new tokens), "kv_full_sequences"
        (how many sequences of max_seq_len tokens one call holds)}.
        :class:`kiln.InvalidArgumentError` for an artifact not compiled with kv_cache=True."""
        max_batch, max_seq_len, token_range, blocks, block_size, full = \
            self._handle.generator_limits()
        return {"max_batch": max_batch, "max_seq_len": max_seq_len,
                "token_range": tuple(token_range) if token_range is not None else None,
                "kv_blocks": blocks, "kv_block_size": block_size, "kv_full_sequences": full}

    def prefill_waste(self, max_prompt_length: int = 0) -> dict:
        """The padding Session.generate's prefill chunks add, without a GPU, over prompt lengths
        1..max_prompt_length (0: the most tokens a sequence holds): {"mean" (of each prompt's
        padded share of the tokens it runs), "tokens" (padded tokens over all tokens run),
        "plan" ("time" when the programs carry the compiler's time estimates and prompts are cut
        by them, else "padding"), "padding_price_us" (what the plan by time charges per padded
        token so that both means over 1..max_seq_len stay within 12.5%; 0.0 when they do without
        it)} (kiln_generator_prefill_waste, kiln_generator_prefill_padding_price).
        :class:`kiln.InvalidArgumentError` for an artifact not compiled with kv_cache=True or a
        length past max_seq_len."""
        n = _args.integer("max_prompt_length", max_prompt_length, _ARG_ERRORS, low=0,
                          high=_args.UINT64_MAX)
        mean, tokens = self._handle.generator_prefill_waste(n)
        by_time = self._handle.generator_prefill_by_time()
        return {"mean": mean, "tokens": tokens, "plan": "time" if by_time else "padding",
                "padding_price_us": self._handle.generator_prefill_padding_price()}

    @property
    def estimated_us(self) -> float:
        """The compiler's estimate of one run of this program in microseconds (what the prefill
        plan compares; not a measurement); 0.0 for artifacts compiled before it was written."""
        return self._handle.estimated_us

    @property
    def report(self) -> Optional[dict]:
        """What the compile reported, for artifacts returned by :func:`kiln.compile`: kernel
        counts, arena and intermediate bytes, files written, the phases and their times
        ("phases": {name: ms}), and "plan": the compile report of docs/report.md (memory plan,
        kernel table) as parsed report.json. None for an artifact loaded from a file."""
        return self._report

    # ---- files -------------------------------------------------------------------------------
    def save(self, path: "str | os.PathLike[str]") -> "Artifact":
        """Copies the artifact file to `path` and returns the artifact opened from there.
        :class:`kiln.FileError` (an OSError) naming the path when it cannot be written (a
        directory, a folder that does not exist, no permission)."""
        path = _args.path("path", path, _ARG_ERRORS)
        if os.path.abspath(path) != os.path.abspath(self.path):
            if os.path.isdir(path):
                raise FileError(f"cannot save the artifact to '{path}': it is a directory; give "
                                f"a file name such as '{os.path.join(path, 'model.kiln')}'")
            try:
                shutil.copyfile(self.path, path)
            except OSError as error:
                raise FileError(f"cannot save the artifact to '{path}': "
                                f"{error.strerror or error}") from error
        report = self._report
        if report is not None:
            # The copy's report names the copy (the compiled file may be a temporary one that
            # goes away with this artifact).
            report = dict(report)
            report["files"] = [dict(f, path=path) if f["path"] == self.path else f
                               for f in report["files"]]
        return Artifact(path, _report=report)

    def __repr__(self) -> str:
        ins = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs
                        if i.role == "data")
        outs = ", ".join(f"{o.name}: {o.dtype}{list(o.shape)}" for o in self.outputs)
        return (f"<kiln.Artifact '{self.path}' ({ins}) -> ({outs}), "
                f"{self._handle_launch_count()} kernels>")

    def _handle_launch_count(self) -> int:
        return len(self._handle.launches())


def load(path: "str | os.PathLike[str]") -> Artifact:
    """Opens and verifies the .kiln file at `path` (same as ``Artifact(path)``)."""
    return Artifact(path)


