"""kiln.Session: an artifact instantiated on one CUDA device (kiln_session_create).

Tensors cross in two ways (docs/python.md, "Tensors and streams"):
  - host arrays (NumPy, CPU tensors, lists) are copied in (kiln_session_set_input) and outputs are
    copied out into new NumPy arrays or the host arrays given in ``outputs=``;
  - CUDA tensors of any DLPack framework (torch, CuPy, JAX) are bound in place
    (kiln_session_bind_input / kiln_session_bind_output): the kernels read and write the caller's
    memory, with no copy and no host synchronization, on the caller's stream.
"""

from __future__ import annotations

import dataclasses
import queue
import sys
import threading
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

import numpy as np

from . import _args
from . import _dtypes
from . import _runtime
from ._artifact import Artifact
from ._errors import InvalidArgumentError, InvalidArgumentTypeError

_ARG_ERRORS = (InvalidArgumentError, InvalidArgumentTypeError)

# CU_STREAM_LEGACY: the CUDA legacy default stream (what a stream handle of 0 means to CUDA).
_CU_STREAM_LEGACY = 1
# DLPack device types that hold device memory (kDLCUDA, kDLCUDAManaged).
_DEVICE_TYPES = (2, 13)

StreamLike = Union[None, int, Any]


def stream_handle(stream: StreamLike) -> int:
    """The CUstream handle of `stream`, as an int.

    None gives 0, which the session reads as its own stream. An int is a raw CUstream handle. An
    object with ``__cuda_stream__()`` (the CUDA stream protocol: returns (version, handle)), a
    ``cuda_stream`` attribute (torch.cuda.Stream) or a ``ptr`` attribute (cupy.cuda.Stream) gives
    its handle. A handle of 0 from an int or an object means CUDA's legacy default stream (torch's
    default stream), passed on as CU_STREAM_LEGACY. TypeError for anything else.
    """
    if stream is None:
        return 0
    if isinstance(stream, bool):
        raise TypeError("stream must be None, an int CUstream handle or a CUDA stream object")
    if isinstance(stream, int):
        handle = stream
    elif hasattr(stream, "__cuda_stream__"):
        info = stream.__cuda_stream__()
        handle = int(info[1]) if isinstance(info, tuple) else int(info)
    elif hasattr(stream, "cuda_stream"):
        handle = int(stream.cuda_stream)
    elif hasattr(stream, "ptr"):
        handle = int(stream.ptr)
    else:
        raise TypeError(
            f"stream must be None, an int CUstream handle or an object with __cuda_stream__, "
            f".cuda_stream or .ptr; got {type(stream).__name__}")
    if handle < 0:
        raise ValueError(f"stream handle {handle} is negative")
    return handle if handle != 0 else _CU_STREAM_LEGACY


def _is_device_tensor(value: Any) -> bool:
    """True for DLPack objects in CUDA (or managed) memory."""
    if isinstance(value, np.ndarray) or not hasattr(value, "__dlpack_device__"):
        return False
    return int(value.__dlpack_device__()[0]) in _DEVICE_TYPES


