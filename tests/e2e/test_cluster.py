"""The whole cluster end to end, as users run it, driven by the real kubectl.

Each scenario runs against three clusters: `minikube-py start` (all-in-one), the seeds'
separate processes (apiserver, scheduler, controller-manager, kubelet over HTTP), and
all-in-one on a real etcd (Debian's etcd-server). Nothing in the cluster is driven by the
test except through kubectl, plain HTTP and the kubelets' failure toggle.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid

import pytest

from tests.e2e.cluster_process import CLI, KUBECTL, ClusterProcesses, condition, running

pytestmark = [pytest.mark.skipif(not os.path.exists(KUBECTL), reason=f"{KUBECTL} not found "
                                 "(the machine image provides it)"), pytest.mark.slow]

POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, labels: {{app: {name}}}}}
spec:
  containers: [{{name: web, image: nginx, ports: [{{containerPort: 80}}]}}]
"""
RC = """apiVersion: v1
kind: ReplicationController
metadata: {{name: {name}}}
spec:
  replicas: {replicas}
  selector: {{app: {name}}}
  template:
    metadata: {{labels: {{app: {name}}}}}
    spec: {{containers: [{{name: web, image: nginx, ports: [{{name: http, containerPort: 80}}]}}]}}
"""
SERVICE = """apiVersion: v1
kind: Service
metadata: {{name: {name}}}
spec:
  selector: {{app: {app}}}
  ports: [{{port: 8080, targetPort: http}}]
"""


@pytest.fixture(scope="module", params=["all-in-one", "separate", "etcd"])
def cluster(request, tmp_path_factory):
    tmp = tmp_path_factory.mktemp(request.param)
    endpoint = None
    if request.param == "etcd":
        endpoint = request.getfixturevalue("etcd_server").endpoint
    layout = "separate" if request.param == "separate" else "all-in-one"
    c = ClusterProcesses(tmp, layout=layout, nodes=3, etcd_endpoint=endpoint,
                         etcd_prefix=f"/e2e-{uuid.uuid4().hex[:8]}")
    c.start()
    yield c
    c.stop()


def running_pods(c: ClusterProcesses, app: str, ns: str = "default") -> list[dict]:
    return [p for p in c.pods(ns, f"app={app}") if running(p)]


def test_kubectl_sees_ready_nodes_and_healthy_components(cluster):
    nodes = cluster.kubectl("get", "nodes", "--no-headers").stdout.splitlines()
    assert sorted(line.split()[0] for line in nodes) == cluster.node_names
    assert all(line.split()[1] == "Ready" for line in nodes)
    cs = cluster.kubectl("get", "cs", "--no-headers").stdout.splitlines()
    assert {line.split()[0] for line in cs} >= {"scheduler", "controller-manager"}
    assert all(line.split()[1] == "Healthy" for line in cs), cs


def test_pod_goes_from_pending_to_running_on_a_node(cluster):
    cluster.kubectl("create", "-f", "-", input=POD.format(name="solo"))
    pod = cluster.wait(lambda: running_pods(cluster, "solo"), 30, "pod solo Running")[0]
    assert pod["spec"]["nodeName"] in cluster.node_names
    assert pod["status"]["podIP"] and pod["status"]["hostIP"] == "127.0.0.1"
    assert condition(pod, "Ready") == "True"
    statuses = pod["status"]["containerStatuses"]
    assert statuses[0]["ready"] and "running" in statuses[0]["state"]
    wide = cluster.kubectl("get", "pod", "solo", "-o", "wide", "--no-headers").stdout.split()
    assert wide[2] == "Running" and pod["status"]["podIP"] in wide
    events = cluster.kubectl("get", "events", "--field-selector", "involvedObject.name=solo",
                             "-o", "jsonpath={.items[*].reason}").stdout.split()
    assert {"Scheduled", "Pulling", "Pulled", "Created", "Started"} <= set(events), events
    logs = cluster.kubectl("logs", "solo", "--tail", "2").stdout.splitlines()
    assert len(logs) == 2 and all("web" in line for line in logs)


