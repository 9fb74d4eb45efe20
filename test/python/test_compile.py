"""kiln.compile, kiln.Artifact and the errors of both (no GPU needed)."""

from __future__ import annotations

import gc
import os

import numpy as np
import onnx
import pytest

import kiln

pytestmark = pytest.mark.skipif(not kiln.has_compiler(),
                                reason="runtime-only package: no kiln.compile")


def test_compile_from_path(gpt2_artifact):
    a = gpt2_artifact
    assert [(i.name, i.dtype, i.shape, i.byte_size) for i in a.inputs] == [
        ("input_ids", "i64", (2, 8), 2 * 8 * 8)]
    assert [(o.name, o.dtype, o.shape) for o in a.outputs] == [
        ("last_hidden_state", "f32", (2, 8, 128))]
    assert a.inputs[0].role == "data"
    assert a.inputs[0].value_range == (0, 999)  # token ids index the 1000-row embedding
    assert a.inputs[0].numpy_dtype == np.int64
    assert a.outputs[0].byte_size == 2 * 8 * 128 * 4
    assert a.arena_bytes > 0 and a.weights_bytes > 0
    assert a.tensor_parallel == (0, 1)
    assert a.programs == [""]
    assert not a.is_generation
    assert a.producer.startswith("kiln-compile")


def test_kernels_and_report(gpt2_artifact):
    a = gpt2_artifact
    kernels = a.kernels
    assert len(kernels) == a.report["kernels"] > 0
    k = kernels[0]
    assert k.index == 0 and k.function.startswith("kiln_k")
    assert all(g >= 1 for g in k.grid) and all(b >= 1 for b in k.block)
    assert k.ops and k.nodes and k.node_total >= len(k.nodes)
    assert sum(x.flops for x in kernels) > 0
    assert a.modules and a.modules[0]["ptx_bytes"] > 0
    assert (90, a.modules[0]["cubins"][0][1]) == a.modules[0]["cubins"][0]
    report = a.report
    assert {"import", "passes", "codegen", "nvrtc", "write file"} <= set(report["phases"])
    assert report["arena_bytes"] == a.arena_bytes
    assert report["files"][0]["path"] == a.path
    plan = report["plan"]  # report.json of docs/report.md
    assert plan["precision"] == "fp32" and len(plan["launches"]) == len(kernels)


def test_compile_from_model_proto_matches_path(gpt2_path, gpt2_artifact):
    model = onnx.load(str(gpt2_path))
    a = kiln.compile(model, shapes="input_ids=2x8")
    assert a.inputs == gpt2_artifact.inputs
    assert a.outputs == gpt2_artifact.outputs
    assert [k.function for k in a.kernels] == [k.function for k in gpt2_artifact.kernels]


def test_shape_spec_forms(gpt2_path):
    a = kiln.compile(gpt2_path, shapes={"input_ids": "1x4"}, precision="fp16")
    assert a.inputs[0].shape == (1, 4)
    assert a.report["plan"]["precision"] == "fp16"


def test_save_load_round_trip(gpt2_artifact, tmp_path):
    path = tmp_path / "gpt2.kiln"
    saved = gpt2_artifact.save(path)
    assert saved.path == str(path) and path.stat().st_size > 0
    loaded = kiln.load(path)
    assert loaded.inputs == gpt2_artifact.inputs
    assert loaded.outputs == gpt2_artifact.outputs
    assert loaded.kernels == gpt2_artifact.kernels
    assert loaded.report is None  # only compile() knows the report
    # The saved artifact's report names the saved file, not the temporary one it was copied from.
    assert saved.report["files"] == [dict(gpt2_artifact.report["files"][0], path=str(path))]
    assert gpt2_artifact.report["files"][0]["path"] == gpt2_artifact.path
    assert kiln.Artifact(str(path)).arena_bytes == gpt2_artifact.arena_bytes


