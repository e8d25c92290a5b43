"""Which webhooks a request calls: rules, scope, selectors and matchPolicy. Pure functions.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules (Matcher:
scope, operation, group, version, resource/subresource, IsExemptAdmissionConfigurationResource),
.../predicates/namespace (MatchNamespaceSelector, GetNamespaceLabels), .../predicates/object
(MatchObjectSelector) and generic/webhook.go's ShouldCallHook (exact rules first, then, with
`matchPolicy: Equivalent`, the same rules against the request's equivalent resources).

Equivalent resources here are the other served versions of the same group and resource (a
CRD's versions, which share storage): the object is sent in the matched version with only its
`apiVersion` changed, which is exactly the conversion of a CRD with `conversion: None`. We
serve no built-in kind in two groups (upstream's extensions/v1beta1 deployments), so that half
of upstream's equivalence table has nothing to map.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from ....api.labels import LabelSelector, selector_from_label_selector

Obj = dict[str, Any]

#: what upstream never sends to webhooks (a webhook could otherwise lock itself in)
EXEMPT_GROUP = "admissionregistration.k8s.io"
EXEMPT_RESOURCES = frozenset({"validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                              "validatingadmissionpolicies", "validatingadmissionpolicybindings"})


class GVR(NamedTuple):
    group: str
    version: str
    resource: str


class Request(NamedTuple):
    """The parts of a request the rules look at."""
    operation: str
    resource: GVR
    subresource: str
    namespace: str  # for namespaces themselves: the namespace's name, as upstream


def exempt(resource: GVR) -> bool:
    """Upstream IsExemptAdmissionConfigurationResource."""
    return resource.group == EXEMPT_GROUP and resource.resource in EXEMPT_RESOURCES


def _is_namespace(resource: GVR) -> bool:
    return resource.group == "" and resource.resource == "namespaces"


def _scope(rule: Mapping[str, Any], req: Request, resource: GVR) -> bool:
    scope = rule.get("scope") or "*"
    if scope == "*":
        return True
    if scope == "Namespaced":  # namespaces are cluster-scoped although they carry their name
        return not _is_namespace(resource) and req.namespace != ""
    if scope == "Cluster":
        return _is_namespace(resource) or req.namespace == ""
    return False


def _listed(values: Any, value: str) -> bool:
    values = values or ()
    return "*" in values or value in values


def _resource(rule: Mapping[str, Any], resource: str, subresource: str) -> bool:
    for item in rule.get("resources") or ():
        res, _, sub = str(item).partition("/")
        if (res == "*" or res == resource) and (sub == "*" or sub == subresource):
            return True
    return False


def rule_matches(rule: Mapping[str, Any], req: Request, resource: GVR | None = None) -> bool:
    """rules.Matcher.Matches for one rule, optionally against an equivalent `resource`."""
    resource = resource or req.resource
    return (_scope(rule, req, resource) and _listed(rule.get("operations"), req.operation)
            and _listed(rule.get("apiGroups"), resource.group)
            and _listed(rule.get("apiVersions"), resource.version)
            and _resource(rule, resource.resource, req.subresource))


def matched_resource(hook: Mapping[str, Any], req: Request,
                     equivalents: Callable[[], Iterable[GVR]] = tuple) -> GVR | None:
    """The resource the webhook is called for: the request's own when a rule matches it, else
    (matchPolicy Equivalent) the first equivalent resource a rule matches, earlier rules
    first; None when the webhook does not apply. `equivalents()` is asked only then."""
    rules = [r for r in hook.get("rules") or () if isinstance(r, Mapping)]
    if any(rule_matches(rule, req) for rule in rules):
        return req.resource
    if hook.get("matchPolicy", "Equivalent") != "Equivalent":
        return None
    others = [e for e in equivalents() if e != req.resource]
    for rule in rules:
        for equivalent in others:
            if rule_matches(rule, req, equivalent):
                return equivalent
    return None


def selector(spec: Any) -> LabelSelector:
    """A webhook's namespaceSelector/objectSelector (defaulted `{}`: everything)."""
    return selector_from_label_selector(spec if spec is not None else {})


def needs_namespace_labels(sel: LabelSelector, req: Request) -> bool:
    """MatchNamespaceSelector's early answers: a cluster-scoped request other than a namespace
    is never exempted, and an empty selector matches everything."""
    if req.namespace == "" and not _is_namespace(req.resource):
        return False
    return not sel.empty()


def namespace_labels_from_request(req: Request, obj: Obj | None) -> dict[str, str] | None:
    """GetNamespaceLabels: a namespace being created or updated is judged by the labels it is
    given (the stored one is stale); None means read the namespace `req.namespace`."""
    if _is_namespace(req.resource) and not req.subresource and \
            req.operation in ("CREATE", "UPDATE"):
        return labels_of(obj)
    return None


def labels_of(obj: Obj | None) -> dict[str, str]:
    md = (obj or {}).get("metadata")
    labels = md.get("labels") if isinstance(md, dict) else None
    return labels if isinstance(labels, dict) else {}


def object_selector_matches(sel: LabelSelector, obj: Obj | None, old: Obj | None) -> bool:
    """MatchObjectSelector: the new or the old object's labels match (a missing object never
    matches a non-empty selector)."""
    if sel.empty():
        return True
    return any(o is not None and sel.matches(labels_of(o)) for o in (obj, old))
