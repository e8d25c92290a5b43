"""ValidatingAdmissionPolicy over HTTP (issue 16): policies and bindings are validated and
served, the admission plugin enforces them (Deny, Warn), with params, namespaceSelector,
failurePolicy and upstream's messages and status codes."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tests.apiserver.conftest import start_api

VAP = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
VAPB = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
CHAIN = ("NamespaceLifecycle", "ValidatingAdmissionPolicy")


def deployments(ns: str) -> str:
    return f"/apis/apps/v1/namespaces/{ns}/deployments"


def deployment(name: str, replicas: int) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "labels": {"app": name}},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def policy(name: str = "demo-policy.example.com", expression: str = "object.spec.replicas <= 5",
           **spec: Any) -> dict:
    """The upstream documentation's example policy."""
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {"matchConstraints": {"resourceRules": [{
                "apiGroups": ["apps"], "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
                "validations": [{"expression": expression}], **spec}}


def binding(name: str = "demo-binding-test.example.com",
            policy_name: str = "demo-policy.example.com", actions: tuple = ("Deny",),
            **spec: Any) -> dict:
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": name},
            "spec": {"policyName": policy_name, "validationActions": list(actions), **spec}}


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 5) -> None:
    """Policies reach the plugin through its informer: wait for the watch to deliver."""
    for _ in range(int(timeout / 0.02)):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not reached")


async def denied(api, ns: str, body: dict) -> bool:
    status, _ = await api.post(deployments(ns) + "?dryRun=All", body)
    return status != 201


@pytest.fixture
async def api(tmp_path: Path):
    client, runner, store, session = await start_api(tmp_path, admission_control=CHAIN)
    try:
        yield client
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()


