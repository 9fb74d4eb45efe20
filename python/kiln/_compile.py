"""kiln.compile: ONNX model -> kiln.Artifact, through kiln::compileModel (the library behind
kiln-compile) in this process."""

from __future__ import annotations

import json
import operator
import os
import tempfile
from typing import Any, Mapping, Optional, Sequence, Union

from . import _args
from ._artifact import Artifact
from ._errors import (CompileError, CompileOptionError, CompileOptionTypeError,
                      CompilerNotAvailableError)

try:
    from . import _compiler
except ImportError:  # the runtime-only package (kiln-runtime)
    _compiler = None

# ModelProto.ByteSize() above which the model is saved with external data (protobuf's 2 GiB
# message limit).
_EXTERNAL_DATA_BYTES = 1 << 30

ShapeSpec = Union[None, str, Mapping[str, Union[str, Sequence[Union[int, str]]]]]

# A bad value raises the first, a value of the wrong Python type the second (kiln._args).
_ERRORS = (CompileOptionError, CompileOptionTypeError)

# The spellings of the enum options, named when a non-str is given (the compiler checks a str and
# lists them itself: python/src/CompilerBridge.cpp).
_CHOICES = {
    "precision": ("fp32", "tf32", "fp16", "bf16"),
    "prefill_logits": ("last", "all"),
    "hopper_attention_persistent": ("off", "auto", "on"),
    "skinny_tensor_cores": ("off", "auto", "on"),
    "attention_key_rotary": ("kernel", "fused"),
    "norm_into_gemm": ("few-row", "fused", "kernel"),
    "programmatic_launch": ("auto", "at-exit", "early", "off"),
}


def _shape_spec(shapes: ShapeSpec) -> str:
    """kiln-compile's --shape text from a str ("input_ids=1x128") or a mapping
    {"input_ids": (1, 128)} / {"input_ids": "1..8x1..2048"}; CompileOptionTypeError for
    anything else."""
    if shapes is None:
        return ""
    if isinstance(shapes, str):
        return shapes
    if not isinstance(shapes, Mapping):
        raise CompileOptionTypeError(
            f"invalid shapes {_args.describe(shapes)}: expected a str "
            f"(\"input_ids=1x128,attention_mask=1x128\") or a mapping {{input name: dims}} "
            f"({{\"input_ids\": (1, 128)}} or {{\"input_ids\": \"1..8x1..2048\"}})")
    parts = []
    for name, dims in shapes.items():
        if not isinstance(name, str):
            raise CompileOptionTypeError(
                f"invalid shapes key {_args.describe(name)}: expected an input name (a str)")
        if isinstance(dims, str):
            text = dims
        elif isinstance(dims, Sequence) and all(
                isinstance(d, str) or (not isinstance(d, bool) and _is_index(d)) for d in dims):
            # Said here in the caller's terms (kiln-compile's message would name --shape).
            bad = [d for d in dims if not isinstance(d, str) and operator.index(d) < 0]
            if bad:
                raise CompileOptionError(
                    f"invalid shapes[{name!r}] {tuple(dims)!r}: dim {operator.index(bad[0])} is "
                    f"negative")
            text = "x".join(d if isinstance(d, str) else str(operator.index(d)) for d in dims)
        else:
            raise CompileOptionTypeError(
                f"invalid shapes[{name!r}] {_args.describe(dims)}: expected the dims as a str "
                f"(\"1x128\", \"1..8x1..2048\") or a sequence of ints ((1, 128))")
        parts.append(f"{name}={text}")
    return ",".join(parts)


def _is_index(value: Any) -> bool:
    try:
        operator.index(value)
        return True
    except TypeError:
        return False


def _targets(target: Any) -> list[str]:
    """The SASS targets of `target`: a str, comma-separated like kiln-compile's --target
    ("sm_80,sm_90"), or a list/tuple of such str."""
    items = [target] if isinstance(target, str) else target
    if not isinstance(items, (list, tuple)) or not all(isinstance(t, str) for t in items):
        raise CompileOptionTypeError(
            f"invalid target {_args.describe(target)}: expected a str (\"sm_90\", "
            f"\"sm_80,sm_90\") or a list of them ([\"sm_80\", \"sm_90\"])")
    return [t for item in items for t in item.split(",")]


