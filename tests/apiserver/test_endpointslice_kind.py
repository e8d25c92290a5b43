"""discovery.k8s.io/v1 EndpointSlice through HTTP: defaults (port name "" and protocol TCP),
generation bumps on endpoint changes only, upstream's validation messages (address per type,
immutable addressType, limits), the Table columns kubectl prints, discovery and OpenAPI, protobuf as client-go sends it."""

from __future__ import annotations

from tests.apiserver.conftest import API
from tests.apiserver.test_protobuf_responses import CLIENT_GO, PB, _google, _request
from tests.protobuf_descriptors import google_envelope, message_class

SLICES = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def eps(name: str, address_type: str = "IPv4", *addresses: str, **extra: object) -> dict:
    return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "labels": {"kubernetes.io/service-name": "web"}},
            "addressType": address_type,
            "endpoints": [{"addresses": [a], "conditions": {"ready": True}} for a in addresses],
            **extra}


async def test_create_defaults_and_generation(api: API) -> None:
    code, body = await api.post(SLICES, eps("a", "IPv4", "10.0.0.1",
                                            ports=[{"port": 80}, {"name": "https", "port": 443,
                                                                  "protocol": "TCP"}]))
    assert code == 201, body
    assert body["ports"] == [{"name": "", "port": 80, "protocol": "TCP"},
                             {"name": "https", "port": 443, "protocol": "TCP"}]
    assert body["metadata"]["generation"] == 1
    body["metadata"]["labels"]["extra"] = "x"
    code, body = await api.put(f"{SLICES}/a", body)
    assert code == 200 and body["metadata"]["generation"] == 1  # metadata only
    body["endpoints"].append({"addresses": ["10.0.0.2"]})
    code, body = await api.put(f"{SLICES}/a", body)
    assert code == 200 and body["metadata"]["generation"] == 2
    body["addressType"] = "IPv6"
    code, status = await api.put(f"{SLICES}/a", body)
    assert code == 422
    assert status["details"]["causes"][-1] == {
        "reason": "FieldValueInvalid", "message": 'Invalid value: "IPv6": field is immutable',
        "field": "addressType"}


async def test_validation_messages(api: API) -> None:
    code, body = await api.post(SLICES, eps("bad", "IP", "10.0.0.1"))
    assert code == 422
    assert body["message"] == ('EndpointSlice.discovery.k8s.io "bad" is invalid: addressType: '
                               'Unsupported value: "IP": supported values: "FQDN", "IPv4", '
                               '"IPv6"')
    code, body = await api.post(SLICES, eps("bad", "IPv4", "fd00::1", "127.0.0.1"))
    assert code == 422
    assert [c["message"] for c in body["details"]["causes"]] == [
        'Invalid value: "fd00::1": must be a valid IPv4 address',
        'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)']
    assert [c["field"] for c in body["details"]["causes"]] == [
        "endpoints[0].addresses[0]", "endpoints[1].addresses[0]"]
    code, body = await api.post(SLICES, eps("bad", "FQDN", "example"))
    assert code == 422
    assert body["details"]["causes"][0]["message"] == (
        'Invalid value: "example": should be a domain with at least two segments separated '
        "by dots")
    too_many = eps("bad", "IPv4", *(f"10.1.{i // 250}.{i % 250 + 1}" for i in range(1001)))
    code, body = await api.post(SLICES, too_many)
    assert code == 422
    assert body["details"]["causes"] == [{"reason": "FieldValueTooMany",
                                          "message": "Too many: 1001: must have at most 1000 "
                                                     "items", "field": "endpoints"}]
    code, body = await api.post(SLICES, eps("bad", "IPv4", ports=[
        {"name": "p", "port": 1, "protocol": "ICMP"}, {"name": "p", "port": 2}],
        endpoints=[{"addresses": []}]))
    assert code == 422
    assert [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("endpoints[0].addresses", "Required value: must contain at least 1 address"),
        ("ports[0].protocol", ('Unsupported value: "ICMP": supported values: "SCTP", "TCP", '
                              '"UDP"')),
        ("ports[1].name", 'Duplicate value: "p"')]
    hints = {"forZones": [{"name": "a"}, {"name": "a"}]}
    code, body = await api.post(SLICES, eps("bad", "IPv4", endpoints=[
        {"addresses": ["10.0.0.1"], "hints": hints, "nodeName": "Bad_Node"}]))
    assert code == 422
    assert [c["field"] for c in body["details"]["causes"]] == [
        "endpoints[0].nodeName", "endpoints[0].hints.forZones[1].name"]


