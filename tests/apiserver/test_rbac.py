"""RBAC end to end on the secure port (--authorization-mode RBAC, token users): upstream's
403 for a user without bindings, a Role bound and then allowed, escalation refused, the
bootstrap policy, validation of the four kinds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.apiserver.conftest import pod
from tests.apiserver.test_secure import Secure, serve

RBAC = "/apis/rbac.authorization.k8s.io/v1"
PODS = "/api/v1/namespaces/default/pods"
TOKENS = ('admin-token,admin,1,"system:masters"\nalice-token,alice,2\nbob-token,bob,3,"devs"\n'
          "robot-token,system:serviceaccount:default:robot,4\n")


@pytest.fixture
async def secure(tmp_path: Path):
    api, close = await serve(tmp_path, TOKENS, authorization_mode="RBAC",
                             authorization_policy_file=None)
    try:
        yield api
    finally:
        await close()


def role(name: str, rules: list[dict], ns: str = "default") -> dict:
    kind = "Role" if ns else "ClusterRole"
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "rules": rules}


def binding(name: str, kind: str, role_name: str, subjects: list[dict],
            ns: str = "default") -> dict:
    meta = {"name": name, **({"namespace": ns} if ns else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding" if ns else "ClusterRoleBinding", "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind,
                        "name": role_name},
            "subjects": subjects}


POD_READER = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]


async def eventually(check, timeout: float = 5.0) -> Any:
    """The authorizer's informers follow the store asynchronously: poll until `check` holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        result = await check()
        if result or asyncio.get_running_loop().time() > deadline:
            return result
        await asyncio.sleep(0.02)


async def test_no_binding_is_forbidden_with_upstreams_message(secure: Secure) -> None:
    status, body = await secure.call("GET", PODS, "alice-token")
    assert status == 403
    assert body["reason"] == "Forbidden"
    assert body["message"] == ('pods is forbidden: User "alice" cannot list resource "pods" in '
                               'API group "" in the namespace "default"')
    assert body["details"] == {"kind": "pods"}
    status, body = await secure.call("GET", "/api/v1/nodes", "alice-token")
    assert body["message"] == ('nodes is forbidden: User "alice" cannot list resource "nodes" '
                               'in API group "" at the cluster scope')
    # system:masters is cluster-admin through the bootstrap binding
    assert (await secure.call("GET", PODS, "admin-token"))[0] == 200
    # every authenticated user may discover (system:discovery) and read /version
    assert (await secure.call("GET", "/apis", "alice-token"))[0] == 200
    assert (await secure.call("GET", "/version", "alice-token"))[0] == 200
    status, body = await secure.call("GET", "/metrics", "alice-token")
    assert (status, body["message"]) == (403, 'forbidden: User "alice" cannot get path "/metrics"')


async def test_bind_a_role_then_allowed(secure: Secure) -> None:
    assert (await secure.call("POST", PODS, "admin-token", pod("p1")))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/roles", "admin-token",
                              role("pod-reader", POD_READER)))[0] == 201
    status, body = await secure.call(
        "POST", f"{RBAC}/namespaces/default/rolebindings", "admin-token",
        binding("alice-reads", "Role", "pod-reader", [{"kind": "User", "name": "alice"}]))
    assert status == 201, body
    assert body["subjects"][0]["apiGroup"] == "rbac.authorization.k8s.io"  # defaulted

    async def allowed() -> bool:
        return (await secure.call("GET", PODS, "alice-token"))[0] == 200
    assert await eventually(allowed)
    assert (await secure.call("GET", PODS + "/p1", "alice-token"))[0] == 200
    # only what the role grants, only where it is bound
    status, body = await secure.call("DELETE", PODS + "/p1", "alice-token")
    assert status == 403
    assert body["message"] == ('pods "p1" is forbidden: User "alice" cannot delete resource '
                               '"pods" in API group "" in the namespace "default"')
    assert (await secure.call("GET", "/api/v1/namespaces/kube-system/pods",
                              "alice-token"))[0] == 403
    # a group subject through a ClusterRoleBinding; a namespace-less service account in a
    # RoleBinding is the binding namespace's
    assert (await secure.call("POST", f"{RBAC}/clusterroles", "admin-token",
                              role("node-reader", [{"apiGroups": [""], "resources": ["nodes"],
                                                    "verbs": ["list"]}], ns="")))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/clusterrolebindings", "admin-token",
                              binding("devs-nodes", "ClusterRole", "node-reader",
                                      [{"kind": "Group", "name": "devs"}], ns="")))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/rolebindings", "admin-token",
                              binding("robot", "ClusterRole", "view",
                                      [{"kind": "ServiceAccount", "name": "robot"}])))[0] == 201

    async def group_and_sa() -> bool:
        return ((await secure.call("GET", "/api/v1/nodes", "bob-token"))[0] == 200
                and (await secure.call("GET", PODS, "robot-token"))[0] == 200)
    assert await eventually(group_and_sa)
    # removing the binding takes the right away again
    assert (await secure.call("DELETE", f"{RBAC}/namespaces/default/rolebindings/alice-reads",
                              "admin-token"))[0] == 200

    async def revoked() -> bool:
        return (await secure.call("GET", PODS, "alice-token"))[0] == 403
    assert await eventually(revoked)


