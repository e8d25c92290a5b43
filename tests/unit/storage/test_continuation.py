"""Continue tokens: round trip, prefix binding, malformed input."""

from __future__ import annotations

import pytest

from minikube_py.storage import InvalidContinueError, decode_continue, encode_continue


def test_round_trip():
    token = encode_continue(prefix="/registry/pods/", next_key="/registry/pods/ns/b\x00", revision=42)
    assert decode_continue(token, prefix="/registry/pods/") == ("/registry/pods/ns/b\x00", 42)


def test_token_is_bound_to_its_prefix():
    token = encode_continue(prefix="/registry/pods/", next_key="/registry/pods/x", revision=7)
    start, _ = decode_continue(token, prefix="/registry/secrets/")
    assert start.startswith("/registry/secrets/"), "a token never reaches outside the listed prefix"


@pytest.mark.parametrize("token", ["", "%%%", "bm90IGpzb24", "eyJ2IjoibTEifQ", "eyJ2IjoieCIsInJ2IjoxLCJzdGFydCI6IiJ9"])
def test_malformed_tokens(token: str):
    with pytest.raises(InvalidContinueError):
        decode_continue(token, prefix="/p/")


def test_next_key_must_be_inside_prefix():
    with pytest.raises(ValueError):
        encode_continue(prefix="/a/", next_key="/b/x", revision=1)
