"""The key-layout synonyms `storage ls` explains (cli/key_layout.py), from the registry's
own strategies."""

from __future__ import annotations

import pytest

from minikube_py.cli.key_layout import registry_synonyms, suggest, synonyms


def test_the_registry_gives_v1_0_synonyms() -> None:
    table = registry_synonyms()
    assert {spelled: table[spelled].key_root for spelled in (
        "nodes", "services", "endpoints", "replicationcontrollers")} == {
        "nodes": "minions", "services": "services/specs", "endpoints": "services/endpoints",
        "replicationcontrollers": "controllers"}
    assert table["ingresses"].key_root == "ingress"
    assert table["apps/deployments"].key_root == "deployments"
    # stored under their own name: no synonym
    assert "pods" not in table and "deployments" not in table and "namespaces" not in table


@pytest.mark.parametrize("prefix, stored, message", [
    ("/registry/nodes/", "/registry/minions/",
     "nodes are stored under /registry/minions/ (the v1.0 layout)"),
    ("/registry/nodes", "/registry/minions/",
     "nodes are stored under /registry/minions/ (the v1.0 layout)"),
    ("/registry/nodes/node-1", "/registry/minions/node-1",
     "nodes are stored under /registry/minions/ (the v1.0 layout); try /registry/minions/node-1"),
    ("/custom/services/default/", "/custom/services/specs/default/",
     "services are stored under /custom/services/specs/ (the v1.0 layout); "
     "try /custom/services/specs/default/"),
    ("/registry/apps/deployments/", "/registry/deployments/",
     "deployments.apps are stored under /registry/deployments/ (upstream's key layout)"),
])
def test_suggest(prefix: str, stored: str, message: str) -> None:
    suggestion = suggest(prefix, registry_synonyms())
    assert suggestion is not None
    assert (suggestion.stored_prefix, suggestion.message()) == (stored, message)


@pytest.mark.parametrize("prefix", ["/registry/pods/", "/", "/registry/", "nodes",
                                    "/registry/services/specs/default/", "/registry/bogus/"])
def test_no_suggestion(prefix: str) -> None:
    assert suggest(prefix, registry_synonyms()) is None


def test_a_spelling_that_is_a_real_root_is_no_synonym() -> None:
    # widgets live under gadgets/, gadgets under things/: `/registry/gadgets/` has keys
    # (widgets), so it is no synonym; a virtual resource (no key root) has none either
    table = synonyms([("", "widgets", "gadgets"), ("", "gadgets", "things"),
                      ("x", "virtual", "")])
    assert {k: v.key_root for k, v in table.items()} == {"widgets": "gadgets"}
