"""Upstream's protobuf description of every built-in kind, loaded from package data.

Kubernetes piece: the generated.proto of every k8s.io/api group and of k8s.io/apimachinery, as
compiled into a kubectl binary, with the JSON facts of the Go struct tags (protobuf.json, written
by hack/gen_protobuf_kinds.py; its header names the source and the Apache-2.0 license). Why it
exists: the protobuf codec (api/protobuf*.py) needs, for each message, its fields' numbers, JSON
names and shapes, and for each `apiVersion`/`kind` the message that carries it.

Packages: the proto package of an API group is `k8s.io.api.<first label of the group>.<version>`
(`events.k8s.io/v1` -> `k8s.io.api.events.v1`, the legacy group "" -> `core`), with one exception
upstream made (`internal.apiserver.k8s.io` lives in `apiserverinternal`). The meta/v1 kinds
(DeleteOptions, CreateOptions, Status, ...) are registered in every group version, as upstream's
AddToGroupVersion does, so they resolve under any apiVersion.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any, NamedTuple

META = "k8s.io.apimachinery.pkg.apis.meta.v1"
_PACKAGE_EXCEPTIONS = {"internal.apiserver.k8s.io": "apiserverinternal"}


class ProtoField(NamedTuple):
    """One field of a message, as the data file gives it (see its `format` entry)."""

    number: int
    json_name: str  # "" for a Go embedded struct tagged json:",inline"
    type: str  # a scalar name or a message's full name
    repeated: bool
    is_map: bool  # a map<string, type>
    pointer: bool  # a Go pointer: present on the wire means set, even when zero
    keep_zero: bool  # no omitempty: Go's JSON writes the zero value too
    inline: bool


@cache
def _data() -> dict[str, Any]:
    text = resources.files(__package__).joinpath("protobuf.json").read_text()
    return json.loads(text)


def fields(message: str) -> list[ProtoField] | None:
    """The fields of a message by its full name (`k8s.io.api.core.v1.Pod`), None if unknown."""
    raw = _data()["messages"].get(message)
    if raw is None:
        return None
    return [ProtoField(number, name, type_, "r" in flags, "m" in flags, "p" in flags,
                       "k" in flags, "i" in flags)
            for number, name, type_, flags in raw]


def messages() -> list[str]:
    """The full names of every message the data describes."""
    return list(_data()["messages"])


def has_go_struct(message: str) -> bool:
    """False for messages whose Go type is no struct (Time, Quantity, named slices, ...)."""
    return message not in _no_go_struct()


@cache
def _no_go_struct() -> frozenset[str]:
    return frozenset(_data()["no_go_struct"])


def package(api_version: str) -> str:
    """The proto package of an apiVersion (`apps/v1` -> `k8s.io.api.apps.v1`)."""
    group, _, version = api_version.rpartition("/")
    if not group:
        return f"k8s.io.api.core.{version}"
    if group == "meta.k8s.io":  # PartialObjectMetadata(List), Table: apimachinery's own
        return f"{META.rpartition('.')[0]}.{version}"
    label = _PACKAGE_EXCEPTIONS.get(group, group.split(".")[0])
    return f"k8s.io.api.{label}.{version}"


@cache
def _kinds() -> dict[str, frozenset[str]]:
    return {pkg: frozenset(names) for pkg, names in _data()["kinds"].items()}


@cache
def kind_message(api_version: str, kind: str) -> str | None:
    """The message an object of this apiVersion and kind is encoded as, None if none."""
    pkg = package(api_version)
    if kind in _kinds().get(pkg, ()):
        return f"{pkg}.{kind}"
    if kind in _kinds().get(META, ()) and api_version:
        return f"{META}.{kind}"
    if kind == "WatchEvent":  # registered in every group version, not a TypeMeta kind
        return f"{META}.WatchEvent"
    return None


def source() -> str:
    """Where the data came from (for messages and docs)."""
    return _data()["source"]
