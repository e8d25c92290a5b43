"""Pure admission decisions: no server, plain dicts in, decisions out."""

from __future__ import annotations

from fractions import Fraction

import pytest

from minikube_py.api import errors
from minikube_py.apiserver.admission import Attributes, build_chain, check_names
from minikube_py.api import quota as qu
from minikube_py.apiserver.admission.always import AlwaysAdmit, AlwaysDeny
from minikube_py.apiserver.admission.limit_ranger import ANNOTATION, merge_defaults, violations
from minikube_py.apiserver.admission.security_context_deny import SecurityContextDeny, violation
from minikube_py.apiserver.admission.service_account import assign_account
from minikube_py.registry import resources


def pod(*containers: dict, **spec) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"containers": list(containers), **spec}}


def container(name: str = "c", requests: dict | None = None, limits: dict | None = None) -> dict:
    res = {}
    if requests is not None:
        res["requests"] = requests
    if limits is not None:
        res["limits"] = limits
    return {"name": name, "image": "nginx", "resources": res}


def limit_range(*items: dict) -> dict:
    return {"metadata": {"name": "lr"}, "spec": {"limits": list(items)}}


def attrs(op: str = "CREATE", obj: dict | None = None) -> Attributes:
    return Attributes(op, resources.PODS, "default", "p", "", obj)


async def test_always_admit_and_deny() -> None:
    await AlwaysAdmit().admit(attrs())
    with pytest.raises(errors.StatusError) as exc:
        await AlwaysDeny().admit(attrs("DELETE"))
    assert exc.value.code == 403 and exc.value.reason == "Forbidden"
    assert exc.value.message == ('pods "p" is forbidden: admission control is denying all '
                                 "modifications")


def test_unknown_plugin_names_it_and_lists_known() -> None:
    with pytest.raises(ValueError, match='"Bogus".*AlwaysAdmit, AlwaysDeny, CertificateApproval, '
                       'CertificateSigning, CertificateSubjectRestriction, '
                       'DefaultIngressClass, DefaultStorageClass, DefaultTolerationSeconds, '
                       'LimitRanger'):
        check_names(["AlwaysAdmit", "Bogus"])
    with pytest.raises(ValueError, match="Nope"):
        build_chain(["Nope"], lambda group, resource: None)


def test_limit_ranger_merges_defaults_and_annotates() -> None:
    lr = limit_range({"type": "Container", "default": {"cpu": "500m", "memory": "128Mi"},
                      "defaultRequest": {"cpu": "100m"}})
    p = pod(container("a", requests={"memory": "64Mi"}), container("b", limits={"cpu": "1"}))
    merge_defaults(p, [lr])
    a, b = (c["resources"] for c in p["spec"]["containers"])
    assert a == {"requests": {"memory": "64Mi", "cpu": "100m"},
                 "limits": {"cpu": "500m", "memory": "128Mi"}}
    assert b == {"requests": {"cpu": "100m"}, "limits": {"cpu": "1", "memory": "128Mi"}}
    assert p["metadata"]["annotations"][ANNOTATION] == (
        "LimitRanger plugin set: cpu request for container a; cpu, memory limit for container a; "
        "cpu request for container b; memory limit for container b")


def test_limit_ranger_no_defaults_leaves_pod_alone() -> None:
    p = pod(container("a"))
    assert merge_defaults(p, [limit_range({"type": "Pod", "max": {"cpu": "2"}})]) == []
    assert "annotations" not in p["metadata"]


@pytest.mark.parametrize(("item", "c", "message"), [
    ({"type": "Container", "min": {"cpu": "100m"}}, container(requests={"cpu": "50m"}),
     "minimum cpu usage per Container is 100m, but request is 50m"),
    ({"type": "Container", "min": {"cpu": "100m"}}, container(),
     "minimum cpu usage per Container is 100m.  No request is specified"),
    ({"type": "Container", "min": {"cpu": "100m"}},
     container(requests={"cpu": "200m"}, limits={"cpu": "0.05"}),
     "minimum cpu usage per Container is 100m, but limit is 50m"),
    ({"type": "Container", "max": {"memory": "1Gi"}}, container(limits={"memory": "2Gi"}),
     "maximum memory usage per Container is 1Gi, but limit is 2Gi"),
    ({"type": "Container", "max": {"memory": "1Gi"}}, container(requests={"memory": "1Mi"}),
     "maximum memory usage per Container is 1Gi.  No limit is specified"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}},
     container(requests={"cpu": "100m"}, limits={"cpu": "500m"}),
     "cpu max limit to request ratio per Container is 2, but provided ratio is 5.000000"),
    ({"type": "Container", "maxLimitRequestRatio": {"cpu": "2"}}, container(limits={"cpu": "1"}),
     "cpu max limit to request ratio per Container is 2, but no request is specified or "
     "request is 0"),
])
def test_limit_ranger_violations(item: dict, c: dict, message: str) -> None:
    assert violations(pod(c), [limit_range(item)]) == [message]


def test_limit_ranger_pod_type_sums_containers() -> None:
    lr = limit_range({"type": "Pod", "max": {"cpu": "1"}})
    ok = pod(container("a", limits={"cpu": "500m"}), container("b", limits={"cpu": "500m"}))
    bad = pod(container("a", limits={"cpu": "600m"}), container("b", limits={"cpu": "500m"}))
    assert violations(ok, [lr]) == []
    assert violations(bad, [lr]) == ["maximum cpu usage per Pod is 1, but limit is 1100m"]