def test_compile_to_output_path(gpt2_path, tmp_path):
    out = tmp_path / "m.kiln"
    a = kiln.compile(gpt2_path, shapes="input_ids=1x8", output=out)
    assert a.path == str(out) and out.exists()


def test_temporary_artifact_lives_with_its_object(gpt2_path):
    a = kiln.compile(gpt2_path, shapes="input_ids=1x8")
    path = a.path
    assert os.path.exists(path)
    del a
    gc.collect()
    assert not os.path.exists(path)


def test_report_directory(gpt2_path, tmp_path):
    kiln.compile(gpt2_path, shapes="input_ids=1x8", report=tmp_path / "report")
    assert (tmp_path / "report" / "index.html").exists()
    assert (tmp_path / "report" / "report.json").exists()


# ---- errors: kiln-compile's messages, unchanged --------------------------------------------------

def test_bad_shape_spec(gpt2_path):
    with pytest.raises(kiln.CompileOptionError) as info:
        kiln.compile(gpt2_path, shapes="input_ids=1xq")
    assert str(info.value) == (
        "invalid --shape 'input_ids=1xq': dim 'q' of 'input_ids' is not a non-negative integer")
    assert isinstance(info.value, ValueError) and isinstance(info.value, kiln.CompileError)


def test_negative_dims_are_named_in_python_terms(gpt2_path):
    for dims in [(1, -4), (-1, 8)]:
        with pytest.raises(kiln.CompileOptionError) as info:
            kiln.compile(gpt2_path, shapes={"input_ids": dims})
        assert str(info.value).startswith(f"invalid shapes['input_ids'] {dims!r}: dim ")
        assert "--shape" not in str(info.value)


def test_shape_of_unknown_input(gpt2_path):
    with pytest.raises(kiln.CompileError) as info:
        kiln.compile(gpt2_path, shapes={"foo": (1, 8)})
    assert info.value.diagnostics == [
        f"{gpt2_path}: error: --shape names 'foo', which is not a graph input of '{gpt2_path}' "
        f"(inputs: input_ids)"]
    assert info.value.summary == f"failed to import '{gpt2_path}'"
    assert str(info.value) == "\n".join(info.value.diagnostics + [info.value.summary])


def test_missing_model_file(tmp_path):
    missing = tmp_path / "missing.onnx"
    with pytest.raises(kiln.CompileError) as info:
        kiln.compile(missing)
    assert info.value.diagnostics == [
        f"{missing}: error: cannot read ONNX model '{missing}': No such file or directory"]


