"""kiln.Session: runs, caller buffers, DLPack device tensors, streams, profiling, generation.
Every test here needs a CUDA device and skips without one (kiln.Session raises
kiln.UnavailableError, the C API's KILN_UNAVAILABLE)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

import kiln

from conftest import GPT2, GPT2_CAUSAL, _session_or_skip


def test_session_without_gpu_is_unavailable(gpt2_artifact):
    try:
        session = kiln.Session(gpt2_artifact)
    except kiln.UnavailableError as error:
        assert isinstance(error, RuntimeError) and error.code == "UNAVAILABLE"
        assert "CUDA" in str(error)
        return
    session.close()
    pytest.skip("a CUDA device is present")


def _ids(shape, seed=0):
    return np.random.default_rng(seed).integers(0, 1000, size=shape, dtype=np.int64)


def _reference(ids):
    sess = ort.InferenceSession(str(GPT2), providers=["CPUExecutionProvider"])
    return sess.run(["last_hidden_state"], {"input_ids": ids})[0]


def _rel(out, ref):
    return float(np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref))


def test_run_numpy_matches_onnxruntime(gpt2_session):
    ids = _ids((2, 8))
    out = gpt2_session.run(input_ids=ids)["last_hidden_state"]
    assert out.shape == (2, 8, 128) and out.dtype == np.float32
    assert _rel(out, _reference(ids)) < 1e-4


def test_run_mapping_and_host_output_buffer(gpt2_session):
    ids = _ids((2, 8), seed=1)
    buffer = np.full((2, 8, 128), np.nan, np.float32)
    result = gpt2_session.run({"input_ids": ids}, outputs={"last_hidden_state": buffer})
    assert result["last_hidden_state"] is buffer
    assert _rel(buffer, _reference(ids)) < 1e-4


def test_run_read_only_input(gpt2_session):
    ids = _ids((2, 8), seed=3)
    ids.flags.writeable = False  # inputs are only read
    out = gpt2_session.run(input_ids=ids)["last_hidden_state"]
    assert _rel(out, _reference(ids)) < 1e-4


def test_inputs_persist_between_runs(gpt2_session):
    ids = _ids((2, 8), seed=2)
    first = gpt2_session.run(input_ids=ids)["last_hidden_state"]
    again = gpt2_session.run()["last_hidden_state"]
    np.testing.assert_array_equal(first, again)


def test_input_never_set(gpt2_artifact):
    with _session_or_skip(gpt2_artifact) as session:
        with pytest.raises(kiln.FailedPreconditionError, match="input 'input_ids' was never set"):
            session.run()


def test_run_wrong_dtype_shape_name(gpt2_session):
    with pytest.raises(kiln.InvalidArgumentError,
                       match=r"input 'input_ids' is i64\[2, 8\], but the tensor given is i32"):
        gpt2_session.run(input_ids=np.zeros((2, 8), np.int32))
    with pytest.raises(kiln.InvalidArgumentError, match=r"tensor given is i64\[2, 7\]"):
        gpt2_session.run(input_ids=np.zeros((2, 7), np.int64))
    with pytest.raises(kiln.NotFoundError, match="input_idz"):
        gpt2_session.run(input_idz=np.zeros((2, 8), np.int64))
    with pytest.raises(kiln.NotFoundError, match="no output named 'logits'"):
        gpt2_session.run(input_ids=_ids((2, 8)), outputs={"logits": np.empty(1)})
    # Output buffers are checked before anything runs: None is no buffer, a wrong shape says so.
    with pytest.raises(kiln.InvalidArgumentTypeError, match="the value given is None"):
        gpt2_session.run(input_ids=_ids((2, 8)), outputs={"last_hidden_state": None})
    with pytest.raises(kiln.InvalidArgumentError, match=r"tensor given is f32\[2, 8, 64\]"):
        gpt2_session.run(input_ids=_ids((2, 8)),
                         outputs={"last_hidden_state": np.empty((2, 8, 64), np.float32)})


def test_profile_and_benchmark(gpt2_session):
    gpt2_session.run(input_ids=_ids((2, 8)))
    records = gpt2_session.profile(iterations=5)
    assert len(records) == len(gpt2_session.artifact.kernels)
    assert all(r.ms > 0 for r in records)
    assert records[0].function == gpt2_session.artifact.kernels[0].function
    times = gpt2_session.benchmark(iterations=10, warmup=2)
    assert len(times) == 10 and all(t > 0 for t in times)
    timeline = gpt2_session.timeline()
    assert len(timeline) == len(records) and all(e >= s for s, e in timeline)


# ---- DLPack device tensors (torch) -----------------------------------------------------------

@pytest.fixture
def torch_cuda():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    return torch


def test_torch_in_place_on_current_stream(gpt2_session, torch_cuda):
    torch = torch_cuda
    ids = _ids((2, 8), seed=3)
    ref = gpt2_session.run(input_ids=ids)["last_hidden_state"]
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        ids_dev = torch.from_numpy(ids).cuda()
        out = torch.full((2, 8, 128), float("nan"), device="cuda")
        result = gpt2_session.run(input_ids=ids_dev, outputs={"last_hidden_state": out},
                                  stream=torch.cuda.current_stream())
        assert result["last_hidden_state"] is out
    stream.synchronize()
    np.testing.assert_allclose(out.cpu().numpy(), ref, rtol=0, atol=0)
    # Same buffers again, default stream chosen from the torch tensors.
    out.fill_(float("nan"))
    gpt2_session.run(input_ids=ids_dev, outputs={"last_hidden_state": out})
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), ref)


def test_torch_output_then_numpy(gpt2_session, torch_cuda):
    torch = torch_cuda
    ids = _ids((2, 8), seed=4)
    out = torch.empty((2, 8, 128), device="cuda")
    gpt2_session.run(input_ids=ids, outputs={"last_hidden_state": out}, stream=0)
    host = gpt2_session.run(input_ids=ids)["last_hidden_state"]  # unbinds the output
    torch.cuda.synchronize()
    np.testing.assert_array_equal(out.cpu().numpy(), host)


def test_torch_wrong_device_tensor(gpt2_session, torch_cuda):
    torch = torch_cuda
    with pytest.raises(kiln.InvalidArgumentError, match="tensor given is f32"):
        gpt2_session.run(input_ids=torch.zeros((2, 8), device="cuda"))
    with pytest.raises(kiln.InvalidArgumentError, match="not row-major contiguous"):
        gpt2_session.run(input_ids=torch.zeros((8, 2), dtype=torch.int64, device="cuda").t())


# ---- generation ------------------------------------------------------------------------------

def _greedy_reference(prompt, n, margin=1e-3):
    """Greedy tokens of the causal model by onnxruntime, one full forward per token, up to the
    first step whose two largest logits are closer than `margin` (where fp32 rounding may pick
    either): comparing further would test the rounding, not kiln."""
    sess = ort.InferenceSession(str(GPT2_CAUSAL), providers=["CPUExecutionProvider"])
    ids = list(prompt)
    for _ in range(n):
        logits = sess.run(None, {"input_ids": np.array([ids], np.int64)})[0][0, -1]
        top2 = np.sort(logits)[-2:]
        ids.append(int(np.argmax(logits)))
        if top2[1] - top2[0] < margin:
            break
    return ids[len(prompt):]


def test_generate_greedy(decode_session):
    prompt = [5, 17, 300, 42]
    stream = decode_session.generate(prompt, 6)
    tokens = list(stream)
    assert len(tokens) == 6 and stream.finish_reason == "length"
    assert stream.tokens == tokens
    ref = _greedy_reference(prompt, 6)
    assert tokens[:len(ref)] == ref
    stats = decode_session.generation_stats()
    assert stats["generated_tokens"] == 6


def test_generate_cancel_on_close(decode_session):
    stream = decode_session.generate([1, 2, 3], 20)
    first = [next(stream), next(stream)]
    stream.close()
    assert stream.finish_reason == "cancelled"
    assert stream.tokens[:2] == first and len(stream.tokens) < 20


def test_generate_sampling_is_deterministic(decode_session):
    options = dict(temperature=0.8, top_k=50, top_p=0.9, seed=7)
    a = list(decode_session.generate([1, 2, 3], 8, **options))
    b = list(decode_session.generate([1, 2, 3], 8, **options))
    assert a == b


def test_generate_stop_token(decode_session):
    tokens = list(decode_session.generate([5, 17, 300, 42], 6))
    stop = tokens[1]
    stream = decode_session.generate([5, 17, 300, 42], 6, stop_tokens=[stop])
    assert list(stream) == tokens[:tokens.index(stop) + 1] and stream.finish_reason == "stop"


def test_new_generation_cancels_the_unfinished_one(decode_session):
    first = decode_session.generate([1, 2, 3], 30)
    next(first)
    second = list(decode_session.generate([1, 2, 3], 3))
    assert first.finish_reason == "cancelled" and len(second) == 3


def test_generate_errors(decode_session):
    with pytest.raises(kiln.InvalidArgumentError):
        list(decode_session.generate([1] * 60, 10))  # 69 tokens > 64 per sequence
    with pytest.raises(kiln.InvalidArgumentError):
        list(decode_session.generate([5000], 2))  # outside the embedding's ids
    with pytest.raises(TypeError, match="1-D sequence of integer token ids"):
        decode_session.generate([[1, 2]], 2)


def test_generate_batch(decode_session):
    results = decode_session.generate_batch([[5, 17, 300, 42]], 4)
    ref = _greedy_reference([5, 17, 300, 42], 4)
    assert results[0].tokens[:len(ref)] == ref
    assert results[0].finish_reason == "length" and results[0].time_to_first_token_ms > 0
