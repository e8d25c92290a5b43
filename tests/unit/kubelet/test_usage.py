"""The simulated usage model (kubelet/usage.py) and the kubelet's resource-metrics renderers."""

from __future__ import annotations

import math

import pytest
from prometheus_client.parser import text_string_to_metric_families

from minikube_py.kubelet import resource_metrics, usage

START = 1_800_000_000.0


def pod(name: str = "p", uid: str = "uid-1", *, cpu: str | None = "200m",
        memory: str | None = "64Mi", annotations: dict | None = None,
        started: str = "2027-01-15T08:00:00Z", running: bool = True) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    state = {"running": {"startedAt": started}} if running else {"waiting": {"reason": "x"}}
    return {"metadata": {"name": name, "namespace": "default", "uid": uid,
                         "annotations": annotations or {}},
            "spec": {"containers": [{"name": "c", "resources": {"requests": requests}}]},
            "status": {"containerStatuses": [{"name": "c", "state": state}]}}


def model_of(p: dict) -> usage.Model:
    return usage.container_model(p, p["spec"]["containers"][0])


def test_default_usage_is_a_tenth_of_the_cpu_request_and_half_the_memory_request():
    m = model_of(pod())
    assert m.cpu == pytest.approx(0.02) and m.wave == usage.CPU_WAVE
    assert m.memory == 32 * 2**20
    # the wave stays within ±10 % and ±5 %
    for t in range(0, 120, 7):
        assert 0.018 - 1e-9 <= m.cpu_at(START + t) <= 0.022 + 1e-9
        assert 0.95 * m.memory - 1 <= m.memory_at(START + t) <= 1.05 * m.memory + 1


def test_without_requests_a_container_uses_the_small_defaults():
    m = model_of(pod(cpu=None, memory=None))
    assert m.cpu == usage.DEFAULT_CPU and m.memory == usage.DEFAULT_MEMORY


def test_the_annotations_override_exactly_without_a_wave():
    m = model_of(pod(annotations={usage.CPU_ANNOTATION: "450m",
                                  usage.MEMORY_ANNOTATION: "100Mi"}))
    assert m.cpu_at(START) == pytest.approx(0.45) and m.cpu_at(START + 13) == pytest.approx(0.45)
    assert m.memory_at(START) == 100 * 2**20


def test_a_bad_annotation_falls_back_to_the_model():
    assert model_of(pod(annotations={usage.CPU_ANNOTATION: "lots"})).cpu == pytest.approx(0.02)


def test_the_phase_comes_from_the_uid_so_replicas_differ():
    assert usage.phase_of("a") != usage.phase_of("b")
    assert usage.phase_of("a") == usage.phase_of("a") and 0 <= usage.phase_of("a") < 1


def test_cpu_seconds_is_the_integral_of_the_rate():
    m = model_of(pod())
    t0, t1, steps = START, START + 47.0, 4_700
    numeric = sum(m.cpu_at(t0 + (i + 0.5) * (t1 - t0) / steps) for i in range(steps)) \
        * (t1 - t0) / steps
    assert m.cpu_seconds(t0, t1) == pytest.approx(numeric, rel=1e-6)
    assert m.cpu_seconds(t1, t0) == 0.0


def test_the_meter_only_grows_even_when_the_override_drops():
    meter = usage.Meter()
    busy = pod(annotations={usage.CPU_ANNOTATION: "1"})
    started = START
    first = meter.read("k", model_of(busy), started, START + 10).cpu_seconds
    assert first == pytest.approx(10.0)
    idle = pod(annotations={usage.CPU_ANNOTATION: "100m"})
    second = meter.read("k", model_of(idle), started, START + 20).cpu_seconds
    assert second == pytest.approx(11.0)


def test_measure_counts_running_containers_and_keeps_the_node_counter_monotonic():
    meter = usage.Meter()
    started = "2027-01-15T08:00:00Z"
    t_start = usage.parse_rfc3339(started)
    busy = pod("a", "u-a", annotations={usage.CPU_ANNOTATION: "500m"}, started=started)
    waiting = pod("b", "u-b", running=False)
    first = usage.measure(meter, "n1", t_start, [busy, waiting], t_start + 100)
    assert [p.name for p in first.pods] == ["a"]
    assert first.pods[0].containers["c"].cpu_seconds == pytest.approx(50.0)
    assert first.node.cpu_cores == pytest.approx(0.5 + usage.NODE_CPU)
    # the pod goes away: the node's counter keeps what it used
    second = usage.measure(meter, "n1", t_start, [], t_start + 200)
    assert second.pods == [] and second.node.cpu_seconds >= first.node.cpu_seconds
    assert second.node.cpu_seconds == pytest.approx(50.0 + usage.NODE_CPU * 200)


def test_metrics_resource_uses_upstreams_names_and_parses_as_prometheus_text():
    meter = usage.Meter()
    t_start = usage.parse_rfc3339("2027-01-15T08:00:00Z")
    p = pod(annotations={usage.CPU_ANNOTATION: "250m", usage.MEMORY_ANNOTATION: "10Mi"})
    text = resource_metrics.prometheus_text(usage.measure(meter, "n1", t_start, [p],
                                                          t_start + 40), t_start + 40)
    samples = {(s.name, s.labels.get("container", "")): s
               for f in text_string_to_metric_families(text) for s in f.samples}
    cpu = samples["container_cpu_usage_seconds_total", "c"]
    assert cpu.value == pytest.approx(10.0) and cpu.timestamp == pytest.approx(t_start + 40)
    assert cpu.labels == {"container": "c", "namespace": "default", "pod": "p"}
    assert samples["container_memory_working_set_bytes", "c"].value == 10 * 2**20
    assert samples["container_start_time_seconds", "c"].value == t_start
    for name in ("node_cpu_usage_seconds_total", "node_memory_working_set_bytes",
                 "pod_cpu_usage_seconds_total", "pod_memory_working_set_bytes",
                 "resource_scrape_error"):
        assert (name, "") in samples, name
    assert "# TYPE container_cpu_usage_seconds_total counter" in text


def test_stats_summary_has_the_summary_apis_shape():
    meter = usage.Meter()
    t_start = usage.parse_rfc3339("2027-01-15T08:00:00Z")
    p = pod(annotations={usage.CPU_ANNOTATION: "250m"})
    doc = resource_metrics.summary("n1", usage.measure(meter, "n1", t_start, [p], t_start + 4),
                                   t_start + 4, 8 << 30)
    assert doc["node"]["nodeName"] == "n1"
    assert doc["node"]["memory"]["availableBytes"] == (8 << 30) - doc["node"]["memory"][
        "workingSetBytes"]
    pod_stats = doc["pods"][0]
    assert pod_stats["podRef"] == {"name": "p", "namespace": "default", "uid": "uid-1"}
    container = pod_stats["containers"][0]
    assert container["cpu"]["usageNanoCores"] == 250_000_000
    assert container["cpu"]["usageCoreNanoSeconds"] == 1_000_000_000
    assert math.isclose(pod_stats["cpu"]["usageNanoCores"], 250_000_000)