def compile(model: Any, *, shapes: ShapeSpec = None, output: "str | os.PathLike[str] | None" = None,
            precision: str = "fp32", target: "str | Sequence[str]" = "sm_90",
            tensor_parallel: int = 1, tp_loopback: bool = False,
            kv_cache: bool = False, max_seq_len: Optional[int] = None,
            kv_block_size: Optional[int] = None, kv_blocks: Optional[int] = None,
            prefill_logits: Optional[str] = None, device_sampling: Optional[bool] = None,
            fuse: bool = True, sm90_gemm: bool = True, hopper_attention: bool = True,
            hopper_attention_persistent: str = "auto", hopper_prefill_attention: bool = True,
            skinny_gemm: bool = True,
            skinny_tensor_cores: str = "auto", skinny_weight_preload: bool = True,
            split_kv: bool = True, decode_attention_preload: bool = True,
            fuse_kv_append: Optional[bool] = None,
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
      output: where to write the artifact (a file; not the model itself, not "-"); None keeps
        it in a temporary directory that lives as long as the returned Artifact
        (``Artifact.save`` copies it out).
      precision: "fp32", "tf32", "fp16" or "bf16" (storage and GEMM precision; graph inputs and
        outputs keep the model's types).
      target: SASS target(s): "sm_90", "sm_80,sm_90" or ["sm_80", "sm_90"]; PTX is kept for the
        lowest.
      tensor_parallel: shard over N GPUs (Megatron-style), one artifact per rank
        (BASE.rank<r>.kiln); tp_loopback: one artifact running all ranks on one GPU.
      kv_cache, max_seq_len, kv_block_size (default 16, or max_seq_len when smaller),
        kv_blocks (default: batch x ceil(max_seq_len / kv_block_size)), prefill_logits
        ("last"/"all"), device_sampling (default True): one generation step over a paged KV cache
        (docs/generation.md); max_seq_len > 0 is required with kv_cache, and the others apply
        only with it (as kiln-compile's --kv-cache options).
      fuse, sm90_gemm, hopper_attention, hopper_attention_persistent ("off"/"auto"/"on"),
        hopper_prefill_attention, skinny_gemm, skinny_tensor_cores ("off"/"auto"/"on"),
        skinny_weight_preload, split_kv, decode_attention_preload,
        fuse_kv_append (default None: on for decode steps; True warns where it cannot apply),
        attention_key_rotary
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
        a non-negative integer"); :class:`CompileOptionTypeError` (also a TypeError) for a value
        of the wrong type ("invalid max_seq_len 64.7 (float): expected an int").
      CompileError: the model could not be read or compiled; ``str(error)`` has every
        diagnostic naming the file and ONNX node, then the summary.
      CompilerNotAvailableError: in the runtime-only package.
    """
    if _compiler is None:
        raise CompilerNotAvailableError(
            "kiln.compile needs the compiler, which the runtime-only package kiln-runtime does not "
            "contain; compile on a build host (the full kiln package or kiln-compile) and load "
            "the .kiln file here with kiln.load(path)")

    # Every option is checked before anything is written (the bridge would turn a wrong type
    # into std::bad_cast, naming nothing).
    e = _ERRORS
    text = {name: _args.string(name, value, e, choices=_CHOICES.get(name, ()))
            for name, value in (("precision", precision),
                                ("hopper_attention_persistent", hopper_attention_persistent),
                                ("skinny_tensor_cores", skinny_tensor_cores),
                                ("attention_key_rotary", attention_key_rotary),
                                ("norm_into_gemm", norm_into_gemm),
                                ("programmatic_launch", programmatic_launch),
                                ("mma_tile", mma_tile), ("pass_pipeline", pass_pipeline))}
    flags = {name: _args.flag(name, value, e)
             for name, value in (("tp_loopback", tp_loopback), ("kv_cache", kv_cache),
                                 ("fuse", fuse), ("sm90_gemm", sm90_gemm),
                                 ("hopper_attention", hopper_attention),
                                 ("hopper_prefill_attention", hopper_prefill_attention),
                                 ("skinny_gemm", skinny_gemm),
                                 ("skinny_weight_preload", skinny_weight_preload),
                                 ("split_kv", split_kv),
                                 ("decode_attention_preload", decode_attention_preload),
                                 ("wgmma", wgmma))}
    # None: on wherever it applies (decode steps), without the warnings an explicit True gets.
    flags["fuse_kv_append"] = (_args.flag("fuse_kv_append", fuse_kv_append, e)
                               if fuse_kv_append is not None else None)
    tensor_parallel = _args.integer("tensor_parallel", tensor_parallel, e, low=1,
                                    high=_args.UINT32_MAX)
    threads = _args.integer("threads", threads, e, low=0, high=_args.UINT32_MAX,
                            why=" (0: all cores)")
    if pass_pipeline:
        _check_pipeline_conflicts(dict(
            precision=text["precision"], fuse=flags["fuse"], mma_tile=text["mma_tile"],
            wgmma=flags["wgmma"], sm90_gemm=flags["sm90_gemm"],
            hopper_attention=flags["hopper_attention"],
            hopper_attention_persistent=text["hopper_attention_persistent"],
            hopper_prefill_attention=flags["hopper_prefill_attention"],
            skinny_gemm=flags["skinny_gemm"], skinny_tensor_cores=text["skinny_tensor_cores"],
            skinny_weight_preload=flags["skinny_weight_preload"], split_kv=flags["split_kv"],
            decode_attention_preload=flags["decode_attention_preload"],
            fuse_kv_append=flags["fuse_kv_append"],
            attention_key_rotary=text["attention_key_rotary"],
            norm_into_gemm=text["norm_into_gemm"], tensor_parallel=tensor_parallel,
            tp_loopback=flags["tp_loopback"], max_seq_len=max_seq_len,
            kv_block_size=kv_block_size, kv_blocks=kv_blocks, prefill_logits=prefill_logits,
            device_sampling=device_sampling))
    generation = _generation_options(flags["kv_cache"], bool(pass_pipeline), max_seq_len,
                                     kv_block_size, kv_blocks, prefill_logits, device_sampling,
                                     flags["split_kv"], flags["fuse_kv_append"],
                                     flags["decode_attention_preload"])
    spec = _shape_spec(shapes)
    targets = _targets(target)
    if output is not None:
        output = _args.path("output", output, e)  # "-" and other names of stdout: the bridge
    dump_cuda = _args.path("dump_cuda", dump_cuda, e) if dump_cuda is not None else ""
    report = _args.path("report", report, e) if report is not None else None

    workdir = tempfile.TemporaryDirectory(prefix="kiln-compile-")
    try:
        input_path = _model_path(model, workdir.name)
        if output is None:
            output_path = os.path.join(workdir.name, "model.kiln")
            owner: Optional[tempfile.TemporaryDirectory] = workdir
        else:
            output_path = output
            owner = None
        report_dir = report if report is not None else os.path.join(workdir.name, "report")
        result = _compiler.compile(
            input_path=input_path, output_path=output_path, shape_spec=spec, targets=targets,
            tensor_parallel=tensor_parallel, threads=threads, dump_cuda_dir=dump_cuda,
            report_dir=report_dir, **text, **{k: v for k, v in flags.items() if v is not None},
            **generation)
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
    if tensor_parallel > 1 and not flags["tp_loopback"]:
        return artifacts
    return artifacts[0]


# The options that configure the default pipeline (kiln-compile refuses them beside
# --pass-pipeline): python name -> (default, the kiln-pipeline option text to suggest; a callable
# of the value where it depends on it). The kv_cache sizes default to None (not given).
_PIPELINE_OPTIONS: dict[str, tuple[Any, Any]] = {
    "precision": ("fp32", lambda v: f"precision={v}"),
    "fuse": (True, "fuse=false"),
    "mma_tile": ("", lambda v: f"mma-tile={v}"),
    "wgmma": (False, "wgmma=true"),
    "sm90_gemm": (True, "sm90-gemm=false"),
    "hopper_attention": (True, "sm90-attention=false"),
    "hopper_attention_persistent": ("auto", lambda v: f"sm90-attention-persistent={v}"),
    "hopper_prefill_attention": (True, "sm90-prefill-attention=false"),
    "skinny_gemm": (True, "skinny-gemm=false"),
    "skinny_tensor_cores": ("auto", lambda v: f"skinny-tensor-cores={v}"),
    "skinny_weight_preload": (True, "skinny-weight-preload=false"),
    "split_kv": (True, "split-kv=false"),
    "decode_attention_preload": (True, "decode-attention-preload=false"),
    "fuse_kv_append": (None, lambda v: f"fuse-kv-append={'true' if v else 'false'}"),
    "attention_key_rotary": ("kernel", "fuse-key-rotary=true"),
    "norm_into_gemm": ("few-row", lambda v: "fuse-norm-into-gemm=true" if v == "fused"
                       else "norm-into-few-row-gemm=false"),
    "tensor_parallel": (1, lambda v: f"tp-size={v} tp-rank=0"),
    "tp_loopback": (False, "tp-loopback=true"),
    "max_seq_len": (None, lambda v: f"kv-cache=true max-seq-len={v}"),
    "kv_block_size": (None, lambda v: f"kv-block-size={v}"),
    "kv_blocks": (None, lambda v: f"kv-blocks={v}"),
    "prefill_logits": (None, lambda v: f"last-token-logits={'true' if v == 'last' else 'false'}"),
    "device_sampling": (None, lambda v: f"sampling={'true' if v else 'false'}"),
}


def _check_pipeline_conflicts(values: dict) -> None:
    """With pass_pipeline, an option that configures the default pipeline would be ignored:
    CompileOptionError naming it and the pipeline option to write instead (kiln-compile's rule;
    only values other than the default count, since Python cannot tell a default given)."""
    for name, value in values.items():
        default, option = _PIPELINE_OPTIONS[name]
        if value is None or value == default:
            continue
        text = option(value) if callable(option) else option
        raise CompileOptionError(
            f"{name}={value!r} configures the default pipeline and has no effect with "
            f"pass_pipeline; give it as a pipeline option in the text: kiln-pipeline{{{text}}}")


def _generation_options(kv_cache: bool, pass_pipeline: bool, max_seq_len: Any,
                        kv_block_size: Any, kv_blocks: Any, prefill_logits: Any,
                        device_sampling: Any, split_kv: bool = True,
                        fuse_kv_append: Optional[bool] = None,
                        decode_attention_preload: bool = True) -> dict:
    """The bridge's keywords of the --kv-cache options, checked as kiln-compile's main checks
    them (compileModel does not): max_seq_len > 0 with kv_cache, kv_block_size (16 by default,
    or max_seq_len when that is smaller) at most max_seq_len, and none of them without
    kv_cache (nor split_kv=False, decode_attention_preload=False or fuse_kv_append given). None
    stands for "not given"."""
    e = _ERRORS
    given = {name: value for name, value in (("max_seq_len", max_seq_len),
                                              ("kv_block_size", kv_block_size),
                                              ("kv_blocks", kv_blocks),
                                              ("prefill_logits", prefill_logits),
                                              ("device_sampling", device_sampling))
             if value is not None}
    if not split_kv:
        given["split_kv"] = False
    if not decode_attention_preload:
        given["decode_attention_preload"] = False
    if fuse_kv_append is not None:
        given["fuse_kv_append"] = fuse_kv_append
    low, high = -_args.INT64_MAX - 1, _args.INT64_MAX
    max_seq_len = _args.integer("max_seq_len", max_seq_len, e, low=low, high=high) \
        if max_seq_len is not None else 0
    block = _args.integer("kv_block_size", kv_block_size, e, low=low, high=high) \
        if kv_block_size is not None else 16
    kv_blocks = _args.integer("kv_blocks", kv_blocks, e, low=low, high=high) \
        if kv_blocks is not None else 0
    prefill_logits = _args.string("prefill_logits", prefill_logits, e,
                                  choices=_CHOICES["prefill_logits"]) \
        if prefill_logits is not None else "last"
    device_sampling = _args.flag("device_sampling", device_sampling, e) \
        if device_sampling is not None else True
    if kv_cache and not pass_pipeline:
        if max_seq_len <= 0:
            raise CompileOptionError(
                "kv_cache=True needs max_seq_len=N (N > 0): the most tokens, prompt and "
                "generated, that one sequence may hold" +
                (f"; got max_seq_len={max_seq_len}" if "max_seq_len" in given else ""))
        if block <= 0:
            raise CompileOptionError(f"kv_block_size must be positive, got {block}")
        if kv_blocks < 0:
            raise CompileOptionError(f"kv_blocks must not be negative, got {kv_blocks}")
        if block > max_seq_len and "kv_block_size" in given:
            raise CompileOptionError(
                f"kv_block_size {block} is larger than max_seq_len {max_seq_len}: a block holds "
                f"at most one sequence's tokens")
        # A short sequence is one block (a contiguous cache) when the block size is the default.
        block = min(block, max_seq_len)
    elif not kv_cache and given:
        raise CompileOptionError(
            "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
            "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got " + ", ".join(f"{n}={v!r}" for n, v in given.items()))
    return {"max_seq_len": max_seq_len, "kv_block_size": block,
            "kv_blocks": kv_blocks, "prefill_logits": prefill_logits,
            "device_sampling": device_sampling}


def _model_path(model: Any, workdir: str) -> str:
    """The file to compile: `model` itself when it is a path, else the ModelProto saved into
    `workdir` (with external data when it is large)."""
    if isinstance(model, bytes) and (len(model) > 4096 or b"\0" in model):
        # Not a file name: most likely a serialized model (open(path, "rb").read()).
        raise CompileOptionTypeError(
            f"model is {len(model)} bytes that are no file path (a serialized ONNX model?): "
            f"pass the file's path, or onnx.load_from_string(data) as an onnx.ModelProto")
    if isinstance(model, (str, bytes, os.PathLike)):
        return _args.path("model", model, _ERRORS)
    try:
        import onnx
    except ImportError as error:  # pragma: no cover - onnx is a dependency of ModelProto input
        raise CompileOptionTypeError(
            "model must be a path or an onnx.ModelProto (onnx is not installed)") from error
    if not isinstance(model, onnx.ModelProto):
        raise CompileOptionTypeError(
            f"invalid model {_args.describe(model)}: expected a path (str, os.PathLike) or an "
            f"onnx.ModelProto")
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
