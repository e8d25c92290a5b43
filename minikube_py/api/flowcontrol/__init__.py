"""API Priority and Fairness configuration as data: v1 defaults, upstream's bootstrap objects,
and the pure decisions of the configuration producer.

Kubernetes pieces:
- pkg/apis/flowcontrol/v1/defaults.go (SetDefaults_FlowSchemaSpec: matchingPrecedence 1000;
  SetDefaults_PriorityLevelConfiguration: nominalConcurrencyShares 30, lendablePercent 0;
  SetDefaults_QueuingConfiguration: 64 queues, handSize 8, queueLengthLimit 50);
- k8s.io/apiserver/pkg/apis/flowcontrol/bootstrap/default.go, transcribed to bootstrap.yaml:
  the mandatory objects (`exempt`, `catch-all`) every server must have and the suggested ones;
- pkg/registry/flowcontrol/ensurer (what to create, update or delete, and when the
  `apf.kubernetes.io/autoupdate-spec` annotation lets the server overwrite a user's edit);
- k8s.io/apiserver/pkg/util/flowcontrol's config controller, which marks a FlowSchema whose
  priority level does not exist with the condition `Dangling`.
The I/O (a post-start loop over the registries) is apiserver/flowcontrol_bootstrap.py.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

Obj = dict[str, Any]

GROUP = "flowcontrol.apiserver.k8s.io"
API_VERSION = f"{GROUP}/v1"
AUTO_UPDATE_ANNOTATION = "apf.kubernetes.io/autoupdate-spec"
EXEMPT = "exempt"
DANGLING = "Dangling"

_ALL_RESOURCES = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True,
                  "namespaces": ["*"]}
_ALL_NON_RESOURCES = {"verbs": ["*"], "nonResourceURLs": ["*"]}


# ---------------------------------------------------------------------------------------------
# Defaults


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def default_flow_schema(fs: Obj) -> None:
    spec = fs.get("spec")
    if isinstance(spec, dict) and not spec.get("matchingPrecedence"):
        spec["matchingPrecedence"] = 1000


def default_priority_level(plc: Obj) -> None:
    spec = plc.get("spec")
    if not isinstance(spec, dict):
        return
    exempt = spec.get("exempt")
    if spec.get("type") == "Exempt" and exempt is None:
        exempt = spec["exempt"] = {}
    if isinstance(exempt, dict):
        exempt.setdefault("nominalConcurrencyShares", 0)
        exempt.setdefault("lendablePercent", 0)
    limited = spec.get("limited")
    if isinstance(limited, dict):
        if limited.get("nominalConcurrencyShares") is None:
            limited["nominalConcurrencyShares"] = 30
        if limited.get("lendablePercent") is None:
            limited["lendablePercent"] = 0
        queuing = _dict(limited.get("limitResponse")).get("queuing")
        for name, value in (("queues", 64), ("handSize", 8), ("queueLengthLimit", 50)):
            if isinstance(queuing, dict) and not queuing.get(name):
                queuing[name] = value


DEFAULTERS: dict[str, tuple[str, Callable[[Obj], None]]] = {
    "FlowSchema": (GROUP, default_flow_schema),
    "PriorityLevelConfiguration": (GROUP, default_priority_level),
}


# ---------------------------------------------------------------------------------------------
# The bootstrap configuration


def _subject(text: str) -> Obj:
    kind, _, name = text.partition(":")
    if kind == "group":
        return {"kind": "Group", "group": {"name": name}}
    if kind == "user":
        return {"kind": "User", "user": {"name": name}}
    namespace, _, sa = name.partition("/")
    return {"kind": "ServiceAccount", "serviceAccount": {"namespace": namespace, "name": sa}}


def _object(kind: str, name: str, spec: Obj) -> Obj:
    return {"apiVersion": API_VERSION, "kind": kind,
            "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
            "spec": spec}


def _flow_schema(entry: Obj) -> Obj:
    rules: Obj = {"subjects": [_subject(s) for s in entry["subjects"]]}
    if entry.get("rules") == "all":
        rules["resourceRules"] = [dict(_ALL_RESOURCES)]
        rules["nonResourceRules"] = [dict(_ALL_NON_RESOURCES)]
    else:
        if entry.get("resourceRules"):
            rules["resourceRules"] = entry["resourceRules"]
        if entry.get("nonResourceRules"):
            rules["nonResourceRules"] = entry["nonResourceRules"]
    spec: Obj = {"priorityLevelConfiguration": {"name": entry["level"]},
                 "matchingPrecedence": entry["precedence"], "rules": [rules]}
    if entry.get("distinguisher"):
        spec["distinguisherMethod"] = {"type": entry["distinguisher"]}
    return _object("FlowSchema", entry["name"], spec)


def _priority_level(entry: Obj) -> Obj:
    if "exempt" in entry:
        return _object("PriorityLevelConfiguration", entry["name"],
                       {"type": "Exempt", "exempt": dict(entry["exempt"])})
    limited = dict(entry["limited"])
    if limited.pop("reject", False):
        limited["limitResponse"] = {"type": "Reject"}
    else:
        queues, hand, length = limited.pop("queuing")
        limited["limitResponse"] = {"type": "Queue", "queuing": {
            "queues": queues, "handSize": hand, "queueLengthLimit": length}}
    return _object("PriorityLevelConfiguration", entry["name"],
                   {"type": "Limited", "limited": limited})


@dataclass(frozen=True)
class Bootstrap:
    """Upstream's four lists; each object as a v1 JSON body ready to create."""

    mandatory_levels: tuple[Obj, ...]
    mandatory_schemas: tuple[Obj, ...]
    suggested_levels: tuple[Obj, ...]
    suggested_schemas: tuple[Obj, ...]

    def levels(self) -> list[tuple[Obj, bool]]:
        """(object, mandatory) for every priority level."""
        return [(o, True) for o in self.mandatory_levels] + \
            [(o, False) for o in self.suggested_levels]

    def schemas(self) -> list[tuple[Obj, bool]]:
        return [(o, True) for o in self.mandatory_schemas] + \
            [(o, False) for o in self.suggested_schemas]