async def test_escalation_is_refused(secure: Secure) -> None:
    # alice may manage Roles and RoleBindings in default (and read pods), nothing more (`*`
    # would include `escalate` and `bind`)
    manager = role("rbac-manager", [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
         "verbs": ["create", "get", "list", "update", "delete"]}, *POD_READER])
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/roles", "admin-token",
                              manager))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/rolebindings", "admin-token",
                              binding("alice-manages", "Role", "rbac-manager",
                                      [{"kind": "User", "name": "alice"}])))[0] == 201
    roles = f"{RBAC}/namespaces/default/roles"

    async def can_create() -> tuple[int, Any]:
        return await secure.call("POST", roles, "alice-token", role("reader2", POD_READER))
    status, body = await eventually(lambda: _ok(can_create))
    assert status == 201, body
    # a role granting what she lacks
    status, body = await secure.call("POST", roles, "alice-token", role("deleter", [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete", "get"]}]))
    assert status == 403
    assert body["message"] == (
        'roles.rbac.authorization.k8s.io "deleter" is forbidden: user "alice" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}')
    assert body["details"] == {"name": "deleter", "group": "rbac.authorization.k8s.io",
                               "kind": "roles"}
    # binding a role she does not hold (edit) is refused; one she holds (her own) is not
    rolebindings = f"{RBAC}/namespaces/default/rolebindings"
    status, body = await secure.call("POST", rolebindings, "alice-token", binding(
        "bob-edits", "ClusterRole", "edit", [{"kind": "User", "name": "bob"}]))
    assert status == 403
    assert body["message"].startswith(
        'rolebindings.rbac.authorization.k8s.io "bob-edits" is forbidden: user "alice" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        "currently held:\n")
    assert (await secure.call("POST", rolebindings, "alice-token", binding(
        "bob-reads", "Role", "reader2", [{"kind": "User", "name": "bob"}])))[0] == 201
    status, body = await secure.call("POST", rolebindings, "alice-token", binding(
        "ghost", "Role", "no-such-role", [{"kind": "User", "name": "bob"}]))
    assert (status, body["message"]) == (
        404, 'roles.rbac.authorization.k8s.io "no-such-role" not found')
    # a bad roleRef is validation's 422, not an escalation question
    status, body = await secure.call("POST", rolebindings, "alice-token", binding(
        "odd", "Secret", "x", [{"kind": "User", "name": "bob"}]))
    assert status == 422, body
    # `escalate` on roles lifts the check, `bind` lifts it for bindings
    assert (await secure.call("POST", roles, "admin-token", role("escalator", [
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"],
         "verbs": ["escalate"]},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterroles"],
         "verbs": ["bind"], "resourceNames": ["edit"]}])))[0] == 201
    assert (await secure.call("POST", rolebindings, "admin-token", binding(
        "alice-escalates", "Role", "escalator", [{"kind": "User", "name": "alice"}])))[0] == 201

    async def escalates() -> tuple[int, Any]:
        return await secure.call("POST", roles, "alice-token", role("deleter", [
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["delete"]}]))
    assert (await eventually(lambda: _ok(escalates)))[0] == 201
    assert (await secure.call("POST", rolebindings, "alice-token", binding(
        "bob-edits", "ClusterRole", "edit", [{"kind": "User", "name": "bob"}])))[0] == 201
    # an aggregationRule needs system:masters
    status, body = await secure.call("POST", f"{RBAC}/clusterroles", "alice-token", {
        **role("agg", [], ns=""), "aggregationRule": {
            "clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}})
    assert status == 403


async def _ok(call) -> tuple[int, Any] | None:
    status, body = await call()
    return (status, body) if status != 403 else None


async def test_bootstrap_policy(secure: Secure) -> None:
    status, body = await secure.call("GET", f"{RBAC}/clusterroles/cluster-admin", "admin-token")
    assert status == 200
    assert body["metadata"]["annotations"] == {
        "rbac.authorization.kubernetes.io/autoupdate": "true"}
    assert body["metadata"]["labels"] == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert body["rules"] == [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                             {"nonResourceURLs": ["*"], "verbs": ["*"]}]
    names = {item["metadata"]["name"] for item in
             (await secure.call("GET", f"{RBAC}/clusterroles", "admin-token"))[1]["items"]}
    assert {"cluster-admin", "admin", "edit", "view", "system:discovery", "system:basic-user",
            "system:public-info-viewer"} <= names
    status, body = await secure.call("GET", f"{RBAC}/clusterrolebindings/cluster-admin",
                                     "admin-token")
    assert body["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group",
                                 "name": "system:masters"}]


async def test_validation(secure: Secure) -> None:
    status, body = await secure.call("POST", f"{RBAC}/namespaces/default/roles", "admin-token",
                                     role("bad", [{"apiGroups": [""], "resources": ["pods"]},
                                                  {"nonResourceURLs": ["/x"], "verbs": ["get"]},
                                                  {"verbs": ["get"]}]))
    assert status == 422
    assert body["message"] == (
        'Role.rbac.authorization.k8s.io "bad" is invalid: [rules[0].verbs: Required value: '
        'verbs must contain at least one value, rules[1].nonResourceURLs: Invalid value: '
        '["/x"]: namespaced rules cannot apply to non-resource URLs, rules[2].apiGroups: '
        'Required value: resource rules must supply at least one api group, '
        'rules[2].resources: Required value: resource rules must supply at least one '
        'resource]')
    status, body = await secure.call("POST", f"{RBAC}/clusterrolebindings", "admin-token",
                                     binding("b", "Role", "x", [{"kind": "ServiceAccount",
                                                                 "name": "sa"},
                                                                {"kind": "Robot", "name": "r"}],
                                             ns=""))
    assert status == 422
    assert body["message"] == (
        'ClusterRoleBinding.rbac.authorization.k8s.io "b" is invalid: [roleRef.kind: '
        'Unsupported value: "Role": supported values: "ClusterRole", subjects[0].namespace: '
        'Required value, subjects[1].kind: Unsupported value: "Robot": supported values: '
        '"ServiceAccount", "User", "Group"]')
    rb = f"{RBAC}/namespaces/default/rolebindings"
    assert (await secure.call("POST", rb, "admin-token",
                              binding("rb", "Role", "a", [])))[0] == 201
    status, current = await secure.call("GET", rb + "/rb", "admin-token")
    current["roleRef"]["name"] = "b"
    status, body = await secure.call("PUT", rb + "/rb", "admin-token", current)
    assert status == 422
    assert "roleRef: Invalid value: " in body["message"]
    assert body["message"].endswith(": cannot change roleRef")


async def test_aggregation(secure: Secure) -> None:
    async def rules(name: str) -> list[dict]:
        return (await secure.call("GET", f"{RBAC}/clusterroles/{name}", "admin-token"))[1]["rules"]

    # admin ⊇ edit ⊇ view, filled before the server serves
    view, edit, admin = await rules("view"), await rules("edit"), await rules("admin")
    assert {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "list", "watch"]} \
        in view
    assert all(rule in edit for rule in view) and all(rule in admin for rule in edit)
    assert len(view) < len(edit) < len(admin)
    # a role labelled aggregate-to-view extends view, then edit and admin
    crontabs = {"apiGroups": ["stable.example.com"], "resources": ["crontabs"],
                "verbs": ["get", "list", "watch"]}
    extra = role("crontab-viewer", [crontabs], ns="")
    extra["metadata"]["labels"] = {"rbac.authorization.k8s.io/aggregate-to-view": "true"}
    assert (await secure.call("POST", f"{RBAC}/clusterroles", "admin-token", extra))[0] == 201

    async def everywhere() -> bool:
        return all([crontabs in await rules(name) for name in ("view", "edit", "admin")])
    assert await eventually(everywhere)


async def test_reviews_ask_rbac(secure: Secure) -> None:
    """SelfSubjectAccessReview and SelfSubjectRulesReview under RBAC: system:basic-user lets
    every user ask, and the answers are the RBAC authorizer's."""
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/roles", "admin-token",
                              role("pod-reader", POD_READER)))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/rolebindings", "admin-token",
                              binding("alice-reads", "Role", "pod-reader",
                                      [{"kind": "User", "name": "alice"}])))[0] == 201
    access = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"

    async def can(verb: str) -> bool:
        code, body = await secure.call("POST", access, "alice-token", {"spec": {
            "resourceAttributes": {"verb": verb, "resource": "pods", "namespace": "default"}}})
        assert code == 201, body
        return body["status"]["allowed"]
    assert await eventually(lambda: can("list"))
    assert await can("delete") is False
    code, body = await secure.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                                   "alice-token", {"spec": {"namespace": "default"}})
    assert code == 201, body
    status = body["status"]
    assert {"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]} \
        in status["resourceRules"]
    assert {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version",
                                                  "/version/"]} in status["nonResourceRules"]
    assert status["incomplete"] is False