async def _namespace(api, name: str, **labels: str) -> None:
    status, body = await api.post("/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
    assert status == 201, body


async def test_documentation_example_replicas_limit_by_namespace(api) -> None:
    await _namespace(api, "test", environment="test")
    status, created = await api.post(VAP, policy())
    assert status == 201, created
    spec = created["spec"]
    assert spec["failurePolicy"] == "Fail"
    assert spec["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert spec["matchConstraints"]["namespaceSelector"] == {}
    assert spec["matchConstraints"]["resourceRules"][0]["scope"] == "*"
    status, body = await api.post(VAPB, binding(matchResources={
        "namespaceSelector": {"matchLabels": {"environment": "test"}}}))
    assert status == 201, body
    await eventually(lambda: denied(api, "test", deployment("probe", 6)))

    status, body = await api.post(deployments("test"), deployment("nginx", 6))
    assert status == 422, body
    assert body["reason"] == "Invalid"
    message = ('deployments.apps "nginx" is forbidden: ValidatingAdmissionPolicy '
               "'demo-policy.example.com' with binding 'demo-binding-test.example.com' denied "
               "request: failed expression: object.spec.replicas <= 5")
    assert body["message"] == message
    assert body["details"]["causes"] == [{"message": message.split(": ", 1)[1]}]
    # the namespaceSelector leaves other namespaces alone; a valid object passes
    status, body = await api.post(deployments("default"), deployment("nginx", 6))
    assert status == 201, body
    status, body = await api.post(deployments("test"), deployment("small", 3))
    assert status == 201, body
    # UPDATE is matched too
    scaled = dict(body, spec=dict(body["spec"], replicas=9))
    status, body = await api.put(deployments("test") + "/small", scaled)
    assert status == 422, body

    # the plugin records the generation it saw
    async def observed() -> bool:
        _, current = await api.get(f"{VAP}/demo-policy.example.com")
        return (current.get("status") or {}).get("observedGeneration") == 1
    await eventually(observed)


async def test_warn_action_sends_warning_header_and_admits(api) -> None:
    assert (await api.post(VAP, policy()))[0] == 201
    assert (await api.post(VAPB, binding(actions=("Warn",))))[0] == 201

    async def warned() -> bool:
        async with api.session.post(api.url + deployments("default") + "?dryRun=All",
                                    json=deployment("probe", 7)) as resp:
            return bool(resp.headers.getall("Warning", []))
    await eventually(warned)
    async with api.session.post(api.url + deployments("default"),
                                json=deployment("big", 7)) as resp:
        assert resp.status == 201
        assert resp.headers.getall("Warning") == [
            ('299 - "Validation failed for ValidatingAdmissionPolicy \'demo-policy.example.com\' '
            'with binding \'demo-binding-test.example.com\': failed expression: '
            'object.spec.replicas <= 5"')]


async def test_params_from_a_configmap(api) -> None:
    status, body = await api.post("/api/v1/namespaces/default/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits"},
        "data": {"maxReplicas": "3"}})
    assert status == 201, body
    assert (await api.post(VAP, policy(
        expression="object.spec.replicas <= int(params.data.maxReplicas)",
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"})))[0] == 201
    status, body = await api.post(VAPB, binding(paramRef={
        "name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"}))
    assert status == 201, body
    await eventually(lambda: denied(api, "default", deployment("probe", 4)))
    assert (await api.post(deployments("default"), deployment("three", 3)))[0] == 201
    # a missing param with parameterNotFoundAction Deny is a configuration error: denied
    assert (await api.post(VAPB, binding("missing-param", paramRef={
        "name": "nope", "namespace": "default", "parameterNotFoundAction": "Deny"})))[0] == 201

    async def missing_denies() -> bool:
        status, body = await api.post(deployments("default") + "?dryRun=All",
                                      deployment("two", 2))
        return status == 422 and "missing-param" in body["message"]
    await eventually(missing_denies)
    _, body = await api.post(deployments("default"), deployment("two", 2))
    assert body["message"] == (
        'deployments.apps "two" is forbidden: ValidatingAdmissionPolicy '
        "'demo-policy.example.com' with binding 'missing-param' denied request: failed to "
        "configure binding: no params found for policy binding with `Deny` "
        "parameterNotFoundAction")
    # ... and with Allow the binding is skipped
    _, current = await api.get(f"{VAPB}/missing-param")
    current["spec"]["paramRef"]["parameterNotFoundAction"] = "Allow"
    assert (await api.put(f"{VAPB}/missing-param", current))[0] == 200

    async def allowed() -> bool:
        return (await api.post(deployments("default") + "?dryRun=All",
                               deployment("two", 2)))[0] == 201
    await eventually(allowed)


@pytest.mark.parametrize(("failure_policy", "expected"), [("Fail", 422), ("Ignore", 201)])
async def test_runtime_error_follows_failure_policy(api, failure_policy, expected) -> None:
    expression = "object.spec.template.spec.missing > 1"
    status, body = await api.post(VAP, policy(expression=expression,
                                              failurePolicy=failure_policy))
    assert status == 201, body
    assert (await api.post(VAPB, binding()))[0] == 201
    # a second policy that always denies marks the moment the bindings are in force
    assert (await api.post(VAP, policy("marker", expression="object.metadata.name != 'probe'")))[0] == 201
    assert (await api.post(VAPB, binding("marker", "marker")))[0] == 201
    await eventually(lambda: denied(api, "default", deployment("probe", 1)))
    status, body = await api.post(deployments("default"), deployment("web", 1))
    assert status == expected, body
    if expected == 422:
        assert body["message"].endswith(
            f"denied request: expression '{expression}' resulted in error: no such key: missing")


async def test_reason_message_expression_and_variables(api) -> None:
    assert (await api.post(VAP, policy(
        variables=[{"name": "limit", "expression": "2"}],
        validations=[{"expression": "object.spec.replicas <= variables.limit",
                      "reason": "Forbidden",
                      "messageExpression": "'replicas ' + string(object.spec.replicas) + "
                                           "' > ' + string(variables.limit)"}],
        matchConditions=[{"name": "not-exempt",
                          "expression": "!('exempt' in object.metadata.labels)"}])))[0] == 201
    assert (await api.post(VAPB, binding()))[0] == 201
    await eventually(lambda: denied(api, "default", deployment("probe", 3)))
    status, body = await api.post(deployments("default"), deployment("web", 3))
    assert status == 403, body
    assert body["reason"] == "Forbidden"
    assert body["message"].endswith("denied request: replicas 3 > 2")
    exempt = deployment("exempt", 3)
    exempt["metadata"]["labels"]["exempt"] = "yes"
    assert (await api.post(deployments("default"), exempt))[0] == 201


async def test_invalid_policies_and_bindings_are_422(api) -> None:
    status, body = await api.post(VAP, policy(expression="object.spec.replicas <="))
    assert status == 422, body
    assert body["details"]["causes"][0]["field"] == "spec.validations[0].expression"
    assert "compilation failed" in body["details"]["causes"][0]["message"]
    status, body = await api.post(VAP, policy(validations=[]))
    assert status == 422
    assert "validations or auditAnnotations must contain at least one item" in body["message"]
    status, body = await api.post(VAPB, binding(actions=()))
    assert status == 422
    assert body["details"]["causes"][0]["field"] == "spec.validationActions"
    status, body = await api.post(VAPB, binding(actions=("Deny", "Warn")))
    assert status == 422
    assert "must not contain both Deny and Warn" in body["message"]


async def test_table_columns(api) -> None:
    assert (await api.post(VAP, policy(paramKind={"apiVersion": "v1",
                                                  "kind": "ConfigMap"})))[0] == 201
    assert (await api.post(VAPB, binding(paramRef={
        "name": "limits", "parameterNotFoundAction": "Allow"})))[0] == 201
    headers = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    _, table = await api.get(VAP, headers=headers)
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Validations", "ParamKind", "Age"]
    assert table["rows"][0]["cells"][:3] == ["demo-policy.example.com", 1, "v1/ConfigMap"]
    _, table = await api.get(VAPB, headers=headers)
    assert table["rows"][0]["cells"][:3] == [
        "demo-binding-test.example.com", "demo-policy.example.com", "*/limits"]


async def test_delete_sees_old_object_and_object_is_defaulted(api) -> None:
    """DELETE: `object` is null, `oldObject` the stored object; CREATE sees the object with
    its defaults (a Deployment without replicas has 1), as upstream's validating phase does."""
    assert (await api.post(VAP, policy(
        "protect", expression="!has(oldObject.metadata.labels) || "
                              "!('protected' in oldObject.metadata.labels)",
        matchConstraints={"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                             "operations": ["DELETE"],
                                             "resources": ["configmaps"]}]})))[0] == 201
    assert (await api.post(VAPB, binding("protect", "protect")))[0] == 201
    assert (await api.post(VAP, policy(expression="object.spec.replicas == 1 && "
                                                  "request.operation == 'CREATE' && "
                                                  "oldObject == null")))[0] == 201
    assert (await api.post(VAPB, binding()))[0] == 201
    for name, labels in (("keep", {"protected": "yes"}), ("free", {})):
        status, body = await api.post("/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": labels}})
        assert status == 201, body
    await eventually(lambda: denied(api, "default", deployment("probe", 2)))
    no_replicas = deployment("defaulted", 1)
    del no_replicas["spec"]["replicas"]
    status, body = await api.post(deployments("default"), no_replicas)
    assert status == 201, body
    status, body = await api.delete("/api/v1/namespaces/default/configmaps/keep")
    assert status == 422, body
    assert "ValidatingAdmissionPolicy 'protect' with binding 'protect' denied" in body["message"]
    assert (await api.delete("/api/v1/namespaces/default/configmaps/free"))[0] == 200