def test_rc_keeps_five_replicas_and_the_service_lists_their_ips(cluster):
    cluster.kubectl("create", "-f", "-", input=RC.format(name="five", replicas=5))
    cluster.kubectl("create", "-f", "-", input=SERVICE.format(name="five", app="five"))
    pods = cluster.wait(lambda: len(running_pods(cluster, "five")) == 5 and
                        running_pods(cluster, "five"), 30, "5 running replicas")
    victim = pods[0]["metadata"]["name"]
    cluster.kubectl("delete", "pod", victim, "--wait=false")

    def replaced():
        live = running_pods(cluster, "five")
        names = {p["metadata"]["name"] for p in live}
        return len(live) == 5 and victim not in names and live
    live = cluster.wait(replaced, 30, "the RC to replace the deleted pod")

    def endpoints_match():
        ep = cluster.get("/api/v1/namespaces/default/endpoints/five")
        ips = {a["ip"] for s in ep.get("subsets") or () for a in s.get("addresses") or ()}
        ports = {p["port"] for s in ep.get("subsets") or () for p in s.get("ports") or ()}
        return ips == {p["status"]["podIP"] for p in running_pods(cluster, "five")} and \
            ports == {80} and len(ips) == 5
    cluster.wait(endpoints_match, 30, "endpoints = the 5 ready pod IPs")
    rc = cluster.get("/api/v1/namespaces/default/replicationcontrollers/five")
    assert rc["status"]["replicas"] == 5
    assert all(p["metadata"]["ownerReferences"][0]["name"] == "five" for p in live)


