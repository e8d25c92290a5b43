"""--authorization-mode=ABAC: a policy file, one JSON object per line.

Kubernetes v1.0 piece: pkg/auth/authorizer/abac. Two line forms:
- v1.0's unversioned (v0) policy: `{"user":"bob","readonly":true,"resource":"pods",
  "namespace":"projectCaribou"}` with optional `group`. Converted as upstream's v0
  conversion does: a missing user and group, or `*` in either, means every authenticated user
  (group system:authenticated); a missing namespace/resource means any; apiGroup is always
  `*`; nonResourcePath is `*` only when the line names neither a namespace nor a resource —
  `{"user":"bob","resource":"pods"}` grants pods, not /metrics, /debug/pprof or /openapi.
- the later `{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy",
  "spec":{...}}`, taken literally: `*` is the wildcard, an empty field matches only empty.
Matching is upstream's `matches`: subject, then verb (a readonly policy allows only
get/list/watch), then resource attributes or (exclusively) the non-resource path, where a
trailing `*` is a prefix match. `resource` is compared with the resource only, the
subresource ignored (as upstream's resourceMatches): `"resource":"pods"` covers pods/exec,
pods/log, pods/proxy — a readonly line covers their reads only, and a WebSocket exec needs
`create` too (authz.required_checks). Blank lines and `#` comments are skipped; any other bad line
raises ValueError naming file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from ..authn import ALL_AUTHENTICATED, UserInfo
from . import Attributes

V1BETA1 = "abac.authorization.kubernetes.io/v1beta1"
_V0_FIELDS = {"user": str, "group": str, "readonly": bool, "resource": str, "namespace": str}
_SPEC_FIELDS = {**_V0_FIELDS, "apiGroup": str, "nonResourcePath": str}


@dataclass(frozen=True, slots=True)
class Policy:
    """abac.PolicySpec (the internal form both line formats convert to)."""

    user: str = ""
    group: str = ""
    readonly: bool = False
    api_group: str = ""
    resource: str = ""
    namespace: str = ""
    non_resource_path: str = ""


def _typed(obj: dict, fields: dict[str, type], where: str) -> dict:
    for key, value in obj.items():
        expected = fields.get(key)
        if expected is None:
            raise ValueError(f"{where}: unknown field {key!r}")
        if not isinstance(value, expected):
            raise ValueError(f"{where}: field {key!r} must be a {expected.__name__}")
    return obj


def parse_policy(obj: object, where: str = "policy") -> Policy:
    """One decoded policy line (either form) as a Policy."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a policy line must be a JSON object")
    if "apiVersion" in obj or "kind" in obj:
        if obj.get("apiVersion") != V1BETA1:
            raise ValueError(f"{where}: unrecognized apiVersion {obj.get('apiVersion')!r} "
                             f"(expected {V1BETA1!r})")
        if obj.get("kind") != "Policy":
            raise ValueError(f"{where}: kind must be 'Policy', got {obj.get('kind')!r}")
        extra = set(obj) - {"apiVersion", "kind", "spec"}
        if extra:
            raise ValueError(f"{where}: unknown field {sorted(extra)[0]!r}")
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            raise ValueError(f"{where}: spec must be an object")
        spec = _typed(spec, _SPEC_FIELDS, where)
        return Policy(spec.get("user", ""), spec.get("group", ""), spec.get("readonly", False),
                      spec.get("apiGroup", ""), spec.get("resource", ""),
                      spec.get("namespace", ""), spec.get("nonResourcePath", ""))
    return convert_v0(_typed(obj, _V0_FIELDS, where))


def convert_v0(v0: dict) -> Policy:
    """upstream's pkg/apis/abac/v0 conversion to the internal PolicySpec."""
    user, group = v0.get("user", ""), v0.get("group", "")
    if (not user and not group) or user == "*" or group == "*":
        user, group = "", ALL_AUTHENTICATED
    namespace, resource = v0.get("namespace", ""), v0.get("resource", "")
    return Policy(user, group, v0.get("readonly", False), "*", resource or "*", namespace or "*",
                  "" if namespace or resource else "*")


def parse_policy_lines(text: str, source: str) -> list[Policy]:
    policies = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{source} line {number}"
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{where}: invalid JSON: {exc}") from None
        policies.append(parse_policy(obj, where))
    return policies


def subject_matches(p: Policy, user: UserInfo) -> bool:
    matched = False
    if p.user:
        if p.user != "*" and p.user != user.name:
            return False
        matched = True
    if p.group:
        if p.group != "*" and p.group not in user.groups:
            return False
        matched = True
    return matched


def matches(p: Policy, a: Attributes) -> bool:
    if not subject_matches(p, a.user):
        return False
    if p.readonly and not a.readonly:
        return False
    if a.is_resource:
        return (p.namespace in ("*", a.namespace) and p.resource in ("*", a.resource)
                and p.api_group in ("*", a.api_group))
    path = p.non_resource_path
    return bool(path) and (path in ("*", a.path) or (
        path.endswith("*") and a.path.startswith(path.rstrip("*"))))


class ABACAuthorizer:
    def __init__(self, policies: list[Policy]) -> None:
        self.policies = policies

    @classmethod
    def from_file(cls, path: str | Path) -> ABACAuthorizer:
        path = Path(path)
        try:
            text = path.read_text()
        except OSError as exc:
            raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return cls(parse_policy_lines(text, str(path)))

    def authorize(self, attrs: Attributes) -> tuple[bool, str]:
        for policy in self.policies:
            if matches(policy, attrs):
                return True, ""
        return False, "No policy matched."
