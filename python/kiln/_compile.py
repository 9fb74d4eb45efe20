"""kiln.compile: ONNX model -> kiln.Artifact, through kiln::compileModel (the library behind
kiln-compile) in this process."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Mapping, Optional, Sequence, Union

from ._artifact import Artifact
from ._errors import CompileError, CompileOptionError, CompilerNotAvailableError

try:
    from . import _compiler
except ImportError:  # the runtime-only package (kiln-runtime)
    _compiler = None

# ModelProto.ByteSize() above which the model is saved with external data (protobuf's 2 GiB
# message limit).
_EXTERNAL_DATA_BYTES = 1 << 30

ShapeSpec = Union[None, str, Mapping[str, Union[str, Sequence[Union[int, str]]]]]


def _shape_spec(shapes: ShapeSpec) -> str:
    """kiln-compile's --shape text from a str ("input_ids=1x128") or a mapping
    {"input_ids": (1, 128)} / {"input_ids": "1..8x1..2048"}."""
    if shapes is None:
        return ""
    if isinstance(shapes, str):
        return shapes
    parts = []
    for name, dims in shapes.items():
        text = dims if isinstance(dims, str) else "x".join(str(d) for d in dims)
        parts.append(f"{name}={text}")
    return ",".join(parts)


def compile(model: Any, *, shapes: ShapeSpec = None, output: "str | os.PathLike[str] | None" = None,
            precision: str = "fp32", target: "str | Sequence[str]" = "sm_90",
            tensor_parallel: int = 1, tp_loopback: bool = False,
            kv_cache: bool = False, max_seq_len: int = 0, kv_block_size: int = 16,
            kv_blocks: int = 0, prefill_logits: str = "last", device_sampling: bool = True,
            fuse: bool = True, sm90_gemm: bool = True, hopper_attention: bool = True,
            hopper_attention_persistent: str = "auto", skinny_gemm: bool = True,
            skinny_tensor_cores: str = "off", split_kv: bool = True,
            attention_key_rotary: str = "kernel", norm_into_gemm: str = "few-row",
            programmatic_launch: str = "auto", wgmma: bool = False, mma_tile: str = "",
            pass_pipeline: str = "", dump_cuda: "str | os.PathLike[str] | None" = None,
            report: "str | os.PathLike[str] | None" = None, threads: int = 0
            ) -> "Artifact | list[Artifact]":
    """Compiles an ONNX model to a kiln artifact, like kiln-compile (docs/kiln-compile.md), and
    returns it opened (:class:`kiln.Artifact`; with ``tensor_parallel`` N > 1 and no
    ``tp_loopback``, the list of the N rank artifacts).

    Args:
      model: path of a .onnx file (external data beside it is read in place) or of a graph-level
        .mlir file, or an ``onnx.ModelProto`` (saved to a temporary file first).
      shapes: static shapes of symbolic inputs: "input_ids=1x128,attention_mask=1x128" or
        {"input_ids": (1, 128)}; with kv_cache a range "1..8x1..2048" compiles one program per
        step shape.
      output: where to write the artifact; None keeps it in a temporary directory that lives
        as long as the returned Artifact (``Artifact.save`` copies it out).
      precision: "fp32", "tf32", "fp16" or "bf16" (storage and GEMM precision; graph inputs and
        outputs keep the model's types).
      target: SASS target(s), e.g. "sm_90" or ["sm_80", "sm_90"]; PTX is kept for the lowest.
      tensor_parallel: shard over N GPUs (Megatron-style), one artifact per rank
        (BASE.rank<r>.kiln); tp_loopback: one artifact running all ranks on one GPU.
      kv_cache, max_seq_len, kv_block_size, kv_blocks, prefill_logits ("last"/"all"),
        device_sampling: one generation step over a paged KV cache (docs/generation.md);
        max_seq_len > 0 is required with kv_cache.
      fuse, sm90_gemm, hopper_attention, hopper_attention_persistent ("off"/"auto"/"on"),
        skinny_gemm, skinny_tensor_cores ("off"/"auto"/"on"), split_kv, attention_key_rotary
        ("kernel"/"fused"), norm_into_gemm ("few-row"/"fused"/"kernel"), programmatic_launch
        ("auto"/"at-exit"/"early"/"off"), wgmma, mma_tile, pass_pipeline: kiln-compile's
        options of the same names.
      dump_cuda: write each module's CUDA C++ and PTX into this directory.
      report: also write the HTML compile report (index.html, report.json) into this directory;
        ``Artifact.report["plan"]`` holds report.json's data either way.
      threads: NVRTC compile threads (0: all cores).

    Raises:
      CompileOptionError: a bad option value (shape spec, target, precision, ...), with
        kiln-compile's message ("invalid --shape 'input_ids=1xq': dim 'q' of 'input_ids' is not
        a non-negative integer").
      CompileError: the model could not be read or compiled; ``str(error)`` has every
        diagnostic naming the file and ONNX node, then the summary.
      CompilerNotAvailableError: in the runtime-only package.
    """
    if _compiler is None:
        raise CompilerNotAvailableError(
            "kiln.compile needs the compiler, which the runtime-only package kiln-runtime does not "
            "contain; compile on a build host (the full kiln package or kiln-compile) and load "
            "the .kiln file here with kiln.load(path)")

    _check_generation_options(kv_cache, max_seq_len, kv_block_size, kv_blocks)
    if kv_cache and kv_block_size > max_seq_len:
        kv_block_size = max_seq_len  # a short sequence is one block, as kiln-compile does

    workdir = tempfile.TemporaryDirectory(prefix="kiln-compile-")
    try:
        input_path = _model_path(model, workdir.name)
        if output is None:
            output_path = os.path.join(workdir.name, "model.kiln")
            owner: Optional[tempfile.TemporaryDirectory] = workdir
        else:
            output_path = os.fspath(output)
            owner = None
        report_dir = os.fspath(report) if report is not None else os.path.join(workdir.name,
                                                                                "report")
        targets = [target] if isinstance(target, str) else list(target)
        result = _compiler.compile(
            input_path=input_path, output_path=output_path, shape_spec=_shape_spec(shapes),
            targets=targets, precision=precision, tensor_parallel=int(tensor_parallel),
            tp_loopback=bool(tp_loopback), kv_cache=bool(kv_cache), max_seq_len=int(max_seq_len),
            kv_block_size=int(kv_block_size), kv_blocks=int(kv_blocks),
            prefill_logits=prefill_logits, device_sampling=bool(device_sampling),
            fuse=bool(fuse), sm90_gemm=bool(sm90_gemm), hopper_attention=bool(hopper_attention),
            hopper_attention_persistent=hopper_attention_persistent,
            skinny_gemm=bool(skinny_gemm), skinny_tensor_cores=skinny_tensor_cores,
            split_kv=bool(split_kv), attention_key_rotary=attention_key_rotary,
            norm_into_gemm=norm_into_gemm, programmatic_launch=programmatic_launch,
            wgmma=bool(wgmma), mma_tile=mma_tile, pass_pipeline=pass_pipeline,
            dump_cuda_dir=os.fspath(dump_cuda) if dump_cuda is not None else "",
            report_dir=report_dir, threads=int(threads))
        if not result["ok"]:
            _raise_compile_error(result)
        report_data = _report(result)
        artifacts = [Artifact(path, _owner=owner, _report=report_data)
                     for path, _, _ in result["files"]]
    except BaseException:
        workdir.cleanup()
        raise
    if owner is None:
        workdir.cleanup()
    if int(tensor_parallel) > 1 and not tp_loopback:
        return artifacts
    return artifacts[0]


def _check_generation_options(kv_cache: bool, max_seq_len: int, kv_block_size: int,
                              kv_blocks: int) -> None:
    """kiln-compile's checks of the --kv-cache options (its main does them, not compileModel)."""
    if not kv_cache:
        return
    if max_seq_len <= 0:
        raise CompileOptionError(
            "kv_cache=True needs max_seq_len=N (N > 0): the most tokens, prompt and generated, "
            "that one sequence may hold")
    if kv_block_size <= 0:
        raise CompileOptionError("kv_block_size must be positive")
    if kv_blocks < 0:
        raise CompileOptionError("kv_blocks must not be negative")


def _model_path(model: Any, workdir: str) -> str:
    """The file to compile: `model` itself when it is a path, else the ModelProto saved into
    `workdir` (with external data when it is large)."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    try:
        import onnx
    except ImportError as error:  # pragma: no cover - onnx is a dependency of ModelProto input
        raise TypeError("model must be a path or an onnx.ModelProto (onnx is not installed)") \
            from error
    if not isinstance(model, onnx.ModelProto):
        raise TypeError(f"model must be a path (str, os.PathLike) or an onnx.ModelProto; got "
                        f"{type(model).__name__}")
    path = os.path.join(workdir, "model.onnx")
    large = model.ByteSize() > _EXTERNAL_DATA_BYTES
    onnx.save_model(model, path, save_as_external_data=large,
                    location="model.onnx.data" if large else None)
    return path


def _raise_compile_error(result: Mapping[str, Any]) -> None:
    diagnostics = list(result["diagnostics"])
    summary = result["error"]
    message = "\n".join(diagnostics + [summary])
    cls = CompileOptionError if result["usage_error"] else CompileError
    raise cls(message, diagnostics=diagnostics, summary=summary)


def _report(result: Mapping[str, Any]) -> dict:
    plans = [json.loads(text) for text in result["reports_json"]]
    return {
        "kernels": result["kernels"],
        "unique_kernels": result["unique_kernels"],
        "modules": result["modules"],
        "arena_bytes": result["arena_bytes"],
        "intermediate_bytes": result["intermediate_bytes"],
        "collectives": result["collectives"],
        "files": [{"path": p, "file_bytes": f, "weight_bytes": w} for p, f, w in result["files"]],
        "phases": {name: ms for name, ms in result["phases"]},
        "total_ms": result["total_ms"],
        "programs": list(result["programs"]),
        "plan": plans[0] if len(plans) == 1 else plans,
        "diagnostics": list(result["diagnostics"]),
    }
