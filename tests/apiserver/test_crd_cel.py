"""CRD `x-kubernetes-validations` over HTTP (issue 16): CEL rules checked on create, update and
patch of custom resources with upstream's 422 Status, transition rules, messageExpression,
fieldPath and reason, the cost budget, and a CRD whose rules are broken refused with 422."""

from __future__ import annotations

import copy
import time
from pathlib import Path

from tests.apiserver.conftest import start_api
from tests.apiserver.test_crds import CRDS, WIDGETS, _close, established, widget_crd

RULES_SCHEMA = {"type": "object", "properties": {
    "spec": {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.replicas <= self.maxReplicas",
             "message": "replicas must not exceed maxReplicas"},
            {"rule": "self.ratio * 2.0 <= 10.0"},
            {"rule": "!has(self.mode) || self.mode.lowerAscii() in ['fast', 'slow']",
             "messageExpression": "'mode ' + self.mode + ' is not known'",
             "fieldPath": ".mode", "reason": "FieldValueForbidden"},
            {"rule": "self.replicas >= oldSelf.replicas",
             "message": "replicas may not shrink"},
        ],
        "properties": {
            "replicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"},
            "ratio": {"type": "number"},
            "mode": {"type": "string"},
            "name": {"type": "string", "x-kubernetes-validations": [
                {"rule": "self == oldSelf", "message": "name is immutable"}]},
            "ports": {"type": "array", "maxItems": 1000, "items": {
                "type": "integer",
                "x-kubernetes-validations": [{"rule": "self > 0 && self < 65536"}]}},
            "labels": {"type": "object", "maxProperties": 20, "additionalProperties": {
                "type": "string", "maxLength": 63,
                "x-kubernetes-validations": [{"rule": "self.matches('^[a-z]+$')",
                                              "message": "lowercase letters only"}]}},
            "pairs": {"type": "array", "maxItems": 1000, "items": {"type": "integer"},
                      "x-kubernetes-validations": [
                          {"rule": "self.all(x, self.all(y, x + y >= 0))"}]},
            "since": {"type": "string", "format": "date-time", "x-kubernetes-validations": [
                {"rule": "self > timestamp('2000-01-01T00:00:00Z')"}]},
        }},
    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}


def rules_crd(schema: dict | None = None) -> dict:
    crd = widget_crd()
    crd["spec"]["versions"][0]["schema"] = {"openAPIV3Schema": copy.deepcopy(
        schema or RULES_SCHEMA)}
    return crd


def body(name: str, spec: dict) -> dict:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name},
            "spec": spec}


GOOD = {"replicas": 1, "maxReplicas": 3, "ratio": 1, "name": "a"}


async def test_rules_on_create_update_and_patch(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, rules_crd())
        assert status == 201, crd
        await established(api)
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "replicas": 5}))
        assert status == 422, out
        assert out["reason"] == "Invalid"
        assert out["message"] == ('Widget.example.com "w" is invalid: spec: Invalid value: '
                                  '"object": replicas must not exceed maxReplicas')
        assert out["details"]["causes"] == [{
            "reason": "FieldValueInvalid", "field": "spec",
            "message": 'Invalid value: "object": replicas must not exceed maxReplicas'}]
        # `number` is a double in CEL even when the JSON says 6; the default message
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "ratio": 6}))
        assert status == 422
        assert out["message"].endswith(
            'spec: Invalid value: "object": failed rule: self.ratio * 2.0 <= 10.0'), out
        # messageExpression, fieldPath and reason
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "mode": "Warp"}))
        assert status == 422
        assert out["details"]["causes"] == [{
            "reason": "FieldValueForbidden", "field": "spec.mode",
            "message": "Forbidden: mode Warp is not known"}]
        # rules on list items and on additionalProperties values, several causes at once
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "ports": [80, 0, 70000],
                                                         "labels": {"ok": "abc", "bad": "A1"}}))
        assert status == 422
        fields = sorted((c["field"], c["message"]) for c in out["details"]["causes"])
        assert fields == [
            ("spec.labels[bad]", 'Invalid value: "string": lowercase letters only'),
            ("spec.ports[1]", 'Invalid value: "integer": failed rule: self > 0 && self < 65536'),
            ("spec.ports[2]", 'Invalid value: "integer": failed rule: self > 0 && self < 65536'),
        ]
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "since": "1999-05-01T00:00:00Z"}))
        assert status == 422 and "failed rule: self > timestamp" in out["message"], out
        # a valid object; transition rules do not run on create
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "mode": "fast", "ports": [80],
                                                         "since": "2024-01-01T00:00:00Z"}))
        assert status == 201, out
        # transition rules on update and patch
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"replicas": 0}})
        assert status == 422
        assert out["message"].endswith('spec: Invalid value: "object": replicas may not shrink')
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"name": "b"}})
        assert status == 422
        assert out["details"]["causes"] == [{
            "reason": "FieldValueInvalid", "field": "spec.name",
            "message": 'Invalid value: "string": name is immutable'}]
        out["spec"] = {**GOOD, "replicas": 2}
        _, got = await api.get(f"{WIDGETS}/w")
        got["spec"]["replicas"] = 2
        status, out = await api.put(f"{WIDGETS}/w", got)
        assert status == 200, out
        assert out["spec"]["replicas"] == 2
    finally:
        await _close(runner, store, session)


