"""The simulated nodes of an all-in-one cluster: pools of identical nodes from the config.

Kubernetes piece: none in v1.0 itself — there each machine ran its kubelet with its own
flags (--hostname-override, --node-labels, --register-with-taints, capacity from the machine).
A pool is the same set of kubelet flags for `count` machines; `--nodes N` is one pool of N
default nodes. Pure: validates a config value, no I/O; every error names the exact key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api.quantity import parse_quantity
from .storage_target import ConfigError

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
POOL_KEYS = ("name", "count", "cpu", "memory", "pods", "labels", "taints")


@dataclass(frozen=True)
class NodePool:
    name: str                      # nodes are <name>-0 .. <name>-<count-1>
    count: int
    cpu: str = "4"
    memory: str = "8Gi"
    pods: int = 110
    labels: tuple[tuple[str, str], ...] = ()
    taints: tuple[tuple[tuple[str, str], ...], ...] = ()   # hashable taint dicts

    def taint_dicts(self) -> tuple[dict[str, str], ...]:
        return tuple(dict(t) for t in self.taints)


def default_pools(nodes: int) -> tuple[NodePool, ...]:
    return (NodePool("node", nodes),) if nodes > 0 else ()


def parse_pools(value: Any, where: str) -> tuple[NodePool, ...]:
    """`node-pools:` from a config file -> pools; `where` prefixes error messages."""
    if not isinstance(value, list):
        raise ConfigError(f"{where}: must be a list of pools (name, count, cpu, memory, pods, "
                          "labels, taints)")
    pools = []
    names: set[str] = set()
    for i, raw in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"{at}: must be a mapping")
        unknown = set(raw) - set(POOL_KEYS)
        if unknown:
            raise ConfigError(f"{at}: unknown key {sorted(unknown)[0]!r} "
                              f"(known: {', '.join(POOL_KEYS)})")
        name = str(raw.get("name", "node"))
        if not name or not all(c.isalnum() or c in "-." for c in name) or name != name.lower():
            raise ConfigError(f"{at}.name: {name!r} is not a valid node name prefix "
                              "(lower-case letters, digits, '-', '.')")
        if name in names:
            raise ConfigError(f"{at}.name: pool {name!r} appears twice")
        names.add(name)
        count = raw.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ConfigError(f"{at}.count: must be a whole number >= 0, not {count!r}")
        cpu, memory = str(raw.get("cpu", "4")), str(raw.get("memory", "8Gi"))
        for key, quantity in (("cpu", cpu), ("memory", memory)):
            try:
                parse_quantity(quantity)
            except (ValueError, TypeError) as exc:
                raise ConfigError(f"{at}.{key}: {quantity!r} is not a quantity ({exc})") from None
        pods = raw.get("pods", 110)
        if isinstance(pods, bool) or not isinstance(pods, int) or pods < 1:
            raise ConfigError(f"{at}.pods: must be a whole number >= 1, not {pods!r}")
        labels = raw.get("labels") or {}
        if not isinstance(labels, dict):
            raise ConfigError(f"{at}.labels: must be a mapping of label keys to values")
        pools.append(NodePool(name, count, cpu, memory, pods,
                              tuple((str(k), str(v)) for k, v in labels.items()),
                              _taints(raw.get("taints") or [], f"{at}.taints")))
    return tuple(pools)


def _taints(value: Any, where: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    if not isinstance(value, list):
        raise ConfigError(f"{where}: must be a list of {{key, value, effect}}")
    taints = []
    for j, taint in enumerate(value):
        if not isinstance(taint, dict) or not taint.get("key"):
            raise ConfigError(f"{where}[{j}]: needs at least a key and an effect")
        effect = taint.get("effect")
        if effect not in TAINT_EFFECTS:
            raise ConfigError(f"{where}[{j}].effect: {effect!r} is not one of "
                              f"{', '.join(TAINT_EFFECTS)}")
        entry = {"key": str(taint["key"]), "effect": effect}
        if taint.get("value") is not None:
            entry["value"] = str(taint["value"])
        taints.append(tuple(sorted(entry.items())))
    return tuple(taints)
