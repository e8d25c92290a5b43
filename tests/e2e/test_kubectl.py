"""Every real kubectl on the machine against our API server, asserting on what it prints.

Versions: /usr/bin/kubectl (Debian, 1.20) and /usr/lib/google-cloud-sdk/bin/kubectl.1.* (1.27+).
Each version gets its own $HOME (so its own discovery cache) and its own namespace. What the
fake kubelet will do in a later issue (bind, report status, serve logs, finish graceful
deletions) is done here through the same API calls a kubelet makes, plus the real kubelet log
endpoint (minikube_py.kubelet.logs) on a loopback port.
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from aiohttp import web

from minikube_py.apiserver.server import KUBE_VERSION
from minikube_py.kubelet.logs import LogServer
from tests.apiserver_thread import ServerThread

KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                  key=lambda p: [int(x) for x in p.rsplit("kubectl.", 1)[1].split(".")])
if os.path.exists("/usr/bin/kubectl"):
    KUBECTLS.insert(0, "/usr/bin/kubectl")

pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine "
                                "(/usr/bin/kubectl or /usr/lib/google-cloud-sdk/bin/kubectl.1.*)")

POD_YAML = """apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: {name}}}
spec:
  containers:
  - name: c
    image: {image}
    ports: [{{containerPort: 80}}]
"""

RC_YAML = """apiVersion: v1
kind: ReplicationController
metadata: {name: rc1}
spec:
  replicas: 1
  selector: {app: rc1}
  template:
    metadata: {labels: {app: rc1}}
    spec: {containers: [{name: c, image: nginx}]}
