"""Service-account tokens in a real `minikube-py start` cluster, through the real kubectl:
`start` generates the signing key, `kubectl create token` prints a token the secure port
accepts, and a pod's kube-api-access volume holds a pod-bound token (`kubectl exec -- cat`)
that works until the pod is deleted; a hand-made token Secret gets a legacy JWT that works."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster_process import KUBECTL, ClusterProcesses, running

pytestmark = pytest.mark.skipif(not Path(KUBECTL).exists(), reason="no kubectl")
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount/token"
POD = """apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: web, image: busybox, command: [sleep, "3600"]}]
"""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    procs = ClusterProcesses(tmp_path_factory.mktemp("satokens"), nodes=1).start()
    try:
        # start authorizes with Node,RBAC: the tokens below authenticate as default:default,
        # which may read the namespace once bound to `view` (as a user would bind it)
        procs.kubectl("create", "rolebinding", "default-view", "--clusterrole", "view",
                      "--serviceaccount", "default:default")
        yield procs
    finally:
        procs.stop()


def secure_kubectl(cluster: ClusterProcesses, token: str, *args: str) -> subprocess.CompletedProcess:
    """kubectl against the secure port with a bearer token (CA from the cert dir)."""
    return subprocess.run(
        [KUBECTL, "--server", f"https://127.0.0.1:{cluster.secure_port}", "--token", token,
         "--certificate-authority", str(cluster.tmp / "certs" / "ca.crt"), *args],
        text=True, capture_output=True, timeout=60, check=False,
        env={**os.environ, "HOME": str(cluster.tmp)})


def claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_start_generates_the_key(cluster: ClusterProcesses) -> None:
    assert (cluster.tmp / "certs" / "sa.key").exists()
    config = cluster.get("/.well-known/openid-configuration")
    assert config["issuer"] == "https://kubernetes.default.svc.cluster.local"
    assert cluster.get("/openid/v1/jwks")["keys"][0]["kty"] == "RSA"


def test_kubectl_create_token(cluster: ClusterProcesses) -> None:
    cluster.wait(lambda: cluster.get("/api/v1/namespaces/default/serviceaccounts/default"),
                 what="the default service account")
    token = cluster.kubectl("create", "token", "default", "--duration", "20m").stdout.strip()
    assert claims(token)["sub"] == "system:serviceaccount:default:default"
    assert claims(token)["exp"] - claims(token)["iat"] == 1200
    done = secure_kubectl(cluster, token, "get", "pods")
    assert done.returncode == 0, done.stderr
    refused = secure_kubectl(cluster, token[:-4] + "AAAA", "get", "pods")
    assert refused.returncode != 0 and "Unauthorized" in refused.stderr


def test_pod_token_from_exec(cluster: ClusterProcesses) -> None:
    cluster.kubectl("apply", "-f", "-", input=POD)
    cluster.wait(lambda: running(cluster.get("/api/v1/namespaces/default/pods/web")),
                 what="pod web running")
    token = cluster.kubectl("exec", "web", "--", "cat", TOKEN_PATH).stdout.strip()
    private = claims(token)["kubernetes.io"]
    assert private["pod"]["name"] == "web" and private["node"]["name"] == "node-0"
    done = secure_kubectl(cluster, token, "get", "pods", "-o", "name")
    assert done.returncode == 0 and "pod/web" in done.stdout, done.stderr
    cluster.kubectl("delete", "pod", "web", "--grace-period", "0", "--force")
    cluster.wait(lambda: secure_kubectl(cluster, token, "get", "pods").returncode != 0,
                 what="the pod's token refused once the pod is gone")


def test_hand_made_token_secret(cluster: ClusterProcesses) -> None:
    """The documented long-lived token: a Secret of type service-account-token, filled in by
    the controller-manager with a legacy JWT signed with start's sa.key."""
    cluster.kubectl("apply", "-f", "-", input="""apiVersion: v1
kind: Secret
metadata:
  name: default-token
  annotations: {kubernetes.io/service-account.name: default}
type: kubernetes.io/service-account-token
""")
    secret = cluster.wait(lambda: (cluster.get(
        "/api/v1/namespaces/default/secrets/default-token").get("data") or {}).get("token"),
        what="the token filled in")
    token = base64.b64decode(secret).decode()
    assert claims(token)["iss"] == "kubernetes/serviceaccount"
    done = secure_kubectl(cluster, token, "get", "serviceaccounts", "-o", "name")
    assert done.returncode == 0 and "serviceaccount/default" in done.stdout, done.stderr
