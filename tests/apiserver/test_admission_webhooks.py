"""Admission webhooks against a real API server and a real HTTPS webhook server (issue 16).

The API server runs in the test's loop on a loopback socket; the webhook server
(tests/webhook_server.py) in its own thread with its own CA, reached by `url` or through a
`service` reference. Each test installs configurations over HTTP and waits until the
plugins' watch-fed cache has them.
"""

from __future__ import annotations

import asyncio
import base64
import time
from pathlib import Path

import orjson
import pytest

from minikube_py.registry import codec
from tests.apiserver.conftest import pod, start_api
from tests.webhook_server import WebhookServer

ADMISSION = ("NamespaceLifecycle", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook")
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
PODS = "/api/v1/namespaces/default/pods"
POD_RULE = {"operations": ["CREATE", "UPDATE", "DELETE"], "apiGroups": [""],
            "apiVersions": ["v1"], "resources": ["pods"]}


def allow(body: dict, **response) -> dict:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": body["request"]["uid"], "allowed": True, **response}}


def deny(body: dict, message: str, code: int = 403) -> dict:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": body["request"]["uid"], "allowed": False,
                         "status": {"code": code, "message": message}}}


def json_patch(*ops: dict) -> dict:
    return {"patchType": "JSONPatch",
            "patch": base64.b64encode(orjson.dumps(list(ops))).decode()}


@pytest.fixture(scope="module")
def hook(tmp_path_factory):
    server = WebhookServer(tmp_path_factory.mktemp("hook-certs"), name="hook").start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
async def api(tmp_path: Path, hook: WebhookServer):
    hook.requests.clear()
    hook.routes.clear()
    hook.delay = 0.0
    client, runner, store, session = await start_api(tmp_path, admission_control=ADMISSION)
    try:
        yield client
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


def webhook(hook: WebhookServer, name: str, path: str, **extra) -> dict:
    return {"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"url": hook.url + path, "caBundle": hook.ca_bundle},
            "rules": [POD_RULE], **extra}


