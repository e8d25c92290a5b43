"""Which requests a policy or a binding applies to: rules, selectors, matchPolicy.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules (the rule
Matcher: operations, apiGroups, apiVersions, `resource/subresource` with `*`, scope),
.../predicates/namespace and .../predicates/object (namespaceSelector, objectSelector) and
.../policy/matching (MatchResources: excluded rules first, then resource rules, then
`matchPolicy: Equivalent` through the other served versions of the same resource). Pure
functions over a `PolicyRequest`: the plugin fetches namespace labels and old objects, this
module only decides. Compiled selectors are cached per selector document, so a request against
an unchanged policy never parses a selector again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from ....api import errors
from ....api.labels import EVERYTHING, LabelSelector, selector_from_label_selector

Obj = dict[str, Any]


@dataclass(frozen=True)
class PolicyRequest:
    """What a policy can match on (upstream admission.Attributes, as the matchers read it)."""

    operation: str  # CREATE | UPDATE | DELETE | CONNECT
    group: str
    version: str
    resource: str
    subresource: str
    kind: str
    namespace: str
    name: str
    obj: Obj | None = None
    old_obj: Obj | None = None
    #: every version this group/resource is served in (for matchPolicy: Equivalent)
    served_versions: tuple[str, ...] = field(default=())

    @property
    def is_namespace(self) -> bool:
        """A request for a Namespace object itself (cluster-scoped, but selectable)."""
        return self.group == "" and self.resource == "namespaces"


# -- rules -------------------------------------------------------------------------------------
def _listed(values: Any, value: str) -> bool:
    return isinstance(values, list) and (value in values or "*" in values)


def _resource_listed(resources: Any, resource: str, subresource: str) -> bool:
    """`pods` matches only the main resource; `pods/status`, `pods/*`, `*/status`, `*/*`."""
    if not isinstance(resources, list):
        return False
    for entry in resources:
        if not isinstance(entry, str):
            continue
        res, _, sub = entry.partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def _scope_matches(scope: Any, req: PolicyRequest) -> bool:
    if scope in (None, "*"):
        return True
    if scope == "Namespaced":  # Namespace objects are cluster-scoped
        return not req.is_namespace and req.namespace != ""
    if scope == "Cluster":
        return req.is_namespace or req.namespace == ""
    return False


#: a `version` for rule_matches that every apiVersions list accepts
ANY_VERSION = "\x00any"


def rule_matches(rule: Any, req: PolicyRequest, version: str | None = None) -> bool:
    """One NamedRuleWithOperations against the request (in `version`, default the request's;
    ANY_VERSION: in some version)."""
    if not isinstance(rule, dict):
        return False
    names = rule.get("resourceNames")
    version = version or req.version
    return (_listed(rule.get("operations"), req.operation)
            and _listed(rule.get("apiGroups"), req.group)
            and (version == ANY_VERSION or _listed(rule.get("apiVersions"), version))
            and _resource_listed(rule.get("resources"), req.resource, req.subresource)
            and _scope_matches(rule.get("scope"), req)
            and (not names or (isinstance(names, list) and req.name in names)))


def _any_rule(rules: Any, req: PolicyRequest, version: str | None = None) -> bool:
    if not isinstance(rules, list):
        return False
    for rule in rules:
        if rule_matches(rule, req, version):
            return True
    return False


#: the other served versions of the request's resource, asked for only when needed
Versions = Callable[[], Iterable[str]]


def rules_match(match: Obj, req: PolicyRequest, versions: Versions | None = None) -> str | None:
    """The version the request matched in (its own, or with matchPolicy Equivalent another
    served version of the same resource: `versions()`, default req.served_versions), or
    None. Excluded rules win over everything; a binding without resourceRules matches every
    resource its policy does."""
    if _any_rule(match.get("excludeResourceRules"), req):
        return None
    rules = match.get("resourceRules")
    if rules is None:
        return req.version
    if _any_rule(rules, req):
        return req.version
    if (match.get("matchPolicy", "Equivalent") == "Equivalent"
            and _any_rule(rules, req, ANY_VERSION)):  # no need to look further otherwise
        for version in (versions() if versions is not None else req.served_versions):
            if version != req.version and _any_rule(rules, req, version):
                return version
    return None


# -- selectors ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1024)
def _compiled(selector_json: bytes) -> LabelSelector:
    return selector_from_label_selector(orjson.loads(selector_json))


def compile_selector(selector: Any) -> LabelSelector:
    """A metav1.LabelSelector document as a selector; absent or `{}` selects everything. A
    malformed one raises StatusError (upstream: a configuration error of the policy)."""
    if not selector:
        return EVERYTHING
    if not isinstance(selector, dict):
        raise errors.bad_request("label selector must be an object")
    return _compiled(orjson.dumps(selector, option=orjson.OPT_SORT_KEYS))


def _labels(obj: Obj | None) -> dict[str, str]:
    md = (obj or {}).get("metadata")
    labels = md.get("labels") if isinstance(md, dict) else None
    return labels if isinstance(labels, dict) else {}


def object_selector_matches(selector: Any, req: PolicyRequest) -> bool:
    """upstream object.Matcher: the new object's labels or the old object's (a DELETE has
    only the old one)."""
    compiled = compile_selector(selector)
    if compiled.empty():
        return True
    return any(compiled.matches(_labels(o)) for o in (req.obj, req.old_obj) if o is not None)


def needs_namespace_labels(selector: Any, req: PolicyRequest) -> bool:
    """Whether deciding `selector` needs the labels of the request's namespace object."""
    return bool(selector) and not req.is_namespace and req.namespace != ""


def namespace_selector_matches(selector: Any, req: PolicyRequest,
                               namespace_labels: dict[str, str] | None) -> bool:
    """upstream namespace.Matcher: cluster-scoped objects other than namespaces always match;
    a Namespace is judged by its own labels; anything else by its namespace's labels."""
    compiled = compile_selector(selector)
    if compiled.empty():
        return True
    if req.is_namespace:
        return any(compiled.matches(_labels(o)) for o in (req.obj, req.old_obj)
                   if o is not None)
    if req.namespace == "":
        return True
    return compiled.matches(namespace_labels or {})


def resources_match(match: Obj | None, req: PolicyRequest,
                    namespace_labels: dict[str, str] | None,
                    versions: Versions | None = None) -> str | None:
    """A MatchResources (a policy's matchConstraints, a binding's matchResources): the
    matched version, or None. Selectors first, as upstream's matcher does."""
    if not match:
        return req.version
    if not namespace_selector_matches(match.get("namespaceSelector"), req, namespace_labels):
        return None
    if not object_selector_matches(match.get("objectSelector"), req):
        return None
    return rules_match(match, req, versions)
