"""The secure port's authentication and authorization matrix, through the real kubectl.

`minikube-py apiserver` with a token file, an ABAC policy (an admin, a read-only user, a user
confined to one namespace) and TLS from a generated CA; each kubectl version on the machine
talks to it with a kubeconfig of CA + token, as a user would. Then the streaming
subresources, against an API server and a simulated kubelet running a pod: a user allowed
only to read pods can list them but not exec, attach or port-forward (kubectl and the
`kubernetes` client), a writer still can; and an ABAC v0 line naming a resource does not
grant `/metrics`.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.e2e.test_kubectl import KUBECTLS
from tests.etcd_server import free_port
from tests.integration.test_cli import Lines
from tests.port_race import start_retrying_port_races

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine")

TOKENS = """admin-token,admin,1,"system:masters"
reader-token,reader,2
tenant-token,tenant,3
"""
#: discovery for every authenticated user: a v0 line naming a namespace or a resource grants
#: no non-resource path (upstream's v0 conversion), so `tenant` needs this to run kubectl
DISCOVERY = "\n".join(
    '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":'
    f'{{"group":"system:authenticated","readonly":true,"nonResourcePath":"{path}"}}}}'
    for path in ("/api*", "/version")) + "\n"
POLICY = """{"user":"admin"}
{"user":"reader","readonly":true}
{"user":"tenant","namespace":"team-a"}
""" + DISCOVERY


@pytest.fixture(scope="module")
def secure_api(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("auth")
    (tmp / "tokens.csv").write_text(TOKENS)
    (tmp / "policy.jsonl").write_text(POLICY)
    def launch() -> tuple[subprocess.Popen, int]:
        port = free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "minikube_py.cli.main", "apiserver", "--data-dir",
             str(tmp / "data"), "--insecure-port", str(free_port()), "--secure-port", str(port),
             "--cert-dir", str(tmp / "certs"), "--token-auth-file", str(tmp / "tokens.csv"),
             "--authorization-mode", "ABAC", "--authorization-policy-file",
             str(tmp / "policy.jsonl"), "--log-format", "json"],
            cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            Lines(proc.stderr).until('"ready"', 30)
        except EOFError:
            proc.wait(15)
            raise
        return proc, port

    proc, port = start_retrying_port_races(
        launch, cleanup=lambda: shutil.rmtree(tmp / "data", ignore_errors=True))
    try:
        yield tmp, f"https://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(15)


def kubeconfig(tmp: Path, url: str, token: str) -> Path:
    ca = base64.b64encode((tmp / "certs" / "ca.crt").read_bytes()).decode()
    path = tmp / f"kubeconfig-{token}"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": url, "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda p: p.rsplit("kubectl", 1)[1] or "1.20")
def test_auth_matrix_with_kubectl(secure_api, kubectl):
    tmp, url = secure_api
    home = tmp / f"home-{Path(kubectl).name}"
    home.mkdir(exist_ok=True)

    def run(token: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([kubectl, "--kubeconfig", str(kubeconfig(tmp, url, token)), *args],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "HOME": str(home)})

    suffix = Path(kubectl).name.replace(".", "-")
    wrong = run("nope", "get", "pods")
    assert wrong.returncode != 0 and "logged in" in wrong.stderr
    admin = run("admin-token", "-n", "default", "create", "configmap", f"cm-{suffix}",
                "--from-literal=a=b")
    assert admin.returncode == 0, admin.stderr
    read = run("reader-token", "-n", "default", "get", "configmaps", f"cm-{suffix}")
    assert read.returncode == 0, read.stderr
    denied = run("reader-token", "-n", "default", "delete", "configmap", f"cm-{suffix}")
    assert denied.returncode != 0
    assert 'User "reader" cannot delete resource "configmaps"' in denied.stderr, denied.stderr
    assert run("reader-token", "-n", "default", "create", "configmap", f"x-{suffix}").returncode != 0
    outside = run("tenant-token", "-n", "default", "get", "configmaps")
    assert outside.returncode != 0 and 'User "tenant" cannot list resource "configmaps"' in \
        outside.stderr and 'namespace "default"' in outside.stderr, outside.stderr
    inside = run("tenant-token", "-n", "team-a", "get", "configmaps")
    assert inside.returncode == 0, inside.stderr  # its own namespace: allowed


# -- a read-only user cannot exec, attach or port-forward (KEP-4006's compound `create` check),
#    and an ABAC v0 resource line grants no non-resource path ------------------------------------
SECURE_TOKENS = """writer-token,writer,1
podreader-token,podreader,2
reader-token,reader,3
"""
SECURE_POLICY = """{"user":"writer"}
{"user":"podreader","readonly":true,"resource":"pods"}
{"user":"reader","readonly":true}
""" + DISCOVERY
POD_MANIFEST = """apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default}
spec:
  nodeName: n-0
  containers:
  - {name: web, image: nginx, ports: [{containerPort: 80}]}