async def install(api, collection: str, name: str, *hooks: dict) -> dict:
    kind = "MutatingWebhookConfiguration" if "mutating" in collection \
        else "ValidatingWebhookConfiguration"
    status, body = await api.post(collection, {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": name}, "webhooks": list(hooks)})
    assert status == 201, body
    await until_cached(api, kind, int(body["metadata"]["resourceVersion"]))
    return body


async def until_cached(api, kind: str, revision: int) -> None:
    """Wait until the plugin of `kind` has seen the configuration written at `revision`."""
    plugin = "MutatingAdmissionWebhook" if kind.startswith("Mutating") \
        else "ValidatingAdmissionWebhook"
    [source] = [p.source for p in api.server.admission.plugins if p.name == plugin]
    for _ in range(200):
        if source.revision >= revision:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("webhook configurations not cached")


def requests_to(hook: WebhookServer, path: str) -> list[dict]:
    return [body["request"] for p, body, _ in hook.requests if p == path]


async def test_mutating_webhook_adds_a_label_with_a_json_patch(api, hook):
    hook.json("/mutate", lambda body: allow(body, **json_patch(
        {"op": "add", "path": "/metadata/labels/mutated", "value": "yes"})))
    await install(api, MUTATING, "labeler", webhook(hook, "label.example.com", "/mutate"))
    status, created = await api.post(PODS, pod("web"))
    assert status == 201, created
    assert created["metadata"]["labels"] == {"app": "web", "mutated": "yes"}
    status, stored = await api.get(f"{PODS}/web")
    assert stored["metadata"]["labels"]["mutated"] == "yes"
    [request] = requests_to(hook, "/mutate")
    assert request["operation"] == "CREATE" and request["name"] == "web"
    assert request["namespace"] == "default"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert request["resource"] == {"group": "", "version": "v1", "resource": "pods"}
    assert request["requestKind"] == request["kind"]
    assert request["dryRun"] is False and request["oldObject"] is None
    assert request["options"]["kind"] == "CreateOptions"
    assert request["userInfo"]["username"]
    # the webhook sees the object defaulted, as upstream's decoder hands it over
    assert request["object"]["spec"]["restartPolicy"] == "Always"
    assert request["object"]["apiVersion"] == "v1"


async def test_validating_webhook_denies_with_its_message(api, hook):
    hook.json("/deny", lambda body: deny(body, "pods named bad are not allowed")
              if body["request"]["name"] == "bad" else allow(body))
    await install(api, VALIDATING, "guard", webhook(hook, "deny.example.com", "/deny"))
    status, body = await api.post(PODS, pod("bad"))
    assert status == 403
    assert body["message"] == ('admission webhook "deny.example.com" denied the request: '
                               "pods named bad are not allowed")
    status, _ = await api.post(PODS, pod("good"))
    assert status == 201
    status, _ = await api.get(f"{PODS}/bad")
    assert status == 404


async def test_validating_webhooks_see_the_mutated_object(api, hook):
    hook.json("/mutate", lambda body: allow(body, **json_patch(
        {"op": "add", "path": "/metadata/labels/team", "value": "a"})))
    hook.json("/check", lambda body: allow(body)
              if body["request"]["object"]["metadata"]["labels"].get("team") == "a"
              else deny(body, "no team"))
    await install(api, MUTATING, "m", webhook(hook, "m.example.com", "/mutate"))
    await install(api, VALIDATING, "v", webhook(hook, "v.example.com", "/check"))
    status, body = await api.post(PODS, pod("p"))
    assert status == 201, body


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_failure_policy_when_the_webhook_is_down(api, hook, policy):
    down = "https://127.0.0.1:1/down"
    await install(api, VALIDATING, "down", {
        **webhook(hook, "down.example.com", "/x"), "failurePolicy": policy,
        "clientConfig": {"url": down, "caBundle": hook.ca_bundle}})
    status, body = await api.post(PODS, pod("p"))
    if policy == "Ignore":
        assert status == 201, body
        return
    assert status == 500
    assert body["reason"] == "InternalError"
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "down.example.com": failed to call '
        f'webhook: Post "{down}?timeout=10s": dial tcp 127.0.0.1:1: connect: connection refused')


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_timeout_seconds_cuts_a_slow_webhook(api, hook, policy):
    hook.json("/slow", allow)
    hook.delay = 3.0
    await install(api, MUTATING, "slow", {**webhook(hook, "slow.example.com", "/slow"),
                                          "failurePolicy": policy, "timeoutSeconds": 1})
    started = time.monotonic()
    status, body = await api.post(PODS, pod("p"))
    elapsed = time.monotonic() - started
    assert 0.9 < elapsed < 2.5
    if policy == "Ignore":
        assert status == 201, body
    else:
        assert status == 500
        assert body["message"] == (
            'Internal error occurred: failed calling webhook "slow.example.com": failed to call '
            f'webhook: Post "{hook.url}/slow?timeout=1s": context deadline exceeded')


async def test_namespace_selector_reads_the_namespace_labels(api, hook):
    hook.json("/deny", lambda body: deny(body, "watched"))
    for name, labels in (("watched", {"watch": "yes"}), ("free", {})):
        status, _ = await api.post("/api/v1/namespaces", {"metadata": {"name": name,
                                                                        "labels": labels}})
        assert status == 201
    await install(api, VALIDATING, "ns", {
        **webhook(hook, "ns.example.com", "/deny"),
        "rules": [{**POD_RULE, "apiGroups": ["", "apps"], "resources": ["pods", "namespaces"]}],
        "namespaceSelector": {"matchLabels": {"watch": "yes"}}})
    status, body = await api.post("/api/v1/namespaces/watched/pods", pod("p"))
    assert status == 403 and "watched" in body["message"]
    status, _ = await api.post("/api/v1/namespaces/free/pods", pod("p"))
    assert status == 201
    # a namespace request is judged by the labels it carries
    status, _ = await api.post("/api/v1/namespaces", {"metadata": {"name": "n2",
                                                                    "labels": {"watch": "yes"}}})
    assert status == 403
    status, _ = await api.post("/api/v1/namespaces", {"metadata": {"name": "n3"}})
    assert status == 201


async def test_object_selector_looks_at_new_and_old_labels(api, hook):
    hook.json("/deny", lambda body: deny(body, "protected"))
    status, _ = await api.post(PODS, pod("keep", protect="yes"))
    assert status == 201
    await install(api, VALIDATING, "obj", {
        **webhook(hook, "obj.example.com", "/deny"),
        "objectSelector": {"matchLabels": {"protect": "yes"}}})
    status, _ = await api.post(PODS, pod("other", protect="no"))
    assert status == 201
    status, _ = await api.post(PODS, pod("p2", protect="yes"))
    assert status == 403
    # removing the label is still judged: the old object matches
    status, body = await api.patch(f"{PODS}/keep", {"metadata": {"labels": {"protect": None}}})
    assert status == 403, body
    # DELETE: no new object, the old one matches
    status, _ = await api.delete(f"{PODS}/keep")
    assert status == 403
    status, _ = await api.delete(f"{PODS}/other")
    assert status == 200


async def test_update_and_delete_send_the_old_object(api, hook):
    hook.json("/see", allow)
    status, _ = await api.post(PODS, pod("p"))
    await install(api, VALIDATING, "see", webhook(hook, "see.example.com", "/see"))
    status, _ = await api.patch(f"{PODS}/p", {"metadata": {"labels": {"v": "2"}}})
    assert status == 200
    status, _ = await api.delete(f"{PODS}/p?dryRun=All")
    assert status == 200
    update, delete = requests_to(hook, "/see")
    assert update["operation"] == "UPDATE" and update["options"]["kind"] == "UpdateOptions"
    assert update["oldObject"]["metadata"]["labels"] == {"app": "p"}
    assert update["object"]["metadata"]["labels"] == {"app": "p", "v": "2"}
    assert delete["operation"] == "DELETE" and delete["object"] is None
    assert delete["oldObject"]["metadata"]["name"] == "p"
    assert delete["options"]["kind"] == "DeleteOptions" and delete["dryRun"] is True


async def test_dry_run_and_side_effects(api, hook):
    hook.json("/dry", allow)
    await install(api, VALIDATING, "dry", {**webhook(hook, "dry.example.com", "/dry"),
                                           "sideEffects": "NoneOnDryRun"})
    status, _ = await api.post(PODS + "?dryRun=All", pod("p"))
    assert status == 201
    [request] = requests_to(hook, "/dry")
    assert request["dryRun"] is True and request["options"]["dryRun"] == ["All"]
    # v1 accepts only None and NoneOnDryRun ...
    status, body = await api.post(VALIDATING, {
        "metadata": {"name": "some"},
        "webhooks": [{**webhook(hook, "some.example.com", "/dry"), "sideEffects": "Some"}]})
    assert status == 422
    assert 'webhooks[0].sideEffects: Unsupported value: "Some"' in body["message"]
    # ... but an older version's object may say Some: it is never called on a dry run
    server = api.server
    registry = server.registries["admissionregistration.k8s.io", "v1",
                                 "validatingwebhookconfigurations"]
    stored = {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingWebhookConfiguration",
              "metadata": {"name": "legacy", "uid": "u", "creationTimestamp": "2024-01-01T00:00:00Z"},
              "webhooks": [{**webhook(hook, "legacy.example.com", "/dry"), "sideEffects": "Some",
                            "failurePolicy": "Ignore", "timeoutSeconds": 10}]}
    kv = await server.store.create(registry.key("", "legacy"), codec.encode(stored))
    await until_cached(api, "ValidatingWebhookConfiguration", kv.mod_revision)
    status, body = await api.post(PODS + "?dryRun=All", pod("q"))
    assert status == 400
    assert body["message"] == 'admission webhook "legacy.example.com" does not support dry run'
    assert len(requests_to(hook, "/dry")) == 2  # `dry` was called; `legacy` was not


async def test_warnings_become_warning_headers(api, hook):
    hook.json("/warn", lambda body: allow(body, warnings=["think twice", "really"]))
    await install(api, VALIDATING, "warn", webhook(hook, "warn.example.com", "/warn"))
    async with api.session.post(api.url + PODS, data=orjson.dumps(pod("p")),
                                headers={"Content-Type": "application/json"}) as resp:
        assert resp.status == 201
        assert resp.headers.getall("Warning") == ['299 - "think twice"', '299 - "really"']


async def test_reinvocation_if_needed(api, hook):
    def first(body):
        labels = body["request"]["object"]["metadata"].get("labels") or {}
        return allow(body, warnings=[f"first saw {sorted(labels)}"])

    hook.json("/first", first)
    hook.json("/second", lambda body: allow(body, **json_patch(
        {"op": "add", "path": "/metadata/labels/second", "value": "1"})))
    await install(api, MUTATING, "a-first", {**webhook(hook, "first.example.com", "/first"),
                                             "reinvocationPolicy": "IfNeeded"})
    await install(api, MUTATING, "b-second", webhook(hook, "second.example.com", "/second"))
    status, body = await api.post(PODS, pod("p"))
    assert status == 201, body
    firsts = requests_to(hook, "/first")
    assert len(firsts) == 2  # once, then again after `second` changed the object
    assert "second" in firsts[1]["object"]["metadata"]["labels"]
    assert "second" not in firsts[0]["object"]["metadata"]["labels"]
    assert len(requests_to(hook, "/second")) == 1


async def test_never_reinvoked_by_default(api, hook):
    hook.json("/first", allow)
    hook.json("/second", lambda body: allow(body, **json_patch(
        {"op": "add", "path": "/metadata/labels/second", "value": "1"})))
    await install(api, MUTATING, "a-first", webhook(hook, "first.example.com", "/first"))
    await install(api, MUTATING, "b-second", webhook(hook, "second.example.com", "/second"))
    status, _ = await api.post(PODS, pod("p"))
    assert status == 201
    assert len(requests_to(hook, "/first")) == 1


async def test_webhook_configurations_are_never_sent_to_webhooks(api, hook):
    hook.json("/all", lambda body: deny(body, "nothing passes"))
    everything = {"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
                  "resources": ["*/*"]}
    await install(api, VALIDATING, "all", {**webhook(hook, "all.example.com", "/all"),
                                           "rules": [everything]})
    status, _ = await api.post(PODS, pod("p"))
    assert status == 403
    # the configuration that locks everything can still be removed
    status, body = await api.delete(f"{VALIDATING}/all")
    assert status == 200, body


async def test_a_response_with_another_uid_is_a_call_failure(api, hook):
    hook.json("/liar", lambda body: {"apiVersion": "admission.k8s.io/v1",
                                     "kind": "AdmissionReview",
                                     "response": {"uid": "other", "allowed": True}})
    await install(api, VALIDATING, "liar", webhook(hook, "liar.example.com", "/liar"))
    status, body = await api.post(PODS, pod("p"))
    assert status == 500
    uid = requests_to(hook, "/liar")[0]["uid"]
    assert body["message"] == (
        'Internal error occurred: failed calling webhook "liar.example.com": received invalid '
        f'webhook response: expected response.uid="{uid}", got "other"')


async def test_match_conditions_skip_the_webhook(api, hook):
    hook.json("/deny", lambda body: deny(body, "no"))
    await install(api, VALIDATING, "cond", {
        **webhook(hook, "cond.example.com", "/deny"),
        "matchConditions": [{"name": "not-exempt",
                             "expression": "object.metadata.name != 'exempt'"}]})
    status, _ = await api.post(PODS, pod("exempt"))
    assert status == 201
    status, _ = await api.post(PODS, pod("other"))
    assert status == 403
    status, body = await api.post(VALIDATING, {"metadata": {"name": "bad"}, "webhooks": [{
        **webhook(hook, "bad.example.com", "/deny"),
        "matchConditions": [{"name": "c", "expression": "object.metadata.name =="}]}]})
    assert status == 422
    assert "webhooks[0].matchConditions[0].expression" in body["message"]
    assert "compilation failed" in body["message"]


async def test_a_service_reference_reaches_the_webhook(api, hook):
    hook.json("/svc", lambda body: deny(body, "via service"))
    status, _ = await api.post("/api/v1/namespaces/default/services", {
        "metadata": {"name": hook.name},
        "spec": {"type": "ExternalName", "externalName": "localhost",
                 "ports": [{"name": "https", "port": hook.port}]}})
    assert status == 201
    await install(api, VALIDATING, "svc", {
        **webhook(hook, "svc.example.com", "/svc"),
        "clientConfig": {"service": {"namespace": "default", "name": hook.name,
                                     "path": "/svc", "port": hook.port},
                         "caBundle": hook.ca_bundle}})
    status, body = await api.post(PODS, pod("p"))
    assert status == 403 and body["message"].endswith("via service")


async def test_match_policy_equivalent_calls_for_another_version_of_a_crd(api, hook):
    from tests.apiserver.test_crds import established, widget_crd
    crd = widget_crd()
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [v1, {**v1, "name": "v2", "storage": False}]
    status, body = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201, body
    await established(api)
    hook.json("/widgets", lambda body: allow(body, **json_patch(
        {"op": "add", "path": "/metadata/labels", "value": {"seen": "v1"}})))
    only_v1 = {"operations": ["CREATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"],
               "resources": ["widgets"]}
    await install(api, MUTATING, "widgets", {**webhook(hook, "w.example.com", "/widgets"),
                                             "rules": [only_v1]})
    await install(api, VALIDATING, "exact", {**webhook(hook, "exact.example.com", "/exact"),
                                             "rules": [only_v1], "matchPolicy": "Exact"})
    status, created = await api.post("/apis/example.com/v2/namespaces/default/widgets", {
        "apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"}})
    assert status == 201, created
    assert created["apiVersion"] == "example.com/v2"
    assert created["metadata"]["labels"] == {"seen": "v1"}
    [request] = requests_to(hook, "/widgets")
    assert request["resource"] == {"group": "example.com", "version": "v1",
                                   "resource": "widgets"}
    assert request["kind"] == {"group": "example.com", "version": "v1", "kind": "Widget"}
    assert request["requestResource"]["version"] == "v2"
    assert request["requestKind"]["version"] == "v2"
    assert request["object"]["apiVersion"] == "example.com/v1"
    assert requests_to(hook, "/exact") == []  # Exact: v2 is not v1


