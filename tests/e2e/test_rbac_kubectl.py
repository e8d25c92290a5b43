"""RBAC objects through real kubectl 1.31: `kubectl create role/clusterrole/rolebinding/
clusterrolebinding` and `kubectl get` with upstream's columns (ROLE, and USERS, GROUPS,
SERVICEACCOUNTS with -o wide)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.kubectl_run import KUBECTL, kubectl


@pytest.fixture
def server(tmp_path: Path):
    server = ServerThread(tmp_path / "data", authorization_mode="RBAC").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_creates_and_lists_rbac_objects(server: ServerThread, tmp_path: Path) -> None:
    def run(*args: str, ok: bool = True):
        return kubectl(server.url, tmp_path, *args, ok=ok)

    assert run("create", "role", "pod-reader", "--verb=get,list", "--resource=pods",
               "--resource-name=a").stdout == "role.rbac.authorization.k8s.io/pod-reader created\n"
    assert run("create", "clusterrole", "node-reader", "--verb=get", "--resource=nodes,pods/status",
               ).stdout == "clusterrole.rbac.authorization.k8s.io/node-reader created\n"
    assert run("create", "rolebinding", "rb", "--role=pod-reader", "--user=alice",
               "--group=devs", "--serviceaccount=default:robot").stdout \
        == "rolebinding.rbac.authorization.k8s.io/rb created\n"
    assert run("create", "clusterrolebinding", "crb", "--clusterrole=node-reader",
               "--user=bob").stdout \
        == "clusterrolebinding.rbac.authorization.k8s.io/crb created\n"
    rules = run("get", "role", "pod-reader", "-o", "jsonpath={.rules}").stdout
    assert rules == ('[{"apiGroups":[""],"resourceNames":["a"],"resources":["pods"],'
                     '"verbs":["get","list"]}]')
    wide = run("get", "rolebinding", "rb", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    name, ref, _age, user, group, sa = wide[1].split()
    assert (name, ref, user, group, sa) == ("rb", "Role/pod-reader", "alice", "devs",
                                            "default/robot")
    assert run("get", "clusterrolebinding", "crb").stdout.splitlines()[0].split() \
        == ["NAME", "ROLE", "AGE"]
    roles = run("get", "clusterroles").stdout.splitlines()
    assert roles[0].split() == ["NAME", "CREATED", "AT"]
    names = {line.split()[0] for line in roles[1:]}
    assert {"cluster-admin", "admin", "edit", "view", "node-reader"} <= names
    # client-side apply (a strategic merge patch the second time) and explain
    manifest = ("apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\n"
                "metadata: {name: applied, namespace: default}\n"
                "rules:\n- {apiGroups: [\"\"], resources: [pods], verbs: [%s]}\n")
    assert "role.rbac.authorization.k8s.io/applied created" in kubectl(
        server.url, tmp_path, "apply", "-f", "-", stdin=manifest % "get").stdout
    assert "role.rbac.authorization.k8s.io/applied configured" in kubectl(
        server.url, tmp_path, "apply", "-f", "-", stdin=manifest % "get, list").stdout
    assert run("get", "role", "applied", "-o", "jsonpath={.rules[0].verbs}").stdout \
        == '["get","list"]'
    assert "FIELD: rules <[]PolicyRule>" in run("explain", "role.rules").stdout
    # validation reaches kubectl as upstream words it
    bad = run("create", "rolebinding", "bad", "--clusterrole=view", "--serviceaccount=robot",
              ok=False)
    assert bad.returncode == 1
    assert "serviceaccount must be <namespace>:<name>" in bad.stderr


@pytest.fixture
def secure_rbac(tmp_path: Path):
    from tests.e2e.test_auth_reviews_kubectl import SecureThread

    tokens = 'admin-token,admin,1,"system:masters"\nalice-token,alice,2\n'
    server = SecureThread(tmp_path, tokens, authorization_mode="RBAC",
                          authorization_policy_file=None).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"needs {KUBECTL}")
def test_kubectl_as_a_user_under_rbac(secure_rbac, tmp_path: Path) -> None:
    """Over TLS with tokens: kubectl shows upstream's Forbidden; after the admin binds `view`
    (an aggregated bootstrap role) alice can read; `auth can-i` answers from RBAC."""
    from tests.e2e.test_auth_reviews_kubectl import runner

    run = runner(secure_rbac, KUBECTL)
    denied = run("alice-token", "get", "pods")
    assert denied.returncode == 1
    assert ('Error from server (Forbidden): pods is forbidden: User "alice" cannot list '
            'resource "pods" in API group "" in the namespace "default"') in denied.stderr
    bound = run("admin-token", "create", "rolebinding", "alice-view", "--clusterrole=view",
                "--user=alice")
    assert bound.returncode == 0, bound.stderr
    deadline = time.monotonic() + 10
    while (listed := run("alice-token", "get", "pods")).returncode != 0:
        assert time.monotonic() < deadline, listed.stderr
        time.sleep(0.05)
    assert "No resources found in default namespace." in listed.stderr
    yes = run("alice-token", "auth", "can-i", "watch", "deployments.apps")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes"), yes.stderr
    no = run("alice-token", "auth", "can-i", "get", "secrets")
    assert (no.returncode, no.stdout.strip()) == (1, "no"), no.stderr
    escalate = run("alice-token", "create", "role", "x", "--verb=get", "--resource=pods")
    assert escalate.returncode == 1  # view grants no write on roles
