"""The scheduling framework's contract: Status codes, CycleState, and one protocol per extension point.

Kubernetes piece: pkg/scheduler/framework/interface.go and cycle_state.go (1.31). Upstream calls
`Filter(ctx, state, pod, nodeInfo) *Status` once per node in 16 goroutines; in Python a call per
node per plugin would cost more than the decision (5000 nodes x 10 plugins). So the plugins here
keep upstream's names, extension points, statuses and messages, but Filter and Score see the
whole `NodeTable` (every node as numpy columns) and answer for all candidate rows at once:

- Filter returns its failures as `(Status, rows)` pairs: the status a failing node gets and the
  boolean mask of the rows that get it (upstream's NodeToStatusMap, column-wise). A plugin whose
  logic is per node can extend `NodeByNodeFilter` and write upstream's per-node `filter_node`.
- Score returns one int64 array aligned with the candidate rows; NormalizeScore rescales it in
  place. Upstream's per-node Score is `NodeByNodeScore`.

Everything else (PreEnqueue, QueueSort, PreFilter, PostFilter, PreScore, Reserve, Permit,
PreBind, Bind, PostBind) is per pod, as upstream, and keeps upstream's signatures minus `ctx`.
The binding-cycle points are coroutines: they do I/O. A plugin implements any subset; the
runtime (`runtime.Framework`) finds the points a plugin implements by `isinstance` against
the `runtime_checkable` protocols below, as upstream's type assertions do.

Plugins are built by a factory `(args, handle) -> plugin` registered under the plugin's name
(`registry.py`: the in-tree registry plus out-of-tree plugins from Python entry points).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ..algorithm.predicates_meta import PodMeta
    from ..nodeinfo import NodeInfo
    from ..nodetable import NodeTable

Obj = dict[str, Any]
Mask = np.ndarray  # bool, one entry per NodeTable row
Rows = np.ndarray  # int64 row numbers of the candidate nodes, ascending

#: upstream framework.MaxNodeScore / MinNodeScore / MaxTotalScore
MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1


class Code(enum.IntEnum):
    """upstream framework.Code; `str()` gives upstream's names ("UnschedulableAndUnresolvable")."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    def __str__(self) -> str:
        return _CODE_NAMES[self]


_CODE_NAMES = {
    Code.SUCCESS: "Success", Code.ERROR: "Error", Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable", Code.WAIT: "Wait",
    Code.SKIP: "Skip", Code.PENDING: "Pending",
}


@dataclass(frozen=True)
class Status:
    """upstream framework.Status: a code, the reasons (joined with ", " for the message) and the
    plugin that returned it (set by the runtime). `None` stands for Success everywhere, as a nil
    *Status does upstream."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @classmethod
    def of(cls, code: Code, *reasons: str) -> Status:
        return cls(code, tuple(reasons))

    @classmethod
    def error(cls, message: str) -> Status:
        return cls(Code.ERROR, (message,))

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, tuple(reasons))

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, tuple(reasons))

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return self if self.plugin == plugin else Status(self.code, self.reasons, plugin)

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (upstream IsRejected)."""
        return self.code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING)

    def __str__(self) -> str:
        return self.message()


def is_success(status: Status | None) -> bool:
    """upstream Status.IsSuccess: a nil status is success."""
    return status is None or status.code is Code.SUCCESS


def is_skip(status: Status | None) -> bool:
    return status is not None and status.code is Code.SKIP


class StatusError(Exception):
    """A Score or NormalizeScore that fails raises this (upstream returns a non-nil *Status
    beside the scores); the runtime turns it into the attempt's Error."""

    def __init__(self, status: Status) -> None:
        self.status = status
        super().__init__(status.message())


class CycleState:
    """upstream framework.CycleState: per-attempt data the plugins hand from one extension
    point to the next (PreFilter computes, Filter reads), under string keys. `clone()` is
    shallow per key except for values that have a `clone()` of their own (upstream StateData),
    which preemption needs to try removing victims without touching the real cycle's state."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        #: plugins whose PreFilter returned Skip: their Filter is not called this cycle
        self.skip_filter_plugins: set[str] = set()
        #: plugins whose PreScore returned Skip: their Score is not called this cycle
        self.skip_score_plugins: set[str] = set()
        #: time each plugin in this cycle (upstream ShouldRecordPluginMetrics: 10% of cycles)
        self.record_plugin_metrics = False

    def read(self, key: str) -> Any:
        """The value under `key`; KeyError as upstream's ErrNotFound."""
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {k: (v.clone() if hasattr(v, "clone") else v) for k, v in self._data.items()}
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.record_plugin_metrics = self.record_plugin_metrics
        return copy