"""


class Cluster:
    """The API server plus a kubelet log endpoint, and raw HTTP helpers for kubelet-side writes."""

    def __init__(self, tmp: Path) -> None:
        self.server = ServerThread(tmp / "data").start()
        self.started: dict[tuple[str, str, str], float] = {}
        self.kubelet_port = self.server.call(self._start_log_server())

    async def _start_log_server(self) -> int:
        def span(ns: str, pod: str, c: str, previous: bool) -> tuple[float, None] | None:
            started = None if previous else self.started.get((ns, pod, c))
            return None if started is None else (started, None)
        logs = LogServer(span, interval=0.2)
        app = web.Application()
        app.add_routes(logs.routes())
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return self._runner.addresses[0][1]

    def stop(self) -> None:
        self.server.call(self._runner.cleanup())
        self.server.stop()

    def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def node(self, name: str) -> None:
        """Register a Ready node the way a kubelet does."""
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        code, _ = self.request("POST", "/api/v1/nodes", {
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {
                "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "lastHeartbeatTime": now, "lastTransitionTime": now}],
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                              {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": self.kubelet_port}},
                "nodeInfo": {"kubeletVersion": KUBE_VERSION["gitVersion"], "osImage": "simulated",
                             "kernelVersion": "none", "containerRuntimeVersion": "simulated://0",
                             "architecture": "amd64", "operatingSystem": "linux"},
            },
        })
        assert code in (201, 409)

    def run_pod(self, ns: str, name: str, node: str = "node-1") -> None:
        """Bind the pod and report it Running and Ready, as scheduler + kubelet would."""
        code, _ = self.request("POST", f"/api/v1/namespaces/{ns}/pods/{name}/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": node}})
        assert code == 201
        code, pod = self.request("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        pod["status"].update({
            "phase": "Running", "hostIP": "127.0.0.1", "podIP": "10.244.0.5",
            "podIPs": [{"ip": "10.244.0.5"}], "startTime": now,
            "conditions": pod["status"]["conditions"] + [
                {"type": t, "status": "True", "lastTransitionTime": now}
                for t in ("Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{"name": "c", "ready": True, "started": True,
                                   "restartCount": 0, "image": "nginx", "imageID": "sim://nginx",
                                   "state": {"running": {"startedAt": now}}}],
        })
        code, _ = self.request("PUT", f"/api/v1/namespaces/{ns}/pods/{name}/status", pod)
        assert code == 200
        self.started[(ns, name, "c")] = time.time() - 1


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    c = Cluster(tmp_path_factory.mktemp("kubectl"))
    c.node("node-1")
    yield c
    c.stop()


class Kubectl:
    def __init__(self, binary: str, cluster: Cluster, home: Path, namespace: str) -> None:
        self.binary = binary
        self.cluster = cluster
        self.home = home
        self.namespace = namespace
        self.minor = 20 if binary == "/usr/bin/kubectl" else int(binary.rsplit(".", 1)[1])

    def cmd(self, *args: str, namespace: bool = True) -> list[str]:
        base = [self.binary, "-s", self.cluster.server.url, "--cache-dir", str(self.home / "cache")]
        if namespace:
            base += ["-n", self.namespace]
        return base + list(args)

    def __call__(self, *args: str, stdin: str | None = None, ok: bool = True,
                 namespace: bool = True, timeout: float = 60) -> subprocess.CompletedProcess:
        result = subprocess.run(self.cmd(*args, namespace=namespace), input=stdin,
                                capture_output=True, text=True, timeout=timeout,
                                env={"HOME": str(self.home), "PATH": os.environ.get("PATH", "")})
        if ok:
            assert result.returncode == 0, (args, result.stdout, result.stderr)
        return result

    def background(self, *args: str) -> subprocess.Popen:
        return subprocess.Popen(self.cmd(*args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env={"HOME": str(self.home),
                                                "PATH": os.environ.get("PATH", "")})


def _label(path: str) -> str:
    return "1.20" if path == "/usr/bin/kubectl" else path.rsplit("kubectl.", 1)[1]


@pytest.fixture(scope="module", params=KUBECTLS, ids=[_label(p) for p in KUBECTLS])
def kubectl(request: pytest.FixtureRequest, cluster: Cluster,
            tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    ns = "k" + _label(request.param).replace(".", "-")
    code, _ = cluster.request("POST", "/api/v1/namespaces",
                              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    assert code == 201
    return Kubectl(request.param, cluster, tmp_path_factory.mktemp("home"), ns)


def rows(output: str) -> list[list[str]]:
    return [re.split(r"\s{2,}", line.strip()) for line in output.strip().splitlines()]


def test_version_and_cluster_info_and_raw_healthz(kubectl: Kubectl):
    out = kubectl("version", namespace=False).stdout
    assert "Server Version" in out and KUBE_VERSION["gitVersion"] in out
    info = kubectl("cluster-info", namespace=False).stdout
    assert "is running at" in info and kubectl.cluster.server.url in info
    assert kubectl("get", "--raw", "/healthz", namespace=False).stdout == "ok"


def test_api_resources_lists_short_names_and_groups(kubectl: Kubectl):
    table = {r[0]: r for r in rows(kubectl("api-resources", namespace=False).stdout)[1:]}
    assert table["pods"][1:] == ["po", "v1", "true", "Pod"]
    assert table["componentstatuses"][1] == "cs"
    assert table["replicationcontrollers"][1] == "rc"
    assert table["deployments"][1:3] == ["deploy", "apps/v1"]


def test_get_nodes_and_describe_node(kubectl: Kubectl):
    header, *nodes = rows(kubectl("get", "nodes", namespace=False).stdout)
    assert header == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert nodes[0][0] == "node-1" and nodes[0][1] == "Ready"
    assert nodes[0][4] == KUBE_VERSION["gitVersion"]
    described = kubectl("describe", "node", "node-1", namespace=False).stdout
    assert re.search(r"^Name:\s+node-1$", described, re.M) and "KubeletReady" in described


def test_get_cs_shows_live_probes(kubectl: Kubectl):
    result = kubectl("get", "cs", namespace=False)
    table = {r[0]: r for r in rows(result.stdout)[1:]}
    assert table["etcd-0"][1] == "Healthy"
    assert table["scheduler"][1] == "Unhealthy" and "connection refused" in table["scheduler"][-1]
    assert "ComponentStatus is deprecated" in result.stderr


def test_pod_lifecycle_create_get_wide_yaml_json_describe(kubectl: Kubectl):
    cluster = kubectl.cluster
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="web", image="nginx:1.25"))
    again = kubectl("create", "-f", "-", stdin=POD_YAML.format(name="web", image="nginx:1.25"),
                    ok=False)
    assert again.returncode == 1 and 'pods "web" already exists' in again.stderr
    header, row = rows(kubectl("get", "pods").stdout)
    assert header == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert row[:4] == ["web", "0/1", "Pending", "0"]

    cluster.run_pod(kubectl.namespace, "web")
    header, row = rows(kubectl("get", "pods", "-o", "wide").stdout)
    assert header[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    assert row[1:3] == ["1/1", "Running"] and row[5:7] == ["10.244.0.5", "node-1"]
    everywhere = kubectl("get", "pods", "-A", namespace=False).stdout
    assert re.search(rf"^{kubectl.namespace}\s+web\s+1/1\s+Running", everywhere, re.M)
    as_json = json.loads(kubectl("get", "pod", "web", "-o", "json").stdout)
    assert as_json["spec"]["nodeName"] == "node-1" and as_json["status"]["phase"] == "Running"
    assert "imagePullPolicy: IfNotPresent" in kubectl("get", "pod", "web", "-o", "yaml").stdout

    code, _ = cluster.request("POST", f"/api/v1/namespaces/{kubectl.namespace}/events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1"},
        "involvedObject": {"kind": "Pod", "namespace": kubectl.namespace, "name": "web",
                           "uid": as_json["metadata"]["uid"], "apiVersion": "v1"},
        "reason": "Started", "message": "Started container c", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"}, "count": 1,
        "firstTimestamp": as_json["metadata"]["creationTimestamp"],
        "lastTimestamp": as_json["metadata"]["creationTimestamp"]})
    assert code == 201
    events = kubectl("get", "events").stdout
    assert re.search(r"Normal\s+Started\s+pod/web\s+Started container c", events)
    described = kubectl("describe", "pod", "web").stdout
    assert re.search(r"^Node:\s+node-1/127.0.0.1$", described, re.M)
    assert re.search(r"^Status:\s+Running$", described, re.M)
    assert re.search(r"Normal\s+Started\s+.*kubelet\s+Started container c", described)


def test_logs_through_the_kubelet(kubectl: Kubectl):
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="logger", image="busybox"))
    kubectl.cluster.run_pod(kubectl.namespace, "logger")
    out = kubectl("logs", "logger").stdout.splitlines()
    assert out[0] == f"container c of pod {kubectl.namespace}/logger started"
    assert kubectl("logs", "logger", "--tail=1").stdout.count("\n") == 1


def test_apply_twice_with_a_change_then_server_side(kubectl: Kubectl):
    manifest = POD_YAML.format(name="applied", image="nginx:1.25")
    assert "pod/applied created" in kubectl("apply", "-f", "-", stdin=manifest).stdout
    assert "unchanged" in kubectl("apply", "-f", "-", stdin=manifest).stdout
    changed = manifest.replace("nginx:1.25", "nginx:1.26")
    assert "pod/applied configured" in kubectl("apply", "-f", "-", stdin=changed).stdout
    image = kubectl("get", "pod", "applied", "-o", "jsonpath={.spec.containers[0].image}").stdout
    assert image == "nginx:1.26"
    ssa = POD_YAML.format(name="ssa", image="nginx:1.25")
    assert "pod/ssa serverside-applied" in kubectl("apply", "--server-side", "-f", "-",
                                                   stdin=ssa).stdout
    code, pod = kubectl.cluster.request("GET", f"/api/v1/namespaces/{kubectl.namespace}/pods/ssa")
    managed = pod["metadata"]["managedFields"]
    assert any(m["manager"] == "kubectl" and m["operation"] == "Apply" for m in managed)


DEPLOYMENT_YAML = """apiVersion: apps/v1
kind: Deployment
metadata: {name: ssa-status}
spec:
  replicas: 0
  selector: {matchLabels: {app: ssa-status}}
  template:
    metadata: {labels: {app: ssa-status}}
    spec: {containers: [{name: c, image: nginx}]}
