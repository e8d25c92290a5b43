"""What the fit predicates read, computed once: PodMeta per pod, NodeFacts per node object.

Kubernetes piece: plugin/pkg/scheduler/algorithm/predicates/metadata.go (v1.5,
predicateMetadata: the pod's request, host ports and QoS computed once per scheduling attempt)
plus the node-side half that upstream kept in schedulercache.NodeInfo (allocatable, taints,
memory/disk pressure conditions).

Why: a pod is checked against every node (1000+), so anything that depends only on the pod —
quantities, the compiled node-affinity terms, tolerations, disk volumes — is worked out once in
`PodMeta.of`. Anything that depends only on the node object — allocatable quantities, labels,
the taints that matter, the condition flags, the zone — is worked out once per node *object*
in `compute_facts`, when the NodeTable (re)fills that node's row; the predicates then read
the table's columns, never the node object.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...api import errors, labels
from ...api.quantity import parse_quantity
from ...api.taints import (  # re-exported: the predicates import them from here
    NO_EXECUTE,
    NO_SCHEDULE,
    Taint,
    Toleration,
    pod_tolerations,
    taint_of,
    tolerates,
)
from ..nodeinfo import NodeInfo, pod_host_ports, pod_requests
from .pod_affinity import PodAffinity, pod_affinity_of
from .predicates_errors import (
    ERR_NODE_NETWORK_UNAVAILABLE,
    ERR_NODE_NOT_READY,
    ERR_NODE_OUT_OF_DISK,
)
from .predicates_volumes import Disk, pod_claims, pod_disks

if TYPE_CHECKING:  # the table imports this module to fill its rows
    from ..nodetable import Mask, NodeTable

Obj = dict[str, Any]
#: a compiled node-selector term: which rows of the table it selects
TermMatcher = Callable[["NodeTable"], "Mask"]
#: (fits, failure reasons in upstream's words) for one node; reasons empty when it fits
FitResult = tuple[bool, list[str]]
#: (reason in upstream's words, rows failing for that reason)
Failure = tuple[str, "Mask"]
#: a fit predicate: pure; answers for every row of the table at once with the reasons it
#: fails and where (an empty list: the pod fits everywhere as far as it is concerned)
Predicate = Callable[["PodMeta", "NodeTable"], list[Failure]]

PREFER_NO_SCHEDULE = "PreferNoSchedule"
#: the taint node.spec.unschedulable stands for (upstream TaintNodeUnschedulable)
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
_NO_LABELS: Mapping[str, str] = {}
#: node-selector operators (v1.NodeSelectorOperator) -> label selector operators
NODE_SELECTOR_OPERATORS = {
    "In": labels.Operator.IN, "NotIn": labels.Operator.NOT_IN,
    "Exists": labels.Operator.EXISTS, "DoesNotExist": labels.Operator.DOES_NOT_EXIST,
    "Gt": labels.Operator.GREATER_THAN, "Lt": labels.Operator.LESS_THAN,
}
_QOS_RESOURCES = ("cpu", "memory")


# ---------------------------------------------------------------------------------------------
# Pod side


@dataclass(frozen=True, slots=True)
class PodMeta:
    """Everything the predicates need from one pod (upstream predicateMetadata)."""

    pod: Obj
    name: str
    namespace: str
    labels: Mapping[str, str]
    node_name: str  # spec.nodeName, for HostName
    milli_cpu: int
    memory: int
    zero_request: bool
    best_effort: bool
    host_ports: tuple[int, ...]
    node_selector: tuple[tuple[str, str], ...]
    #: compiled required node-affinity terms (ORed); None = no requirement, () = matches nothing
    node_affinity: tuple[TermMatcher, ...] | None
    tolerations: tuple[Toleration, ...]
    tolerates_unschedulable: bool
    disks: tuple[Disk, ...]
    #: spec.affinity.podAffinity/podAntiAffinity compiled (None: the pod has neither)
    pod_affinity: PodAffinity | None = None
    #: (volume name, claim name, read-only) of each persistentVolumeClaim volume
    claims: tuple[tuple[str, str, bool], ...] = ()

    @classmethod
    def of(cls, pod: Obj) -> PodMeta:
        md = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        requests = pod_requests(pod)
        tolerations = pod_tolerations(spec)
        return cls(
            pod=pod,
            name=md.get("name", ""),
            namespace=md.get("namespace", ""),
            labels=md.get("labels") or _NO_LABELS,
            node_name=spec.get("nodeName") or "",
            milli_cpu=requests.milli_cpu,
            memory=requests.memory,
            zero_request=requests.milli_cpu == 0 and requests.memory == 0,
            best_effort=_best_effort(spec),
            host_ports=tuple(dict.fromkeys(pod_host_ports(pod))),
            node_selector=tuple((spec.get("nodeSelector") or {}).items()),
            node_affinity=_required_node_affinity(spec),
            tolerations=tolerations,
            tolerates_unschedulable=any(
                tolerates(t, (TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)) for t in tolerations
            ),
            disks=pod_disks(pod),
            pod_affinity=pod_affinity_of(pod),
            claims=pod_claims(pod),
        )


def _positive(quantity: Any) -> bool:
    try:
        return parse_quantity(quantity) > 0
    except (ValueError, TypeError):
        return False


def _best_effort(spec: Obj) -> bool:
    """Upstream qos.GetPodQOS == BestEffort: no container (init containers included) requests
    or limits any cpu or memory."""
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        resources = c.get("resources") or {}
        for part in (resources.get("requests") or {}, resources.get("limits") or {}):
            if any(_positive(part[r]) for r in _QOS_RESOURCES if r in part):
                return False
    return True


def _required_node_affinity(spec: Obj) -> tuple[TermMatcher, ...] | None:
    """spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution compiled to
    one matcher per usable term. An empty or invalid term matches nothing, so it is dropped
    (upstream MatchNodeSelectorTerms `continue`s past it)."""
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required is None:
        return None
    terms = (compile_term(t) for t in required.get("nodeSelectorTerms") or () if t)
    return tuple(t for t in terms if t is not None)


def compile_term(term: Obj) -> TermMatcher | None:
    """A NodeSelectorTerm (matchExpressions over labels, matchFields over metadata.name,
    AND-ed) compiled to a table matcher; None when it can select nothing (empty or invalid)."""
    expressions = term.get("matchExpressions") or ()
    match_fields = term.get("matchFields") or ()
    if not expressions and not match_fields:
        return None
    try:
        selector = labels.LabelSelector(_label_requirement(e) for e in expressions)
        fields = tuple(_field_requirement(f) for f in match_fields)
    except (errors.StatusError, ValueError, TypeError, AttributeError):
        return None  # upstream: a selector that does not parse is "regarded as not match"

    def match(nodes: NodeTable) -> Mask:
        rows = selector_mask(nodes, selector)
        for key, positive, value in fields:  # key is metadata.name, the only field allowed
            named = nodes.name_id == nodes.strings.lookup(value)
            rows &= named if positive else ~named
        return rows

    return match


def selector_mask(nodes: NodeTable, selector: labels.LabelSelector) -> Mask:
    """Rows whose node labels `selector` matches: each requirement is asked once per distinct
    value of its label key (a handful even on thousands of nodes), then broadcast."""
    if not selector.requirements:
        return nodes.everywhere(selector.matches({}))
    rows = nodes.everywhere()
    for requirement in selector.requirements:
        key, matches = requirement.key, requirement.matches
        rows &= nodes.per_value(nodes.label(key), nodes.strings.values,
                                lambda v, key=key, matches=matches:
                                matches(_NO_LABELS if v is None else {key: v}))
    return rows


def _label_requirement(expr: Obj) -> labels.Requirement:
    """NodeSelectorRequirement -> label requirement (upstream NodeSelectorRequirementsAsSelector,
    which also accepts Gt/Lt over integer label values)."""
    op = NODE_SELECTOR_OPERATORS.get(expr.get("operator"))
    if op is None:
        raise ValueError(f"{expr.get('operator')!r} is not a valid node selector operator")
    return labels.new_requirement(expr.get("key") or "", op, expr.get("values") or ())


def _field_requirement(expr: Obj) -> tuple[str, bool, str]:
    """matchFields entry -> (field, wants equal, value); upstream allows In/NotIn with exactly
    one value (NodeSelectorRequirementsAsFieldSelector)."""
    values = expr.get("values") or ()
    if expr.get("operator") not in ("In", "NotIn") or len(values) != 1:
        raise ValueError("matchFields need In or NotIn with exactly one value")
    return expr.get("key") or "", expr["operator"] == "In", values[0]


# ---------------------------------------------------------------------------------------------
# Node side


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """What the predicates and priorities need from one node object (one NodeTable row)."""

    name: str
    labels: Mapping[str, str]
    milli_cpu: int
    memory: int
    max_pods: int
    taints: tuple[Taint, ...]  # only NoSchedule / NoExecute: the ones fit predicates enforce
    prefer_taints: tuple[Taint, ...]  # PreferNoSchedule: for the TaintToleration priority
    unschedulable: bool
    condition_reasons: tuple[str, ...]  # CheckNodeCondition's failures, precomputed
    memory_pressure: bool
    disk_pressure: bool
    zone: str  # region/zone key for spreading ("" without zone labels)


ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")
REGION_LABELS = ("topology.kubernetes.io/region", "failure-domain.beta.kubernetes.io/region")


def zone_key(node: Obj | None) -> str:
    """upstream utilnode.GetZoneKey: region and zone labels joined, "" when neither is set
    (the topology.kubernetes.io labels first, then the failure-domain.beta ones, as v1.17+)."""
    node_labels = ((node or {}).get("metadata") or {}).get("labels") or _NO_LABELS
    region = next((node_labels[k] for k in REGION_LABELS if k in node_labels), "")
    zone = next((node_labels[k] for k in ZONE_LABELS if k in node_labels), "")
    return f"{region}:\x00:{zone}" if region or zone else ""


def compute_facts(info: NodeInfo) -> NodeFacts:
    """NodeFacts of `info.node` (which must exist), remembered on the NodeInfo for that node
    object (copies of it share the answer)."""
    node = info.node
    assert node is not None
    memo = info.facts_memo
    if memo is not None and memo[0] is node:
        return memo[1]
    facts = _compute_facts(info, node)
    info.facts_memo = (node, facts)
    return facts


def _compute_facts(info: NodeInfo, node: Obj) -> NodeFacts:
    md = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = {c.get("type"): c.get("status")
              for c in (node.get("status") or {}).get("conditions") or () if isinstance(c, dict)}
    alloc, max_pods = info.allocatable()
    taints = [taint_of(t) for t in spec.get("taints") or () if isinstance(t, dict)]
    return NodeFacts(
        name=md.get("name", ""),
        labels=md.get("labels") or _NO_LABELS,
        milli_cpu=alloc.milli_cpu,
        memory=alloc.memory,
        max_pods=max_pods,
        taints=tuple(t for t in taints if t[2] in (NO_SCHEDULE, NO_EXECUTE)),
        prefer_taints=tuple(t for t in taints if t[2] == PREFER_NO_SCHEDULE),
        unschedulable=bool(spec.get("unschedulable")),
        condition_reasons=_condition_reasons(status),
        memory_pressure=status.get("MemoryPressure") == "True",
        disk_pressure=status.get("DiskPressure") == "True",
        zone=zone_key(node),
    )


#: CheckNodeCondition's reasons, in the order it reports them
CONDITION_REASONS = (ERR_NODE_NOT_READY, ERR_NODE_OUT_OF_DISK, ERR_NODE_NETWORK_UNAVAILABLE)


def _condition_reasons(status: Mapping[str, Any]) -> tuple[str, ...]:
    """Upstream CheckNodeConditionPredicate: only conditions the node reports are judged —
    Ready must be True, OutOfDisk and NetworkUnavailable must be False."""
    reasons = []
    if "Ready" in status and status["Ready"] != "True":
        reasons.append(ERR_NODE_NOT_READY)
    if "OutOfDisk" in status and status["OutOfDisk"] != "False":
        reasons.append(ERR_NODE_OUT_OF_DISK)
    if "NetworkUnavailable" in status and status["NetworkUnavailable"] != "False":
        reasons.append(ERR_NODE_NETWORK_UNAVAILABLE)
    return tuple(reasons)
