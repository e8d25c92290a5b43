"""`create pods/eviction` under RBAC on the real secure port: a user bound to the `edit`
ClusterRole (which aggregates `pods/eviction`) may evict, a user with `view` may not (403 with
upstream's text naming the subresource)."""

from __future__ import annotations

from pathlib import Path

from tests.apiserver.test_impersonation import as_
from tests.apiserver.test_secure import serve

TOKENS = ("admin-token,admin,1,system:masters\nalice-token,alice,2\nbob-token,bob,3\n")
NS = "/api/v1/namespaces/default"


def binding(user: str, role: str) -> dict:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": f"{user}-{role}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                          "name": user}]}


def eviction(name: str) -> dict:
    return {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}}


async def test_edit_may_evict_view_may_not(tmp_path: Path) -> None:
    api, close = await serve(tmp_path, TOKENS, authorization_mode="RBAC",
                             authorization_policy_file=None)
    try:
        rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
        for user, role in (("alice", "edit"), ("bob", "view")):
            status, body = await as_(api, "POST", rbac, "admin-token", body=binding(user, role))
            assert status == 201, body
        for name in ("a", "b"):
            status, body = await as_(api, "POST", f"{NS}/pods", "admin-token", body={
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
            assert status == 201, body
        status, body = await as_(api, "POST", f"{NS}/pods/b/eviction", "bob-token",
                                 body=eviction("b"))
        assert status == 403, body
        assert body["message"] == ('pods "b" is forbidden: User "bob" cannot create resource '
                                   '"pods/eviction" in API group "" in the namespace "default"')
        status, body = await as_(api, "POST", f"{NS}/pods/a/eviction", "alice-token",
                                 body=eviction("a"))
        assert (status, body["status"]) == (201, "Success"), body
        status, _ = await as_(api, "GET", f"{NS}/pods/a", "admin-token")
        assert status == 404
    finally:
        await close()