def test_quota_usage_of_pods_and_services() -> None:
    p = pod(container("a", requests={"cpu": "250m", "memory": "64Mi"}, limits={"cpu": "1"}),
            container("b", requests={"cpu": "250m"}))
    u = qu.usage("", "pods", p)
    assert u["pods"] == 1 and u["count/pods"] == 1
    assert u["requests.cpu"] == u["cpu"] == Fraction(1, 2)
    assert u["limits.cpu"] == 1 and u["memory"] == 64 * 2**20
    # count/pods tracks every stored pod; pods and compute only those not finished
    assert qu.usage("", "pods", {**p, "status": {"phase": "Succeeded"}}) == {"count/pods": 1}
    svc = {"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 81}]}}
    su = qu.usage("", "services", svc)
    assert su["services"] == 1 and su["services.nodeports"] == 2
    assert su["services.loadbalancers"] == 0
    assert qu.usage("apps", "deployments", {}) == {"count/deployments.apps": 1}
    assert qu.tracked_resource("count/deployments.apps") == ("apps", "deployments")
    assert qu.tracked_resource("limits.memory") == ("", "pods")
    assert qu.tracked_resource("bogus") is None


def test_quota_check_exceeded_message_and_new_usage() -> None:
    quota = {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "2", "requests.cpu": "1"}}}
    delta = {"pods": Fraction(1), "requests.cpu": Fraction(1, 2), "count/pods": Fraction(1)}
    new_used, reason = qu.check(quota, {"pods": Fraction(1), "requests.cpu": Fraction(0)}, delta)
    assert reason is None and new_used == {"pods": 2, "requests.cpu": Fraction(1, 2)}
    new_used, reason = qu.check(quota, {"pods": Fraction(2), "requests.cpu": Fraction(3, 4)},
                                delta)
    assert new_used is None
    assert reason == ("exceeded quota: q, requested: pods=1,requests.cpu=500m, "
                      "used: pods=2,requests.cpu=750m, limited: pods=2,requests.cpu=1")
    assert qu.check(quota, {}, {"count/secrets": Fraction(1)}) == (None, None)
    assert qu.status_for(quota, {"pods": Fraction(2), "requests.cpu": Fraction(1, 2)}) == {
        "hard": {"pods": "2", "requests.cpu": "1"}, "used": {"pods": "2", "requests.cpu": "500m"}}


def test_quota_constraints_and_scopes() -> None:
    hard = {"requests.cpu": "1", "limits.memory": "1Gi", "pods": "5"}
    p = pod(container("a", requests={"cpu": "1m"}), container("b"))
    assert qu.missing_requests(p, hard) == "must specify limits.memory for: a,b; requests.cpu for: b"
    assert qu.missing_requests(p, {"pods": "1"}) is None
    best_effort = {"spec": {"scopes": ["BestEffort"], "hard": {"pods": "1"}}}
    assert qu.scopes_match(best_effort, "", "pods", pod(container()))
    assert not qu.scopes_match(best_effort, "", "pods", pod(container(requests={"cpu": "1"})))
    assert not qu.scopes_match(best_effort, "", "services", {})
    assert qu.scopes_match({"spec": {}}, "", "services", {})


def test_quota_used_of_requires_every_hard_name() -> None:
    quota = {"spec": {"hard": {"pods": "2", "services": "1"}}, "status": {"used": {"pods": "1"}}}
    assert qu.used_of(quota) is None
    quota["status"]["used"]["services"] = "0"
    assert qu.used_of(quota) == {"pods": "1", "services": "0"}


@pytest.mark.parametrize(("spec", "message"), [
    ({"securityContext": {"supplementalGroups": [1]}},
     "pod.Spec.SecurityContext.SupplementalGroups is forbidden"),
    ({"securityContext": {"runAsUser": 0}}, "pod.Spec.SecurityContext.RunAsUser is forbidden"),
    ({"securityContext": {"seLinuxOptions": {"level": "s0"}}},
     "pod.Spec.SecurityContext.SELinuxOptions is forbidden"),
    ({"securityContext": {"fsGroup": 2}}, "pod.Spec.SecurityContext.FSGroup is forbidden"),
    ({"containers": [{"name": "c", "securityContext": {"runAsUser": 1}}]},
     "SecurityContext.RunAsUser is forbidden"),
    ({"initContainers": [{"name": "i", "securityContext": {"seLinuxOptions": {}}}]},
     "SecurityContext.SELinuxOptions is forbidden"),
    ({"containers": [{"name": "c", "securityContext": {"runAsNonRoot": True}}]}, None),
])
def test_security_context_deny(spec: dict, message: str | None) -> None:
    assert violation({"spec": spec}) == message


async def test_security_context_deny_plugin_forbids() -> None:
    with pytest.raises(errors.StatusError) as exc:
        await SecurityContextDeny().admit(attrs(obj={"spec": {"securityContext": {"runAsUser": 0}}}))
    assert exc.value.code == 403
    assert exc.value.message.startswith('pods "p" is forbidden: pod.Spec.SecurityContext')


def test_service_account_assignment() -> None:
    p = pod(container())
    assert assign_account(p) == "default" and p["spec"]["serviceAccountName"] == "default"
    named = pod(container(), serviceAccountName="builder")
    assert assign_account(named) == "builder"
    mirror = pod(container())
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    assert assign_account(mirror) is None and "serviceAccountName" not in mirror["spec"]
