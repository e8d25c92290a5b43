"""/openapi/v2: the Swagger document derived from the v3 documents, and its gnostic protobuf
form, decoded here by Google's protobuf library from the descriptor kubectl itself carries (an
encoder checked only against its own decoder proves nothing)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import orjson
import pytest

from minikube_py.apiserver.openapi import ResourceSpec, openapi_v3_document
from minikube_py.apiserver.openapi_service import V2_PROTOBUF, choose_v2_format
from minikube_py.apiserver.openapi_v2 import V2_REF, schema_v2, swagger_document
from minikube_py.apiserver.openapi_v2_proto import encode_document

ALL = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
CORE = [ResourceSpec("pods", "Pod", True, ALL, ("status", "log")),
        ResourceSpec("services", "Service", True, ALL, ("status",)),
        ResourceSpec("namespaces", "Namespace", False, ALL, ("status",))]
APPS = [ResourceSpec("deployments", "Deployment", True, ALL, ("status", "scale"))]
KUBECTL = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"


@pytest.fixture(scope="module")
def swagger() -> dict:
    return swagger_document([openapi_v3_document("", "v1", CORE),
                             openapi_v3_document("apps", "v1", APPS)])


def test_patch_operations_carry_dry_run_and_their_kind(swagger: dict) -> None:
    """kubectl <= 1.26 SupportsDryRun: the PATCH operation of the kind's path has dryRun."""
    patch = swagger["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "kind": "Pod",
                                                        "version": "v1"}
    assert patch["x-kubernetes-action"] == "patch"
    dry_run = next(p for p in patch["parameters"] if p["name"] == "dryRun")
    assert dry_run == {"name": "dryRun", "in": "query", "description": dry_run["description"],
                       "type": "string", "uniqueItems": True}
    assert patch["parameters"][0] == {
        "name": "body", "in": "body", "required": True,
        "schema": {"$ref": V2_REF + "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
    assert "application/strategic-merge-patch+json" in patch["consumes"]
    assert patch["produces"][0] == "application/json"
    assert patch["responses"]["200"]["schema"] == {"$ref": V2_REF + "io.k8s.api.core.v1.Pod"}
    assert patch["responses"]["401"] == {"description": "Unauthorized"}
    scale = swagger["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["put"]["x-kubernetes-group-version-kind"]["kind"] == "Scale"


def test_every_reference_resolves(swagger: dict) -> None:
    """kube-openapi's NewOpenAPIData refuses a document with an unknown model reference."""
    text = orjson.dumps(swagger).decode()
    assert "#/components/" not in text and "allOf" not in text
    refs = {part.split('"', 1)[0] for part in text.split('"$ref":"' + V2_REF)[1:]}
    assert refs and refs <= set(swagger["definitions"])
    pod = swagger["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod",
                                                       "version": "v1"}]
    assert pod["properties"]["metadata"]["$ref"] == V2_REF + (
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")


def test_v3_only_spellings_become_v2() -> None:
    assert schema_v2({"allOf": [{"$ref": "#/components/schemas/X"}], "description": "d",
                      "default": {}}) == {"$ref": V2_REF + "X", "description": "d"}
    assert schema_v2({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"},
                                                                    {"type": "string"}]}) == {
        "type": "string", "format": "int-or-string"}
    assert schema_v2({"oneOf": [{"type": "string"}, {"type": "number"}]}) == {"type": "string"}


@pytest.mark.parametrize("accept,chosen", [
    ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", (V2_PROTOBUF, True)),
    ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", (V2_PROTOBUF, True)),
    ("application/json", ("application/json", False)),
    ("", ("application/json", False)),
    ("*/*", ("application/json", False)),
    ("application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
     (V2_PROTOBUF, True)),
    ("text/html", None),
])
def test_negotiation(accept: str, chosen: tuple | None) -> None:
    assert choose_v2_format(accept) == chosen


def _document_class():
    if importlib.util.find_spec("google.protobuf") is None:
        pytest.skip("the protobuf package decodes the document independently; not installed")
    if not os.path.exists(KUBECTL):
        pytest.skip(f"{KUBECTL} carries gnostic's descriptor; not on this machine")
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf import any_pb2  # noqa: F401  (registers google/protobuf/any.proto)

    spec = importlib.util.spec_from_file_location(
        "gen_openapi_v2_messages",
        Path(__file__).resolve().parents[3] / "hack" / "gen_openapi_v2_messages.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    fd = descriptor_pb2.FileDescriptorProto()
    fd.ParseFromString(gen.raw_descriptor(Path(KUBECTL).read_bytes()))
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(any_pb2.DESCRIPTOR.serialized_pb)
    pool.Add(fd)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("openapi.v2.Document"))


def test_protobuf_decodes_as_gnostic_document(swagger: dict) -> None:
    document = _document_class()()
    document.ParseFromString(encode_document(swagger))
    assert document.swagger == "2.0" and document.info.title == "Kubernetes"
    names = [d.name for d in document.definitions.additional_properties]
    assert names == list(swagger["definitions"])
    # kubectl 1.20's SupportsDryRun, step by step: the first path whose PATCH names the kind
    matching = []
    for path in document.paths.path:
        patch = path.value.patch
        gvks = [e.value.yaml for e in patch.vendor_extension
                if e.name == "x-kubernetes-group-version-kind"]
        if gvks and orjson.loads(gvks[0]) == {"group": "", "kind": "Pod", "version": "v1"}:
            matching.append((path.name, patch))
    name, patch = matching[0]
    assert name == "/api/v1/namespaces/{namespace}/pods/{name}"
    params = [p.parameter.non_body_parameter.query_parameter_sub_schema.name
              for p in patch.parameters]
    assert "dryRun" in params
    body = patch.parameters[0].parameter.body_parameter
    assert body.name == "body" and body.schema._ref.endswith("meta.v1.Patch")
    pod = next(d.value for d in document.definitions.additional_properties
               if d.name == "io.k8s.api.core.v1.Pod")
    assert list(pod.type.value) == ["object"]
    props = {p.name: p.value for p in pod.properties.additional_properties}
    assert props["spec"]._ref == V2_REF + "io.k8s.api.core.v1.PodSpec"
    assert props["spec"].description
    spec = next(d.value for d in document.definitions.additional_properties
                if d.name == "io.k8s.api.core.v1.PodSpec")
    containers = {p.name: p.value for p in spec.properties.additional_properties}["containers"]
    assert list(containers.type.value) == ["array"]
    assert containers.items.schema[0]._ref == V2_REF + "io.k8s.api.core.v1.Container"
    assert {e.name for e in containers.vendor_extension} >= {
        "x-kubernetes-patch-merge-key", "x-kubernetes-patch-strategy"}
    assert list(document.security_definitions.additional_properties)[0].value \
        .api_key_security.name == "authorization"