# --- queueing (PreEnqueue, QueueSort, queueing hints) -----------------------------------------


@dataclass
class QueuedPodInfo:
    """upstream framework.QueuedPodInfo: a pending pod and its queue bookkeeping."""

    pod: Obj
    timestamp: float  # when it was (re)added to the queue; PrioritySort breaks ties with it
    attempts: int = 0
    initial_attempt_timestamp: float | None = None
    #: the plugins that rejected it last time; only events they registered for requeue it
    unschedulable_plugins: set[str] = field(default_factory=set)
    #: the PreEnqueue plugins gating it (SchedulingGates), shown in events and metrics
    gated_by: str = ""

    @property
    def priority(self) -> int:
        return int((self.pod.get("spec") or {}).get("priority") or 0)


class ActionType(enum.IntFlag):
    """upstream framework.ActionType (the cluster events a plugin can register for)."""

    ADD = 1
    DELETE = 2
    UPDATE_NODE_ALLOCATABLE = 4
    UPDATE_NODE_LABEL = 8
    UPDATE_NODE_TAINT = 16
    UPDATE_NODE_CONDITION = 32
    UPDATE_NODE_ANNOTATION = 64
    UPDATE_POD_LABEL = 128
    UPDATE_POD_SCALE_DOWN = 256
    UPDATE_POD_TOLERATIONS = 512
    UPDATE_POD_SCHEDULING_GATES_ELIMINATED = 1024
    UPDATE = (UPDATE_NODE_ALLOCATABLE | UPDATE_NODE_LABEL | UPDATE_NODE_TAINT
              | UPDATE_NODE_CONDITION | UPDATE_NODE_ANNOTATION | UPDATE_POD_LABEL
              | UPDATE_POD_SCALE_DOWN | UPDATE_POD_TOLERATIONS
              | UPDATE_POD_SCHEDULING_GATES_ELIMINATED)
    ALL = ADD | DELETE | UPDATE


@dataclass(frozen=True)
class ClusterEvent:
    """upstream framework.ClusterEvent: a resource ("Pod", "Node", "PersistentVolumeClaim",
    "CSINode", ... upstream's GVK strings) and the actions on it."""

    resource: str
    action: ActionType
    label: str = ""


class QueueingHint(enum.Enum):
    """upstream framework.QueueingHint: may this event make the pod schedulable?"""

    QUEUE_SKIP = 0
    QUEUE = 1


#: (pod, old object or None, new object or None) -> hint; raising counts as QUEUE (upstream)
QueueingHintFn = Callable[[Obj, "Obj | None", "Obj | None"], QueueingHint]


@dataclass(frozen=True)
class ClusterEventWithHint:
    event: ClusterEvent
    hint: QueueingHintFn | None = None  # None: always QUEUE


# --- the plugins ------------------------------------------------------------------------------


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has upstream's name (the one profiles and pluginConfig use)."""

    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Obj) -> Status | None: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Which cluster events may make a pod this plugin rejected schedulable again."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@dataclass(frozen=True)