"""

STATUS_YAML = """apiVersion: apps/v1
kind: Deployment
metadata: {name: ssa-status}
spec: {replicas: 3}
status: {observedGeneration: %d}
"""


def test_server_side_apply_of_status(kubectl: Kubectl):
    """`kubectl apply --server-side --subresource=status` (kubectl 1.32+): the status is
    applied, the spec sent along is not, and the entry records its subresource; a status field
    another manager set is a conflict until --force-conflicts."""
    if kubectl.minor < 32:
        pytest.skip("kubectl apply has --subresource from 1.32 on (1.31: unknown flag)")
    kubectl("create", "-f", "-", stdin=DEPLOYMENT_YAML)
    out = kubectl("apply", "--server-side", "--subresource=status", "-f", "-",
                  stdin=STATUS_YAML % 7).stdout
    assert "deployment.apps/ssa-status serverside-applied (server dry run)" not in out
    assert "deployment.apps/ssa-status serverside-applied" in out
    path = f"/apis/apps/v1/namespaces/{kubectl.namespace}/deployments/ssa-status"
    _, got = kubectl.cluster.request("GET", path)
    assert got["status"]["observedGeneration"] == 7 and got["spec"]["replicas"] == 0
    (entry,) = [m for m in got["metadata"]["managedFields"] if m["operation"] == "Apply"]
    assert (entry["manager"], entry.get("subresource")) == ("kubectl", "status")
    assert entry["fieldsV1"] == {"f:status": {"f:observedGeneration": {}}}

    got["status"]["observedGeneration"] = 8
    code, _ = kubectl.cluster.request("PUT", path + "/status?fieldManager=ctrl", got)
    assert code == 200
    refused = kubectl("apply", "--server-side", "--subresource=status", "-f", "-",
                      stdin=STATUS_YAML % 9, ok=False)
    assert refused.returncode != 0
    assert ('Apply failed with 1 conflict: conflict with "ctrl" with subresource "status" '
            'using apps/v1: .status.observedGeneration') in refused.stderr
    kubectl("apply", "--server-side", "--subresource=status", "--force-conflicts", "-f", "-",
            stdin=STATUS_YAML % 9)
    _, got = kubectl.cluster.request("GET", path)
    assert got["status"]["observedGeneration"] == 9
    kubectl("delete", "deployment", "ssa-status")  # later tests list this namespace's deployments


def test_label_annotate_and_scale(kubectl: Kubectl):
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="tagged", image="nginx"))
    assert "pod/tagged labeled" in kubectl("label", "pod", "tagged", "env=prod").stdout
    # kubectl 1.27 prints "annotate" (its own typo); every other version "annotated"
    assert "pod/tagged annotate" in kubectl("annotate", "pod", "tagged", "note=hi").stdout
    got = json.loads(kubectl("get", "pod", "tagged", "-o", "json").stdout)["metadata"]
    assert got["labels"]["env"] == "prod" and got["annotations"]["note"] == "hi"
    assert "env=prod" in kubectl("get", "pods", "-l", "env in (prod,dev)", "--show-labels").stdout
    kubectl("create", "-f", "-", stdin=RC_YAML)
    assert "replicationcontroller/rc1 scaled" in kubectl("scale", "rc", "rc1", "--replicas=3").stdout
    assert kubectl("get", "rc", "rc1", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    header, row = rows(kubectl("get", "rc").stdout)
    assert header == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"] and row[:2] == ["rc1", "3"]


def test_get_watch_prints_changes(kubectl: Kubectl):
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="watched", image="nginx"))
    watcher = kubectl.background("get", "pods", "watched", "-w")
    try:
        time.sleep(1.5)
        kubectl("label", "pod", "watched", "phase=two")
        kubectl.cluster.run_pod(kubectl.namespace, "watched")
        time.sleep(1.5)
    finally:
        watcher.terminate()
        out, _ = watcher.communicate(timeout=10)
    lines = [line.split() for line in out.strip().splitlines()]
    assert lines[0][:2] == ["NAME", "READY"]
    assert ["watched", "1/1", "Running"] == lines[-1][:3]


def test_wait_for_condition_ready(kubectl: Kubectl):
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="waited", image="nginx"))
    waiter = kubectl.background("wait", "--for=condition=Ready", "pod/waited", "--timeout=30s")
    time.sleep(1)
    kubectl.cluster.run_pod(kubectl.namespace, "waited")
    out, err = waiter.communicate(timeout=40)
    assert waiter.returncode == 0, err
    assert "pod/waited condition met" in out


def test_delete_wait_until_the_kubelet_finishes(kubectl: Kubectl):
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="gone", image="nginx"))
    assert 'pod "gone" deleted' in kubectl("delete", "pod", "gone", "--wait").stdout
    kubectl("create", "-f", "-", stdin=POD_YAML.format(name="graceful", image="nginx"))
    kubectl.cluster.run_pod(kubectl.namespace, "graceful")
    deleter = kubectl.background("delete", "pod", "graceful", "--wait")
    time.sleep(1.5)
    path = f"/api/v1/namespaces/{kubectl.namespace}/pods/graceful"
    code, pod = kubectl.cluster.request("GET", path)
    assert code == 200 and pod["metadata"]["deletionTimestamp"]  # terminating, not gone
    assert deleter.poll() is None  # kubectl is still waiting
    code, _ = kubectl.cluster.request("DELETE", path, {"gracePeriodSeconds": 0})  # the kubelet
    out, err = deleter.communicate(timeout=30)
    assert deleter.returncode == 0, err
    assert 'pod "graceful" deleted' in out


def test_create_deployment_round_trips(kubectl: Kubectl):
    assert "deployment.apps/dep created" in kubectl("create", "deployment", "dep",
                                                    "--image=nginx:1.25").stdout
    got = json.loads(kubectl("get", "deployment", "dep", "-o", "json").stdout)
    assert got["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert got["spec"]["strategy"]["type"] == "RollingUpdate"
    header, row = rows(kubectl("get", "deploy").stdout)
    assert header == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"] and row[0] == "dep"
