"""The validation memo only remembers valid inputs: errors are always reported again."""

from minikube_py.api.validation.common import ValidMemo, items_key, validate_labels
from minikube_py.api.validation.node import validate_node


def test_items_key_only_for_flat_string_maps():
    assert items_key({"a": "1"}) == (("a", "1"),)
    assert items_key({"a": 1}) is None
    assert items_key(["a"]) is None


def test_memo_is_bounded():
    memo = ValidMemo(limit=2)
    for i in range(5):
        memo.add(i)
    assert 4 in memo and 0 not in memo
    assert None not in memo


def test_labels_errors_after_valid_ones_are_cached():
    errs: list = []
    validate_labels({"app": "web"}, "metadata.labels", errs)
    validate_labels({"app": "web"}, "metadata.labels", errs)
    assert errs == []
    validate_labels({"app": "-bad-"}, "metadata.labels", errs)
    validate_labels({"app": "-bad-"}, "metadata.labels", errs)
    assert len(errs) == 2


def _node(cpu: str) -> dict:
    return {"metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1"}},
            "spec": {}, "status": {"capacity": {"cpu": cpu}, "allocatable": {"cpu": cpu}}}


def test_node_resources_errors_are_not_masked_by_the_memo():
    errs: list = []
    validate_node(_node("4"), errs)
    validate_node(_node("4"), errs)
    assert errs == []
    validate_node(_node("-1"), errs)
    first = len(errs)
    assert first > 0
    validate_node(_node("-1"), errs)
    assert len(errs) == 2 * first