async def test_audit_action_and_annotations_are_logged(api) -> None:
    from structlog.testing import capture_logs

    assert (await api.post(VAP, policy(auditAnnotations=[{
        "key": "replicas", "valueExpression": "string(object.spec.replicas)"}])))[0] == 201
    assert (await api.post(VAPB, binding(actions=("Audit",))))[0] == 201
    assert (await api.post(VAP, policy("marker", expression="object.metadata.name != 'probe'")))[0] == 201
    assert (await api.post(VAPB, binding("marker", "marker")))[0] == 201
    await eventually(lambda: denied(api, "default", deployment("probe", 1)))
    with capture_logs() as logs:
        status, body = await api.post(deployments("default"), deployment("big", 8))
    assert status == 201, body
    failures = [e for e in logs if e.get("annotation") ==
                "validation.policy.admission.k8s.io/validation_failure"]
    assert len(failures) == 1
    assert '"binding":"demo-binding-test.example.com"' in failures[0]["value"]
    assert {"key": "demo-policy.example.com/replicas", "value": "8"}.items() <= \
        next(e for e in logs if e.get("key", "").endswith("/replicas")).items()


@pytest.mark.parametrize("spec", [
    [],
    {"matchConstraints": [], "validations": "x"},
    {"matchConstraints": {"resourceRules": ["deployments"]}, "validations": [{"expression": 5}]},
    {"matchConstraints": {"resourceRules": [{"operations": "CREATE"}],
                          "namespaceSelector": {"matchExpressions": [{"operator": "Bogus"}]}},
     "validations": [{"expression": "true", "reason": "Teapot"}]},
    {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                             "operations": ["CREATE"], "resources": ["pods"]}]},
     "validations": [{"expression": "true"}], "variables": [{"name": "1x", "expression": "1"}],
     "paramKind": {"apiVersion": "a/b/c"}, "failurePolicy": "Sometimes"},
])
async def test_malformed_policies_are_4xx_never_500(api, spec) -> None:
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": "bad"}, "spec": spec}
    status, reply = await api.post(VAP, body)
    assert 400 <= status < 500, reply
    status, reply = await api.post(VAPB, {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "bad"}, "spec": spec})
    assert 400 <= status < 500, reply