async def test_table_discovery_and_openapi(api: API) -> None:
    for name, addresses, ports in (("one", ("10.0.0.1",), [{"port": 80}]),
                                   ("many", tuple(f"10.0.0.{i}" for i in range(1, 6)),
                                    [{"name": f"p{i}", "port": 8000 + i} for i in range(4)]),
                                   ("empty", (), [])):
        code, body = await api.post(SLICES, eps(name, "IPv4", *addresses, ports=ports))
        assert code == 201, body
    code, table = await api.get(SLICES, headers={"Accept": TABLE})
    assert code == 200
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "AddressType", "Ports", "Endpoints", "Age"]
    assert [r["cells"][:4] for r in table["rows"]] == [
        ["empty", "IPv4", "<unset>", "<unset>"],
        ["many", "IPv4", "8000,8001,8002 + 1 more...", "10.0.0.1,10.0.0.2,10.0.0.3 + 2 more..."],
        ["one", "IPv4", "80", "10.0.0.1"]]
    _, resources = await api.get("/apis/discovery.k8s.io/v1")
    [resource] = resources["resources"]
    assert (resource["name"], resource["kind"], resource["namespaced"]) == (
        "endpointslices", "EndpointSlice", True)
    assert "shortNames" not in resource  # upstream has none
    code, index = await api.get("/openapi/v3")
    code, doc = await api.get(index["paths"]["apis/discovery.k8s.io/v1"]["serverRelativeURL"])
    schemas = doc["components"]["schemas"]
    assert set(schemas["io.k8s.api.discovery.v1.EndpointSlice"]["properties"]) >= {
        "addressType", "endpoints", "ports", "metadata"}
    assert "conditions" in schemas["io.k8s.api.discovery.v1.Endpoint"]["properties"]
    # upstream's words for `kubectl explain`, not just the shape
    assert schemas["io.k8s.api.discovery.v1.EndpointSlice"]["description"].startswith(
        "EndpointSlice represents a subset of the endpoints that implement a service.")
    assert schemas["io.k8s.api.discovery.v1.EndpointSlice"]["required"] == [
        "addressType", "endpoints"]


async def test_protobuf_round_trip_as_client_go(api: API) -> None:
    """client-go's controllers (kube-proxy, CoreDNS) speak protobuf: a slice written and read
    back in it, checked with Google's runtime on upstream's descriptors."""
    message = message_class("k8s.io.api.discovery.v1.EndpointSlice")()
    message.metadata.name = "pb"
    message.addressType = "IPv4"
    endpoint = message.endpoints.add()
    endpoint.addresses.append("10.0.0.9")
    endpoint.conditions.ready = True
    endpoint.zone = "z1"
    port = message.ports.add()
    port.port = 53
    port.protocol = "UDP"
    status, ctype, body = await _request(api, "POST", SLICES, CLIENT_GO,
                                         google_envelope("discovery.k8s.io/v1", "EndpointSlice",
                                                         message), PB)
    assert (status, ctype) == (201, PB), body
    status, ctype, body = await _request(api, "GET", f"{SLICES}/pb", CLIENT_GO)
    type_meta, read = _google(body, "k8s.io.api.discovery.v1.EndpointSlice")
    assert (type_meta.apiVersion, type_meta.kind) == ("discovery.k8s.io/v1", "EndpointSlice")
    assert (read.addressType, list(read.endpoints[0].addresses), read.endpoints[0].zone) == (
        "IPv4", ["10.0.0.9"], "z1")
    assert (read.ports[0].name, read.ports[0].port, read.ports[0].protocol) == ("", 53, "UDP")