"""
SDK = Path("/usr/lib/google-cloud-sdk/bin")


class SecureCluster:
    """The API server on a TLS loopback socket (port 0, read back) with token authentication
    and an ABAC policy, plus one simulated kubelet node, on their own event loop in a thread
    (kubectl runs as a blocking subprocess in the test's thread). The kubelet reaches the API
    in-process, as inside `minikube-py start`."""

    def __init__(self, tmp: Path) -> None:
        self.tmp, self.port = tmp, 0
        self.loop = asyncio.new_event_loop()
        self._ready, self._stop = threading.Event(), None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="secure-cluster", daemon=True)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def start(self) -> "SecureCluster":
        self._thread.start()
        if not self._ready.wait(60):
            raise RuntimeError("the secure cluster did not start within 60 s")
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    def _run(self) -> None:
        try:
            self.loop.run_until_complete(self._serve())
        except BaseException as exc:  # surfaced by start()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        from aiohttp import web

        from minikube_py.apiserver.certs import ensure_serving_cert, server_ssl_context
        from minikube_py.apiserver.options import APIServerOptions
        from minikube_py.apiserver.server import APIServer
        from minikube_py.client import Client, InProcessTransport
        from minikube_py.kubelet import KubeletConfig, KubeletPool
        from minikube_py.storage import EmbeddedStore

        self._stop = asyncio.Event()
        (self.tmp / "tokens.csv").write_text(SECURE_TOKENS)
        (self.tmp / "policy.jsonl").write_text(SECURE_POLICY)
        cert, key, _ = ensure_serving_cert(self.tmp / "certs", ["10.0.0.1"])
        store = await EmbeddedStore.open(self.tmp / "data", fsync=False)
        server = APIServer(store, APIServerOptions(
            scheduler_health_url="http://127.0.0.1:1/healthz",
            controller_manager_health_url="http://127.0.0.1:1/healthz",
            token_auth_file=str(self.tmp / "tokens.csv"), authorization_mode="ABAC",
            authorization_policy_file=str(self.tmp / "policy.jsonl")))
        runner = server.make_runner()
        await runner.setup()
        client = Client(InProcessTransport(runner.app, user_agent="kubelet"))
        pool = KubeletPool(client, port=0, log_interval=0.05)
        try:
            await web.TCPSite(runner, "127.0.0.1", 0,
                              ssl_context=server_ssl_context(cert, key, None)).start()
            self.port = runner.addresses[0][1]
            pool.add_nodes("n", 1, KubeletConfig(node_status_update_frequency=0.2,
                                                 image_pull_seconds=0.01,
                                                 container_start_seconds=0.01))
            await pool.start()
            await pool.wait_ready(10)
            await pool.wait_synced(10)
            self._ready.set()
            await self._stop.wait()
        finally:
            await pool.stop()
            await client.close()
            await runner.cleanup()
            await store.close()


@pytest.fixture(scope="module")
def secure_cluster(tmp_path_factory) -> Iterator[SecureCluster]:
    cluster = SecureCluster(tmp_path_factory.mktemp("secure-cluster")).start()
    try:
        writer = kubectl_as(cluster, str(SDK / "kubectl.1.32") if (SDK / "kubectl.1.32").exists()
                            else KUBECTLS[-1], "writer-token")
        done = writer("apply", "-f", "-", input=POD_MANIFEST)
        assert done.returncode == 0, done.stderr
        deadline = time.monotonic() + 30
        while writer("get", "pod", "web", "-o", "jsonpath={.status.phase}").stdout != "Running":
            assert time.monotonic() < deadline, "pod web never ran"
            time.sleep(0.1)
        yield cluster
    finally:
        cluster.stop()


def kubectl_as(cluster: SecureCluster, binary: str, token: str):
    """`run(*args)` for `binary` with a kubeconfig of the cluster's CA and `token`."""
    home = cluster.tmp / f"home-{Path(binary).name}"
    home.mkdir(exist_ok=True)
    config = kubeconfig(cluster.tmp, cluster.url, token)

    def run(*args: str, input: str | None = None,
            timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run([binary, "--kubeconfig", str(config), "-n", "default", *args],
                              input=input, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, "HOME": str(home)})
    return run


def version_of(binary: str) -> tuple[int, int]:
    """kubectl.1.N's version; /usr/bin/kubectl is gcloud's dispatcher, which runs the kubectl
    matching the server (1.31)."""
    name = Path(binary).name
    return (1, int(name.rsplit(".", 1)[1])) if name.startswith("kubectl.1.") else (1, 31)


def forbidden(sub: str, verb: str = "create") -> str:
    return (f'pods "web" is forbidden: User "podreader" cannot {verb} resource "pods/{sub}" '
            f'in API group "" in the namespace "default": No policy matched.')


@pytest.mark.parametrize("binary", KUBECTLS, ids=lambda p: Path(p).name)
def test_read_only_user_cannot_exec_attach_or_port_forward(secure_cluster, binary):
    """KEP-4006: a WebSocket upgrade is a GET (`get pods/exec`, which a readonly ABAC line on
    pods allows), and the API server then also requires `create pods/exec`. Older kubectl
    speaks SPDY (a POST, `create` already) — or falls back to it after the refused upgrade —
    and is refused the same way; kubectl prints the server's message either way."""
    reader = kubectl_as(secure_cluster, binary, "podreader-token")
    listed = reader("get", "pods", "-o", "name")
    assert listed.returncode == 0 and listed.stdout.strip() == "pod/web", listed.stderr
    done = reader("exec", "web", "--", "cat", "/var/run/secrets/token")
    assert done.returncode != 0 and forbidden("exec") in done.stderr, done.stderr
    assert done.stdout == ""
    done = reader("attach", "web", "-c", "web")
    assert done.returncode != 0 and forbidden("attach") in done.stderr, done.stderr
    try:
        done = reader("port-forward", "pod/web", ":80", timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("port-forward kept running: the read-only user was let through")
    assert done.returncode != 0 and forbidden("portforward") in done.stderr, done.stderr


@pytest.mark.parametrize("binary", [b for b in KUBECTLS if version_of(b) >= (1, 30)],
                         ids=lambda p: Path(p).name)
def test_writer_can_still_exec(secure_cluster, binary):
    writer = kubectl_as(secure_cluster, binary, "writer-token")
    done = writer("exec", "web", "--", "echo", "hello")
    assert (done.returncode, done.stdout) == (0, "hello\n"), done.stderr


def test_python_client_stream_exec_as_read_only_is_403(secure_cluster):
    from kubernetes import client
    from kubernetes.client.exceptions import ApiException
    from kubernetes.stream import stream

    def core(token: str) -> client.CoreV1Api:
        config = client.Configuration(host=secure_cluster.url)
        config.ssl_ca_cert = str(secure_cluster.tmp / "certs" / "ca.crt")
        config.api_key = {"authorization": f"Bearer {token}"}
        return client.CoreV1Api(client.ApiClient(config))

    reader = core("podreader-token")
    assert [p.metadata.name for p in reader.list_namespaced_pod("default").items] == ["web"]
    with pytest.raises(ApiException) as failed:
        stream(reader.connect_get_namespaced_pod_exec, "web", "default", command=["env"],
               stderr=True, stdin=False, stdout=True, tty=False)
    # the websocket handshake error: "Handshake status 403 Forbidden -+-+- headers -+-+- body"
    reason = str(failed.value.reason)
    assert reason.startswith("Handshake status 403 Forbidden"), reason
    status = json.loads(reason.rsplit(" -+-+- ", 1)[1])
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 403, "Forbidden")
    assert status["message"] == forbidden("exec")
    out = stream(core("writer-token").connect_get_namespaced_pod_exec, "web", "default",
                 command=["echo", "hi"], stderr=True, stdin=False, stdout=True, tty=False)
    assert out == "hi\n"


@pytest.mark.parametrize("binary", KUBECTLS[:1] + KUBECTLS[-1:], ids=lambda p: Path(p).name)
def test_v0_resource_line_grants_no_metrics(secure_cluster, binary):
    """upstream's v0 conversion: nonResourcePath `*` only for a line naming neither a
    namespace nor a resource."""
    done = kubectl_as(secure_cluster, binary, "podreader-token")("get", "--raw", "/metrics")
    assert done.returncode != 0, done.stdout[:200]
    assert ('Error from server (Forbidden): forbidden: User "podreader" cannot get path '
            '"/metrics": No policy matched.') in done.stderr, done.stderr
    for path in ("/debug/pprof/", "/openapi/v2"):
        done = kubectl_as(secure_cluster, binary, "podreader-token")("get", "--raw", path)
        assert done.returncode != 0 and "Forbidden" in done.stderr, (path, done.stderr)
    done = kubectl_as(secure_cluster, binary, "reader-token")("get", "--raw", "/metrics")
    assert done.returncode == 0 and "apiserver_request_total" in done.stdout, done.stderr


@pytest.mark.parametrize("binary", KUBECTLS[-1:], ids=lambda p: Path(p).name)
def test_proxy_is_authorized_by_the_proxied_method(secure_cluster, binary):
    """upstream's resolver: GET/HEAD through pods/proxy is `get`, POST `create`, PUT `update`,
    DELETE `delete`, any other method the empty verb — so a read-only user may read through
    the proxy and nothing else."""
    proxy = "/api/v1/namespaces/default/pods/web:80/proxy/x"
    body = secure_cluster.tmp / "body.json"
    body.write_text('{"a": 1}')
    reader = kubectl_as(secure_cluster, binary, "podreader-token")
    done = reader("get", "--raw", proxy)
    assert (done.returncode, done.stdout) == (0, "pod web (10.244.0.2) GET /x\n"), done.stderr
    for args, verb in ((("create", "--raw", proxy, "-f", str(body)), "create"),
                       (("replace", "--raw", proxy, "-f", str(body)), "update"),
                       (("delete", "--raw", proxy), "delete")):
        done = reader(*args)
        assert done.returncode != 0, args
        assert (f'pods "web:80" is forbidden: User "podreader" cannot {verb} resource '
                f'"pods/proxy" in API group ""') in done.stderr, done.stderr
    writer = kubectl_as(secure_cluster, binary, "writer-token")
    done = writer("create", "--raw", proxy, "-f", str(body))
    assert (done.returncode, done.stdout) == (0, "pod web (10.244.0.2) POST /x\n"), done.stderr

    context = ssl.create_default_context(cafile=str(secure_cluster.tmp / "certs" / "ca.crt"))

    def call(method: str, token: str) -> int:
        request = urllib.request.Request(secure_cluster.url + proxy, method=method,
                                         headers={"Authorization": f"Bearer {token}"})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:
                return response.status
        except urllib.error.HTTPError as exc:
            return exc.code

    assert call("HEAD", "podreader-token") == 200  # get
    assert call("OPTIONS", "podreader-token") == 403  # the empty verb: not read-only
    assert call("OPTIONS", "writer-token") != 403