async def test_bootstrap_reconcile_respects_autoupdate(secure: Secure) -> None:
    """A later start adds back what was removed from a bootstrap role, unless its autoupdate
    annotation is "false" (reconciliation's rules)."""
    from minikube_py.apiserver.authz.rbac.bootstrap import reconcile
    from minikube_py.apiserver.server import SERVER_KEY

    server = secure.app[SERVER_KEY]
    registries = (server.registries["rbac.authorization.k8s.io", "v1", "clusterroles"],
                  server.registries["rbac.authorization.k8s.io", "v1", "clusterrolebindings"])
    url = f"{RBAC}/clusterroles/system:basic-user"
    _, original = await secure.call("GET", url, "admin-token")
    trimmed = {**original, "rules": original["rules"][:1]}
    assert (await secure.call("PUT", url, "admin-token", trimmed))[0] == 200
    assert await reconcile(*registries) == {"clusterrole/system:basic-user": "updated"}
    _, body = await secure.call("GET", url, "admin-token")
    assert body["rules"] == original["rules"]
    assert await reconcile(*registries) == {}  # nothing missing: no write
    body["rules"] = body["rules"][:1]
    body["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
    assert (await secure.call("PUT", url, "admin-token", body))[0] == 200
    assert await reconcile(*registries) == {}
    assert len((await secure.call("GET", url, "admin-token"))[1]["rules"]) == 1
    # a deleted binding is created again
    assert (await secure.call("DELETE", f"{RBAC}/clusterrolebindings/system:discovery",
                              "admin-token"))[0] == 200
    assert await reconcile(*registries) == {"clusterrolebinding/system:discovery": "created"}


async def test_cluster_role_validation(secure: Secure) -> None:
    url = f"{RBAC}/clusterroles"
    ok = role("urls", [{"nonResourceURLs": ["/logs/*"], "verbs": ["get"]}], ns="")
    assert (await secure.call("POST", url, "admin-token", ok))[0] == 201
    mixed = role("mixed", [{"nonResourceURLs": ["/x"], "resources": ["pods"], "apiGroups": [""],
                            "verbs": ["get"]}], ns="")
    status, body = await secure.call("POST", url, "admin-token", mixed)
    assert (status, body["message"]) == (422, (
        'ClusterRole.rbac.authorization.k8s.io "mixed" is invalid: rules[0].nonResourceURLs: '
        'Invalid value: ["/x"]: rules cannot apply to both regular resources and non-resource '
        "URLs"))
    empty = {**role("agg", [], ns=""), "aggregationRule": {}}
    status, body = await secure.call("POST", url, "admin-token", empty)
    assert (status, body["message"]) == (422, (
        'ClusterRole.rbac.authorization.k8s.io "agg" is invalid: '
        "aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector "
        "required if aggregationRule is non-nil"))
    status, body = await secure.call("POST", url, "admin-token",
                                     {**role("a/b", [], ns="")})
    assert status == 422 and "may not contain '/'" in body["message"], body


async def test_impersonation_is_authorized_by_rbac(secure: Secure) -> None:
    """`impersonate` on users is an RBAC verb like any other (resourceNames included), and the
    impersonated request is authorized as the impersonated user."""
    assert (await secure.call("POST", f"{RBAC}/clusterroles", "admin-token", role(
        "impersonate-bob", [{"apiGroups": [""], "resources": ["users"],
                             "verbs": ["impersonate"], "resourceNames": ["bob"]}],
        ns="")))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/clusterrolebindings", "admin-token", binding(
        "alice-as-bob", "ClusterRole", "impersonate-bob", [{"kind": "User", "name": "alice"}],
        ns="")))[0] == 201

    async def as_user(name: str) -> tuple[int, Any]:
        return await secure.call("GET", PODS, "alice-token", headers={"Impersonate-User": name})
    status, body = await eventually(lambda: _not_alice(as_user("bob")))
    assert status == 403
    assert body["message"].startswith('pods is forbidden: User "bob" cannot list')
    status, body = await as_user("carol")
    assert status == 403
    assert 'User "alice" cannot impersonate resource "users"' in body["message"]


