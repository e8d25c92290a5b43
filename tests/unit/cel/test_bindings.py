"""cel.Bindings: one activation converted once and shared by several programs."""

from __future__ import annotations

import pytest

from minikube_py import cel


def test_bindings_evaluate_like_a_dict_and_follow_set() -> None:
    bindings = cel.Bindings({"object": {"a": 2, "s": "x" * 40}})
    bigger = cel.compile("object.a > 1", {"object"})
    size = cel.compile("size(object.s)", {"object"})
    assert bigger.evaluate(bindings) is True
    assert size.evaluate(bindings) == 40
    assert bigger.cost_bound(bindings) == bigger.cost_bound(dict(bindings))
    bindings.set("object", {"a": 0, "s": ""})
    assert bigger.evaluate(bindings) is False
    assert size.evaluate(bindings) == 0


def test_bindings_keep_the_cost_limit() -> None:
    many = cel.compile("object.l.all(x, object.l.all(y, object.l.all(z, x + y + z > 0)))",
                       {"object"})
    with pytest.raises(cel.CostLimitExceeded):
        many.evaluate(cel.Bindings({"object": {"l": list(range(1000))}}))
