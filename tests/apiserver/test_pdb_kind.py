"""policy/v1 PodDisruptionBudget through HTTP: the strategy (create clears the status, a spec
change bumps the generation and keeps the status, /status writes only status), upstream's 422
for both minAvailable and maxUnavailable, the Table columns kubectl prints, discovery (short
name `pdb`, the status subresource, pods/eviction as policy/v1 Eviction)."""

from __future__ import annotations

from tests.apiserver.conftest import API

PDBS = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def budget(name: str, **spec: object) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
            "status": {"disruptionsAllowed": 7}}


async def test_strategy_and_status_subresource(api: API) -> None:
    code, pdb = await api.post(PDBS, budget("p", minAvailable=2))
    assert code == 201, pdb
    assert pdb["metadata"]["generation"] == 1
    assert pdb["status"] == {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                             "expectedPods": 0}
    pdb["status"] = {"disruptionsAllowed": 1, "currentHealthy": 3, "desiredHealthy": 2,
                     "expectedPods": 3, "observedGeneration": 1}
    pdb["spec"]["minAvailable"] = 99  # ignored by /status
    code, written = await api.put(f"{PDBS}/p/status", pdb)
    assert code == 200, written
    assert written["spec"]["minAvailable"] == 2 and written["status"]["disruptionsAllowed"] == 1
    # the main resource ignores the status and counts a spec change
    written["spec"] = {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    written["status"] = {}
    code, updated = await api.put(f"{PDBS}/p", written)
    assert code == 200, updated
    assert updated["metadata"]["generation"] == 2
    assert updated["status"]["disruptionsAllowed"] == 1
    code, negative = await api.patch(f"{PDBS}/p/status", {"status": {"expectedPods": -1}})
    assert code == 422, negative


async def test_both_bounds_is_a_422(api: API) -> None:
    code, body = await api.post(PDBS, budget("both", minAvailable=1, maxUnavailable=1))
    assert code == 422
    assert body["reason"] == "Invalid"
    assert body["message"].startswith('PodDisruptionBudget.policy "both" is invalid: spec: '
                                      "Invalid value: ")
    assert body["message"].endswith("minAvailable and maxUnavailable cannot be both set")
    code, body = await api.post(PDBS, budget("pct", minAvailable="120%"))
    assert code == 422
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid",
                                          "message": 'Invalid value: "120%": must not be '
                                                     "greater than 100%",
                                          "field": "spec.minAvailable"}]


async def test_table_and_discovery(api: API) -> None:
    for name, spec in (("a", {"minAvailable": "50%"}), ("b", {"maxUnavailable": 1})):
        code, body = await api.post(PDBS, budget(name, **spec))
        assert code == 201, body
    code, table = await api.get(PDBS, headers={"Accept": TABLE})
    assert code == 200
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"]
    assert [r["cells"][:4] for r in table["rows"]] == [["a", "50%", "N/A", 0],
                                                       ["b", "N/A", "1", 0]]
    _, resources = await api.get("/apis/policy/v1")
    by_name = {r["name"]: r for r in resources["resources"]}
    assert by_name["poddisruptionbudgets"]["shortNames"] == ["pdb"]
    assert by_name["poddisruptionbudgets"]["namespaced"] is True
    assert by_name["poddisruptionbudgets/status"]["verbs"] == ["get", "patch", "update"]
    _, core = await api.get("/api/v1")
    [eviction] = [r for r in core["resources"] if r["name"] == "pods/eviction"]
    assert (eviction["group"], eviction["version"], eviction["kind"], eviction["verbs"]) == (
        "policy", "v1", "Eviction", ["create"])
