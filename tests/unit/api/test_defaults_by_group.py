"""Defaults belong to a group and kind: a custom resource whose kind is `Job` or `Deployment`
in its own group gets none of batch's or apps' defaults (the e2e CRD tests name kinds so)."""

from __future__ import annotations

from minikube_py.api.defaults import apply_defaults


def test_a_custom_kind_named_like_a_built_in_one_is_not_defaulted() -> None:
    job = {"spec": {"size": 1}}
    apply_defaults("Job", job, "example.com")
    assert job == {"spec": {"size": 1}}
    apply_defaults("Job", job, "batch")
    assert job["spec"]["backoffLimit"] == 6 and job["spec"]["completions"] == 1


def test_without_a_group_the_kind_decides() -> None:
    pod = {"spec": {"containers": [{"name": "c", "image": "x"}]}}
    apply_defaults("Pod", pod)
    assert pod["spec"]["restartPolicy"] == "Always"
