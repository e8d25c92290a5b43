"""The framework runtime: one profile's plugins, instantiated once, run at each extension point.

Kubernetes piece: pkg/scheduler/framework/runtime/framework.go (frameworkImpl, 1.31). NewFramework
instantiates every plugin a profile enables (`factory(args, handle)`), sorts them into the
extension points they are enabled at (checking each implements that point), fixes the Score
weights (0 means 1; the total must not overflow) and requires exactly one QueueSort and at
least one Bind plugin. The Run* methods keep upstream's order, Skip handling, status codes and
error texts (`running PreFilter plugin "X": ...`).

The one deliberate difference is the shape of Filter and Score (see interface.py): a plugin
answers for all candidate rows of the NodeTable at once, so `run_filter_plugins` hands each
plugin only the rows still alive (a row that failed one plugin is not passed to later
plugins — upstream's per-node early return) and records, per failing row, the first status
it got. Score returns one array per plugin; normalisation and weights are array operations.

Plugins are user code: one that raises is treated as if it had returned an Error status (the
attempt fails with the plugin's message), never as a crash of the scheduling loop.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import structlog

from .config.types import Profile
from .interface import (
    MAX_NODE_SCORE,
    MAX_TOTAL_SCORE,
    MIN_NODE_SCORE,
    BindPlugin,
    ClusterEventWithHint,
    Code,
    CycleState,
    EnqueueExtensions,
    FilterFailures,
    FilterPlugin,
    Handle,
    Mask,
    PermitPlugin,
    Plugin,
    PluginFactory,
    PostBindPlugin,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueuedPodInfo,
    QueueSortPlugin,
    ReservePlugin,
    Rows,
    ScorePlugin,
    Status,
    StatusError,
    is_success,
)
from .metrics import FrameworkMetrics
from .waiting_pods import MAX_PERMIT_TIMEOUT, WaitingPod, WaitingPodsMap, pod_uid

if TYPE_CHECKING:
    from ..algorithm.predicates_meta import PodMeta
    from ..nodeinfo import NodeInfo
    from ..nodetable import NodeTable
    from .interface import Diagnosis

log = structlog.get_logger(component="scheduler")
Obj = dict[str, Any]

#: extension point (config key) -> (protocol, upstream's interface name), in upstream's
#: getExtensionPoints order (the order configuration errors are found in)
EXTENSION_POINTS: dict[str, tuple[type, str]] = {
    "preFilter": (PreFilterPlugin, "PreFilterPlugin"),
    "filter": (FilterPlugin, "FilterPlugin"),
    "postFilter": (PostFilterPlugin, "PostFilterPlugin"),
    "reserve": (ReservePlugin, "ReservePlugin"),
    "preScore": (PreScorePlugin, "PreScorePlugin"),
    "score": (ScorePlugin, "ScorePlugin"),
    "preBind": (PreBindPlugin, "PreBindPlugin"),
    "bind": (BindPlugin, "BindPlugin"),
    "postBind": (PostBindPlugin, "PostBindPlugin"),
    "permit": (PermitPlugin, "PermitPlugin"),
    "preEnqueue": (PreEnqueuePlugin, "PreEnqueuePlugin"),
    "queueSort": (QueueSortPlugin, "QueueSortPlugin"),
}
#: the plugins whose rejections can be undone by cluster events (upstream
#: shouldHaveEnqueueExtensions)
_REQUEUEABLE = (PreEnqueuePlugin, PreFilterPlugin, FilterPlugin, ReservePlugin, PermitPlugin)
_SEVERITY = {Code.ERROR: 3, Code.UNSCHEDULABLE_AND_UNRESOLVABLE: 2, Code.UNSCHEDULABLE: 1,
             Code.PENDING: 1}


class FrameworkError(ValueError):
    """A profile the runtime cannot run (upstream NewFramework's error)."""


def _code(status: Status | None) -> str:
    return "Success" if status is None else str(status.code)


def _raised(exc: BaseException) -> Status:
    return Status.error(str(exc) or repr(exc))


@dataclass
class ScoreResult:
    """upstream []NodePluginScores, column-wise: `normalized[i]` is plugin `plugins[i]`'s
    normalised score per scored row, `weights[i]` its weight; `totals` the weighted sums."""

    plugins: list[str]
    weights: np.ndarray  # int64, one per plugin
    normalized: np.ndarray  # int64, plugins x rows
    totals: np.ndarray  # int64, one per row


class Framework:
    """upstream frameworkImpl for one profile."""

    def __init__(self, profile: Profile, registry: Mapping[str, PluginFactory], handle: Handle,
                 *, waiting_pods: WaitingPodsMap | None = None,
                 metrics: FrameworkMetrics | None = None) -> None:
        """`handle` is what factories receive (handle.FrameworkHandle, bound to this
        framework through its `bind_framework`, if it has one, before any factory runs)."""
        self.profile = profile
        self.profile_name = profile.scheduler_name
        self.percentage_of_nodes_to_score = profile.percentage_of_nodes_to_score
        self.handle = handle
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPodsMap()
        self.metrics = metrics or FrameworkMetrics.instance()
        binder = getattr(handle, "bind_framework", None)
        if binder is not None:
            binder(self)
        self.plugins: dict[str, Plugin] = {}
        for point in EXTENSION_POINTS:
            for ref in profile.enabled(point):
                if ref.name in self.plugins or ref.name not in registry:
                    continue
                try:
                    self.plugins[ref.name] = registry[ref.name](profile.args(ref.name), handle)
                except Exception as exc:
                    raise FrameworkError(f"initializing plugin {ref.name!r}: {exc}") from exc
        self._points: dict[str, list[Any]] = {}
        for point, (protocol, interface) in EXTENSION_POINTS.items():
            chosen: list[Any] = []
            seen: set[str] = set()
            for ref in profile.enabled(point):
                plugin = self.plugins.get(ref.name)
                if plugin is None:
                    raise FrameworkError(f'{interface} "{ref.name}" does not exist')
                if not isinstance(plugin, protocol):
                    raise FrameworkError(f'plugin "{ref.name}" does not extend {interface} plugin')
                if ref.name in seen:
                    raise FrameworkError(f'plugin "{ref.name}" already registered as '
                                         f'"{interface}"')
                seen.add(ref.name)
                chosen.append(plugin)
            self._points[point] = chosen
        self.pre_enqueue_plugins: list[PreEnqueuePlugin] = self._points["preEnqueue"]
        self.queue_sort_plugins: list[QueueSortPlugin] = self._points["queueSort"]
        self.pre_filter_plugins: list[PreFilterPlugin] = self._points["preFilter"]
        self.filter_plugins: list[FilterPlugin] = self._points["filter"]
        self.post_filter_plugins: list[PostFilterPlugin] = self._points["postFilter"]
        self.pre_score_plugins: list[PreScorePlugin] = self._points["preScore"]
        self.score_plugins: list[ScorePlugin] = self._points["score"]
        self.reserve_plugins: list[ReservePlugin] = self._points["reserve"]
        self.permit_plugins: list[PermitPlugin] = self._points["permit"]
        self.pre_bind_plugins: list[PreBindPlugin] = self._points["preBind"]
        self.bind_plugins: list[BindPlugin] = self._points["bind"]
        self.post_bind_plugins: list[PostBindPlugin] = self._points["postBind"]
        if len(self.queue_sort_plugins) != 1:
            raise FrameworkError(
                f"only one queue sort plugin required for profile with scheduler name "
                f'"{self.profile_name}", but got {len(self.queue_sort_plugins)}')
        if not self.bind_plugins:
            raise FrameworkError(f"at least one bind plugin is needed for profile with "
                                 f'scheduler name "{self.profile_name}"')
        self.score_weights = self._score_weights()

    def _score_weights(self) -> dict[str, int]:
        """upstream getScoreWeights: weight 0 means 1; the largest total must fit int64."""
        weights: dict[str, int] = {}
        total = 0
        for ref in self.profile.enabled("score"):
            weight = ref.weight or 1
            if weight * MAX_NODE_SCORE > MAX_TOTAL_SCORE - total:
                raise FrameworkError("total score of Score plugins could overflow")
            weights[ref.name] = weight
            total += weight * MAX_NODE_SCORE
        return weights

    # -- bookkeeping ------------------------------------------------------------------------
    def _point_done(self, point: str, status: Status | None, started: float) -> None:
        self.metrics.observe_point(point, _code(status), self.profile_name,
                                   time.perf_counter() - started)

    def _plugin_done(self, state: CycleState, plugin: str, point: str, status: Status | None,
                     started: float) -> None:
        if state.record_plugin_metrics:
            self.metrics.observe_plugin(plugin, point, _code(status), time.perf_counter() - started)

    def list_plugins(self) -> dict[str, list[dict[str, Any]]]:
        """upstream ListPlugins: the enabled plugins per extension point (score with weight)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for point, plugins in self._points.items():
            if plugins:
                out[point] = [{"name": p.name, **({"weight": self.score_weights[p.name]}
                                                  if point == "score" else {})} for p in plugins]
        return out

    def has_filter_plugins(self) -> bool:
        return bool(self.filter_plugins)

    def has_post_filter_plugins(self) -> bool:
        return bool(self.post_filter_plugins)

    def has_score_plugins(self) -> bool:
        return bool(self.score_plugins)

    # -- queueing ---------------------------------------------------------------------------
    def queue_sort_less(self) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
        """upstream QueueSortFunc: the one QueueSort plugin's Less."""
        return self.queue_sort_plugins[0].less

    def run_pre_enqueue_plugins(self, pod: Obj) -> Status | None:
        """The first PreEnqueue plugin that does not answer Success gates the pod (upstream
        PriorityQueue.runPreEnqueuePlugins); its status carries the plugin's name."""
        for plugin in self.pre_enqueue_plugins:
            try:
                status = plugin.pre_enqueue(pod)
            except Exception as exc:  # noqa: BLE001
                status = _raised(exc)
            if not is_success(status):
                assert status is not None
                return status.with_plugin(plugin.name)
        return None

    def events_to_register(self) -> dict[str, list[ClusterEventWithHint] | None]:
        """upstream EnqueueExtensions: per plugin that can reject a pod, the cluster events
        that may make it schedulable again; None = every event (a plugin that does not say,
        upstream's defaultEnqueueExtension)."""
        out: dict[str, list[ClusterEventWithHint] | None] = {}
        for name, plugin in self.plugins.items():
            if not isinstance(plugin, _REQUEUEABLE):
                continue
            out[name] = plugin.events_to_register() if isinstance(plugin, EnqueueExtensions) \
                else None
        return out

    # -- scheduling cycle -------------------------------------------------------------------
    def run_pre_filter_plugins(self, state: CycleState, pod: PodMeta, nodes: NodeTable
                               ) -> tuple[PreFilterResult | None, Status | None, set[str]]:
        """upstream RunPreFilterPlugins: Skip marks the plugin's Filter skipped; Unschedulable
        is remembered and the others still run (preemption needs their state);
        UnschedulableAndUnresolvable stops at once; anything else is an Error. Results merge
        (intersection); an empty intersection rejects every node."""
        started = time.perf_counter()
        skipped: set[str] = set()
        result: PreFilterResult | None = None
        with_nodes: set[str] = set()
        returned: Status | None = None
        try:
            for plugin in self.pre_filter_plugins:
                begun = time.perf_counter()
                try:
                    answer, status = plugin.pre_filter(state, pod, nodes)
                except Exception as exc:  # noqa: BLE001
                    answer, status = None, _raised(exc)
                self._plugin_done(state, plugin.name, "PreFilter", status, begun)
                if status is not None and status.code is Code.SKIP:
                    skipped.add(plugin.name)
                    continue
                if not is_success(status):
                    assert status is not None
                    status = status.with_plugin(plugin.name)
                    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                        returned = status
                        return None, status, set()
                    if status.code is Code.UNSCHEDULABLE:
                        returned = status
                        continue
                    returned = Status(Code.ERROR, ((f'running PreFilter plugin "{plugin.name}": '
                                                   f"{status.message()}"),), plugin.name)
                    return None, returned, set()
                if answer is not None and not answer.all_nodes():
                    with_nodes.add(plugin.name)
                result = answer if result is None else result.merge(answer)
                if result is not None and not result.all_nodes() and not result.node_names:
                    names = sorted(with_nodes)
                    message = (f"node(s) didn't satisfy plugin {names[0]}" if len(names) == 1
                               else f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] "
                                    "simultaneously")
                    returned = Status.unresolvable(message)
                    return result, returned, with_nodes
            return result, returned, with_nodes
        finally:
            state.skip_filter_plugins = skipped
            self._point_done("PreFilter", returned, started)

    def run_pre_filter_extension_add_pod(self, state: CycleState, pod: PodMeta, pod_to_add: Obj,
                                         node: NodeInfo) -> Status | None:
        """upstream RunPreFilterExtensionAddPod (nominated pods, preemption's dry runs)."""
        return self._pre_filter_extension(state, pod, pod_to_add, node, "AddPod")

    def run_pre_filter_extension_remove_pod(self, state: CycleState, pod: PodMeta,
                                            pod_to_remove: Obj, node: NodeInfo) -> Status | None:
        """upstream RunPreFilterExtensionRemovePod."""
        return self._pre_filter_extension(state, pod, pod_to_remove, node, "RemovePod")

    def _pre_filter_extension(self, state: CycleState, pod: PodMeta, other: Obj, node: NodeInfo,
                              operation: str) -> Status | None:
        for plugin in self.pre_filter_plugins:
            extensions = plugin.pre_filter_extensions()
            if extensions is None or plugin.name in state.skip_filter_plugins:
                continue
            begun = time.perf_counter()
            try:
                status = (extensions.add_pod if operation == "AddPod"
                          else extensions.remove_pod)(state, pod, other, node)
            except Exception as exc:  # noqa: BLE001
                status = _raised(exc)
            self._plugin_done(state, plugin.name, f"PreFilterExtension{operation}", status, begun)
            if not is_success(status):
                assert status is not None
                return Status.error(f'running {operation} on PreFilter plugin "{plugin.name}": '
                                    f"{status.message()}")
        return None

    def run_filter_plugins(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                           candidates: Mask) -> FilterFailures:
        """upstream RunFilterPlugins over every candidate row at once. Each plugin sees only
        the rows no earlier plugin rejected; a failing row keeps the first status it got
        (with the plugin's name set). A status that is not a rejection becomes an Error
        `running "X" filter plugin: ...` — the caller aborts the attempt on those."""
        alive = candidates.copy()
        failures: FilterFailures = []
        any_alive = bool(alive.any())
        for plugin in self.filter_plugins:
            if not any_alive:
                break
            if plugin.name in state.skip_filter_plugins:
                continue
            begun = time.perf_counter()
            try:
                answer = plugin.filter(state, pod, nodes, alive)
            except Exception as exc:  # noqa: BLE001
                answer = [(_raised(exc), alive.copy())]
            worst: Status | None = None
            for status, mask in answer:
                if is_success(status):
                    continue
                rows = mask & alive
                if not rows.any():
                    continue
                if not status.is_rejected():
                    status = Status.error(f'running "{plugin.name}" filter plugin: '
                                          f"{status.message()}")
                status = status.with_plugin(plugin.name)
                failures.append((status, rows))
                alive &= ~rows
                any_alive = bool(alive.any())  # re-checked only when rows were removed
                if worst is None or _SEVERITY.get(status.code, 0) > _SEVERITY.get(worst.code, 0):
                    worst = status
            # one call answers for many nodes: its status label is the worst it returned
            self._plugin_done(state, plugin.name, "Filter", worst, begun)
        return failures

    async def run_post_filter_plugins(self, state: CycleState, pod: PodMeta, diagnosis: Diagnosis
                                      ) -> tuple[PostFilterResult | None, Status]:
        """upstream RunPostFilterPlugins: the first Success, UnschedulableAndUnresolvable or
        Error ends the run; Unschedulable answers accumulate their reasons."""
        started = time.perf_counter()
        outcome: Status | None = None
        try:
            result: PostFilterResult | None = None
            reasons: list[str] = []
            rejector = ""
            for plugin in self.post_filter_plugins:
                begun = time.perf_counter()
                try:
                    answer, status = await plugin.post_filter(state, pod, diagnosis)
                except Exception as exc:  # noqa: BLE001
                    answer, status = None, _raised(exc)
                self._plugin_done(state, plugin.name, "PostFilter", status, begun)
                if is_success(status):
                    outcome = Status(Code.SUCCESS, (), plugin.name)
                    return answer, outcome
                assert status is not None
                if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                    outcome = status.with_plugin(plugin.name)
                    return answer, outcome
                if not status.is_rejected():
                    outcome = Status(Code.ERROR, (status.message(),), plugin.name)
                    return None, outcome
                if answer is not None:  # upstream: a result other than ModeNoop overrides
                    result = answer
                reasons.extend(status.reasons)
                rejector = rejector or plugin.name
            outcome = Status(Code.UNSCHEDULABLE, tuple(reasons), rejector)
            return result, outcome
        finally:
            self._point_done("PostFilter", outcome, started)

    def run_pre_score_plugins(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                              rows: Rows) -> Status | None:
        """upstream RunPreScorePlugins: Skip marks the plugin's Score skipped; any other
        failure is an Error `running PreScore plugin "X": ...`."""
        started = time.perf_counter()
        skipped: set[str] = set()
        outcome: Status | None = None
        try:
            for plugin in self.pre_score_plugins:
                begun = time.perf_counter()
                try:
                    status = plugin.pre_score(state, pod, nodes, rows)
                except Exception as exc:  # noqa: BLE001
                    status = _raised(exc)
                self._plugin_done(state, plugin.name, "PreScore", status, begun)
                if status is not None and status.code is Code.SKIP:
                    skipped.add(plugin.name)
                    continue
                if not is_success(status):
                    assert status is not None
                    outcome = Status.error(f'running PreScore plugin "{plugin.name}": '
                                           f"{status.message()}")
                    return outcome
            return None
        finally:
            state.skip_score_plugins = skipped
            self._point_done("PreScore", outcome, started)

    def run_score_plugins(self, state: CycleState, pod: PodMeta, nodes: NodeTable,
                          rows: Rows) -> ScoreResult:
        """upstream RunScorePlugins: Score, NormalizeScore, then each plugin's weight; a
        failure raises StatusError with upstream's message (the attempt errors)."""
        started = time.perf_counter()
        outcome: Status | None = None
        try:
            plugins = [p for p in self.score_plugins if p.name not in state.skip_score_plugins]
            normalized = np.zeros((len(plugins), len(rows)), dtype=np.int64)
            for i, plugin in enumerate(plugins):
                begun = time.perf_counter()
                try:
                    scores = np.asarray(plugin.score(state, pod, nodes, rows), dtype=np.int64)
                    if scores.shape != (len(rows),):
                        raise StatusError(Status.error(
                            f"returned {scores.size} scores for {len(rows)} nodes"))
                except Exception as exc:
                    status = exc.status if isinstance(exc, StatusError) else _raised(exc)
                    self._plugin_done(state, plugin.name, "Score", status, begun)
                    outcome = Status.error(f'running Score plugins: plugin "{plugin.name}" '
                                           f"failed with: {status.message()}")
                    raise StatusError(outcome) from exc
                self._plugin_done(state, plugin.name, "Score", None, begun)
                normalized[i] = scores
            for i, plugin in enumerate(plugins):
                extensions = plugin.score_extensions()
                if extensions is None:
                    continue
                begun = time.perf_counter()
                try:
                    extensions.normalize_score(state, pod, normalized[i])
                except Exception as exc:
                    status = exc.status if isinstance(exc, StatusError) else _raised(exc)
                    self._plugin_done(state, plugin.name, "ScoreExtensionNormalize", status, begun)
                    outcome = Status.error(f'running Normalize on Score plugins: plugin '
                                           f'"{plugin.name}" failed with: {status.message()}')
                    raise StatusError(outcome) from exc
                self._plugin_done(state, plugin.name, "ScoreExtensionNormalize", None, begun)
            if normalized.size and (normalized.max() > MAX_NODE_SCORE
                                    or normalized.min() < MIN_NODE_SCORE):
                # one check for every plugin; then name the first offender
                out_of_range = (normalized > MAX_NODE_SCORE) | (normalized < MIN_NODE_SCORE)
                i, column = (int(x) for x in np.argwhere(out_of_range)[0])
                outcome = Status.error(
                    f'applying score defaultWeights on Score plugins: plugin "{plugins[i].name}" '
                    f"returns an invalid score {int(normalized[i, column])}, it should in the "
                    f"range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing")
                raise StatusError(outcome)
            weights = np.array([self.score_weights[p.name] for p in plugins], dtype=np.int64)
            totals = weights @ normalized  # int64 (plugins) @ (plugins x rows) -> rows
            return ScoreResult([p.name for p in plugins], weights, normalized, totals)
        finally:
            self._point_done("Score", outcome, started)

    def run_reserve_plugins_reserve(self, state: CycleState, pod: Obj, node: str) -> Status | None:
        """upstream RunReservePluginsReserve: the first failure stops; the caller unreserves."""
        started = time.perf_counter()
        outcome: Status | None = None
        try:
            for plugin in self.reserve_plugins:
                begun = time.perf_counter()
                try:
                    status = plugin.reserve(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status = _raised(exc)
                self._plugin_done(state, plugin.name, "Reserve", status, begun)
                if not is_success(status):
                    assert status is not None
                    if status.is_rejected():
                        outcome = status.with_plugin(plugin.name)
                    else:
                        outcome = Status.error(f'running Reserve plugin "{plugin.name}": '
                                               f"{status.message()}")
                    return outcome
            return None
        finally:
            self._point_done("Reserve", outcome, started)

    def run_reserve_plugins_unreserve(self, state: CycleState, pod: Obj, node: str) -> None:
        """upstream RunReservePluginsUnreserve: every Reserve plugin, in reverse order."""
        started = time.perf_counter()
        for plugin in reversed(self.reserve_plugins):
            begun = time.perf_counter()
            try:
                plugin.unreserve(state, pod, node)
            except Exception as exc:  # noqa: BLE001 — unreserve must reach every plugin
                log.error("unreserve failed", plugin=plugin.name, error=repr(exc))
            self._plugin_done(state, plugin.name, "Unreserve", None, begun)
        self._point_done("Unreserve", None, started)

    def run_permit_plugins(self, state: CycleState, pod: Obj, node: str) -> Status | None:
        """upstream RunPermitPlugins: a rejection or error stops; if any plugin said Wait
        (none rejecting), the pod is parked in the waiting-pods map with each waiting
        plugin's timeout (at most 15 minutes) and Wait is returned."""
        started = time.perf_counter()
        outcome: Status | None = None
        try:
            waits: dict[str, float] = {}
            for plugin in self.permit_plugins:
                begun = time.perf_counter()
                try:
                    status, timeout = plugin.permit(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status, timeout = _raised(exc), 0.0
                self._plugin_done(state, plugin.name, "Permit", status, begun)
                if is_success(status):
                    continue
                assert status is not None
                if status.is_rejected():
                    outcome = status.with_plugin(plugin.name)
                    return outcome
                if status.code is Code.WAIT:
                    waits[plugin.name] = min(float(timeout), MAX_PERMIT_TIMEOUT)
                    continue
                outcome = Status(Code.ERROR, ((f'running Permit plugin "{plugin.name}": '
                                              f"{status.message()}"),), plugin.name)
                return outcome
            if waits:
                self.waiting_pods.add(WaitingPod(pod, waits))
                name = (pod.get("metadata") or {}).get("name", "")
                outcome = Status.of(Code.WAIT, f"one or more plugins asked to wait and no plugin "
                                               f'rejected pod "{name}"')
            return outcome
        finally:
            self._point_done("Permit", outcome, started)

    def will_wait_on_permit(self, pod: Obj) -> bool:
        return self.waiting_pods.get(pod_uid(pod)) is not None

    async def wait_on_permit(self, pod: Obj) -> Status | None:
        """upstream WaitOnPermit: block (this task only) until the parked pod is allowed,
        rejected or timed out; Success is None."""
        uid = pod_uid(pod)
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return None
        try:
            status = await waiting.wait()
        finally:  # also when the binding task is cancelled (the scheduler stops)
            waiting.stop_timers()
            self.waiting_pods.remove(uid)
        if status.code is Code.SUCCESS:
            return None
        if status.is_rejected():
            return status
        return Status(Code.ERROR, (f"waiting on permit for pod: {status.message()}",),
                      status.plugin)

    # -- binding cycle ----------------------------------------------------------------------
    async def run_pre_bind_plugins(self, state: CycleState, pod: Obj, node: str) -> Status | None:
        started = time.perf_counter()
        outcome: Status | None = None
        try:
            for plugin in self.pre_bind_plugins:
                begun = time.perf_counter()
                try:
                    status = await plugin.pre_bind(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status = _raised(exc)
                self._plugin_done(state, plugin.name, "PreBind", status, begun)
                if not is_success(status):
                    assert status is not None
                    outcome = status.with_plugin(plugin.name) if status.is_rejected() else \
                        Status.error(f'running PreBind plugin "{plugin.name}": {status.message()}')
                    return outcome
            return None
        finally:
            self._point_done("PreBind", outcome, started)

    async def run_bind_plugins(self, state: CycleState, pod: Obj, node: str) -> Status | None:
        """upstream RunBindPlugins: each binder in turn until one does not Skip."""
        started = time.perf_counter()
        outcome: Status | None = Status.of(Code.SKIP)
        try:
            for plugin in self.bind_plugins:
                begun = time.perf_counter()
                try:
                    status = await plugin.bind(state, pod, node)
                except Exception as exc:  # noqa: BLE001
                    status = _raised(exc)
                self._plugin_done(state, plugin.name, "Bind", status, begun)
                if status is not None and status.code is Code.SKIP:
                    outcome = status
                    continue
                if not is_success(status):
                    assert status is not None
                    outcome = status.with_plugin(plugin.name) if status.is_rejected() else \
                        Status.error(f'running Bind plugin "{plugin.name}": {status.message()}')
                    return outcome
                outcome = None
                return None
            return outcome
        finally:
            self._point_done("Bind", outcome, started)

    async def run_post_bind_plugins(self, state: CycleState, pod: Obj, node: str) -> None:
        started = time.perf_counter()
        for plugin in self.post_bind_plugins:
            begun = time.perf_counter()
            try:
                await plugin.post_bind(state, pod, node)
            except Exception as exc:  # noqa: BLE001 — informational: the pod is bound
                log.error("post-bind failed", plugin=plugin.name, error=repr(exc))
            self._plugin_done(state, plugin.name, "PostBind", None, begun)
        self._point_done("PostBind", None, started)

    # -- waiting pods (the Handle's view) ---------------------------------------------------
    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterable[WaitingPod]:
        return iter(self.waiting_pods)

    def reject_waiting_pod(self, uid: str) -> bool:
        """upstream RejectWaitingPod (the pod was deleted): "removed"."""
        waiting = self.waiting_pods.get(uid)
        if waiting is None:
            return False
        waiting.reject("", "removed")
        return True
