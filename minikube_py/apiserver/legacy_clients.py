"""What older Kubernetes components need from the API server: the `legacy/v1.20` bundle.

Kubernetes piece: none upstream — a real kube-apiserver serves only its own release's
versions. This module reads informers_v1_20.yaml (the (group, version, resource) triples
v1.20's kube-scheduler and kube-controller-manager list and watch, derived from upstream's
v1.20 source; the file says how) so that `--runtime-config legacy/v1.20=true` can turn on
exactly the removed versions those components need, and tests can check every triple.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from importlib import resources
from typing import Any, ClassVar

import yaml

GVR = tuple[str, str, str]
#: the components whose informers the file lists (leader election is listed apart)
COMPONENTS = ("kube-controller-manager", "kube-scheduler")


@cache
def _load(name: str) -> dict[str, Any]:
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    # libyaml's loader when built (10x the pure-Python one)
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def informers_v1_20() -> list[dict[str, Any]]:
    """Every informer entry of both components (group, version, resource, by, ...)."""
    data = _load("informers_v1_20.yaml")
    return [dict(entry, component=c) for c in COMPONENTS for entry in data[c]]


def gvrs_v1_20() -> frozenset[GVR]:
    """The triples v1.20's components list and watch."""
    return frozenset((e["group"], e["version"], e["resource"]) for e in informers_v1_20())


class _Bundles(Mapping[str, frozenset[GVR]]):
    """The bundle keys, each bundle read from its file only when looked up: every API
    server start consults the keys, almost none names one."""

    _LOADERS: ClassVar[dict[str, Callable[[], frozenset[GVR]]]] = {"legacy/v1.20": gvrs_v1_20}

    def __getitem__(self, key: str) -> frozenset[GVR]:
        return self._LOADERS[key]()

    def __iter__(self) -> Iterator[str]:
        return iter(self._LOADERS)

    def __len__(self) -> int:
        return len(self._LOADERS)


def bundles() -> Mapping[str, frozenset[GVR]]:
    """--runtime-config keys that switch a set of versions at once."""
    return _Bundles()
