"""The configuration's `extenders:` entries as the scheduler's existing HTTP extender configs.

Kubernetes piece: k8s.io/kube-scheduler/config/v1 Extender (urlPrefix, filterVerb,
prioritizeVerb, weight, enableHTTPS, httpTimeout as a Go duration, ...) converted to what
scheduler.New hands NewHTTPExtender. The scheduler already runs v1.5's HTTPExtender
(scheduler/extender.py) from a Policy file's extenders; a KubeSchedulerConfiguration's entries
become the same `factory.ExtenderConfig`, so there is one extender client. The v1 file spells
`enableHTTPS` and writes `httpTimeout` as "30s" where the Policy file had `enableHttps` and
nanoseconds, hence this small conversion instead of the Policy parser.

Fields our HTTPExtender does not act on (preemptVerb, bindVerb, nodeCacheCapable,
managedResources, ignorable, tlsConfig) are validated and shown on /configz but not used;
`unsupported_fields` names them so the caller can log it. Pure.
"""

from __future__ import annotations

from typing import Any

from ....api.protobuf_tables import parse_go_duration
from ...extender import DEFAULT_EXTENDER_TIMEOUT
from ...factory import ExtenderConfig

Obj = dict[str, Any]

UNSUPPORTED = ("preemptVerb", "bindVerb", "nodeCacheCapable", "managedResources", "ignorable",
               "tlsConfig")


def to_extender_config(entry: Obj) -> ExtenderConfig:
    """One validated v1 Extender as the HTTP extender's config (a zero timeout means
    upstream's DefaultExtenderTimeout, 5 s)."""
    timeout = parse_go_duration(entry.get("httpTimeout")) / 1e9
    return ExtenderConfig(
        url_prefix=entry.get("urlPrefix") or "",
        filter_verb=entry.get("filterVerb") or "",
        prioritize_verb=entry.get("prioritizeVerb") or "",
        weight=int(entry.get("weight") or 0),
        enable_https=bool(entry.get("enableHTTPS")),
        http_timeout=timeout if timeout > 0 else DEFAULT_EXTENDER_TIMEOUT,
    )


def extender_configs(entries: list[Obj]) -> list[ExtenderConfig]:
    return [to_extender_config(e) for e in entries]


def unsupported_fields(entry: Obj) -> list[str]:
    """The fields of `entry` set to something our HTTPExtender ignores."""
    return [name for name in UNSUPPORTED if entry.get(name)]