class PreFilterResult:
    """upstream framework.PreFilterResult: None = all nodes; a set narrows the candidates
    (NodeAffinity for a metadata.name selector, VolumeBinding for a local PV)."""

    node_names: frozenset[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


@runtime_checkable
class PreFilterExtensions(Protocol):
    """Incremental updates of a PreFilter's cycle state when preemption (or nominated pods)
    adds or removes a pod on one node (upstream AddPod/RemovePod)."""

    def add_pod(self, state: CycleState, pod: PodMeta, pod_to_add: Obj, node: NodeInfo) -> Status | None: ...

    def remove_pod(self, state: CycleState, pod: PodMeta, pod_to_remove: Obj, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: PodMeta,
                   nodes: NodeTable) -> tuple[PreFilterResult | None, Status | None]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


#: a Filter's answer: each status with the rows (bool mask over the table) that get it;
#: rows not in any mask passed. An empty list: every row passed.
FilterFailures = list[tuple[Status, Mask]]


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        """Failures among `candidates` (rows still alive; a plugin may compute for all rows,
        the runtime only charges candidate rows)."""
        ...


@dataclass
class Diagnosis:
    """upstream framework.Diagnosis: why no node fit, for PostFilter and the FitError."""

    failures: FilterFailures = field(default_factory=list)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


@dataclass(frozen=True)
class PostFilterResult:
    nominated_node_name: str = ""


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    async def post_filter(self, state: CycleState, pod: PodMeta,
                          diagnosis: Diagnosis) -> tuple[PostFilterResult | None, Status | None]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                  rows: Rows) -> Status | None: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: PodMeta, scores: np.ndarray) -> None:
        """Rescale `scores` (int64, aligned with the scored rows) in place to 0..100."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        """One int64 score per row in `rows`; raise StatusError to fail the attempt."""
        ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Obj, node_name: str) -> Status | None: ...

    def unreserve(self, state: CycleState, pod: Obj, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Obj, node_name: str) -> tuple[Status | None, float]:
        """(status, timeout seconds): Wait parks the pod until a plugin allows or rejects it
        through the handle's waiting pod, or the timeout rejects it."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Obj, node_name: str) -> Status | None:
        """Skip hands the pod to the next bind plugin (upstream)."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    async def post_bind(self, state: CycleState, pod: Obj, node_name: str) -> None: ...


# --- what plugins get from the scheduler ------------------------------------------------------


class WaitingPod(Protocol):
    """upstream framework.WaitingPod: a pod parked by a Permit plugin."""

    def pod(self) -> Obj: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...


class Handle(Protocol):
    """upstream framework.Handle: what a plugin factory receives. Plugins read the cluster
    through the scheduler's informers and its snapshot, never by listing the API server."""

    #: the API client (DefaultBinder posts Bindings; DefaultPreemption deletes victims)
    client: Any
    #: the scheduler's shared informer factory (listers for PDBs, PVCs, Services, ...)
    informers: Any

    def snapshot(self) -> NodeTable:
        """The nodes as of this cycle (upstream SnapshotSharedLister)."""
        ...

    def node_info(self, name: str) -> NodeInfo | None: ...

    def run_filter_plugins_with_nominated_pods(self, state: CycleState, pod: PodMeta,
                                               nodes: NodeTable, candidates: Mask) -> FilterFailures:
        """Every Filter plugin on `nodes` (a snapshot, or a scratch table preemption built
        from NodeInfos with victims removed), as the scheduling cycle ran them."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]: ...

    def event(self, obj: Obj, event_type: str, reason: str, message: str) -> None:
        """Record an Event about `obj` through the scheduler's recorder."""
        ...


#: a plugin factory: (pluginConfig args — already defaulted and validated —, handle) -> plugin
PluginFactory = Callable[[Mapping[str, Any], Handle], Plugin]


class NodeByNodeFilter:
    """For plugins whose Filter is naturally per node (out-of-tree plugins, upstream-style):
    write `filter_node(state, pod, node_info) -> Status | None` and this runs it on every
    candidate row and groups the rows by status."""

    name: str = ""

    def filter_node(self, state: CycleState, pod: PodMeta, node: NodeInfo) -> Status | None:
        raise NotImplementedError

    def filter(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
               candidates: Mask) -> FilterFailures:
        grouped: dict[Status, Mask] = {}
        for row in np.flatnonzero(candidates).tolist():
            status = self.filter_node(state, pod, nodes.infos[row])
            if not is_success(status):
                assert status is not None
                grouped.setdefault(status, nodes.everywhere(False))[row] = True
        return list(grouped.items())


class NodeByNodeScore:
    """For per-node Score plugins: write `score_node(state, pod, node_info) -> int`."""

    name: str = ""

    def score_node(self, state: CycleState, pod: PodMeta, node: NodeInfo) -> int:
        raise NotImplementedError

    def score(self, state: CycleState, pod: PodMeta, nodes: NodeTable, rows: Rows) -> np.ndarray:
        return np.fromiter((self.score_node(state, pod, nodes.infos[row]) for row in rows.tolist()),
                           dtype=np.int64, count=len(rows))

    def score_extensions(self) -> ScoreExtensions | None:
        return None

