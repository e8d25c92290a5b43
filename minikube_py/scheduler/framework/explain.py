"""What /debug/scheduler/last shows for a framework attempt: profile, Filter statuses, Score parts, timings.

Kubernetes piece: none upstream serves this (the closest are the scheduler's V(10) logs of
each plugin's score per node and the FitError text); issue 20 item 8 asks for it so a learner
can see why a pod went where it went. The attempt keeps the decision's arrays (failing-row
masks with their statuses, the plugins x rows normalised score matrix, the weights); the
dicts are built here only when someone reads the endpoint, as the v1.0 path does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .interface import Diagnosis, Status
from .schedule_one import Decision


def _status(status: Status) -> dict[str, Any]:
    return {"plugin": status.plugin, "code": str(status.code), "reasons": list(status.reasons)}


@dataclass
class FrameworkExplanation:
    profile: str
    names: list[str] = field(default_factory=list)
    diagnosis: Diagnosis | None = None
    decision: Decision | None = None
    post_filter: Status | None = None
    nominated_node: str = ""
    #: DefaultPreemption's decision (candidates dry-run, chosen node, victims), when it ran
    preemption: dict[str, Any] | None = None
    timings: dict[str, float] = field(default_factory=dict)

    def filters(self) -> dict[str, list[dict[str, Any]]]:
        """Per failing node, the status of the plugin that rejected it."""
        out: dict[str, list[dict[str, Any]]] = {}
        if self.diagnosis is None:
            return out
        names = self.names
        for status, rows in self.diagnosis.failures:
            entry = _status(status)
            for row in np.flatnonzero(rows).tolist():
                out.setdefault(names[row] if row < len(names) else str(row), []).append(entry)
        return out

    def plugin_scores(self) -> dict[str, dict[str, dict[str, int]]]:
        """Per scored node, per Score plugin: its normalised score, weight and product."""
        decision = self.decision
        if decision is None or decision.scores is None:
            return {}
        scores = decision.scores
        out: dict[str, dict[str, dict[str, int]]] = {}
        weights = scores.weights.tolist()
        for column, row in enumerate(decision.rows.tolist()):
            out[decision.names[row]] = {
                plugin: {"score": int(scores.normalized[i, column]), "weight": weights[i],
                         "weighted": int(scores.normalized[i, column]) * weights[i]}
                for i, plugin in enumerate(scores.plugins)}
        return out

    def totals(self) -> dict[str, int]:
        decision = self.decision
        if decision is None:
            return {}
        if decision.totals is None:  # one feasible node: nothing was scored
            return {decision.names[row]: 0 for row in decision.rows.tolist()}
        return {decision.names[row]: total for row, total
                in zip(decision.rows.tolist(), decision.totals.tolist())}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "profile": self.profile,
            "filters": self.filters(),
            "pluginScores": self.plugin_scores(),
            "extensionPoints": {point: round(seconds, 6) for point, seconds
                                in self.timings.items()},
        }
        if self.diagnosis is not None:
            out["unschedulablePlugins"] = sorted(self.diagnosis.unschedulable_plugins)
        decision = self.decision
        if decision is not None and decision.extender_scores is not None:
            out["extenderScores"] = {decision.names[row]: score for row, score in zip(
                decision.rows.tolist(), decision.extender_scores.tolist())}
        if self.post_filter is not None:
            out["postFilter"] = {**_status(self.post_filter),
                                 "nominatedNodeName": self.nominated_node}
        if self.preemption is not None:
            out["preemption"] = self.preemption
        return out

    def failed_reasons(self) -> dict[str, list[str]]:
        """The v1.0 endpoint's `failed` shape (node -> reasons) for the same attempt."""
        return {node: [reason for entry in entries for reason in entry["reasons"]]
                for node, entries in self.filters().items()}
