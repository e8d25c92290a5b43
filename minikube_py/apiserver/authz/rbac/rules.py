"""Pure RBAC rule matching: does a PolicyRule cover a request, does a subject name a user?

Kubernetes pieces: plugin/pkg/auth/authorizer/rbac/rbac.go (RuleAllows, appliesTo) and
pkg/apis/rbac/v1/evaluation_helpers.go (VerbMatches, APIGroupMatches, ResourceMatches,
ResourceNameMatches, NonResourceURLMatches). A rule is compiled once into frozensets so a
check is a few set lookups. `*` matches everything in verbs, apiGroups, resources and
nonResourceURLs; a resource `*/status` matches the `status` subresource of any resource; a
nonResourceURL ending in `*` is a prefix match; an empty resourceNames matches any name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....api.rbac import service_account_username
from .. import Attributes

ALL = "*"


def _strings(value: Any) -> frozenset[str]:
    return frozenset(v for v in value if isinstance(v, str)) if isinstance(value, list) \
        else frozenset()


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled rbacv1.PolicyRule."""

    verbs: frozenset[str]
    api_groups: frozenset[str] = frozenset()
    resources: frozenset[str] = frozenset()
    resource_names: frozenset[str] = frozenset()
    urls: frozenset[str] = frozenset()
    #: nonResourceURLs ending in `*`, without it (prefix matches)
    url_prefixes: tuple[str, ...] = ()

    @classmethod
    def compile(cls, rule: Any) -> Rule:
        rule = rule if isinstance(rule, dict) else {}
        urls = _strings(rule.get("nonResourceURLs"))
        return cls(_strings(rule.get("verbs")), _strings(rule.get("apiGroups")),
                   _strings(rule.get("resources")), _strings(rule.get("resourceNames")),
                   urls, tuple(u[:-1] for u in urls if u.endswith(ALL) and u != ALL))


def verb_matches(rule: Rule, verb: str) -> bool:
    return ALL in rule.verbs or verb in rule.verbs


def api_group_matches(rule: Rule, group: str) -> bool:
    return ALL in rule.api_groups or group in rule.api_groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    """`*`, the exact `resource[/subresource]`, or `*/subresource`."""
    resources = rule.resources
    if ALL in resources or combined in resources:
        return True
    return bool(subresource) and f"*/{subresource}" in resources


def resource_name_matches(rule: Rule, name: str) -> bool:
    return not rule.resource_names or name in rule.resource_names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    if ALL in rule.urls or path in rule.urls:
        return True
    return any(path.startswith(prefix) for prefix in rule.url_prefixes)


def rule_allows(attrs: Attributes, rule: Rule) -> bool:
    """RuleAllows (VerbMatches, then APIGroupMatches, ResourceMatches and ResourceNameMatches,
    or NonResourceURLMatches). Inlined: this is the authorizer's inner loop."""
    verbs = rule.verbs
    if attrs.verb not in verbs and ALL not in verbs:
        return False
    if not attrs.is_resource:
        return non_resource_url_matches(rule, attrs.path)
    groups = rule.api_groups
    if attrs.api_group not in groups and ALL not in groups:
        return False
    resources, sub = rule.resources, attrs.subresource
    if sub:
        if (f"{attrs.resource}/{sub}" not in resources and ALL not in resources
                and f"*/{sub}" not in resources):
            return False
    elif attrs.resource not in resources and ALL not in resources:
        return False
    return not rule.resource_names or attrs.name in rule.resource_names


def subject_username(subject: dict[str, Any], binding_namespace: str) -> str | None:
    """The user name a User or ServiceAccount subject stands for (a ServiceAccount without a
    namespace is the binding's namespace's, as appliesTo defaults it); None for groups and
    for subjects that can name no one."""
    kind, name = subject.get("kind"), subject.get("name")
    if not isinstance(name, str) or not name:
        return None
    if kind == "User":
        return name
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return service_account_username(namespace, name) if isinstance(namespace, str) \
            and namespace else None
    return None


def subject_group(subject: dict[str, Any]) -> str | None:
    name = subject.get("name")
    return name if subject.get("kind") == "Group" and isinstance(name, str) and name else None


def uncovered(owner: list[Rule], requested: list[Rule]) -> list[Rule]:
    """The atoms of `requested` that `owner` does not grant (validation.Covers over
    BreakdownRule: one verb, group, resource and name — or one verb and URL — per atom)."""
    missing: list[Rule] = []
    for rule in requested:
        for atom in breakdown(rule):
            if not any(_covers_atom(r, atom) for r in owner):
                missing.append(atom)
    return missing


def breakdown(rule: Rule) -> list[Rule]:
    """BreakdownRule."""
    atoms = []
    for group in sorted(rule.api_groups):
        for resource in sorted(rule.resources):
            for verb in sorted(rule.verbs):
                names = sorted(rule.resource_names) or [None]
                for name in names:
                    atoms.append(Rule(frozenset({verb}), frozenset({group}),
                                      frozenset({resource}),
                                      frozenset({name}) if name is not None else frozenset()))
    for url in sorted(rule.urls):
        for verb in sorted(rule.verbs):
            atoms.append(Rule(frozenset({verb}), urls=frozenset({url})))
    return atoms


def _covers_atom(owner: Rule, atom: Rule) -> bool:
    """ruleCovers for one atom: the owner needs the verb, the group and the resource (or
    `*`, or `*/subresource`), and no resourceNames or this one; a URL atom needs the verb and
    a URL match."""
    (verb,) = atom.verbs
    if not verb_matches(owner, verb):
        return False
    if atom.urls:
        (url,) = atom.urls
        return non_resource_url_matches(owner, url)
    (group,), (resource,) = atom.api_groups, atom.resources
    sub = resource.split("/", 1)[1] if "/" in resource else ""
    if not (api_group_matches(owner, group) and resource_matches(owner, resource, sub)):
        return False
    return not owner.resource_names or atom.resource_names <= owner.resource_names \
        and bool(atom.resource_names)


def compact_string(rule: Rule) -> str:
    """rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`."""
    def q(values: frozenset[str]) -> str:
        return "[" + " ".join(f'"{v}"' for v in sorted(values)) + "]"

    parts = [(label, values) for label, values in (
        ("APIGroups", rule.api_groups), ("Resources", rule.resources),
        ("ResourceNames", rule.resource_names), ("NonResourceURLs", rule.urls),
        ("Verbs", rule.verbs)) if values]
    return "{" + ", ".join(f"{label}:{q(values)}" for label, values in parts) + "}"