async def test_request_user_info_on_the_secure_port(tmp_path: Path) -> None:
    """`request.userInfo` is the authenticated caller (token authn + ABAC, test_secure's)."""
    from tests.apiserver.conftest import pod
    from tests.apiserver.test_secure import serve

    secure, close = await serve(tmp_path, admission_control=CHAIN)
    try:
        assert (await secure.call("POST", VAP, "admin-token", policy(
            "no-scoped", expression="request.userInfo.username != 'scoped'",
            matchConstraints={"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                 "operations": ["CREATE"],
                                                 "resources": ["pods"]}]},
            validations=[{"expression": "request.userInfo.username != 'scoped'",
                          "messageExpression": "'user ' + request.userInfo.username + "
                                               "' (uid ' + request.userInfo.uid + ') may not'"}]
        )))[0] == 201
        assert (await secure.call("POST", VAPB, "admin-token",
                                  binding("no-scoped", "no-scoped")))[0] == 201
        assert (await secure.call("POST", "/api/v1/namespaces", "admin-token", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}))[0] == 201
        path = "/api/v1/namespaces/team-a/pods"

        async def enforced() -> bool:
            return (await secure.call("POST", path + "?dryRun=All", "scoped-token",
                                      pod("probe")))[0] == 422
        await eventually(enforced)
        status, body = await secure.call("POST", path, "scoped-token", pod("mine"))
        assert status == 422
        assert body["message"].endswith("denied request: user scoped (uid 3) may not")
        assert (await secure.call("POST", path, "admin-token", pod("theirs")))[0] == 201
    finally:
        await close()