def test_deployment_rolls_out_a_new_image(cluster):
    cluster.kubectl("create", "deployment", "web", "--image=nginx:1.24", "--replicas=3")
    cluster.kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    cluster.kubectl("set", "image", "deployment/web", "nginx=nginx:1.25")
    out = cluster.kubectl("rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert "successfully rolled out" in out

    def rolled():
        pods = running_pods(cluster, "web")
        return len(pods) == 3 and all(p["spec"]["containers"][0]["image"] == "nginx:1.25"
                                      for p in pods)
    cluster.wait(rolled, 30, "3 pods of the new image")
    sets = cluster.get("/apis/apps/v1/namespaces/default/replicasets")["items"]
    by_image = {rs["spec"]["template"]["spec"]["containers"][0]["image"]: rs["spec"]["replicas"]
                for rs in sets if rs["metadata"]["name"].startswith("web-")}
    assert by_image == {"nginx:1.24": 0, "nginx:1.25": 3}


def test_namespace_deletion_completes(cluster):
    cluster.kubectl("create", "namespace", "doomed")
    cluster.kubectl("-n", "doomed", "create", "-f", "-", input=POD.format(name="tenant"))
    cluster.kubectl("-n", "doomed", "create", "configmap", "settings", "--from-literal=a=b")
    cluster.wait(lambda: running_pods(cluster, "tenant", "doomed"), 30, "tenant Running")
    cluster.kubectl("delete", "namespace", "doomed", "--timeout=60s")
    gone = cluster.kubectl("get", "namespace", "doomed", check=False)
    assert gone.returncode != 0 and "NotFound" in gone.stderr


def test_stopped_kubelet_goes_not_ready_its_pods_are_evicted_and_it_comes_back(cluster):
    cluster.kubectl("create", "-f", "-", input=RC.format(name="spread", replicas=6))
    pods = cluster.wait(lambda: len(running_pods(cluster, "spread")) == 6 and
                        running_pods(cluster, "spread"), 30, "6 running replicas")
    victim = pods[0]["spec"]["nodeName"]
    on_victim = {p["metadata"]["name"] for p in pods if p["spec"]["nodeName"] == victim}
    # the kubelet's toggle through the API server's nodes/proxy (the kubelet port is HTTPS with
    # authentication when the secure port is on; the API server presents its client cert)
    toggle = f"{cluster.url}/api/v1/nodes/{victim}/proxy/nodes/{victim}"
    stopped = subprocess.run([*CLI, "node", "stop", victim, "--server", cluster.url],
                             capture_output=True, text=True, timeout=30)  # the learner's CLI
    assert stopped.returncode == 0 and stopped.stdout == f"node {victim}: kubelet stopped\n", \
        stopped.stderr

    def node_ready() -> str | None:
        return condition(cluster.get(f"/api/v1/nodes/{victim}"), "Ready")
    cluster.wait(lambda: node_ready() == "Unknown", 15, f"{victim} Ready=Unknown")
    assert "NotReady" in cluster.kubectl("get", "node", victim, "--no-headers").stdout

    def evicted_and_replaced():
        # evicted = deleted gracefully: Terminating until a kubelet confirms (none can now)
        left = [p for p in cluster.pods("default", "app=spread")
                if p["metadata"]["name"] in on_victim]
        live = running_pods(cluster, "spread")
        return all(p["metadata"].get("deletionTimestamp") for p in left) and len(live) == 6 \
            and all(p["spec"]["nodeName"] != victim for p in live)
    cluster.wait(evicted_and_replaced, 30, "eviction from the dead node and replacement")

    assert cluster.post(toggle + "/start") == 200  # the HTTP toggle, via nodes/proxy
    cluster.wait(lambda: node_ready() == "True", 15, f"{victim} Ready again")
    # the revived kubelet finishes the evictions it missed
    cluster.wait(lambda: not ({p["metadata"]["name"] for p in cluster.pods("default", "app=spread")}
                              & on_victim), 15, "the evicted pods to be gone")
    cluster.kubectl("scale", "rc", "spread", "--replicas=12")
    cluster.wait(lambda: any(p["spec"]["nodeName"] == victim
                             for p in running_pods(cluster, "spread")), 30,
                 "new pods running on the revived node")


@pytest.mark.parametrize("backend", ["embedded", "etcd"])
def test_kill_9_under_load_then_restart_keeps_every_acknowledged_object(backend, tmp_path,
                                                                        request):
    endpoint = request.getfixturevalue("etcd_server").endpoint if backend == "etcd" else None
    prefix = f"/kill-{uuid.uuid4().hex[:8]}"
    c = ClusterProcesses(tmp_path, nodes=2, etcd_endpoint=endpoint, etcd_prefix=prefix).start()
    acknowledged: list[str] = []
    stop = threading.Event()
    try:
        c.kubectl("create", "-f", "-", input=RC.format(name="load", replicas=4))

        def write_load():
            i = 0
            while not stop.is_set():
                name = f"cm-{i}"
                done = c.kubectl("create", "configmap", name, f"--from-literal=i={i}",
                                 check=False, timeout=10)
                if done.returncode == 0:
                    acknowledged.append(name)
                i += 1
        writer = threading.Thread(target=write_load, daemon=True)
        writer.start()
        time.sleep(2.5)
        c.kill9()
        stop.set()
        writer.join(15)
        assert len(acknowledged) >= 3, "the load never got going"

        c2 = ClusterProcesses(tmp_path, nodes=2, etcd_endpoint=endpoint, etcd_prefix=prefix)
        c2.api_port, c2.url = c.api_port, c.url  # same address, as a restarted server
        c2.start()
        c = c2
        names = set(c.kubectl("get", "configmaps", "-o", "name").stdout.split())
        missing = [n for n in acknowledged if f"configmap/{n}" not in names]
        assert not missing, f"acknowledged but lost: {missing}"
        c.wait(lambda: len(running_pods(c, "load")) == 4, 30, "the RC to converge again")
        assert c.healthy()
    finally:
        stop.set()
        c.stop()