def _torch_current_stream(values: Sequence[Any]) -> Optional[int]:
    """torch's current stream on the device of the first torch CUDA tensor in `values`, if any
    (the stream torch's own kernels on those tensors use)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    for v in values:
        if isinstance(v, torch.Tensor) and v.is_cuda:
            return stream_handle(torch.cuda.current_stream(v.device))
    return None


@dataclasses.dataclass(frozen=True)
class KernelProfile:
    """One kernel of a profile (kiln_session_profile): the launch's description and its median
    device time. tflops and gbps are the compiler's FLOP and byte estimates over that time
    (0 when the artifact records no estimate)."""

    index: int
    name: str
    layer: str
    function: str
    ms: float
    flops: int
    bytes_read: int
    bytes_written: int
    tflops: float
    gbps: float
    grid: tuple[int, int, int]
    block: tuple[int, int, int]


@dataclasses.dataclass(frozen=True)
class GenerationResult:
    """One sequence of Session.generate_batch: the new tokens (the stop token, when one ended it,
    is the last), why it ended ("length", "stop", "cancelled") and the time from the call to its
    first token in ms."""

    tokens: list[int]
    finish_reason: str
    time_to_first_token_ms: float


class Session:
    """An artifact on one CUDA device: its kernels loaded, its arena allocated, its weights
    uploaded (shared by the sessions of one Artifact on one device).

    Args:
      artifact: a :class:`kiln.Artifact` or the path of a .kiln file.
      device: CUDA device ordinal.
      use_cuda_graph: capture the launch list into a CUDA graph on the first run (the default).
      poison_arena: fill the arena with 0xFF bytes at creation (NaN), so unwritten outputs show.

    Raises :class:`kiln.UnavailableError` without a GPU or CUDA driver (the C API's message:
    "CUDA driver not found ..."), :class:`kiln.CudaError`, :class:`kiln.ResourceExhaustedError`.
    For ``kv_cache`` artifacts the session holds a generator (its programs and KV cache) instead,
    and a plain session only once :meth:`run` is called.
    """

    def __init__(self, artifact: "Artifact | str", device: int = 0, *,
                 use_cuda_graph: bool = True, poison_arena: bool = False):
        self.artifact = artifact if isinstance(artifact, Artifact) else Artifact(artifact)
        self.device = _args.integer("device", device, _ARG_ERRORS, low=0, high=_args.INT32_MAX,
                                    why=" (a CUDA device ordinal)")
        self._use_cuda_graph = use_cuda_graph
        self._poison_arena = poison_arena
        self._session: Any = None
        self._generator: Any = None
        self._stream: Optional[TokenStream] = None
        if self.artifact.is_generation:
            self._generator = _runtime.Generator(self.artifact._handle, self.device)
        else:
            self._plain()

    def _plain(self) -> Any:
        if self._session is None:
            self._session = _runtime.Session(self.artifact._handle, self.device,
                                             self._use_cuda_graph, self._poison_arena)
        return self._session

    def close(self) -> None:
        """Waits for the session's work and frees its device memory (also on garbage collection).
        An unfinished generation is cancelled first."""
        self._close_stream()
        self._session = None
        self._generator = None

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- running -----------------------------------------------------------------------------
    def run(self, inputs: Optional[Mapping[str, Any]] = None, /, *,
            outputs: Optional[Mapping[str, Any]] = None, stream: StreamLike = None,
            **named_inputs: Any) -> dict[str, Any]:
        """Runs the artifact once and returns {output name: tensor}.

        Inputs by name, as a mapping (names that are not Python identifiers, e.g.
        "past_key_values.0.key") and/or keywords. Each is a NumPy array (or anything np.asarray
        takes), copied in, or a DLPack tensor: a CUDA tensor is bound in place (no copy; it must
        be C-contiguous, start at a 256-byte aligned address, e.g. a whole torch allocation, and
        live on the session's device), a CPU tensor is copied. Dtype and shape must equal the
        artifact's (:class:`kiln.InvalidArgumentError` naming the input otherwise; an unknown name
        is :class:`kiln.NotFoundError` listing the inputs). An input not given keeps what the
        previous run had (:class:`kiln.FailedPreconditionError` if it never had a value).

        outputs: {name: buffer} the caller provides. A CUDA tensor is bound
        (kiln_session_bind_output): the run writes it there and it is returned as given, with no
        synchronization. A host array (writable, C-contiguous) is filled after the run. Outputs
        not named here come back as new NumPy arrays (bf16: ml_dtypes.bfloat16), which waits for
        the run.

        stream: where the run is enqueued: None (default) is torch's current stream when a torch
        CUDA tensor is among the tensors, CUDA's legacy default stream when other CUDA tensors
        are (or CUDA tensors bound by an earlier call stay bound), and the session's own stream
        otherwise; an int CUstream handle (0 = the legacy default
        stream) or a stream object (torch.cuda.Stream, cupy.cuda.Stream, anything with
        __cuda_stream__). The caller's tensors must be ready in that stream's order.
        """
        session = self._plain()
        given: dict[str, Any] = dict(inputs or {})
        for name, value in named_inputs.items():
            if name in given:
                raise TypeError(f"input '{name}' given twice (in the mapping and as a keyword)")
            given[name] = value
        outputs = dict(outputs or {})

        # Outputs first: every name, and every host buffer's type, dtype, shape and layout, is
        # checked before any input is touched (device tensors when they are bound).
        for name, value in outputs.items():
            self.artifact.output(name)
            if not _is_device_tensor(value):
                self.artifact.check_output(name, value)
        device_values = [v for v in given.values() if _is_device_tensor(v)]
        device_values += [v for v in outputs.values() if _is_device_tensor(v)]
        if stream is None and device_values:
            handle = _torch_current_stream(device_values)
            handle = handle if handle is not None else _CU_STREAM_LEGACY
        elif stream is None and (set(session.bound_inputs()) - set(given)):
            handle = _CU_STREAM_LEGACY  # device buffers bound by an earlier call are read
        else:
            handle = stream_handle(stream)

        for name, value in given.items():
            session.set_input(name, *self.artifact._tensor(True, name, value, contiguous=True))

        host_outputs: dict[str, Any] = {}
        for name, value in outputs.items():
            if _is_device_tensor(value):
                session.bind_output(name, value.__dlpack__())
            else:
                session.unbind_output(name)
                host_outputs[name] = value
        for name in session.bound_outputs():
            if name not in outputs:
                session.unbind_output(name)

        session.run(handle)

        results: dict[str, Any] = {}
        for info in self.artifact.outputs:
            if info.name in outputs and info.name not in host_outputs:
                results[info.name] = outputs[info.name]  # bound: written on the stream
                continue
            target = host_outputs.get(info.name)
            if target is None:
                target = np.empty(info.shape, dtype=info.numpy_dtype)
            if isinstance(target, np.ndarray):
                if not target.flags.writeable or not target.flags.c_contiguous:
                    raise InvalidArgumentError(
                        f"output '{info.name}': the NumPy array given is not writable and "
                        f"C-contiguous")
                view, bits = _dtypes.as_host_view(target)
                if target.dtype == np.uint16 and info.dtype == "bf16":
                    bits = True  # bf16 bits in uint16 (no ml_dtypes)
                session.get_output(info.name, view, bits)
            else:
                session.get_output(info.name, target.__dlpack__(), False)
            results[info.name] = target
        return results

    def synchronize(self) -> None:
        """Waits for all work the session enqueued (kiln_session_synchronize)."""
        self._plain().synchronize()

    # ---- timing ------------------------------------------------------------------------------
    def benchmark(self, iterations: int = 100, warmup: int = 10) -> list[float]:
        """Device time of `iterations` runs in ms, each bracketed by CUDA events on the session's
        stream after `warmup` untimed runs (kiln_session_benchmark; a CUDA graph run when the
        session uses one). The inputs must have been set."""
        return list(self._plain().benchmark(int(warmup), int(iterations)))

    def profile(self, iterations: int = 20) -> list[KernelProfile]:
        """Per-kernel median device time over `iterations` plain (non-graph) runs
        (kiln_session_profile), with the artifact's FLOP/byte estimates: one record per launch,
        in schedule order. Sort by ``ms`` to find the slow kernels."""
        ms = self._plain().profile(int(iterations))
        records = []
        for k, t in zip(self.artifact.kernels, ms):
            seconds = t * 1e-3
            records.append(KernelProfile(
                index=k.index, name=k.name, layer=k.layer, function=k.function, ms=float(t),
                flops=k.flops, bytes_read=k.bytes_read, bytes_written=k.bytes_written,
                tflops=k.flops / seconds / 1e12 if seconds > 0 else 0.0,
                gbps=(k.bytes_read + k.bytes_written) / seconds / 1e9 if seconds > 0 else 0.0,
                grid=k.grid, block=k.block))
        return records

    def timeline(self) -> list[tuple[float, float]]:
        """(start, end) in ms of every launch of one plain run, after the first event
        (kiln_session_profile_timeline)."""
        start, end = self._plain().timeline()
        return list(zip(start, end))

    @property
    def has_cuda_graph(self) -> bool:
        """True once a run has captured the launch list into a CUDA graph."""
        return self._session is not None and self._session.has_cuda_graph

    # ---- generation --------------------------------------------------------------------------
    def _gen(self) -> Any:
        if self._generator is None:
            self._generator = _runtime.Generator(self.artifact._handle, self.device)
        return self._generator

    def generate(self, prompt_ids: Any, max_new_tokens: int, *, temperature: float = 0.0,
                 top_k: int = 0, top_p: float = 1.0, seed: int = 0,
                 stop_tokens: Sequence[int] = ()) -> "TokenStream":
        """Generates up to `max_new_tokens` tokens after `prompt_ids` (1-D integer token ids) with
        the artifact's programs and KV cache (``kv_cache=True`` artifacts; kiln_generate), and
        returns an iterator over the new token ids as they are produced. Sampling as in the C API:
        temperature <= 0 is greedy; otherwise softmax(logits / temperature) restricted to the
        top_k largest (0: all) and to the nucleus of probability top_p, drawn with `seed`. A token
        in `stop_tokens` ends the sequence (it is yielded). Generation runs at most
        TokenStream.LOOKAHEAD tokens ahead of the consumer. Closing the iterator (``break`` out of
        a for loop, ``close()``, leaving a ``with``) cancels the generation within that many
        tokens; so does starting another generation on this session (one runs at a time). Errors
        (a prompt too long, ids outside the embedding) are raised when iteration starts, with the
        runtime's message."""
        request = self._request(prompt_ids, max_new_tokens, temperature, top_k, top_p, seed,
                                stop_tokens)
        self._close_stream()
        self._stream = TokenStream(self._gen(), request)
        return self._stream

    def _request(self, prompt_ids: Any, max_new_tokens: Any, temperature: Any, top_k: Any,
                 top_p: Any, seed: Any, stop_tokens: Any) -> tuple:
        """One request of _runtime.Generator.generate, every argument checked first and named
        when it is wrong (kiln.InvalidArgumentError, or kiln.InvalidArgumentTypeError for a wrong
        type): the extension would turn a negative into "incompatible function arguments" and
        size its token buffer from max_new_tokens before the runtime refuses the request. The
        runtime still checks prompt + max_new_tokens - 1 against max_seq_len and the token ids."""
        e = _ARG_ERRORS
        max_seq_len = self._gen().max_seq_len
        prompt = _prompt(prompt_ids)
        max_new_tokens = _args.integer(
            "max_new_tokens", max_new_tokens, e, low=1, high=max_seq_len,
            why=" (the artifact's max_seq_len, which the prompt's tokens share)")
        if isinstance(stop_tokens, (str, bytes)) or not hasattr(stop_tokens, "__iter__"):
            raise InvalidArgumentTypeError(
                f"invalid stop_tokens {_args.describe(stop_tokens)}: expected a sequence of "
                f"token ids")
        stops = [_args.integer("stop_tokens", t, e, low=-_args.INT64_MAX - 1,
                               high=_args.INT64_MAX) for t in stop_tokens]
        temperature = _args.real("temperature", temperature, e)
        top_k = _args.integer("top_k", top_k, e, low=0, high=_args.INT32_MAX,
                              why=" (0: every token)")
        top_p = _args.real("top_p", top_p, e)
        if not 0.0 < top_p <= 1.0:
            raise InvalidArgumentError(
                f"invalid top_p {top_p}: expected a number in (0, 1] (1: every token)")
        seed = _args.integer("seed", seed, e, low=0, high=_args.UINT64_MAX)
        return (prompt, max_new_tokens, stops, temperature, top_k, top_p, seed)

    def _close_stream(self) -> None:
        """Cancels an unfinished TokenStream of this session: the generator runs one generation
        at a time."""
        stream, self._stream = getattr(self, "_stream", None), None
        if stream is not None:
            stream.close()

    def generate_batch(self, prompts: Sequence[Any], max_new_tokens: int, *,
                       temperature: float = 0.0, top_k: int = 0, top_p: float = 1.0,
                       seed: int = 0, stop_tokens: Sequence[int] = (),
                       callback: Optional[Callable[[int, int], bool]] = None
                       ) -> list[GenerationResult]:
        """Generates for several prompts together (at most the artifact's max batch), sequence i
        sampled with seed `seed + i`; returns one :class:`GenerationResult` per prompt.
        callback(sequence, token) is called for every token; returning True cancels."""
        requests = []
        for i, p in enumerate(prompts):
            request = self._request(p, max_new_tokens, temperature, top_k, top_p, seed,
                                    stop_tokens)
            if request[-1] + i > _args.UINT64_MAX:
                raise InvalidArgumentError(
                    f"invalid seed {request[-1]}: sequence {i} draws with seed + {i}, above "
                    f"2**64 - 1; expected an int from 0 to {_args.UINT64_MAX - i}")
            requests.append(request[:-1] + (request[-1] + i,))
        self._close_stream()
        results = self._gen().generate(requests, callback)
        return [GenerationResult(list(t), r, ttft) for t, r, ttft in results]

    def generation_stats(self) -> dict:
        """Timings of the last generation: prefill_ms, prefill_steps, decode_ms, decode_steps,
        decode_step_p50_ms, decode_step_p99_ms, generated_tokens."""
        return dict(self._gen().last_stats())

    def __repr__(self) -> str:
        return f"<kiln.Session '{self.artifact.path}' on CUDA device {self.device}>"


