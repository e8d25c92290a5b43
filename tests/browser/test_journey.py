"""The journey and store views in a real browser: a pod created while its journey is open
shows its hops arriving live up to Running; the scheduling hop opens the scheduler's decision
table (the chosen node first), a store hop the revision's diff; the store view browses from
/registry down to the pod's key and shows its history; "compact now" moves the compaction
revision."""

from __future__ import annotations

from typing import Any

from minikube_py.client.resources import PODS
from minikube_py.testing import Cluster

TIMEOUT_MS = 20_000


def pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"app": "journey"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]}}


def test_journey_live_to_running_with_decision_table_and_diff(
        page: Any, console_cluster: Cluster, screenshot: Any) -> None:
    namespace = console_cluster.create_namespace()["metadata"]["name"]
    page.goto(f"{console_cluster.console_url}#/journey/{namespace}/web")
    view = page.locator('[data-view="journey"][data-live="true"]')
    view.wait_for(timeout=TIMEOUT_MS)
    assert view.get_attribute("data-waiting") == "true"  # no such pod yet
    console_cluster.run(console_cluster.client.create(PODS, pod("web"), namespace))
    # the hops arrive over the live stream, up to the kubelet's Running
    page.locator('[data-view="journey"] li.hop[data-label="running"]').wait_for(
        timeout=TIMEOUT_MS)
    labels = page.locator('[data-view="journey"] li.hop').evaluate_all(
        "els => els.map(e => e.dataset.label)")
    assert labels[0] == "created" and {"scheduled", "bound", "running"} <= set(labels)
    lanes = set(page.locator('[data-view="journey"] li.hop').evaluate_all(
        "els => els.map(e => e.dataset.lane)"))
    assert {"store", "apiserver", "scheduler", "kubelet"} <= lanes
    page.locator('[data-view="journey"][data-phase="Running"]').wait_for(timeout=TIMEOUT_MS)
    node = console_cluster.run(console_cluster.client.get(PODS, "web", namespace))[
        "spec"]["nodeName"]

    # the scheduling hop: nodes x filters and scores, the chosen node first
    page.locator('[data-view="journey"] li.hop[data-label="scheduled"]').first.click()
    table = page.locator('[data-view="journey"] table[data-table="decision"]')
    table.wait_for(timeout=TIMEOUT_MS)
    rows = table.locator("tbody tr")
    assert rows.count() == len(console_cluster.node_names)
    assert rows.first.get_attribute("data-node") == node
    assert rows.first.get_attribute("data-chosen") == "true"
    assert table.locator("thead th.score").count() >= 1  # the Score plugins, with weights
    screenshot(page, "journey")

    # a store hop: the revision's diff against the key's previous revision
    page.locator('[data-view="journey"] li.hop[data-label="stored"]').first.click()
    changes = page.locator('[data-view="journey"] table[data-diff="changes"]')
    changes.wait_for(timeout=TIMEOUT_MS)
    assert changes.locator('tr[data-path=".spec.nodeName"]').count() == 1
    assert page.locator('[data-view="journey"] pre[data-diff="unified"] .add').count() > 0


def test_store_browser_reaches_the_pods_key(page: Any, console_cluster: Cluster,
                                            screenshot: Any) -> None:
    namespace = console_cluster.create_namespace()["metadata"]["name"]
    console_cluster.run(console_cluster.client.create(PODS, pod("db"), namespace))
    console_cluster.wait_for(PODS, "db", namespace=namespace)
    page.goto(f"{console_cluster.console_url}#/store")
    view = page.locator('[data-view="store"][data-loaded="true"]')
    view.wait_for(timeout=TIMEOUT_MS)
    assert int(view.get_attribute("data-revision")) > 0
    pods_row = page.locator('[data-view="store"] tr[data-key="/registry/pods/"]')
    assert int(pods_row.locator("td").nth(1).inner_text().split()[0]) >= 1  # "N keys"
    screenshot(page, "store-tree")
    # /registry -> pods/ -> <namespace>/ -> db, by clicking the tree's links
    for key in ("/registry/pods/", f"/registry/pods/{namespace}/",
                f"/registry/pods/{namespace}/db"):
        page.locator(f'[data-view="store"] tr[data-key="{key}"] a').click()
        page.locator('[data-view="store"][data-loaded="true"]').wait_for(timeout=TIMEOUT_MS)
    history = page.locator('[data-view="store"] table[data-table="history"] tbody tr')
    history.first.wait_for(timeout=TIMEOUT_MS)
    assert history.count() >= 3  # created, bound, kubelet status writes
    assert history.last.get_attribute("data-type") == "PUT"
    page.locator('[data-view="store"] table[data-diff="changes"]').wait_for(timeout=TIMEOUT_MS)
    screenshot(page, "store")
    before = int(view.get_attribute("data-compact-revision"))
    page.locator('[data-view="store"] button[data-action="compact"]').click()
    page.locator('[data-view="store"][data-compacted]').wait_for(timeout=TIMEOUT_MS)
    after = int(page.locator('[data-view="store"]').get_attribute("data-compact-revision"))
    assert after > before and after == console_cluster.run(
        console_cluster.running.store.compact_revision())
