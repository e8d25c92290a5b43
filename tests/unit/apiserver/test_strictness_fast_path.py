"""strictness._clean (the path-free fast check every write of a built-in kind runs) agrees with
_walk (the full walk that builds the messages) on what is clean, for arbitrary bodies."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minikube_py.apiserver import strictness
from minikube_py.apiserver.openapi_schemas import schema_name

KEYS = st.sampled_from(["metadata", "spec", "status", "containers", "name", "image", "labels",
                        "env", "value", "ports", "containerPort", "volumes", "bogus",
                        "nodeName", "conditions", "type", "annotations", "resources",
                        "requests", "cpu"])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=3))
BODIES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=4)), max_leaves=25)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, BODIES, max_size=4), st.sampled_from(["Pod", "Event", "Node"]))
def test_clean_iff_the_walk_finds_nothing(body: dict, kind: str) -> None:
    root = strictness._compiled(schema_name("", "v1", kind))
    unknown: list[str] = []
    found: list = []
    wrong: list = []
    strictness._walk(body, root, "", unknown, found, wrong)
    assert strictness._clean(body, root) == (not found and not wrong)