async def test_a_subresource_rule_sees_only_that_subresource(api, hook):
    hook.json("/status", lambda body: deny(body, f"no {body['request']['subResource']} writes"))
    status, _ = await api.post(PODS, pod("p"))
    assert status == 201
    await install(api, VALIDATING, "status", {
        **webhook(hook, "status.example.com", "/status"),
        "rules": [{"operations": ["UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods/status"]}]})
    status, _ = await api.patch(f"{PODS}/p", {"metadata": {"labels": {"x": "y"}}})
    assert status == 200
    status, body = await api.patch(f"{PODS}/p/status", {"status": {"message": "hi"}})
    assert status == 403
    assert body["message"].endswith("no status writes")
    [request] = requests_to(hook, "/status")
    assert request["subResource"] == "status" and request["requestSubResource"] == "status"
    assert request["kind"]["kind"] == "Pod"


async def test_failing_open_and_audit_annotations_are_logged(api, hook):
    from structlog.testing import capture_logs
    hook.json("/annotate", lambda body: allow(body, auditAnnotations={"decision": "ok"}))
    await install(api, VALIDATING, "logged", webhook(hook, "annotate.example.com", "/annotate"),
                  {**webhook(hook, "open.example.com", "/x"), "failurePolicy": "Ignore",
                   "clientConfig": {"url": "https://127.0.0.1:1/x"}})
    with capture_logs() as logs:
        status, _ = await api.post(PODS, pod("p"))
    assert status == 201
    events = {entry["event"]: entry for entry in logs}
    assert events["audit annotation"]["key"] == "annotate.example.com/decision"
    assert events["audit annotation"]["value"] == "ok"
    assert events["failed calling webhook, failing open"]["webhook"] == "open.example.com"


