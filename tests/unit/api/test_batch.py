"""batch/v1 Jobs and CronJobs: upstream's defaults, generated selector, validation messages,
Table cells, cron schedules and index strings (pure functions, table-driven)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from minikube_py.api import cronschedule
from minikube_py.api.batch_indexes import format_indexes, parse_indexes
from minikube_py.api.defaults import apply_defaults
from minikube_py.api.tables import row_cells
from minikube_py.api.validation import (
    validate_create,
    validate_status_update,
    validate_update,
)

UID = "0f3a7c9e-1111-2222-3333-444455556666"


def job(**spec: Any) -> dict[str, Any]:
    base = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "pi", "namespace": "default", "uid": UID,
                         "resourceVersion": "7"},
            "spec": {"template": {"spec": {
                "containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}}}}
    base["spec"].update(spec)
    return base


def cron_job(**spec: Any) -> dict[str, Any]:
    base = {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "hello", "namespace": "default", "uid": UID},
            "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "c", "image": "busybox"}],
                "restartPolicy": "OnFailure"}}}}}}
    base["spec"].update(spec)
    return base


def messages(kind: str, obj: dict[str, Any]) -> list[str]:
    apply_defaults(kind, obj)
    return [e.message() for e in validate_create(kind, obj)]


def test_job_defaults_as_set_defaults_job() -> None:
    obj = job()
    apply_defaults("Job", obj)
    spec = obj["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    # only parallelism given: completions stays unset (a work queue)
    obj = job(parallelism=3)
    apply_defaults("Job", obj)
    assert "completions" not in obj["spec"] and obj["spec"]["parallelism"] == 3
    # backoffLimitPerIndex makes the global limit MaxInt32
    obj = job(completionMode="Indexed", completions=3, backoffLimitPerIndex=1)
    apply_defaults("Job", obj)
    assert obj["spec"]["backoffLimit"] == 2**31 - 1
    obj = job(podFailurePolicy={"rules": [{"action": "Ignore",
                                           "onPodConditions": [{"type": "DisruptionTarget"}]}]})
    apply_defaults("Job", obj)
    assert obj["spec"]["podReplacementPolicy"] == "Failed"
    assert obj["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"] == "True"


def test_generated_selector_and_labels() -> None:
    obj = job()
    apply_defaults("Job", obj)
    labels = obj["spec"]["template"]["metadata"]["labels"]
    assert labels == {"controller-uid": UID, "batch.kubernetes.io/controller-uid": UID,
                      "job-name": "pi", "batch.kubernetes.io/job-name": "pi"}
    assert obj["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": UID}}
    assert obj["metadata"]["labels"] == labels
    assert validate_create("Job", obj) == []


def test_manual_selector_is_kept_and_checked() -> None:
    obj = job(manualSelector=True, selector={"matchLabels": {"app": "x"}})
    got = messages("Job", obj)
    assert "batch.kubernetes.io/controller-uid" not in str(obj["spec"]["selector"])
    assert any(m.startswith("spec.template.metadata.labels: Invalid value:")
               and m.endswith("`selector` does not match template `labels`") for m in got)
    obj = job(manualSelector=True)
    assert "spec.selector: Required value" in messages("Job", obj)


@pytest.mark.parametrize("spec, expected", [
    ({"parallelism": -1}, "spec.parallelism: Invalid value: -1: must be greater than or equal to 0"),
    ({"backoffLimit": -1}, "spec.backoffLimit: Invalid value: -1: must be greater than or equal to 0"),
    ({"completionMode": "Odd"},
     'spec.completionMode: Unsupported value: "Odd": supported values: "Indexed", "NonIndexed"'),
    ({"completionMode": "Indexed", "parallelism": 2},
     "spec.completions: Required value: when completion mode is Indexed"),
    ({"backoffLimitPerIndex": 1}, ("spec.backoffLimitPerIndex: Forbidden: requires indexed "
                                  "completion mode")),
    ({"podReplacementPolicy": "Sometimes"}, ('spec.podReplacementPolicy: Unsupported value: '
                                            '"Sometimes": supported values: "Failed", '
                                            '"TerminatingOrFailed"')),
])
def test_job_spec_errors(spec: dict[str, Any], expected: str) -> None:
    assert expected in messages("Job", job(**spec))


def test_job_restart_policy() -> None:
    obj = job()
    obj["spec"]["template"]["spec"]["restartPolicy"] = "Always"
    assert messages("Job", obj) == [
        ('spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
        '"OnFailure", "Never"')]


def test_pod_failure_policy_rules() -> None:
    obj = job(podFailurePolicy={"rules": [
        {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [1, 1]}},
        {"action": "Boom", "onPodConditions": [{"type": "X"}]},
        {"action": "Ignore"}]})
    got = messages("Job", obj)
    assert any(m.startswith("spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid")
               and m.endswith("must be ordered and without duplicates") for m in got)
    assert any(m.startswith('spec.podFailurePolicy.rules[1].action: Unsupported value: "Boom"')
               for m in got)
    assert any("specifying one of OnExitCodes and OnPodConditions is required" in m for m in got)


def test_job_update_immutability() -> None:
    old = job()
    apply_defaults("Job", old)
    new = copy.deepcopy(old)
    new["spec"]["completions"] = 5
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    got = [e.message() for e in validate_update("Job", new, old)]
    assert any(m.startswith("spec.completions: Invalid value: 5: field is immutable") for m in got)
    assert any(m.startswith("spec.template: Invalid value:") and "field is immutable" in m
               for m in got)
    # parallelism may change
    new = copy.deepcopy(old)
    new["spec"]["parallelism"] = 4
    assert validate_update("Job", new, old) == []


def test_job_status_update_counts() -> None:
    old = job()
    apply_defaults("Job", old)
    new = copy.deepcopy(old)
    new["status"] = {"active": -1, "uncountedTerminatedPods": {"succeeded": ["a"], "failed": ["a"]}}
    got = [e.message() for e in validate_status_update("Job", new, old)]
    assert "status.active: Invalid value: -1: must be greater than or equal to 0" in got
    assert any("uncountedTerminatedPods.failed[0]" in m and "duplicates" in m for m in got)


def test_cron_job_defaults_and_validation() -> None:
    obj = cron_job()
    assert messages("CronJob", obj) == []
    spec = obj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    got = messages("CronJob", cron_job(schedule="* * *", timeZone="Mars/Olympus",
                                       concurrencyPolicy="Sometimes"))
    assert 'spec.schedule: Invalid value: "* * *": expected exactly 5 fields, found 3: [* * *]' in got
    assert 'spec.timeZone: Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus' in got
    assert any(m.startswith('spec.concurrencyPolicy: Unsupported value: "Sometimes"') for m in got)
    assert any("TZ" in m for m in messages("CronJob", cron_job(schedule="TZ=UTC 0 * * * *")))
    long = cron_job()
    long["metadata"]["name"] = "a" * 53
    assert any("must be no more than 52 characters" in m for m in messages("CronJob", long))
    assert messages("CronJob", cron_job(schedule="@hourly", timeZone="Europe/Paris")) == []


def test_cron_schedule_stepping() -> None:
    assert cronschedule.next_after("*/5 * * * *", None, 61) == 300
    assert cronschedule.next_after("@hourly", None, 0) == 3600
    # 09:00 in Paris (UTC+1 in January) is 08:00 UTC
    assert cronschedule.next_after("0 9 * * *", "Europe/Paris", 0) == 8 * 3600
    assert cronschedule.most_recent("*/1 * * * *", None, 0, 300) == (300, 5)
    assert cronschedule.most_recent("*/1 * * * *", None, 0, 59) == (None, 0)
    last, missed = cronschedule.most_recent("*/1 * * * *", None, 0, 60 * 500 + 30)
    assert last == 60 * 500 and missed > 100
    assert cronschedule.schedule_error("@every 1m") is not None
    assert cronschedule.schedule_error("61 * * * *") is not None


def test_index_strings() -> None:
    assert format_indexes({1, 3, 4, 5, 7, 8}) == "1,3-5,7-8"
    assert parse_indexes("1,3-5,7", 10) == {1, 3, 4, 5, 7}
    for bad in ("3,1", "1-1", "a", "1,12"):
        with pytest.raises(ValueError):
            parse_indexes(bad, 10)


def test_table_rows() -> None:
    obj = job()
    apply_defaults("Job", obj)
    obj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    obj["status"] = {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
                     "completionTime": "2024-01-01T00:00:07Z",
                     "conditions": [{"type": "Complete", "status": "True"}]}
    cells = row_cells("Job", obj, 1704067260.0)
    assert cells[:5] == ["pi", "Complete", "1/1", "7s", "60s"]
    cj = cron_job(timeZone="Etc/UTC")
    apply_defaults("CronJob", cj)
    cj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    cj["status"] = {"active": [{"name": "x"}], "lastScheduleTime": "2024-01-01T00:00:30Z"}
    assert row_cells("CronJob", cj, 1704067260.0)[:7] == ["hello", "*/1 * * * *", "Etc/UTC", "False", 1,
                                               "30s", "60s"]


def test_a_schedule_that_never_fires_and_hostile_index_strings() -> None:
    assert cronschedule.schedule_error("0 0 30 2 *") is None  # robfig accepts it too
    assert cronschedule.next_after("0 0 30 2 *", None, 1.7e9) is None
    assert cronschedule.most_recent("0 0 30 2 *", None, 1.7e9, 1.8e9) == (None, 0)
    # no completions known: indexes stay below 100000, so the set stays small
    hostile = ",".join(f"{i * 200000}-{i * 200000 + 99999}" for i in range(1000))
    with pytest.raises(ValueError, match="too large"):
        parse_indexes(hostile, 0)
