"""Builders and a minimal driver for the plugin tests: API-shaped nodes and pods, the NodeTable
as the scheduler cache builds it, and each plugin's extension points called in upstream's
order (PreFilter -> Filter unless Skip; PreScore -> Score -> NormalizeScore unless Skip) —
no runtime needed, as the framework contract allows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minikube_py.scheduler.algorithm.predicates_meta import PodMeta
from minikube_py.scheduler.framework.interface import Code, CycleState, Status
from minikube_py.scheduler.nodeinfo import NodeInfo
from minikube_py.scheduler.nodetable import NodeTable, build

Obj = dict[str, Any]


def node(name: str, *, cpu: str = "4", memory: str = "8Gi", pods: str = "110",
         labels: dict[str, str] | None = None, taints: list[Obj] | None = None,
         unschedulable: bool = False, images: list[Obj] | None = None) -> Obj:
    spec: Obj = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    alloc = {"cpu": cpu, "memory": memory, "pods": pods}
    status: Obj = {"capacity": dict(alloc), "allocatable": alloc,
                   "conditions": [{"type": "Ready", "status": "True"}]}
    if images:
        status["images"] = images
    return {"kind": "Node", "apiVersion": "v1",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": spec, "status": status}


def pod(name: str = "p", *, cpu: str | None = None, memory: str | None = None,
        labels: dict[str, str] | None = None, namespace: str = "default", node_name: str = "",
        spec: Obj | None = None, containers: list[Obj] | None = None) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    container: Obj = {"name": "c", "image": "nginx"}
    if requests:
        container["resources"] = {"requests": requests}
    body: Obj = {"containers": [container] if containers is None else containers, **(spec or {})}
    if node_name:
        body["nodeName"] = node_name
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {},
                         "uid": f"uid-{namespace}-{name}"},
            "spec": body}


def table(nodes: list[Obj], placed: dict[str, list[Obj]] | None = None) -> NodeTable:
    """A NodeTable of `nodes`, with `placed[node name]` pods running on them."""
    infos = []
    for n in nodes:
        info = NodeInfo(node=n)
        for p in (placed or {}).get(n["metadata"]["name"], []):
            p = {**p, "spec": {**p["spec"], "nodeName": n["metadata"]["name"]}}
            info.add_pod(p)
        infos.append(info)
    return build(infos)


def run_filter(plugin: Any, raw_pod: Obj, nodes: NodeTable,
               state: CycleState | None = None) -> dict[str, Status]:
    """Node name -> the status Filter gave it (absent: passed); a PreFilter rejection is
    returned under "" and a PreFilter Skip leaves every node passing."""
    state = state or CycleState()
    meta = PodMeta.of(raw_pod)
    if hasattr(plugin, "pre_filter"):
        result, status = plugin.pre_filter(state, meta, nodes)
        if status is not None and status.code is Code.SKIP:
            return {}
        if status is not None and status.code is not Code.SUCCESS:
            return {"": status}
        if result is not None and result.node_names is not None:
            out = {}
            for name in nodes.names:
                if name not in result.node_names:
                    out[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ("prefilter",))
            candidates = np.array([n in result.node_names for n in nodes.names], dtype=bool)
            out.update(_statuses(plugin.filter(state, meta, nodes, candidates), nodes, candidates))
            return out
    return _statuses(plugin.filter(state, meta, nodes, nodes.everywhere()), nodes,
                     nodes.everywhere())


def _statuses(failures: list, nodes: NodeTable, candidates: np.ndarray) -> dict[str, Status]:
    out: dict[str, Status] = {}
    for status, mask in failures:
        assert mask.dtype == bool and len(mask) == nodes.size
        for row in np.flatnonzero(mask & candidates).tolist():
            assert nodes.names[row] not in out, "a row got two statuses from one plugin"
            out[nodes.names[row]] = status
    return out


def run_score(plugin: Any, raw_pod: Obj, nodes: NodeTable, *, normalize: bool = True,
              state: CycleState | None = None) -> dict[str, int] | None:
    """Node name -> score over every row (None when PreScore answered Skip)."""
    state = state or CycleState()
    meta = PodMeta.of(raw_pod)
    rows = np.arange(nodes.size, dtype=np.int64)
    if hasattr(plugin, "pre_score"):
        status = plugin.pre_score(state, meta, nodes, rows)
        if status is not None and status.code is Code.SKIP:
            return None
    scores = np.asarray(plugin.score(state, meta, nodes, rows), dtype=np.int64).copy()
    assert scores.shape == (nodes.size,)
    extensions = plugin.score_extensions()
    if normalize and extensions is not None:
        extensions.normalize_score(state, meta, scores)
    return dict(zip(nodes.names, scores.tolist()))