async def test_an_unsupported_patch_type_is_a_call_failure(api, hook):
    patch = json_patch({"op": "add", "path": "/metadata/labels/x", "value": "y"})["patch"]
    hook.json("/merge", lambda body: allow(body, patchType="Merge", patch=patch))
    await install(api, MUTATING, "merge", webhook(hook, "merge.example.com", "/merge"))
    status, body = await api.post(PODS, pod("p"))
    assert status == 500
    assert body["message"] == ('Internal error occurred: failed calling webhook '
                               '"merge.example.com": unsupported patch type "Merge"')


async def test_connect_requests_are_admitted_with_their_options(api, hook):
    hook.json("/exec", lambda body: deny(body, "no exec into production"))
    status, _ = await api.post(PODS, pod("p"))
    assert status == 201
    exec_path = f"{PODS}/p/exec?command=ls&command=-l&stdout=true&container=c"
    status, body = await api.post(exec_path)
    assert status == 400 and "does not have a host assigned" in body["message"]  # no webhook
    await install(api, VALIDATING, "exec", {
        **webhook(hook, "exec.example.com", "/exec"),
        "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods/exec"]}]})
    status, body = await api.post(exec_path)
    assert status == 403
    assert body["message"] == ('admission webhook "exec.example.com" denied the request: '
                               "no exec into production")
    [request] = requests_to(hook, "/exec")
    assert request["operation"] == "CONNECT" and request["subResource"] == "exec"
    assert request["kind"] == {"group": "", "version": "v1", "kind": "PodExecOptions"}
    assert request["object"] == {"kind": "PodExecOptions", "apiVersion": "v1", "stdout": True,
                                 "container": "c", "command": ["ls", "-l"]}
    assert request["oldObject"] is None and request["options"] is None
    # portforward is another subresource: not matched
    status, body = await api.post(f"{PODS}/p/portforward?ports=80")
    assert status == 400
    # proxy: a CONNECT of PodProxyOptions, whatever the method
    await install(api, VALIDATING, "proxy", {
        **webhook(hook, "proxy.example.com", "/exec"),
        "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods/proxy"]}]})
    status, body = await api.get(f"{PODS}/p:8080/proxy/healthz?x=1")
    assert status == 403 and body["message"].startswith('admission webhook "proxy.example.com"')
    proxied = requests_to(hook, "/exec")[-1]
    assert proxied["name"] == "p:8080" and proxied["subResource"] == "proxy"
    assert proxied["object"] == {"kind": "PodProxyOptions", "apiVersion": "v1",
                                 "path": "/healthz"}


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_a_match_condition_that_fails_to_evaluate(api, hook, policy):
    hook.json("/allow", allow)
    await install(api, VALIDATING, "broken", {
        **webhook(hook, "broken.example.com", "/allow"), "failurePolicy": policy,
        "matchConditions": [{"name": "needs-field",
                             "expression": "object.spec.missingField == 'x'"}]})
    status, body = await api.post(PODS, pod("p"))
    assert requests_to(hook, "/allow") == []
    if policy == "Ignore":
        assert status == 201, body
        return
    assert status == 403 and body["reason"] == "Forbidden"
    assert body["message"].startswith(
        "pods \"p\" is forbidden: expression 'object.spec.missingField == 'x'' resulted in "
        "error: ")


