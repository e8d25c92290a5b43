"""batch/v1 over a socket: discovery, the generated selector on create, protobuf read back by
Google's runtime, Table columns, the status subresource, field selectors, and the Orphan
default of a Job delete with upstream's warning."""

from __future__ import annotations

from tests.apiserver.conftest import API
from tests.apiserver.test_protobuf_responses import CLIENT_GO, _google, _request

JOBS = "/apis/batch/v1/namespaces/default/jobs"
CRONJOBS = "/apis/batch/v1/namespaces/default/cronjobs"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def job(name: str = "pi") -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                {"name": "pi", "image": "perl", "command": ["perl", "-v"]}]}}}}


async def test_discovery(api: API) -> None:
    status, doc = await api.get("/apis/batch/v1")
    assert status == 200
    by_name = {r["name"]: r for r in doc["resources"]}
    assert set(by_name) == {"jobs", "jobs/status", "cronjobs", "cronjobs/status"}
    assert by_name["cronjobs"]["shortNames"] == ["cj"]
    assert by_name["jobs"]["categories"] == ["all"]
    assert by_name["jobs/status"]["verbs"] == ["get", "patch", "update"]


async def test_create_generates_selector_and_reads_as_protobuf(api: API) -> None:
    status, created = await api.post(JOBS, job())
    assert status == 201, created
    uid = created["metadata"]["uid"]
    assert created["spec"]["selector"] == {"matchLabels": {
        "batch.kubernetes.io/controller-uid": uid}}
    assert created["status"] == {}
    status, ctype, body = await _request(api, "GET", f"{JOBS}/pi", CLIENT_GO)
    assert status == 200 and ctype == "application/vnd.kubernetes.protobuf"
    type_meta, message = _google(body, "k8s.io.api.batch.v1.Job")
    assert (type_meta.apiVersion, type_meta.kind) == ("batch/v1", "Job")
    assert message.spec.backoffLimit == 6 and message.spec.completionMode == "NonIndexed"
    assert message.spec.template.metadata.labels["job-name"] == "pi"


async def test_table_status_and_field_selector(api: API) -> None:
    await api.post(JOBS, job())
    status, table = await api.get(JOBS, headers={"Accept": TABLE})
    assert status == 200
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Status", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]
    assert table["rows"][0]["cells"][:4] == ["pi", "Running", "0/1", ""]
    _, current = await api.get(f"{JOBS}/pi")
    current["status"] = {"succeeded": 1, "startTime": "2024-01-01T00:00:00Z",
                         "completionTime": "2024-01-01T00:00:05Z",
                         "conditions": [{"type": "Complete", "status": "True"}]}
    current["spec"]["parallelism"] = 7  # ignored by the status subresource
    status, updated = await api.put(f"{JOBS}/pi/status", current)
    assert status == 200, updated
    assert updated["spec"]["parallelism"] == 1 and updated["status"]["succeeded"] == 1
    _, listed = await api.get(f"{JOBS}?fieldSelector=status.successful%3D1")
    assert [j["metadata"]["name"] for j in listed["items"]] == ["pi"]
    _, listed = await api.get(f"{JOBS}?fieldSelector=status.successful%3D0")
    assert listed["items"] == []


async def test_delete_without_policy_warns_that_pods_are_kept(api: API) -> None:
    await api.post(JOBS, job())
    async with api.session.delete(api.url + f"{JOBS}/pi") as resp:
        assert resp.status == 200
        assert resp.headers.getall("Warning") == [
            ('299 - "child pods are preserved by default when jobs are deleted; set '
            'propagationPolicy=Background to remove them or set propagationPolicy=Orphan to '
            'suppress this warning"')]
    await api.post(JOBS, job("quiet"))
    async with api.session.delete(api.url + f"{JOBS}/quiet?propagationPolicy=Background") as resp:
        assert resp.status == 200 and "Warning" not in resp.headers


async def test_cronjob_validation_status(api: API) -> None:
    body = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "hello"},
            "spec": {"schedule": "every minute", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "OnFailure", "containers": [{"name": "c", "image": "busybox"}]}}}}}}
    status, answer = await api.post(CRONJOBS, body)
    assert status == 422
    assert answer["message"] == ('CronJob.batch "hello" is invalid: spec.schedule: Invalid '
                                 'value: "every minute": expected exactly 5 fields, found 2: '
                                 '[every minute]')
    body["spec"]["schedule"] = "@hourly"
    status, created = await api.post(CRONJOBS, body)
    assert status == 201 and created["spec"]["concurrencyPolicy"] == "Allow"
