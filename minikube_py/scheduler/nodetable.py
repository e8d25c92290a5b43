"""NodeTable: the scheduler cache's nodes as columns, so one decision is a few array operations.

Kubernetes piece: none by that name — it is plugin/pkg/scheduler/schedulercache's NodeInfo map
(v1.5) laid out column by column. Upstream runs each predicate on each node in goroutines; in
Python a loop over 5000 nodes costs milliseconds per predicate, so every per-node fact a
predicate or priority reads lives in a numpy array with one row per node. A predicate then
reads like its definition — `nodes.alloc_cpu < pod.milli_cpu + nodes.requested_cpu` — and
runs over every node at once.

The table is kept incrementally: the cache marks a row dirty when its node object or its pods
change (an assumed pod, a bound pod seen, a heartbeat) and `refresh()` re-reads only dirty rows
before the next decision. New nodes are appended; a removed node rebuilds the table (rare).

Strings (label values, zone keys, taint sets, condition reasons) are interned to small ints so
they compare as arrays too; a question about a string column ("does this label match In
(a, b)?") is answered once per distinct value and broadcast to the rows (`per_value`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from .algorithm.predicates_meta import NodeFacts, compute_facts
from .nodeinfo import NodeInfo

Obj = dict[str, Any]
Mask = np.ndarray  # bool, one entry per row

#: the interned id of "not there" (a label the node does not carry, no zone, no taints)
ABSENT = 0
_NUMERIC = ("alloc_cpu", "alloc_memory", "max_pods", "requested_cpu", "requested_memory",
            "nonzero_cpu", "nonzero_memory", "pod_count", "disk_pods", "generation")
_FLAGS = ("unschedulable", "memory_pressure", "disk_pressure")
#: the columns that follow a node's pods (not its node object), in `_pod_values` order
_POD_COLUMNS = ("requested_cpu", "requested_memory", "nonzero_cpu", "nonzero_memory",
                "pod_count", "disk_pods", "generation")


def _pod_values(info: NodeInfo) -> tuple[int, ...]:
    return (info.requested.milli_cpu, info.requested.memory, info.nonzero_requested.milli_cpu,
            info.nonzero_requested.memory, len(info.pods), info.disk_pods, info.generation)
_IDS = ("taint_set", "prefer_taint_set", "conditions", "zone", "name_id")

#: int64 counters bumped when a row re-reads its node object (not its pods): what follows
#: node objects (ImageLocality's image index) refreshes only those rows
_VERSIONS = ("node_version",)


class Interned:
    """Hashable values <-> small ints; id 0 (ABSENT) stands for None / the empty value."""

    def __init__(self, empty: Hashable = None) -> None:
        self.values: list[Any] = [empty]
        self._ids: dict[Any, int] = {empty: ABSENT}

    def id(self, value: Hashable) -> int:
        found = self._ids.get(value)
        if found is None:
            found = self._ids[value] = len(self.values)
            self.values.append(value)
        return found

    def lookup(self, value: Hashable) -> int:
        """The id of `value`, or -1 when no row can hold it (never interned)."""
        return self._ids.get(value, -1)


class NodeTable:
    """One row per schedulable node; columns are numpy arrays of length `size`."""

    def __init__(self) -> None:
        self.infos: list[NodeInfo] = []
        self.names: list[str] = []
        self.row_of: dict[str, int] = {}
        self.facts: list[NodeFacts] = []  # what fill() read from each row's node object
        self._node_of: list[Obj | None] = []  # the node object each row's facts came from
        self.strings = Interned()  # label values and node names
        self.taint_sets = Interned(())
        self.condition_sets = Interned(())
        self.zones = Interned("")
        self._capacity = 0
        self._columns: dict[str, np.ndarray] = {}
        self._labels: dict[str, np.ndarray] = {}  # label key -> value ids, built on first use
        self._ports: dict[int, set[int]] = {}  # host port -> rows where some pod uses it
        self._row_ports: list[frozenset[int]] = []
        self._derived: dict[Hashable, tuple[np.ndarray, np.ndarray]] = {}
        self._name_ranks: np.ndarray | None = None
        self._node_versions = 0  # bumped whenever some row re-reads its node object
        self._allocate(64)

    # -- columns ---------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.infos)

    def _allocate(self, capacity: int) -> None:
        def grow(old: np.ndarray | None, dtype: Any) -> np.ndarray:
            new = np.zeros(capacity, dtype=dtype)
            if old is not None:
                new[:len(old)] = old[:len(new)]
            return new

        for name in _NUMERIC + _VERSIONS:
            self._columns[name] = grow(self._columns.get(name), np.int64)
        for name in _FLAGS:
            self._columns[name] = grow(self._columns.get(name), bool)
        for name in _IDS:
            self._columns[name] = grow(self._columns.get(name), np.int32)
        for key, column in list(self._labels.items()):
            self._labels[key] = grow(column, np.int32)
        self._capacity = capacity
        self._expose()

    def _expose(self) -> None:
        """Publish each column as an attribute viewing its first `size` rows."""
        n = self.size
        for name, column in self._columns.items():
            setattr(self, name, column[:n])

    # the attributes _expose sets, for readers and type checkers
    alloc_cpu: np.ndarray  # milli-CPU the node offers (allocatable, else capacity)
    alloc_memory: np.ndarray  # bytes
    max_pods: np.ndarray
    requested_cpu: np.ndarray  # sum of the node's pods' requests (PodFitsResources)
    requested_memory: np.ndarray
    nonzero_cpu: np.ndarray  # the same with 100m / 200MB for containers asking nothing
    nonzero_memory: np.ndarray
    pod_count: np.ndarray
    disk_pods: np.ndarray  # pods with GCE PD / EBS / RBD / iSCSI volumes (NoDiskConflict)
    generation: np.ndarray  # NodeInfo.generation: changes whenever the row does
    node_version: np.ndarray  # changes whenever the row's node object does (not its pods)
    unschedulable: np.ndarray
    memory_pressure: np.ndarray
    disk_pressure: np.ndarray
    taint_set: np.ndarray  # id in taint_sets: the NoSchedule/NoExecute taints
    prefer_taint_set: np.ndarray  # id in taint_sets: the PreferNoSchedule taints
    conditions: np.ndarray  # id in condition_sets: CheckNodeCondition's reasons
    zone: np.ndarray  # id in zones: region/zone key, ABSENT without zone labels
    name_id: np.ndarray  # id in strings of the node's name

    # -- rows ------------------------------------------------------------------------------
    def append(self, info: NodeInfo) -> None:
        self.extend((info,))

    def extend(self, infos: Iterable[NodeInfo]) -> None:
        """Append rows, growing and re-publishing the columns once (preemption builds a
        scratch table of a hundred rows per decision)."""
        infos = list(infos)
        if self.size + len(infos) > self._capacity:
            self._allocate(max(self._capacity * 2, self.size + len(infos)))
        for info in infos:
            row = self.size
            self.infos.append(info)
            self.names.append(info.name)
            self.row_of[info.name] = row
            self._row_ports.append(frozenset())
            self.facts.append(None)  # type: ignore[arg-type]  # fill() sets it
            self._node_of.append(None)
            self.fill(row)
        self._expose()

    def fill(self, row: int) -> None:
        """(Re)read one row from its NodeInfo."""
        info = self.infos[row]
        c = self._columns
        self._fill_pods(row, info)
        if self._node_of[row] is info.node:
            return  # only the pods changed (an assumed or bound pod): the common case
        self._node_of[row] = info.node
        self._node_versions += 1
        c["node_version"][row] = self._node_versions
        facts = self.facts[row] = compute_facts(info)
        c["alloc_cpu"][row] = facts.milli_cpu
        c["alloc_memory"][row] = facts.memory
        c["max_pods"][row] = facts.max_pods
        c["unschedulable"][row] = facts.unschedulable
        c["memory_pressure"][row] = facts.memory_pressure
        c["disk_pressure"][row] = facts.disk_pressure
        c["taint_set"][row] = self.taint_sets.id(facts.taints)
        c["prefer_taint_set"][row] = self.taint_sets.id(facts.prefer_taints)
        c["conditions"][row] = self.condition_sets.id(facts.condition_reasons)
        c["zone"][row] = self.zones.id(facts.zone)
        c["name_id"][row] = self.strings.id(facts.name)
        for key, column in self._labels.items():
            column[row] = self._label_id(facts.labels, key)

    def _fill_pods(self, row: int, info: NodeInfo) -> None:
        """The columns that follow the node's pods."""
        c = self._columns
        for name, value in zip(_POD_COLUMNS, _pod_values(info)):
            c[name][row] = value
        self._set_ports(row, frozenset(info.used_ports))

    def refill_pods(self, rows: list[int]) -> None:
        """`fill` for rows whose pods changed but not their node objects, column by column
        (preemption's dry run changes a hundred rows per step)."""
        if not rows:
            return
        infos = [self.infos[row] for row in rows]
        c = self._columns
        values = np.array([_pod_values(info) for info in infos], dtype=np.int64)
        for i, name in enumerate(_POD_COLUMNS):
            c[name][rows] = values[:, i]
        for row, info in zip(rows, infos):
            self._set_ports(row, frozenset(info.used_ports))

    def _set_ports(self, row: int, ports: frozenset[int]) -> None:
        old = self._row_ports[row]
        if old == ports:
            return
        for port in old - ports:
            self._ports[port].discard(row)
        for port in ports - old:
            self._ports.setdefault(port, set()).add(row)
        self._row_ports[row] = ports

    # -- questions -------------------------------------------------------------------------
    def everywhere(self, value: bool = True) -> Mask:
        return np.full(self.size, value, dtype=bool)

    def rows_using_port(self, port: int) -> list[int]:
        return list(self._ports.get(port, ()))

    def _label_id(self, labels: Mapping[str, str], key: str) -> int:
        value = labels.get(key)
        return ABSENT if value is None else self.strings.id(value)

    def label(self, key: str) -> np.ndarray:
        """Value ids of label `key` per row (ABSENT where the node lacks it); the column is
        built on first use and kept current by `fill`."""
        column = self._labels.get(key)
        if column is None:
            column = np.zeros(self._capacity, dtype=np.int32)
            for row, facts in enumerate(self.facts):
                column[row] = self._label_id(facts.labels, key)
            self._labels[key] = column
        return column[:self.size]

    def label_equals(self, key: str, value: str) -> Mask:
        return self.label(key) == self.strings.lookup(value)

    def per_value(self, ids: np.ndarray, values: list[Any],
                  question: Callable[[Any], bool]) -> Mask:
        """Ask `question` once per distinct id in `ids` (of the value `values[id]`) and give
        every row its id's answer: label selectors, taint sets and condition sets have a
        handful of distinct values even on thousands of nodes."""
        distinct = np.unique(ids)
        answers = np.zeros(len(values), dtype=bool)
        for i in distinct.tolist():
            answers[i] = question(values[i])
        return answers[ids]

    def name_ranks(self) -> np.ndarray:
        """Each row's position in name order (selectHost breaks score ties by name); names
        never change, so this is recomputed only when rows are added."""
        ranks = self._name_ranks
        if ranks is None or len(ranks) != self.size:
            ranks = np.empty(self.size, dtype=np.int64)
            ranks[np.argsort(np.array(self.names, dtype=object), kind="stable")] = \
                np.arange(self.size)
            self._name_ranks = ranks
        return ranks

    def derived(self, key: Hashable, count: Callable[[NodeInfo], int]) -> np.ndarray:
        """`count(info)` for every row, remembered under `key` and recomputed only for rows
        whose generation changed since (the spreading priorities' per-node pod counts)."""
        cached = self._derived.pop(key, None)  # re-inserted below: evict least recently used
        n = self.size
        if cached is None or len(cached[0]) != n:
            values = np.fromiter((count(info) for info in self.infos), dtype=np.int64, count=n)
        else:
            values, generations = cached
            stale = np.flatnonzero(generations != self.generation)
            if len(stale):
                values = values.copy()
                for row in stale.tolist():
                    values[row] = count(self.infos[row])
        self._derived[key] = (values, self.generation.copy())
        if len(self._derived) > 256:  # one entry per (namespace, selector set) in use
            self._derived.pop(next(iter(self._derived)))
        return values


def build(infos: Iterable[NodeInfo]) -> NodeTable:
    table = NodeTable()
    table.extend(infos)
    return table
