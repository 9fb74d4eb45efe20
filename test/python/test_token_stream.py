"""kiln.TokenStream, the iterator of Session.generate, over a stand-in for the runtime's generator
(no GPU): tokens in order, the finish reason, cancellation when the iterator is closed, errors
raised in the consumer, and the lookahead bound."""

from __future__ import annotations

import threading

import pytest

import kiln


class FakeGenerator:
    """Calls back like kiln_generate: one token per step, stops when the callback returns true
    (finish reason "cancelled"), at a stop token ("stop") or at max_new_tokens ("length")."""

    def __init__(self, fail_after=None):
        self.fail_after = fail_after
        self.produced = 0
        self.calls = 0

    def generate(self, requests, callback):
        self.calls += 1
        (prompt, max_new, stops, *_), = requests
        tokens = []
        for step in range(max_new):
            if self.fail_after is not None and step == self.fail_after:
                raise kiln.InvalidArgumentError("request 0: boom")
            token = 100 + step
            tokens.append(token)
            self.produced += 1
            cancel = callback(0, token)
            if token in stops:
                return [(tokens, "stop", 1.5)]
            if cancel:
                return [(tokens, "cancelled", 1.5)]
        return [(tokens, "length", 1.5)]


def request(max_new, stops=()):
    return ([1, 2, 3], max_new, list(stops), 0.0, 0, 1.0, 0)


def test_tokens_and_finish_reason():
    stream = kiln.TokenStream(FakeGenerator(), request(5))
    assert list(stream) == [100, 101, 102, 103, 104]
    assert stream.finish_reason == "length" and stream.tokens == [100, 101, 102, 103, 104]
    assert stream.time_to_first_token_ms == 1.5
    assert list(stream) == []  # exhausted


def test_stop_token():
    stream = kiln.TokenStream(FakeGenerator(), request(10, stops=[102]))
    assert list(stream) == [100, 101, 102] and stream.finish_reason == "stop"


def test_close_cancels_within_the_lookahead():
    generator = FakeGenerator()
    stream = kiln.TokenStream(generator, request(1000))
    assert [next(stream), next(stream)] == [100, 101]
    stream.close()
    assert stream.finish_reason == "cancelled"
    assert stream.tokens[:2] == [100, 101]
    assert generator.produced <= 2 + kiln.TokenStream.LOOKAHEAD + 1


def test_break_out_of_a_with_block_cancels():
    generator = FakeGenerator()
    with kiln.TokenStream(generator, request(1000)) as stream:
        for token in stream:
            if token == 103:
                break
    assert stream.finish_reason == "cancelled" and generator.produced < 20
    assert all(t.name != "kiln-generate" for t in threading.enumerate())


def test_error_is_raised_in_the_consumer():
    stream = kiln.TokenStream(FakeGenerator(fail_after=2), request(10))
    assert next(stream) == 100 and next(stream) == 101
    with pytest.raises(kiln.InvalidArgumentError, match="request 0: boom"):
        next(stream)
    with pytest.raises(StopIteration):
        next(stream)


def test_close_before_iterating_starts_nothing():
    generator = FakeGenerator()
    stream = kiln.TokenStream(generator, request(10))
    stream.close()
    assert generator.calls == 0 and list(stream) == []


# ---- Session.generate's arguments, checked before the generator sees them ---------------------

class LimitsGenerator(FakeGenerator):
    """A generator of max_seq_len 64 and batch 2 that records the requests it gets."""

    max_seq_len = 64
    max_batch = 2

    def __init__(self, artifact=None, device=0):
        super().__init__()
        self.requests = []

    def generate(self, requests, callback):
        self.requests.extend(requests)
        return [([], "length", 0.0) for _ in requests]


@pytest.fixture
def checked_session(decode_artifact, monkeypatch):
    from kiln import _session
    monkeypatch.setattr(_session._runtime, "Generator", LimitsGenerator)
    return kiln.Session(decode_artifact)


@pytest.mark.parametrize("arguments, error, message", [
    ({"max_new_tokens": 10**10}, kiln.InvalidArgumentError,
     "invalid max_new_tokens 10000000000: expected an int from 1 to 64 (the artifact's "
     "max_seq_len, which the prompt's tokens share)"),
    ({"max_new_tokens": 0}, kiln.InvalidArgumentError, "invalid max_new_tokens 0: expected an "
                                                      "int from 1 to 64"),
    ({"max_new_tokens": -1}, kiln.InvalidArgumentError, "invalid max_new_tokens -1"),
    ({"max_new_tokens": 2.5}, kiln.InvalidArgumentTypeError,
     "invalid max_new_tokens 2.5 (float): expected an int"),
    ({"seed": -1}, kiln.InvalidArgumentError,
     "invalid seed -1: expected an int from 0 to 18446744073709551615"),
    ({"seed": 2**64}, kiln.InvalidArgumentError, "invalid seed 18446744073709551616"),
    ({"top_k": -1}, kiln.InvalidArgumentError,
     "invalid top_k -1: expected an int from 0 to 2147483647 (0: every token)"),
    ({"top_k": 2**31}, kiln.InvalidArgumentError, "invalid top_k 2147483648"),
    ({"top_p": 0.0}, kiln.InvalidArgumentError,
     "invalid top_p 0.0: expected a number in (0, 1] (1: every token)"),
    ({"top_p": 1.5}, kiln.InvalidArgumentError, "invalid top_p 1.5"),
    ({"temperature": float("nan")}, kiln.InvalidArgumentError,
     "invalid temperature nan: expected a finite number"),
    ({"temperature": "hot"}, kiln.InvalidArgumentTypeError,
     "invalid temperature 'hot': expected a number"),
    ({"stop_tokens": [1, -2**64]}, kiln.InvalidArgumentError, "invalid stop_tokens "),
    ({"stop_tokens": 7}, kiln.InvalidArgumentTypeError,
     "invalid stop_tokens 7 (int): expected a sequence of token ids"),
])
def test_generate_arguments(checked_session, arguments, error, message):
    arguments = {"max_new_tokens": 4, **arguments}
    with pytest.raises(error) as info:
        checked_session.generate([1, 2, 3], **arguments)
    assert str(info.value).startswith(message)
    with pytest.raises(error):
        checked_session.generate_batch([[1, 2, 3]], **arguments)
    assert checked_session._generator.requests == []  # refused before the generator


def test_generate_arguments_pass(checked_session):
    tokens = list(checked_session.generate([1, 2, 3], 64, temperature=0.7, top_k=2**31 - 1,
                                           top_p=1, seed=2**64 - 1, stop_tokens=(5,)))
    assert tokens == []
    assert checked_session._generator.requests == [
        ([1, 2, 3], 64, [5], 0.7, 2**31 - 1, 1.0, 2**64 - 1)]


def test_generate_batch_seeds_stay_in_range(checked_session):
    checked_session.generate_batch([[1], [2]], 2, seed=2**64 - 2)
    assert [r[-1] for r in checked_session._generator.requests] == [2**64 - 2, 2**64 - 1]
    with pytest.raises(kiln.InvalidArgumentError, match="sequence 1 draws with seed \\+ 1"):
        checked_session.generate_batch([[1], [2]], 2, seed=2**64 - 1)