@lru_cache(maxsize=1)
def load_bootstrap() -> Bootstrap:
    data = yaml.load((Path(__file__).parent / "bootstrap.yaml").read_text(),  # read every start:
                     Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # libyaml's when built
    return Bootstrap(
        tuple(_priority_level(e) for e in data["mandatory"]["priorityLevelConfigurations"]),
        tuple(_flow_schema(e) for e in data["mandatory"]["flowSchemas"]),
        tuple(_priority_level(e) for e in data["suggested"]["priorityLevelConfigurations"]),
        tuple(_flow_schema(e) for e in data["suggested"]["flowSchemas"]),
    )


# ---------------------------------------------------------------------------------------------
# The ensurer's decisions


def _annotations(obj: Obj) -> Obj:
    return _dict(_dict(obj.get("metadata")).get("annotations"))


_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
             "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def parse_bool(value: Any) -> bool | None:
    """Go's strconv.ParseBool; None where it would fail."""
    return _GO_BOOLS.get(value) if isinstance(value, str) else None


def should_update_spec(current: Obj) -> bool:
    """shouldUpdateSpec for a suggested object: the annotation's boolean when it parses, else
    only an object never edited (generation 1)."""
    parsed = parse_bool(_annotations(current).get(AUTO_UPDATE_ANNOTATION))
    if parsed is not None:
        return parsed
    return _dict(current.get("metadata")).get("generation") == 1


def spec_equalish(bootstrap: Obj, current: Obj) -> bool:
    """plcSpecEqualish / the FlowSchema one: the stored spec is the bootstrap's, except that the
    `exempt` level's concurrency settings are the user's to tune and not compared."""
    expected = bootstrap["spec"]
    actual = _dict(current.get("spec"))
    if bootstrap["kind"] == "PriorityLevelConfiguration" and \
            bootstrap["metadata"]["name"] == EXEMPT:
        exempt = actual.get("exempt")
        if not isinstance(exempt, dict):
            return False
        expected = copy.deepcopy(expected)
        for name in ("nominalConcurrencyShares", "lendablePercent"):
            expected["exempt"][name] = exempt.get(name)
    return actual == expected


def ensure_update(bootstrap: Obj, current: Obj, mandatory: bool) -> Obj | None:
    """ReviseIfNeeded: the object the ensurer writes over `current`, or None to leave it. A
    mandatory object always has its spec brought back; a suggested one only while
    should_update_spec. Either way the annotation is made to say which (`"true"`/`"false"`):
    a suggested object a user edited without the annotation becomes `"false"`, kept as is."""
    auto = mandatory or should_update_spec(current)
    update_annotation = parse_bool(_annotations(current).get(AUTO_UPDATE_ANNOTATION)) != auto
    spec_changed = auto and not spec_equalish(bootstrap, current)
    if not (update_annotation or spec_changed):
        return None
    revised = copy.deepcopy(current)
    if spec_changed:
        revised["spec"] = copy.deepcopy(bootstrap["spec"])
    if update_annotation:
        meta = revised.setdefault("metadata", {})
        if not isinstance(meta.get("annotations"), dict):
            meta["annotations"] = {}
        meta["annotations"][AUTO_UPDATE_ANNOTATION] = "true" if auto else "false"
    return revised


def is_dangling_bootstrap_object(obj: Obj, bootstrap_names: frozenset[str]) -> bool:
    """removeDanglingBootstrapObjects: an auto-updated object that is no longer part of the
    bootstrap configuration is the server's to delete."""
    name = _dict(obj.get("metadata")).get("name")
    return name not in bootstrap_names and \
        parse_bool(_annotations(obj).get(AUTO_UPDATE_ANNOTATION)) is True


# ---------------------------------------------------------------------------------------------
# FlowSchema status (the config controller's Dangling condition)


def dangling_condition(fs: Obj, level_names: set[str]) -> Obj:
    """The `Dangling` condition a FlowSchema should carry (without lastTransitionTime)."""
    level = _dict(_dict(fs.get("spec")).get("priorityLevelConfiguration")).get("name")
    if level in level_names:
        return {"type": DANGLING, "status": "False", "reason": "Found",
                "message": f'This FlowSchema references the PriorityLevelConfiguration object '
                           f'named "{level}" and it exists'}
    return {"type": DANGLING, "status": "True", "reason": "NotFound",
            "message": f'This FlowSchema references the PriorityLevelConfiguration object '
                       f'named "{level}" but there is no such object'}


def with_condition(fs: Obj, condition: Obj, now: str) -> Obj | None:
    """`fs` with `condition` set (lastTransitionTime = now when status changed), or None when
    the stored condition already says the same."""
    status = _dict(fs.get("status"))
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    old = next((c for c in conditions if c.get("type") == condition["type"]), None)
    if old is not None and all(old.get(k) == condition[k] for k in condition):
        return None
    new = dict(condition)
    new["lastTransitionTime"] = (old.get("lastTransitionTime") if old is not None
                                 and old.get("status") == condition["status"]
                                 and old.get("lastTransitionTime") else now)
    updated = copy.deepcopy(fs)
    updated["status"] = dict(status, conditions=[c for c in conditions if c is not old] + [new])
    return updated
