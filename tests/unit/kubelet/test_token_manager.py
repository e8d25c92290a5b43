"""The kubelet's token manager's pure rules and the sandbox's serviceAccountToken files."""

from __future__ import annotations

from minikube_py.apiserver.admission.service_account import token_volume
from minikube_py.kubelet import sandbox
from minikube_py.kubelet.token_manager import requires_refresh, token_sources


def _pod() -> dict:
    extra = {"name": "aud", "projected": {"sources": [
        {"serviceAccountToken": {"audience": "vault", "path": "vault-token"}}]}}
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u"},
            "spec": {"volumes": [token_volume("kube-api-access-x"), extra]}}


def test_token_sources_and_refresh() -> None:
    assert token_sources(_pod()) == [("", 3607), ("vault", 3600)]
    assert not requires_refresh(0, 1000, 799)
    assert requires_refresh(0, 1000, 800)  # 80% of the lifetime
    assert requires_refresh(0, 10 * 86400, 86400)  # a day old


def test_sandbox_writes_the_tokens() -> None:
    pod = _pod()
    container = {"name": "c", "volumeMounts": [
        {"name": "kube-api-access-x", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"},
        {"name": "aud", "mountPath": "/vault"}]}
    files, _ = sandbox.mounted_files(pod, container, {}, {}, tokens={
        ("", 3607): b"api-token", ("vault", 3600): b"vault-token"})
    assert files["/var/run/secrets/kubernetes.io/serviceaccount/token"] == b"api-token"
    assert files["/vault/vault-token"] == b"vault-token"
    files, _ = sandbox.mounted_files(pod, container, {}, {})  # no token manager: no file
    assert "/vault/vault-token" not in files
