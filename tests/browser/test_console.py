"""The console in a real browser: the diagram and the node list show, a sample workload's
pods reach Running in the pods view, a stopped node goes NotReady in the nodes view and comes
back when started — each step through the page's own buttons, as a person would."""

from __future__ import annotations

from typing import Any

from minikube_py.testing import Cluster

TIMEOUT_MS = 20_000


def test_overview_shows_the_architecture_and_live_figures(page: Any, console_cluster: Cluster,
                                                           screenshot: Any) -> None:
    page.goto(console_cluster.console_url)
    overview = page.locator('[data-view="overview"]')
    overview.wait_for(timeout=TIMEOUT_MS)
    labels = {"store": "store (MVCC, etcd-shaped)", "apiserver": "kube-apiserver",
              "scheduler": "kube-scheduler", "controller-manager": "kube-controller-manager",
              "kubelet": "kubelets"}
    for box, label in labels.items():
        assert page.locator(f'svg [data-box="{box}"] text.label').text_content() == label, box
    # the store's revision arrives from the first poll, and it is the store's
    page.wait_for_function(
        "() => Number(document.querySelector('[data-view=overview]').dataset.revision) > 0",
        timeout=TIMEOUT_MS)
    shown = int(overview.get_attribute("data-revision"))
    assert 0 < shown <= console_cluster.revision()
    page.wait_for_function("() => document.querySelector('[data-sub=kubelet]')"
                           ".textContent.startsWith('3/3')", timeout=TIMEOUT_MS)
    # the kubelets heartbeat: after a couple of polls their arrow carries a non-zero rate
    page.wait_for_function(
        "() => Number(document.querySelector('[data-rate=kubelet]').dataset.value) > 0",
        timeout=TIMEOUT_MS)
    screenshot(page, "overview")


def test_nodes_view_lists_every_node_ready(page: Any, console_cluster: Cluster,
                                           screenshot: Any) -> None:
    page.goto(console_cluster.console_url + "#/nodes")
    for name in console_cluster.node_names:
        page.locator(f'[data-view="nodes"] tr[data-name="{name}"][data-ready="True"]').wait_for(
            timeout=TIMEOUT_MS)
    assert page.locator('[data-view="nodes"] tbody tr').count() == 3
    screenshot(page, "nodes")


def test_sample_workload_pods_reach_running(page: Any, console_cluster: Cluster,
                                            screenshot: Any) -> None:
    namespace = console_cluster.create_namespace()["metadata"]["name"]
    page.goto(console_cluster.console_url + "#/pods")
    form = page.locator('[data-view="pods"] form[data-form="sample-workload"]')
    form.locator('input[name="namespace"]').fill(namespace)
    form.locator('input[name="name"]').fill("web")
    form.locator('input[name="replicas"]').fill("3")
    form.locator('button[data-action="sample-workload"]').click()
    running = page.locator(f'[data-view="pods"] tr[data-phase="Running"]'
                           f'[data-name^="{namespace}/web-"]')
    page.wait_for_function(
        f"() => document.querySelectorAll('[data-view=pods] tr[data-phase=Running]"
        f"[data-name^=\"{namespace}/web-\"]').length === 3", timeout=TIMEOUT_MS)
    assert running.count() == 3
    # each pod links to its journey
    href = running.first.locator("a").get_attribute("href")
    assert href.startswith(f"#/journey/{namespace}/web-")
    screenshot(page, "pods")
    # the same name again: the API server's 409, shown in the page
    form.locator('button[data-action="sample-workload"]').click()
    banner = page.locator("#banner")
    banner.wait_for(state="visible", timeout=TIMEOUT_MS)
    assert banner.get_attribute("data-code") == "409"
    assert 'deployments.apps "web" already exists' in banner.inner_text()


def test_stopped_node_goes_not_ready_and_comes_back(page: Any, console_cluster: Cluster,
                                                   screenshot: Any) -> None:
    page.goto(console_cluster.console_url + "#/nodes")
    row = page.locator('[data-view="nodes"] tr[data-name="node-2"]')
    row.and_(page.locator('[data-ready="True"]')).wait_for(timeout=TIMEOUT_MS)
    row.locator('button[data-action="stop"]').click()
    page.locator('[data-view="nodes"] tr[data-name="node-2"]:not([data-ready="True"])').wait_for(
        timeout=TIMEOUT_MS)
    screenshot(page, "nodes-notready")
    row.locator('button[data-action="start"]').click()
    page.locator('[data-view="nodes"] tr[data-name="node-2"][data-ready="True"]').wait_for(
        timeout=TIMEOUT_MS)


def test_events_arrive_live(page: Any, console_cluster: Cluster, screenshot: Any) -> None:
    page.goto(console_cluster.console_url + "#/events")
    page.locator('[data-view="events"] [data-stream="live"]').wait_for(timeout=TIMEOUT_MS)
    namespace = console_cluster.create_namespace()["metadata"]["name"]
    console_cluster.kubectl("create", "deployment", "ev", "--image=nginx", "-n", namespace)
    # the deployment controller's ScalingReplicaSet event reaches the open page by SSE
    page.locator(f'[data-view="events"] tr[data-reason="ScalingReplicaSet"]'
                 f'[data-key^="{namespace}/"]').wait_for(timeout=TIMEOUT_MS)
    screenshot(page, "events")


def test_pause_and_resume_the_scheduler_from_the_overview(page: Any, console_cluster: Cluster,
                                                          screenshot: Any) -> None:
    page.goto(console_cluster.console_url + "#/overview")
    page.locator('button[data-action="pause"][data-component="scheduler"]').click(
        timeout=TIMEOUT_MS)
    page.locator('svg [data-box="scheduler"][data-paused="true"]').wait_for(timeout=TIMEOUT_MS)
    gate = console_cluster.running.pauses.get("scheduler")
    try:
        assert gate.paused  # the cluster's own gate, not a copy
        screenshot(page, "overview-paused")
    finally:
        page.locator('button[data-action="resume"][data-component="scheduler"]').click(
            timeout=TIMEOUT_MS)
        page.locator('svg [data-box="scheduler"][data-paused="false"]').wait_for(
            timeout=TIMEOUT_MS)
    assert not gate.paused