async def test_runaway_rule_is_cut_off_not_run(tmp_path: Path) -> None:
    """`pairs` allows 1000 items, so the CRD's static estimate (~3M) is accepted; 1000 items
    make the nested rule ~3M per call, over upstream's PerCallLimit: 422 at once, where
    evaluating it would hold the process for ~1 s."""
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, rules_crd())
        assert status == 201, crd
        await established(api)
        status, out = await api.post(WIDGETS, body("ok", {**GOOD, "pairs": list(range(50))}))
        assert status == 201, out
        started = time.perf_counter()
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "pairs": list(range(1000))}))
        elapsed = time.perf_counter() - started
        assert status == 422, out
        assert elapsed < 0.5, elapsed
        assert out["details"]["causes"] == [{
            "reason": "FieldValueInvalid", "field": "spec.pairs",
            "message": ("Invalid value: \"array\": 'operation cancelled: actual cost limit "
                        "exceeded': no further validation rules will be run due to call cost "
                        "exceeds limit for rule: self.all(x, self.all(y, x + y >= 0))")}]
    finally:
        await _close(runner, store, session)


async def test_crd_with_broken_or_too_expensive_rules_is_refused(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        schema = {"type": "object", "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.replicas >"},
                {"rule": "self.items.all(x, self.items.all(y, x == y))"},
                {"rule": "self.replicas > 0", "reason": "Whatever", "fieldPath": ".nope"},
                {"rule": "nope == 1"},
            ],
            "properties": {"replicas": {"type": "integer"},
                           "items": {"type": "array", "items": {"type": "integer"}}}}}}
        status, out = await api.post(CRDS, rules_crd(schema))
        assert status == 422, out
        assert out["reason"] == "Invalid"
        at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations"
        causes = {c["field"]: c for c in out["details"]["causes"]}
        broken = causes[f"{at}[0].rule"]
        assert broken["reason"] == "FieldValueInvalid"
        assert broken["message"].startswith(
            'Invalid value: apiextensions.ValidationRule{Rule:"self.replicas >", Message:"", '
            'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
            'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: '
            "ERROR: <input>:1:16: Syntax error: mismatched input '<EOF>'"), broken
        assert causes[f"{at}[1].rule"] == {
            "reason": "FieldValueForbidden", "field": f"{at}[1].rule",
            "message": ("Forbidden: estimated rule cost exceeds budget by factor of more than "
                        "100x (try simplifying the rule, or adding maxItems, maxProperties, and "
                        "maxLength where arrays, maps, and strings are declared)")}
        assert causes[f"{at}[2].reason"]["reason"] == "FieldValueNotSupported"
        assert causes[f"{at}[2].fieldPath"]["message"] == (
            'Invalid value: ".nope": fieldPath must be a valid path: does not refer to a '
            'valid field')
        assert "undeclared reference to 'nope' (in container '')" in causes[f"{at}[3].rule"][
            "message"]
        # the same CRD with the rules fixed (and maxItems) is accepted
        spec = schema["properties"]["spec"]
        spec["x-kubernetes-validations"] = [{"rule": "self.replicas > 0"},
                                            {"rule": "self.items.all(x, x > 0)"}]
        status, out = await api.post(CRDS, rules_crd(schema))
        assert status == 201, out
        # an update that breaks a rule is refused too
        await established(api)
        _, out = await api.get(f"{CRDS}/widgets.example.com")
        out["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "x-kubernetes-validations"].append({"rule": "self.replicas ==", "message": "m"})
        status, out = await api.put(f"{CRDS}/widgets.example.com", out)
        assert status == 422, out
        assert "x-kubernetes-validations[2].rule" in out["message"]
    finally:
        await _close(runner, store, session)


async def test_schema_errors_skip_rules_and_unchanged_values_ratchet(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, rules_crd())
        assert status == 201, crd
        await established(api)
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "replicas": "many"}))
        assert status == 422
        assert [c["reason"] for c in out["details"]["causes"]] == [
            "FieldValueTypeInvalid", "FieldValueInvalid"]
        assert out["details"]["causes"][1] == {
            "reason": "FieldValueInvalid", "field": "<nil>",
            "message": ('Invalid value: "null": some validation rules were not checked because '
                        'the object was invalid; correct the existing errors to complete '
                        'validation')}
        status, out = await api.post(WIDGETS, body("w", {**GOOD, "labels": {"a": "abc"}}))
        assert status == 201, out
        # a new rule the stored value breaks: an update that leaves that value alone passes
        # (CRDValidationRatcheting), one that changes it is checked
        _, crd = await api.get(f"{CRDS}/widgets.example.com")
        labels = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"]["labels"]["additionalProperties"]
        labels["x-kubernetes-validations"].append({"rule": "self.size() > 5",
                                                   "message": "too short"})
        status, crd = await api.put(f"{CRDS}/widgets.example.com", crd)
        assert status == 200, crd
        for _ in range(100):  # the serving strategy follows the CRD change
            status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"labels": {"b": "xyz"}}})
            if status == 422:
                break
            await api.patch(f"{WIDGETS}/w", {"spec": {"labels": {"b": None}}})
        assert status == 422, out
        assert out["details"]["causes"] == [{"reason": "FieldValueInvalid",
                                             "field": "spec.labels[b]",
                                             "message": 'Invalid value: "string": too short'}]
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"replicas": 2}})
        assert status == 200, out
    finally:
        await _close(runner, store, session)