async def test_a_mutation_is_validated_like_the_request_itself(api, hook):
    hook.json("/breaks", lambda body: allow(body, **json_patch(
        {"op": "add", "path": "/metadata/labels/bad", "value": "not a valid label!"},
        {"op": "remove", "path": "/spec/restartPolicy"})))
    await install(api, MUTATING, "breaks", webhook(hook, "breaks.example.com", "/breaks"))
    status, body = await api.post(PODS, pod("p"))
    assert status == 422
    assert 'metadata.labels: Invalid value: "not a valid label!"' in body["message"]
    assert "restartPolicy" not in body["message"]  # removed defaults come back: defaulted again


async def test_mutating_webhooks_run_in_configuration_name_order(api, hook):
    def appender(mark: str):
        def respond(body):
            annotations = body["request"]["object"]["metadata"].get("annotations") or {}
            trail = annotations.get("trail", "")
            return allow(body, **json_patch({"op": "add", "path": "/metadata/annotations",
                                             "value": {"trail": trail + mark}}))
        return respond

    for mark in "abcd":
        hook.json(f"/{mark}", appender(mark))
    # created out of order; within a configuration, webhooks keep their position
    await install(api, MUTATING, "z-config", webhook(hook, "d.example.com", "/d"))
    await install(api, MUTATING, "a-config", webhook(hook, "b.example.com", "/b"),
                  webhook(hook, "c.example.com", "/c"))
    await install(api, MUTATING, "0-config", webhook(hook, "a.example.com", "/a"))
    status, created = await api.post(PODS, pod("p"))
    assert status == 201, created
    assert created["metadata"]["annotations"]["trail"] == "abcd"