def _prompt(prompt_ids: Any) -> list[int]:
    array = np.asarray(prompt_ids)
    if array.ndim != 1 or array.dtype.kind not in "iu":
        raise InvalidArgumentTypeError(
            f"prompt_ids must be a 1-D sequence of integer token ids; got "
            f"{array.dtype} with shape {list(array.shape)}")
    return [int(t) for t in array]


class _Done:
    def __init__(self, results: Any):
        self.results = results


class _Failed:
    def __init__(self, error: BaseException):
        self.error = error


class TokenStream(Iterator[int]):
    """The iterator Session.generate returns. kiln_generate runs on a worker thread (the GIL is
    released while the GPU works); its token callback hands each token over through a queue of
    LOOKAHEAD tokens (so generation stays at most that far ahead of the consumer, and waits for
    it) and returns the cancellation flag. After the iteration ends, ``finish_reason``
    ("length", "stop", "cancelled"), ``tokens`` and ``time_to_first_token_ms`` describe the
    sequence."""

    LOOKAHEAD = 4

    def __init__(self, generator: Any, request: tuple):
        self._generator = generator
        self._request = request
        self._queue: "queue.Queue[Any]" = queue.Queue(maxsize=self.LOOKAHEAD)
        self._cancel = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._finished = False
        self.tokens: list[int] = []
        self.finish_reason: Optional[str] = None
        self.time_to_first_token_ms: Optional[float] = None

    def _work(self) -> None:
        def on_token(sequence: int, token: int) -> bool:
            self._queue.put(token)
            return self._cancel.is_set()
        try:
            self._queue.put(_Done(self._generator.generate([self._request], on_token)))
        except BaseException as error:  # handed to the consumer thread
            self._queue.put(_Failed(error))

    def __iter__(self) -> "TokenStream":
        return self

    def __next__(self) -> int:
        if self._finished:
            raise StopIteration
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="kiln-generate", daemon=True)
            self._thread.start()
        item = self._queue.get()
        if isinstance(item, _Done):
            self._finish()
            tokens, reason, ttft = item.results[0]
            self.tokens, self.finish_reason, self.time_to_first_token_ms = list(tokens), reason, ttft
            raise StopIteration
        if isinstance(item, _Failed):
            self._finish()
            raise item.error
        return int(item)

    def _finish(self) -> None:
        self._finished = True
        if self._thread is not None:
            self._thread.join()

    def close(self) -> None:
        """Cancels the generation (after the token being produced) and waits for it to stop."""
        if self._finished:
            return
        self._cancel.set()
        if self._thread is not None:
            while True:  # drain until the worker reports the end
                item = self._queue.get()
                if isinstance(item, _Done):
                    tokens, reason, ttft = item.results[0]
                    self.tokens, self.finish_reason = list(tokens), reason
                    self.time_to_first_token_ms = ttft
                    break
                if isinstance(item, _Failed):
                    break
        self._finish()

    def __enter__(self) -> "TokenStream":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
