"""RBAC objects through real kubectl 1.31: `kubectl create role/clusterrole/rolebinding/
clusterrolebinding` and `kubectl get` with upstream's columns (ROLE, and USERS, GROUPS,
SERVICEACCOUNTS with -o wide)."""

from __future__ import annotations

import os
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
    # validation reaches kubectl as upstream words it
    bad = run("create", "rolebinding", "bad", "--clusterrole=view", "--serviceaccount=robot",
              ok=False)
    assert bad.returncode == 1
    assert "serviceaccount must be <namespace>:<name>" in bad.stderr