async def test_validating_webhooks_are_called_in_parallel(api, hook):
    hook.json("/one", allow)
    hook.json("/two", allow)
    await install(api, VALIDATING, "pair", webhook(hook, "one.example.com", "/one"),
                  webhook(hook, "two.example.com", "/two"))
    hook.delay = 0.8
    started = time.monotonic()
    status, _ = await api.post(PODS, pod("p"))
    elapsed = time.monotonic() - started
    assert status == 201
    assert len(requests_to(hook, "/one")) == len(requests_to(hook, "/two")) == 1
    assert elapsed < 1.5  # one after the other would take 1.6 s


async def test_match_policy_equivalent_converts_through_the_conversion_webhook(api, hook):
    from tests.apiserver.test_crd_versions import rename, served, versions_crd
    hook.json("/convert", rename)
    crd = versions_crd({"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": hook.url + "/convert", "caBundle": hook.ca_bundle}}})
    status, body = await api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201, body
    await served(api, "v2")

    def paint(body):
        assert body["request"]["object"]["spec"] == {"size": 3}  # v1's field name
        return allow(body, **json_patch({"op": "add", "path": "/spec/color", "value": "red"}))

    hook.json("/paint", paint)
    await install(api, MUTATING, "paint", {
        **webhook(hook, "paint.example.com", "/paint"),
        "rules": [{"operations": ["CREATE"], "apiGroups": ["example.com"],
                   "apiVersions": ["v1"], "resources": ["widgets"]}]})
    status, created = await api.post("/apis/example.com/v2/namespaces/default/widgets", {
        "apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"},
        "spec": {"replicas": 3}})
    assert status == 201, created
    assert created["apiVersion"] == "example.com/v2"
    assert created["spec"] == {"replicas": 3, "color": "red"}
    [request] = requests_to(hook, "/paint")
    assert request["object"]["apiVersion"] == "example.com/v1"
    assert request["requestResource"]["version"] == "v2"