async def test_optional_old_self_runs_on_create(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"spec": {
        "type": "object", "properties": {"level": {"type": "integer"}},
        "x-kubernetes-validations": [{
            "rule": "oldSelf.hasValue() ? self.level >= oldSelf.value().level : self.level == 1",
            "optionalOldSelf": True, "message": "start at 1, never go down"}]}}}
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, rules_crd(schema))
        assert status == 201, crd
        await established(api)
        status, out = await api.post(WIDGETS, body("w", {"level": 2}))
        assert status == 422 and out["message"].endswith("start at 1, never go down"), out
        status, out = await api.post(WIDGETS, body("w", {"level": 1}))
        assert status == 201, out
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"level": 3}})
        assert status == 200, out
        status, out = await api.patch(f"{WIDGETS}/w", {"spec": {"level": 2}})
        assert status == 422, out
    finally:
        await _close(runner, store, session)


async def test_root_rules_see_name_and_escaped_property_names(tmp_path: Path) -> None:
    schema = {"type": "object",
              "x-kubernetes-validations": [
                  {"rule": "self.metadata.name.startsWith('w-')", "message": "name must start w-"},
                  {"rule": "!has(self.metadata.labels)"}],  # only name/generateName are visible
              "properties": {"spec": {
                  "type": "object", "properties": {"max-size": {"type": "integer"}},
                  "x-kubernetes-validations": [{"rule": "self.max__dash__size < 10"}]}}}
    api, runner, store, session = await start_api(tmp_path)
    try:
        status, crd = await api.post(CRDS, rules_crd(schema))
        assert status == 201, crd
        await established(api)
        status, out = await api.post(WIDGETS, body("x", {"max-size": 1}))
        assert status == 422
        assert out["message"] == ('Widget.example.com "x" is invalid: <nil>: Invalid value: '
                                  '"object": name must start w-')
        assert out["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "<nil>",
                                             "message": 'Invalid value: "object": name must '
                                                        'start w-'}]
        status, out = await api.post(WIDGETS, body("w-1", {"max-size": 10}))
        assert status == 422
        assert out["message"].endswith("failed rule: self.max__dash__size < 10"), out
        created = body("w-1", {"max-size": 9})
        created["metadata"]["labels"] = {"a": "b"}
        status, out = await api.post(WIDGETS, created)
        assert status == 201, out
    finally:
        await _close(runner, store, session)