async def test_params_by_selector_each_param_is_evaluated(api) -> None:
    for name, limit in (("a", "5"), ("b", "2"), ("other", "0")):
        status, body = await api.post("/api/v1/namespaces/default/configmaps", {
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"limits": "yes" if name != "other" else "no"}},
            "data": {"maxReplicas": limit}})
        assert status == 201, body
    assert (await api.post(VAP, policy(
        paramKind={"apiVersion": "v1", "kind": "ConfigMap"},
        validations=[{"expression": "object.spec.replicas <= int(params.data.maxReplicas)",
                      "messageExpression": "'over the limit of ' + params.metadata.name"}])))[0] == 201
    assert (await api.post(VAPB, binding(paramRef={
        "selector": {"matchLabels": {"limits": "yes"}},
        "parameterNotFoundAction": "Deny"})))[0] == 201
    await eventually(lambda: denied(api, "default", deployment("probe", 4)))
    assert (await api.post(deployments("default"), deployment("two", 2)))[0] == 201
    status, body = await api.post(deployments("default"), deployment("three", 3))
    assert status == 422
    assert body["message"].endswith("denied request: over the limit of b")
    # a param created after the informer started is seen too
    status, _ = await api.post("/api/v1/namespaces/default/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"limits": "yes"}}, "data": {"maxReplicas": "1"}})
    assert status == 201

    async def strictest() -> bool:
        status, body = await api.post(deployments("default") + "?dryRun=All",
                                      deployment("two", 2))
        return status == 422 and body["message"].endswith("limit of c")
    await eventually(strictest)
    # in a namespace without params: none found, Deny
    await _namespace(api, "empty")
    status, body = await api.post(deployments("empty"), deployment("one", 1))
    assert status == 422 and "no params found" in body["message"]


async def test_scale_subresource_is_admitted_as_a_scale(api) -> None:
    """`kubectl scale` is an UPDATE of deployments/scale whose object is an autoscaling/v1
    Scale: a policy on `deployments/scale` sees it (a policy on `deployments` does not)."""
    assert (await api.post(VAP, policy(
        "scale-limit", expression="object.kind == 'Scale' && object.spec.replicas <= 5 && "
                                  "oldObject.spec.replicas == 1",
        matchConstraints={"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                             "operations": ["UPDATE"],
                                             "resources": ["deployments/scale"]}]})))[0] == 201
    assert (await api.post(VAPB, binding("scale-limit", "scale-limit",
                                         actions=("Deny",))))[0] == 201
    assert (await api.post(deployments("default"), deployment("web", 1)))[0] == 201
    path = deployments("default") + "/web/scale"

    async def enforced() -> bool:  # a stale precondition: 409 once admitted, no write
        status, _ = await api.patch(path, {"metadata": {"resourceVersion": "1"},
                                           "spec": {"replicas": 9}})
        return status == 422
    await eventually(enforced)
    status, body = await api.patch(path, {"spec": {"replicas": 9}})
    assert status == 422, body
    assert "ValidatingAdmissionPolicy 'scale-limit'" in body["message"]
    status, body = await api.patch(path, {"spec": {"replicas": 3}})
    assert status == 200 and body["spec"]["replicas"] == 3


async def test_match_policy_equivalent_covers_a_crds_other_versions(api) -> None:
    from tests.apiserver.test_crds import CRDS, established, widget_crd

    crd = widget_crd()
    v1 = crd["spec"]["versions"][0]
    crd["spec"]["versions"] = [v1, dict(v1, name="v2", storage=False)]
    assert (await api.post(CRDS, crd))[0] == 201
    await established(api)
    rules = [{"apiGroups": ["example.com"], "apiVersions": ["v1"], "operations": ["CREATE"],
              "resources": ["widgets"]}]
    for name, match_policy in (("equivalent", "Equivalent"), ("exact", "Exact")):
        assert (await api.post(VAP, policy(
            name, expression="object.spec.size <= 3",
            matchConstraints={"resourceRules": rules, "matchPolicy": match_policy})))[0] == 201
        assert (await api.post(VAPB, binding(name, name)))[0] == 201
    body = {"apiVersion": "example.com/v2", "kind": "Widget", "metadata": {"name": "w"},
            "spec": {"size": 5}}
    path = "/apis/example.com/v2/namespaces/default/widgets"

    async def enforced() -> bool:
        return (await api.post(path + "?dryRun=All", body))[0] == 422
    await eventually(enforced)
    status, reply = await api.post(path, body)
    assert status == 422
    assert "ValidatingAdmissionPolicy 'equivalent'" in reply["message"]
    # without it, the Exact policy alone does not match a v2 request
    assert (await api.delete(f"{VAPB}/equivalent"))[0] == 200

    async def admitted() -> bool:
        return (await api.post(path + "?dryRun=All", body))[0] == 201
    await eventually(admitted)
