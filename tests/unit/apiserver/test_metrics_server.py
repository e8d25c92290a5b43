"""The built-in metrics-server's pure parts: parsing a kubelet scrape, rates from two points,
and the objects (apiserver/metrics_server/)."""

from __future__ import annotations

import pytest

from minikube_py.apiserver.metrics_server import api, scrape, storage
from minikube_py.kubelet import resource_metrics, usage

T0 = usage.parse_rfc3339("2027-01-15T08:00:00Z")


def kubelet_text(cpu: str, now: float, meter: usage.Meter, *, name: str = "p") -> str:
    pod = {"metadata": {"name": name, "namespace": "default", "uid": "u-" + name,
                        "annotations": {usage.CPU_ANNOTATION: cpu,
                                        usage.MEMORY_ANNOTATION: "20Mi"}},
           "spec": {"containers": [{"name": "c"}]},
           "status": {"containerStatuses": [{"name": "c", "state": {
               "running": {"startedAt": "2027-01-15T08:00:00Z"}}}]}}
    return resource_metrics.prometheus_text(usage.measure(meter, "n1", T0, [pod], now), now)


def test_parse_reads_the_kubelets_exposition():
    points = scrape.parse(kubelet_text("300m", T0 + 10, usage.Meter()), T0 + 99)
    container = points.pods["default", "p"]["c"]
    assert container.cpu_seconds == pytest.approx(3.0)
    assert container.memory == 20 * 2**20
    assert container.timestamp == pytest.approx(T0 + 10)  # the sample's own time
    assert container.start == T0
    assert points.node is not None and points.node.timestamp == pytest.approx(T0 + 10)


def test_a_fresh_container_is_measured_from_its_start_after_one_scrape():
    store = storage.Storage()
    store.store("n1", scrape.parse(kubelet_text("300m", T0 + 10, usage.Meter()), T0))
    got = store.pods()["default", "p"]["c"]
    assert got.cpu == pytest.approx(0.3) and got.window == pytest.approx(10.0)
    assert store.node("n1") is None  # a node needs two scrapes


def test_the_rate_is_taken_between_the_last_two_scrapes():
    meter, store = usage.Meter(), storage.Storage()
    store.store("n1", scrape.parse(kubelet_text("300m", T0 + 10, meter), T0))
    store.store("n1", scrape.parse(kubelet_text("800m", T0 + 15, meter), T0))
    got = store.pods()["default", "p"]["c"]
    assert got.cpu == pytest.approx(0.8) and got.window == pytest.approx(5.0)
    node = store.node("n1")
    assert node is not None and node.cpu == pytest.approx(0.8 + usage.NODE_CPU)


def test_a_counter_that_went_back_starts_over():
    prev = scrape.Point(100.0, 1, T0 + 10, T0)
    last = scrape.Point(1.0, 1, T0 + 20, T0 + 18)  # restarted at T0+18
    got = storage.rate(prev, last)
    assert got is not None and got.cpu == pytest.approx(0.5) and got.window == pytest.approx(2)


def test_forgotten_nodes_drop_out():
    store = storage.Storage()
    store.store("gone", scrape.parse(kubelet_text("1", T0 + 10, usage.Meter()), T0))
    store.forget(set())
    assert store.pods() == {}


@pytest.mark.parametrize(("cores", "text"), [(0.45, "450m"), (0.000123456, "123456n"),
                                             (2.0, "2"), (0.0, "0")])
def test_cpu_is_reported_in_nanocores(cores, text):
    assert api.cpu_quantity(cores) == text


def test_memory_is_reported_in_kib_and_windows_as_go_durations():
    assert api.memory_quantity(20 * 2**20 + 500) == "20480Ki"
    assert api.go_duration(15.0124) == "15.012s"
    assert api.go_duration(5.0) == "5s"
    assert api.go_duration(61.5) == "1m1.5s"


def test_pod_metrics_keep_the_pods_labels_and_container_order():
    pod = {"metadata": {"name": "p", "namespace": "ns", "labels": {"app": "x"}},
           "spec": {"containers": [{"name": "b"}, {"name": "a"}]}}
    u = storage.Usage(0.25, 2048, T0, 15.0)
    obj = api.pod_metrics(pod, {"a": u, "b": u})
    assert obj["kind"] == "PodMetrics" and obj["apiVersion"] == "metrics.k8s.io/v1beta1"
    assert obj["metadata"]["labels"] == {"app": "x"} and obj["window"] == "15s"
    assert [c["name"] for c in obj["containers"]] == ["b", "a"]
    assert obj["containers"][0]["usage"] == {"cpu": "250m", "memory": "2Ki"}
