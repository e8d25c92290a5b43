"""Pure conversions of the removed versions (api/pdb_v1beta1.py, api/endpointslice_v1beta1.py),
table-driven after upstream's conversion_test.go cases, and --runtime-config's default-off
versions and bundles (apiserver/runtime_config.py)."""

from __future__ import annotations

import copy

import pytest

from minikube_py.api import endpointslice_v1beta1 as eps
from minikube_py.api import pdb_v1beta1 as pdb
from minikube_py.apiserver.runtime_config import parse

HOST, ZONE = eps.HOSTNAME_LABEL, eps.ZONE_LABEL


@pytest.mark.parametrize(("beta", "stored"), [
    ({}, pdb.STORED_MATCH_NONE),                        # v1beta1 {} selects nothing
    (pdb.V1BETA1_MATCH_ALL, {}),                        # ... and its match-all is v1's {}
    ({"matchLabels": {"a": "b"}}, {"matchLabels": {"a": "b"}}),
    ({"matchLabels": {}}, pdb.STORED_MATCH_NONE),       # semantically empty
])
def test_pdb_selector_conversion(beta: dict, stored: dict) -> None:
    obj = {"apiVersion": "policy/v1beta1", "spec": {"selector": beta}}
    before = copy.deepcopy(obj)
    out = pdb.to_v1(obj)
    assert obj == before  # never mutates its input
    assert out == {"apiVersion": "policy/v1", "spec": {"selector": stored}}
    back = pdb.from_v1(out)
    assert back["apiVersion"] == "policy/v1beta1"
    assert pdb.to_v1(back)["spec"]["selector"] == stored


def test_pdb_without_selector_keeps_none() -> None:
    assert pdb.to_v1({"spec": {"minAvailable": 1}}) == {"apiVersion": "policy/v1",
                                                        "spec": {"minAvailable": 1}}


@pytest.mark.parametrize(("beta", "v1"), [
    ({"topology": {HOST: "n1", ZONE: "z"}, "nodeName": "n1"},
     {"nodeName": "n1", "zone": "z"}),
    # a hostname that is not nodeName stays in deprecatedTopology (upstream keeps both)
    ({"topology": {HOST: "other"}, "nodeName": "n1"},
     {"nodeName": "n1", "deprecatedTopology": {HOST: "other"}}),
    ({"topology": {"rack": "r"}}, {"deprecatedTopology": {"rack": "r"}}),
    ({"topology": {}}, {}),
    ({}, {}),
])
def test_endpoint_topology_to_v1(beta: dict, v1: dict) -> None:
    out = eps.to_v1({"endpoints": [dict(beta, addresses=["10.0.0.1"])]})
    assert out["apiVersion"] == "discovery.k8s.io/v1"
    assert out["endpoints"] == [dict(v1, addresses=["10.0.0.1"])]


@pytest.mark.parametrize(("v1", "topology"), [
    ({"nodeName": "n1", "zone": "z"}, {HOST: "n1", ZONE: "z"}),
    ({"nodeName": "n1", "deprecatedTopology": {HOST: "other"}}, {HOST: "other"}),
    ({"deprecatedTopology": {"rack": "r"}}, {"rack": "r"}),
    ({}, None),
])
def test_endpoint_topology_to_v1beta1(v1: dict, topology: dict | None) -> None:
    endpoint = eps.from_v1({"endpoints": [v1]})["endpoints"][0]
    assert endpoint.get("topology") == topology
    assert "zone" not in endpoint and "deprecatedTopology" not in endpoint


KNOWN = {("", "v1", "pods"), ("policy", "v1", "poddisruptionbudgets"),
         ("policy", "v1beta1", "poddisruptionbudgets"), ("batch", "v1beta1", "cronjobs"),
         ("batch", "v1", "jobs")}
OFF = frozenset({("policy", "v1beta1", "poddisruptionbudgets"), ("batch", "v1beta1", "cronjobs")})
BUNDLES = {"legacy/v1.20": frozenset({("", "v1", "pods"),
                                      ("policy", "v1beta1", "poddisruptionbudgets")})}


@pytest.mark.parametrize(("text", "served"), [
    ("", KNOWN - OFF),
    ("policy/v1beta1=true", KNOWN - {("batch", "v1beta1", "cronjobs")}),
    ("batch/v1beta1/cronjobs=true", KNOWN - {("policy", "v1beta1", "poddisruptionbudgets")}),
    ("api/beta=true", KNOWN),
    ("api/all=true", KNOWN),
    ("legacy/v1.20=true", KNOWN - {("batch", "v1beta1", "cronjobs")}),
    ("legacy/v1.20=true,policy/v1beta1=false", KNOWN - OFF),  # group/version keys win
    ("legacy/v1.20=false", KNOWN - OFF),  # only puts default-off versions back off
])
def test_default_off_versions_and_bundles(text: str, served: set) -> None:
    config = parse(text, KNOWN, default_off=OFF, bundles=BUNDLES)
    assert config.enabled == served


def test_a_bundle_value_is_a_go_bool() -> None:
    with pytest.raises(ValueError, match="invalid value of legacy/v1.20: maybe"):
        parse("legacy/v1.20=maybe", KNOWN, default_off=OFF, bundles=BUNDLES)
