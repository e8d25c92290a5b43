"""--runtime-config: which API group versions (and resources) the API server serves.

Kubernetes piece: cmd/kube-apiserver's --runtime-config (v1.0: `api/v1=false`, `api/all=false`;
v1.2+: `group/version/resource=false`), parsed as k8s.io/apiserver's
resourceconfig.MergeAPIResourceConfigs and validated as APIEnablementOptions.Validate. Rules,
as upstream:

- the value is a comma list of `key=value`; a bare `key` means `key=true`; values are Go's
  ParseBool (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False);
- `api/all`, `api/ga`, `api/beta`, `api/alpha` switch every matching version, applied first;
- `group/version` keys come next, `group/version/resource` keys last (highest priority);
  `api/v1` (and v1.0's `api/legacy`) is the core group's `/api/v1`;
- a group this server does not have is a startup error ("unknown api groups ..."), as is a
  version the group does not have, and `api/all=false` alone (a server serving nothing).

Versions upstream removed (registry/legacy.py) are known here but off by default
(`default_off`): `group/version=true`, `api/beta=true`, `api/all=true` or a bundle key turn them
on. Bundles are our extension (`legacy/v1.20=true`: every version v1.20's scheduler and
controller manager list and watch, apiserver/legacy_clients.py); `=false` puts a bundle's
default-off versions back off. Bundles apply with the `api/...` keys, before `group/version`.

Disabling only hides: storage and the registries stay (the API server's own bootstrap still
writes the `kubernetes` service with core/v1 switched off, as upstream's does), but the paths
answer 404 and discovery no longer lists them. Unlike upstream, an unknown *resource* of a
known group version is an error too (upstream ignores it silently; a typo should not be).
Pure: no I/O, unit-tested without a server.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

GVR = tuple[str, str, str]  # (group, version, resource); group "" is the core group

_MATCHERS = {
    "api/all": lambda version: True,
    "api/ga": lambda version: re.fullmatch(r"v\d+", version) is not None,
    "api/beta": lambda version: re.fullmatch(r"v\d+beta\d+", version) is not None,
    "api/alpha": lambda version: re.fullmatch(r"v\d+alpha\d+", version) is not None,
}
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def parse_bool(key: str, value: str) -> bool:
    """Go's strconv.ParseBool, with upstream's error text; "" is true."""
    if value == "" or value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ValueError(f"invalid value of {key}: {value}, err: strconv.ParseBool: parsing "
                     f"{value!r}: invalid syntax")


def parse_pairs(text: str) -> dict[str, str]:
    """`a=b,c` -> {"a": "b", "c": ""} (cliflag.ConfigurationMap; the last one of a key wins)."""
    pairs: dict[str, str] = {}
    for item in text.split(","):
        item = item.strip()
        if item:
            key, _, value = item.partition("=")
            pairs[key.strip()] = value.strip()
    return pairs


@dataclass(frozen=True)
class ResourceConfig:
    """The served (group, version, resource) triples."""

    enabled: frozenset[GVR]

    def serves(self, group: str, version: str, resource: str) -> bool:
        return (group, version, resource) in self.enabled

    def serves_version(self, group: str, version: str) -> bool:
        return any(g == group and v == version for g, v, _ in self.enabled)


def _group_version(key: str, tokens: list[str]) -> tuple[str, str]:
    if key in ("api/v1", "api/legacy") or (len(tokens) == 3 and tokens[0] == "api"):
        return "", "v1" if tokens[1] == "legacy" else tokens[1]
    if not tokens[0] or not tokens[1]:
        raise ValueError(f"runtime-config invalid key {key}")
    return tokens[0], tokens[1]


def parse(text: str, served: Iterable[GVR], *, default_off: frozenset[GVR] = frozenset(),
          bundles: Mapping[str, frozenset[GVR]] | None = None) -> ResourceConfig:
    """The ResourceConfig of a --runtime-config value over what this server has (`served`),
    `default_off` not served unless enabled; `bundles` maps extra keys to the triples they
    switch. ValueError names the offending key, as upstream's startup errors do."""
    known = frozenset(served)
    overrides = parse_pairs(text)
    if not overrides:
        return ResourceConfig(known - default_off)
    if list(overrides) == ["api/all"] and not parse_bool("api/all", overrides["api/all"]):
        raise ValueError("invalid key with only api/all=false")
    enabled = set(known - default_off)
    for key, matches in _MATCHERS.items():  # upstream's order: all, ga, beta, alpha
        if key in overrides:
            value = overrides[key]
            if value not in ("true", "false"):
                raise ValueError(f"invalid value {key}={value}")
            selected = {gvr for gvr in known if matches(gvr[1])}
            enabled = enabled | selected if value == "true" else enabled - selected
    for key in bundles or {}:
        if key in overrides:  # a bundle is read only when named (legacy_clients: a file)
            bundle = bundles[key]  # type: ignore[index]
            if parse_bool(key, overrides[key]):
                enabled |= bundle & known
            else:
                enabled -= bundle & default_off
    versions: list[tuple[str, str, bool]] = []
    resources: list[tuple[GVR, bool]] = []
    unknown: list[str] = []
    groups = {g for g, _, _ in known}
    for key, value in overrides.items():
        if key in _MATCHERS or key in (bundles or {}):
            continue
        tokens = key.split("/")
        if len(tokens) not in (2, 3):
            raise ValueError(f"runtime-config invalid key {key}")
        group, version = _group_version(key, tokens)
        if group not in groups:
            unknown.append(tokens[0] if group else key)
            continue
        if not any(g == group and v == version for g, v, _ in known):
            raise ValueError(f"group version {group or 'core'}/{version} that has not been "
                             "registered")
        on = parse_bool(key, value)
        if len(tokens) == 2:
            versions.append((group, version, on))
            continue
        resource = tokens[2]
        if resource.lower() != resource:
            raise ValueError(f"invalid key {key}: group/version/resource and resource is always "
                             f"lowercase plural, not {resource!r}")
        if (group, version, resource) not in known:
            raise ValueError(f"invalid key {key}: {group or 'core'}/{version} has no resource "
                             f"{resource!r}")
        resources.append(((group, version, resource), on))
    if unknown:
        raise ValueError(f"unknown api groups {','.join(sorted(set(unknown)))}")
    for group, version, on in versions:
        selected = {gvr for gvr in known if gvr[0] == group and gvr[1] == version}
        enabled = enabled | selected if on else enabled - selected
    for gvr, on in resources:
        enabled = enabled | {gvr} if on else enabled - {gvr}
    return ResourceConfig(frozenset(enabled))