def test_bad_onnx(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not protobuf\n")
    with pytest.raises(kiln.CompileError) as info:
        kiln.compile(bad)
    assert info.value.diagnostics == [
        f"{bad}: error: cannot read ONNX model '{bad}': not a valid ONNX protobuf (malformed or "
        f"truncated)"]


@pytest.mark.parametrize("option, message", [
    ({"target": "sm_12"}, "invalid --target 'sm_12': expected one of sm_75, sm_80, sm_86, sm_87, "
                          "sm_88, sm_89, sm_90, sm_100, sm_103, sm_110, sm_120, sm_121"),
    ({"precision": "fp8"}, "invalid precision 'fp8': expected one of fp32, tf32, fp16, bf16"),
    ({"norm_into_gemm": "x"},
     "invalid norm_into_gemm 'x': expected one of fused, few-row, kernel"),
    ({"hopper_attention_persistent": "x"},
     "invalid hopper_attention_persistent 'x': expected one of off, auto, on"),
    ({"kv_cache": True}, "kv_cache=True needs max_seq_len=N (N > 0): the most tokens, prompt and "
                         "generated, that one sequence may hold"),
])
def test_bad_option_values(gpt2_path, option, message):
    with pytest.raises(kiln.CompileOptionError) as info:
        kiln.compile(gpt2_path, shapes="input_ids=1x8", **option)
    assert str(info.value) == message


def test_model_of_wrong_type():
    # CompileOptionTypeError is a TypeError too.
    with pytest.raises(TypeError, match=r"invalid model 42 \(int\): expected a path .* or an "
                       r"onnx.ModelProto"):
        kiln.compile(42)


def test_generation_needs_logits(gpt2_path):
    with pytest.raises(kiln.CompileError, match="the model has no 'logits' output"):
        kiln.compile(gpt2_path, shapes="input_ids=1x1", kv_cache=True, max_seq_len=16)


def test_load_missing_file(tmp_path):
    missing = tmp_path / "none.kiln"
    with pytest.raises(kiln.FileError) as info:
        kiln.load(missing)
    assert str(info.value) == f"cannot open artifact '{missing}': No such file or directory"
    assert isinstance(info.value, OSError) and info.value.code == "IO_ERROR"


def test_load_invalid_artifact(tmp_path):
    bad = tmp_path / "bad.kiln"
    bad.write_bytes(b"garbage")
    with pytest.raises(kiln.InvalidArtifactError) as info:
        kiln.load(bad)
    assert str(info.value) == (f"'{bad}': invalid artifact: file is 7 bytes, smaller than the "
                               f"64-byte header (truncated?)")


def test_truncated_artifact(gpt2_artifact, tmp_path):
    data = open(gpt2_artifact.path, "rb").read()
    cut = tmp_path / "cut.kiln"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(kiln.InvalidArtifactError, match="cut.kiln"):
        kiln.load(cut)


def test_compiler_missing_in_runtime_only_package(monkeypatch, gpt2_path):
    from kiln import _compile
    monkeypatch.setattr(_compile, "_compiler", None)
    assert not kiln.has_compiler()
    with pytest.raises(kiln.CompilerNotAvailableError, match="runtime-only package kiln-runtime"):
        kiln.compile(gpt2_path)


# ---- generation artifacts (no GPU) -----------------------------------------------------------

def test_generation_artifact(decode_artifact):
    a = decode_artifact
    assert a.is_generation
    roles = {i.name: i.role for i in a.inputs}
    assert roles["input_ids"] == "data"
    assert "key_cache" in roles.values() and "block_table" in roles.values()
    assert a.generation_limits() == {"max_batch": 1, "max_seq_len": 64, "token_range": (0, 999),
                                     "kv_blocks": 4, "kv_block_size": 16, "kv_full_sequences": 1}
    assert [o.name for o in a.outputs][0] in ("logits", "next_token")


def test_prefill_waste_and_estimates(gpt2_path):
    causal = gpt2_path.parents[2] / "test" / "models" / "llama_tiny_causal_past_dynamo.onnx"
    if not causal.exists():
        pytest.skip(f"{causal} not present")
    a = kiln.compile(causal, shapes="input_ids=1..3x1..40", kv_cache=True, max_seq_len=64)
    # What kiln-run --info prints for the same artifact (test/cli/kv-cache-programs.test).
    waste = a.prefill_waste()
    assert waste["plan"] == "time"
    # Within the 12.5% bound (30.0% and 26.4% with the plans of least time): padding is priced,
    # over 1..64 and over the prompts up to the longest chunk, 1..40 (which binds here).
    assert round(waste["mean"], 3) == 0.07 and round(waste["tokens"], 3) == 0.078
    chunk = a.prefill_waste(40)
    assert round(chunk["mean"], 3) == 0.086 and round(chunk["tokens"], 3) == 0.119
    assert waste["padding_price_us"] > 0
    assert all(a.program(name).estimated_us > 0 for name in a.programs)
    assert a.prefill_waste(10)["mean"] >= 0
    with pytest.raises(kiln.InvalidArgumentError, match="holds 64"):
        a.prefill_waste(65)
    with pytest.raises(kiln.InvalidArgumentError, match="max_prompt_length"):
        a.prefill_waste(2**70)  # past size_t: the argument check, not nanobind's TypeError
    with pytest.raises(kiln.InvalidArgumentTypeError, match="max_prompt_length"):
        a.prefill_waste("all")


def test_generation_limits_of_plain_artifact(gpt2_artifact):
    with pytest.raises(kiln.InvalidArgumentError, match="--kv-cache"):
        gpt2_artifact.generation_limits()


def test_unknown_program(decode_artifact):
    with pytest.raises(kiln.NotFoundError, match="no program 'nope'"):
        decode_artifact.program("nope")


# ---- the output must not replace the model -----------------------------------------------------

def _same_file_cases(model):
    """(output, what) pairs naming `model` itself."""
    link = model.parent / "hardlink.onnx"
    os.link(model, link)
    return [(model, "same path"), (link, "hard link"),
            (os.path.join(os.path.dirname(model), ".", "m.onnx"), "./m.onnx")]


def test_output_is_the_input_model(gpt2_path, tmp_path):
    model = tmp_path / "m.onnx"
    model.write_bytes(gpt2_path.read_bytes())
    before = model.read_bytes()
    for output, what in _same_file_cases(model):
        with pytest.raises(kiln.CompileOptionError) as info:
            kiln.compile(model, shapes="input_ids=1x8", output=output)
        assert str(info.value) == (f"output '{os.fspath(output)}' is the input model '{model}' "
                                   f"(the same file); choose another -o"), what
        assert model.read_bytes() == before, what


def test_output_is_the_input_model_relative(gpt2_path, tmp_path, monkeypatch):
    (tmp_path / "m.onnx").write_bytes(gpt2_path.read_bytes())
    before = (tmp_path / "m.onnx").read_bytes()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(kiln.CompileOptionError, match="is the input model 'm.onnx'"):
        kiln.compile("m.onnx", shapes="input_ids=1x8", output="./m.onnx")
    assert (tmp_path / "m.onnx").read_bytes() == before


# ---- option values checked before the compiler runs ------------------------------------------
# Each names the option, the value and what it takes (the bridge said only "std::bad_cast").

@pytest.mark.parametrize("option, message", [
    ({"precision": None},
     "invalid precision None: expected a str, one of fp32, tf32, fp16, bf16"),
    ({"precision": 16},
     "invalid precision 16 (int): expected a str, one of fp32, tf32, fp16, bf16"),
    ({"tensor_parallel": 2.0}, "invalid tensor_parallel 2.0 (float): expected an int"),
    ({"threads": "4"}, "invalid threads '4': expected an int"),
    ({"kv_cache": True, "max_seq_len": 64.7},
     "invalid max_seq_len 64.7 (float): expected an int"),
    ({"kv_cache": "yes", "max_seq_len": 64}, "invalid kv_cache 'yes': expected True or False (or 0 or 1)"),
    ({"fuse": "false"}, "invalid fuse 'false': expected True or False (or 0 or 1)"),
    ({"shapes": ["input_ids=1x8"]},
     "invalid shapes ['input_ids=1x8'] (list): expected a str "
     "(\"input_ids=1x128,attention_mask=1x128\") or a mapping {input name: dims} "
     "({\"input_ids\": (1, 128)} or {\"input_ids\": \"1..8x1..2048\"})"),
    ({"shapes": 5}, "invalid shapes 5 (int): expected a str "),
    ({"shapes": {"input_ids": None}},
     "invalid shapes['input_ids'] None: expected the dims as a str (\"1x128\", "
     "\"1..8x1..2048\") or a sequence of ints ((1, 128))"),
    ({"shapes": {"input_ids": (1, 8.5)}}, "invalid shapes['input_ids'] (1, 8.5) (tuple)"),
    ({"shapes": {1: (1, 8)}}, "invalid shapes key 1 (int): expected an input name (a str)"),
    ({"target": 90},
     "invalid target 90 (int): expected a str (\"sm_90\", \"sm_80,sm_90\") or a list of them "
     "([\"sm_80\", \"sm_90\"])"),
    ({"output": 3}, "invalid output 3 (int): expected a path (str or os.PathLike)"),
])
def test_option_of_wrong_type(gpt2_path, option, message):
    option = {"shapes": "input_ids=1x8", **option}
    with pytest.raises(kiln.CompileOptionTypeError) as info:
        kiln.compile(gpt2_path, **option)
    assert str(info.value).startswith(message)
    assert isinstance(info.value, TypeError) and isinstance(info.value, kiln.CompileOptionError)


@pytest.mark.parametrize("option, message", [
    ({"tensor_parallel": -1}, "invalid tensor_parallel -1: expected an int from 1 to 4294967295"),
    ({"tensor_parallel": 2**40},
     "invalid tensor_parallel 1099511627776: expected an int from 1 to 4294967295"),
    ({"threads": -5}, "invalid threads -5: expected an int from 0 to 4294967295 (0: all cores)"),
    ({"kv_cache": True, "max_seq_len": 2**70},
     "invalid max_seq_len 1180591620717411303424: expected an int from -9223372036854775808 to "
     "9223372036854775807"),
    ({"kv_cache": True, "max_seq_len": 0},
     "kv_cache=True needs max_seq_len=N (N > 0): the most tokens, prompt and generated, that one "
     "sequence may hold; got max_seq_len=0"),
    ({"kv_cache": True, "max_seq_len": 16, "kv_block_size": 32},
     "kv_block_size 32 is larger than max_seq_len 16: a block holds at most one sequence's "
     "tokens"),
    ({"kv_cache": True, "max_seq_len": 16, "kv_block_size": 0},
     "kv_block_size must be positive, got 0"),
    ({"kv_cache": True, "max_seq_len": 16, "kv_blocks": -1},
     "kv_blocks must not be negative, got -1"),
    ({"max_seq_len": 64},
     "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
     "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got max_seq_len=64"),
    ({"device_sampling": False, "prefill_logits": "all"},
     "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
     "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got prefill_logits='all', device_sampling=False"),
    ({"fuse_kv_append": True},
     "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
     "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got fuse_kv_append=True"),
    ({"split_kv": False},
     "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
     "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got split_kv=False"),
    ({"fuse_kv_append": False},
     "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
     "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got fuse_kv_append=False"),
    ({"decode_attention_preload": False},
     "max_seq_len, kv_block_size, kv_blocks, prefill_logits, device_sampling, split_kv, "
     "decode_attention_preload and fuse_kv_append apply to kv_cache=True; got "
     "decode_attention_preload=False"),
])
def test_option_out_of_range(gpt2_path, option, message):
    option = {"shapes": "input_ids=1x8", **option}
    with pytest.raises(kiln.CompileOptionError) as info:
        kiln.compile(gpt2_path, **option)
    assert str(info.value) == message
    assert not isinstance(info.value, TypeError)


def _bridge_keywords(monkeypatch, **options) -> dict:
    """The keywords kiln.compile passes to the compiler bridge for `options`."""
    from kiln import _compile
    calls = []

    class Bridge:
        @staticmethod
        def compile(**kwargs):
            calls.append(kwargs)
            return {"ok": False, "usage_error": True, "error": "stop", "diagnostics": []}

    monkeypatch.setattr(_compile, "_compiler", Bridge)
    with pytest.raises(kiln.CompileOptionError, match="stop"):
        kiln.compile("m.onnx", **options)
    return calls[0]


def test_default_block_size_shrinks_to_a_short_sequence(monkeypatch):
    # kv_block_size not given: 16 > max_seq_len 8 becomes 8 (kiln-compile's rule), no error.
    keywords = _bridge_keywords(monkeypatch, shapes="input_ids=1x1", kv_cache=True,
                                max_seq_len=8)
    assert keywords["kv_block_size"] == 8 and keywords["max_seq_len"] == 8


@pytest.mark.parametrize("target, targets", [
    ("sm_90", ["sm_90"]), ("sm_80,sm_90", ["sm_80", "sm_90"]),
    (["sm_80", "sm_90"], ["sm_80", "sm_90"]), (("sm_80,sm_86", "sm_90"), ["sm_80", "sm_86", "sm_90"]),
])
def test_target_forms(monkeypatch, target, targets):
    assert _bridge_keywords(monkeypatch, target=target)["targets"] == targets


def test_comma_separated_targets(gpt2_path):
    a = kiln.compile(gpt2_path, shapes="input_ids=1x8", target="sm_80,sm_90")
    assert sorted(arch for m in a.modules for arch, _ in m["cubins"]) == \
        sorted([80, 90] * len(a.modules))


def test_bad_target_in_a_list(gpt2_path):
    with pytest.raises(kiln.CompileOptionError, match="invalid --target 'sm_12'"):
        kiln.compile(gpt2_path, shapes="input_ids=1x8", target="sm_90,sm_12")


# ---- paths ------------------------------------------------------------------------------------

@pytest.mark.parametrize("output", ["-", "/dev/stdout"])
def test_output_to_stdout_is_refused(gpt2_path, output, capfd):
    with pytest.raises(kiln.CompileOptionError) as info:
        kiln.compile(gpt2_path, shapes="input_ids=1x8", output=output)
    assert str(info.value) == (f"output '{output}' is standard output: kiln.compile writes the "
                               f"artifact to a file and returns it opened; give a file path, or "
                               f"output=None for a temporary file")
    assert capfd.readouterr().out == ""  # no artifact bytes on stdout


def test_nul_in_paths(gpt2_path, tmp_path):
    with pytest.raises(kiln.CompileOptionError) as info:
        kiln.compile(str(gpt2_path) + "\0junk", shapes="input_ids=1x8")
    assert str(info.value) == f"invalid model {str(gpt2_path) + chr(0) + 'junk'!r}: a path " \
                              f"cannot contain a NUL character"
    out = tmp_path / "a\0b.kiln"
    with pytest.raises(kiln.CompileOptionError, match="invalid output .*a path cannot contain"):
        kiln.compile(gpt2_path, shapes="input_ids=1x8", output=str(out))
    assert not (tmp_path / "a").exists()
    for option in ("dump_cuda", "report"):
        with pytest.raises(kiln.CompileOptionError, match=f"invalid {option} .*NUL"):
            kiln.compile(gpt2_path, shapes="input_ids=1x8", **{option: str(tmp_path / "d\0x")})


def test_nul_in_artifact_paths(gpt2_artifact, tmp_path):
    with pytest.raises(kiln.InvalidArgumentError, match="invalid path .*NUL"):
        kiln.load(gpt2_artifact.path + "\0junk")
    with pytest.raises(kiln.InvalidArgumentError, match="invalid path .*NUL"):
        gpt2_artifact.save(str(tmp_path / "a\0b.kiln"))
    assert not (tmp_path / "a").exists()


def test_hopper_prefill_attention_option(gpt2_path):
    # hopper_prefill_attention (the default) gives a prefill chunk's paged attention the Hopper
    # kernel (384 threads: a producer and two consumer warpgroups) where every SM gets a 128-row
    # query tile; hopper_prefill_attention=False keeps the mma.sync kernel over the cache.
    causal = gpt2_path.parents[2] / "test" / "models" / "gpt2_tiny_causal_dynamo.onnx"
    if not causal.exists():
        pytest.skip(f"{causal} not present")

    def paged_blocks(**options):
        a = kiln.compile(causal, shapes="input_ids=66x128", kv_cache=True, max_seq_len=128,
                         precision="fp16", **options)
        return {k.block for k in a.kernels if "paged_attention" in k.ops}

    assert paged_blocks() == {(384, 1, 1)}
    assert (384, 1, 1) not in paged_blocks(hopper_prefill_attention=False)
    with pytest.raises(kiln.CompileOptionTypeError, match="hopper_prefill_attention"):
        kiln.compile(causal, shapes="input_ids=1x1", hopper_prefill_attention="yes")


def test_skinny_weight_preload_option(gpt2_path):
    # skinny_weight_preload (the default) puts a decode step's one-row GEMMs on the tensor cores
    # (their cp.async rings: smem_bytes::gemmSkinnyTc(1) = 69648 bytes, more with the RMS norm)
    # with the weight's first stages copied before the grid-dependency wait;
    # skinny_weight_preload=False keeps them on the CUDA cores (a few KiB) at one row, and no
    # matmul kernel of the step (the rotary table's included) asks for 64 KiB.
    causal = gpt2_path.parents[2] / "test" / "models" / "llama_tiny_causal_past_dynamo.onnx"
    if not causal.exists():
        pytest.skip(f"{causal} not present")

    def gemm_smem(**options):
        a = kiln.compile(causal, shapes="input_ids=1x1", kv_cache=True, max_seq_len=32,
                         precision="fp16", **options)
        return {k.shared_mem_bytes for k in a.kernels if "matmul" in k.ops}

    assert max(gemm_smem()) >= 69648
    assert max(gemm_smem(skinny_weight_preload=False)) < 65536
    with pytest.raises(kiln.CompileOptionTypeError, match="skinny_weight_preload"):
        kiln.compile(causal, shapes="input_ids=1x1", skinny_weight_preload="yes")


def test_decode_attention_preload_option(gpt2_path, tmp_path):
    # decode_attention_preload (the default) makes the split-KV decode attention take its
    # grid-dependency wait as a lambda and read its cached rows before calling it;
    # decode_attention_preload=False waits first, as every other kernel.
    causal = gpt2_path.parents[2] / "test" / "models" / "llama_tiny_causal_past_dynamo.onnx"
    if not causal.exists():
        pytest.skip(f"{causal} not present")

    def sources(name, **options):
        kiln.compile(causal, shapes="input_ids=1x1", kv_cache=True, max_seq_len=2048,
                     precision="fp16", dump_cuda=tmp_path / name, **options)
        return "".join(p.read_text() for p in (tmp_path / name).glob("*.cu"))

    assert "kiln_dependency_wait" in sources("on")
    assert "kiln_dependency_wait" not in sources("off", decode_attention_preload=False)
    with pytest.raises(kiln.CompileOptionTypeError, match="decode_attention_preload"):
        kiln.compile(causal, shapes="input_ids=1x1", decode_attention_preload="yes")


@pytest.mark.parametrize("options, message", [
    ({"precision": "fp16"}, "precision='fp16' configures the default pipeline and has no effect "
     "with pass_pipeline; give it as a pipeline option in the text: "
     "kiln-pipeline{precision=fp16}"),
    ({"hopper_prefill_attention": False}, "kiln-pipeline{sm90-prefill-attention=false}"),
    ({"norm_into_gemm": "fused"}, "kiln-pipeline{fuse-norm-into-gemm=true}"),
    ({"skinny_weight_preload": False}, "kiln-pipeline{skinny-weight-preload=false}"),
    ({"decode_attention_preload": False}, "kiln-pipeline{decode-attention-preload=false}"),
    ({"kv_cache": True, "max_seq_len": 128},
     "max_seq_len=128 configures the default pipeline"),
])
def test_pass_pipeline_refuses_pipeline_options(gpt2_path, options, message):
    # kiln-compile's rule: an option the pipeline text would silently drop is an error.
    with pytest.raises(kiln.CompileOptionError) as info:
        kiln.compile(gpt2_path, shapes="input_ids=1x16",
                     pass_pipeline="builtin.module(kiln-pipeline)", **options)
    assert message in str(info.value)


def test_pass_pipeline_with_its_own_options(gpt2_path):
    fp16 = kiln.compile(gpt2_path, shapes="input_ids=1x16",
                        pass_pipeline="builtin.module(kiln-pipeline{precision=fp16})")
    fp32 = kiln.compile(gpt2_path, shapes="input_ids=1x16",
                        pass_pipeline="builtin.module(kiln-pipeline)")
    assert fp16.weights_bytes < fp32.weights_bytes


def test_save_errors(gpt2_artifact, tmp_path):
    with pytest.raises(kiln.FileError, match="it is a directory; give a file name such as"):
        gpt2_artifact.save(tmp_path)
    with pytest.raises(kiln.FileError, match="No such file or directory"):
        gpt2_artifact.save(tmp_path / "missing" / "m.kiln")
    with pytest.raises(kiln.InvalidArgumentError, match="invalid path '': an empty path"):
        gpt2_artifact.save("")


def test_model_that_is_no_path(gpt2_path):
    data = gpt2_path.read_bytes()  # a serialized model, not its file name
    with pytest.raises(kiln.CompileOptionTypeError) as info:
        kiln.compile(data, shapes="input_ids=1x8")
    assert str(info.value) == (
        f"model is {len(data)} bytes that are no file path (a serialized ONNX model?): pass the "
        f"file's path, or onnx.load_from_string(data) as an onnx.ModelProto")
    with pytest.raises(kiln.CompileOptionTypeError,
                       match=r"invalid model 3 \(int\): expected a path"):
        kiln.compile(3, shapes="input_ids=1x8")
    with pytest.raises(kiln.CompileOptionError, match="invalid output '': an empty path"):
        kiln.compile(gpt2_path, shapes="input_ids=1x8", output="")


def test_fuse_kv_append_without_fuse_warns(tmp_path, capfd):
    """fuse_kv_append merges fused kernels: with fuse=False it has no effect, and the compiler
    (kiln::compileModel, as for kiln-compile) says so on stderr; the compile goes on."""
    from conftest import GPT2_CAUSAL
    kiln.compile(GPT2_CAUSAL, shapes="input_ids=1x1", kv_cache=True, max_seq_len=16, fuse=False,
                 fuse_kv_append=True, output=tmp_path / "m.kiln")
    assert "--fuse-kv-append has no effect with --no-fuse" in capfd.readouterr().err
    assert (tmp_path / "m.kiln").is_file()


def test_fuse_kv_append_default_is_quiet(tmp_path, capfd):
    """Left at None, fuse_kv_append is on wherever it applies (decode steps) and warns about
    neither fuse=False nor a prefill shape; given False, the append stays a kernel of its own."""
    from conftest import GPT2_CAUSAL
    kiln.compile(GPT2_CAUSAL, shapes="input_ids=1x1", kv_cache=True, max_seq_len=16, fuse=False,
                 output=tmp_path / "a.kiln")
    kiln.compile(GPT2_CAUSAL, shapes="input_ids=1x4", kv_cache=True, max_seq_len=16,
                 output=tmp_path / "b.kiln")
    assert "warning" not in capfd.readouterr().err
    def cuda(name, **options):
        kiln.compile(GPT2_CAUSAL, shapes="input_ids=1x1", kv_cache=True, max_seq_len=16,
                     dump_cuda=tmp_path / name, output=tmp_path / (name + ".kiln"), **options)
        return "".join(p.read_text() for p in (tmp_path / name).glob("*.cu"))
    marker = "the step's keys and values appended here"
    assert marker in cuda("fused")
    assert marker not in cuda("unfused", fuse_kv_append=False)


def test_numpy_bools_are_flags(monkeypatch):
    """NumPy's bool scalars (numpy.bool_ in NumPy 1, numpy.bool in NumPy 2) are flags."""
    np = pytest.importorskip("numpy")
    keywords = _bridge_keywords(monkeypatch, shapes="input_ids=1x1", fuse=np.False_,
                                sm90_gemm=np.True_)
    assert keywords["fuse"] is False and keywords["sm90_gemm"] is True
    keywords = _bridge_keywords(monkeypatch, shapes="input_ids=1x1", fuse=np.int64(0),
                                sm90_gemm=np.uint8(1))
    assert keywords["fuse"] is False and keywords["sm90_gemm"] is True
    with pytest.raises(kiln.CompileOptionError, match=r"invalid fuse np.int64\(2\)"):
        kiln.compile("m.onnx", shapes="input_ids=1x1", fuse=np.int64(2))