async def _not_alice(call) -> tuple[int, Any] | None:
    status, body = await call
    return None if 'User "alice"' in str(body) else (status, body)


async def test_a_list_or_watch_of_one_name_is_authorized_by_that_name(secure: Secure) -> None:
    """fieldSelector=metadata.name=<name> names the object for authorization (upstream's
    RequestInfoFactory), so a resourceNames rule allows `kubectl wait`'s single-object
    list/watch, and only of that name."""
    only_web = [{"apiGroups": [""], "resources": ["pods"], "resourceNames": ["web"],
                 "verbs": ["get", "list", "watch"]}]
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/roles", "admin-token",
                              role("web-only", only_web)))[0] == 201
    assert (await secure.call("POST", f"{RBAC}/namespaces/default/rolebindings", "admin-token",
                              binding("alice-web", "Role", "web-only",
                                      [{"kind": "User", "name": "alice"}])))[0] == 201
    assert (await secure.call("POST", PODS, "admin-token", pod("web")))[0] == 201

    async def allowed() -> bool:
        return (await secure.call("GET", f"{PODS}?fieldSelector=metadata.name%3Dweb",
                                  "alice-token"))[0] == 200
    assert await eventually(allowed)
    status, listed = await secure.call("GET", f"{PODS}?fieldSelector=metadata.name%3Dweb",
                                       "alice-token")
    assert [p["metadata"]["name"] for p in listed["items"]] == ["web"]  # still a list
    status, _ = await secure.call(
        "GET", f"{PODS}?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dweb",
        "alice-token")
    assert status == 200
    assert (await secure.call("GET", PODS, "alice-token"))[0] == 403
    status, body = await secure.call("GET", f"{PODS}?fieldSelector=metadata.name%3Dother",
                                     "alice-token")
    assert status == 403 and 'cannot list resource "pods"' in body["message"]
    assert (await secure.call("GET", f"{PODS}?fieldSelector=metadata.name!%3Dweb",
                              "alice-token"))[0] == 403
