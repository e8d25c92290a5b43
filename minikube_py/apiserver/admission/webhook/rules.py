"""Which webhooks a request calls: rules, scope, selectors and matchPolicy. Pure functions.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/rules (Matcher,
IsExemptAdmissionConfigurationResource), .../predicates/namespace (MatchNamespaceSelector,
GetNamespaceLabels), .../predicates/object (MatchObjectSelector) and generic/webhook.go's
ShouldCallHook (exact rules first, then, with `matchPolicy: Equivalent`, the same rules
against the request's equivalent resources). The rule matcher itself (operations, groups,
versions, `resource/subresource` with `*`, scope) is the one admission policies use
(policy/matching.py), as upstream's policies reuse the webhooks' predicates.

Equivalent resources here are the other served versions of the same group and resource (a
CRD's versions, which share storage): the object is sent converted to the matched version by
the CRD's own converter (attributes.py). We serve no built-in kind in two groups (upstream's
extensions/v1beta1 deployments), so that half of upstream's equivalence table has nothing to
map.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from ....api.labels import LabelSelector, selector_from_label_selector
from ..policy.matching import PolicyRequest, rules_match

Obj = dict[str, Any]

#: what upstream never sends to webhooks (a webhook could otherwise lock itself in)
EXEMPT_GROUP = "admissionregistration.k8s.io"
EXEMPT_RESOURCES = frozenset({"validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                              "validatingadmissionpolicies", "validatingadmissionpolicybindings"})


class GVR(NamedTuple):
    group: str
    version: str
    resource: str


def exempt(resource: GVR) -> bool:
    """Upstream IsExemptAdmissionConfigurationResource."""
    return resource.group == EXEMPT_GROUP and resource.resource in EXEMPT_RESOURCES


def matched_resource(hook: Mapping[str, Any], req: PolicyRequest,
                     versions: Callable[[], Iterable[str]] = tuple) -> GVR | None:
    """The resource the webhook is called for: the request's own when a rule matches it, else
    (matchPolicy Equivalent) the first other served version (`versions()`, asked only then)
    a rule matches; None when the webhook does not apply (a webhook without rules never
    does)."""
    version = rules_match({"resourceRules": list(hook.get("rules") or ()),
                           "matchPolicy": hook.get("matchPolicy", "Equivalent")}, req, versions)
    return None if version is None else GVR(req.group, version, req.resource)


def selector(spec: Any) -> LabelSelector:
    """A webhook's namespaceSelector/objectSelector (defaulted `{}`: everything)."""
    return selector_from_label_selector(spec if spec is not None else {})


def needs_namespace_labels(sel: LabelSelector, req: PolicyRequest) -> bool:
    """MatchNamespaceSelector's early answers: a cluster-scoped request other than a namespace
    is never exempted, and an empty selector matches everything."""
    if req.namespace == "" and not req.is_namespace:
        return False
    return not sel.empty()


def namespace_labels_from_request(req: PolicyRequest, obj: Obj | None) -> dict[str, str] | None:
    """GetNamespaceLabels: a namespace being created or updated is judged by the labels it is
    given (the stored one is stale); None means read the namespace `req.namespace`."""
    if req.is_namespace and not req.subresource and req.operation in ("CREATE", "UPDATE"):
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
