"""The byte-level apiVersion helpers of registry/codec.py that let a multi-version CRD's
conversion None serve a list without decoding it."""

from __future__ import annotations

import orjson

from minikube_py.registry import codec

OBJ = {"kind": "Widget", "apiVersion": "example.com/v1",
       "metadata": {"name": "w", "uid": "u", "resourceVersion": "3"},
       "spec": {"apiVersion": "example.com/v1", "size": 1}}


def test_in_api_version_is_a_prefix_check_of_the_stored_layout():
    value = codec.encode(OBJ)
    assert codec.in_api_version(value, "example.com/v1")
    assert not codec.in_api_version(value, "example.com/v10")
    assert not codec.in_api_version(value, "example.com/v2")


def test_with_api_version_changes_only_the_top_level_api_version():
    value = codec.encode(OBJ)
    swapped = codec.with_api_version(value, "example.com/v2beta1")
    assert orjson.loads(swapped) == {**orjson.loads(value), "apiVersion": "example.com/v2beta1"}
    assert codec.in_api_version(swapped, "example.com/v2beta1")
    # bytes not written by encode() take the slow path, still right
    foreign = orjson.dumps({"metadata": {"name": "w"}, "apiVersion": "example.com/v1"})
    assert orjson.loads(codec.with_api_version(foreign, "example.com/v2"))["apiVersion"] == \
        "example.com/v2"
