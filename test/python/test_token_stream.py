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
