"""MultiPoint expansion, case by case as upstream's TestNewFrameworkMultiPointExpansion
(pkg/scheduler/framework/runtime/framework_test.go) runs it: a Plugins object straight into
the framework (no default plugins merged), with upstream's test plugins and their points."""

from __future__ import annotations

import pytest

from minikube_py.scheduler.framework.config.expand import (
    FrameworkError,
    expand,
    in_tree_points,
)

ALL_BUT_PRE_ENQUEUE = frozenset({"queueSort", "preFilter", "filter", "postFilter", "preScore",
                                 "score", "reserve", "permit", "preBind", "bind", "postBind"})
#: upstream's test registry: which points each test plugin implements
POINTS = {
    "test-plugin": ALL_BUT_PRE_ENQUEUE,
    "score-plugin-1": frozenset({"preScore", "score"}),
    "score-plugin-2": frozenset({"preScore", "score"}),
    "score-with-normalize-plugin-1": frozenset({"score"}),
    "queue-sort-plugin": frozenset({"queueSort"}),
    "bind-plugin": frozenset({"bind"}),
}
RESOLVE = in_tree_points(POINTS)
T, S1, S2, SN = "test-plugin", "score-plugin-1", "score-plugin-2", "score-with-normalize-plugin-1"


def only_test_plugin(**points):
    """upstream's wantPlugins where test-plugin fills every point it implements."""
    out = {p: [T] for p in ALL_BUT_PRE_ENQUEUE}
    out.update(points)
    return {p: v for p, v in out.items() if v}


def plugins(multi, multi_disabled=(), **points):
    out = {"multiPoint": {"enabled": [dict(p) for p in multi],
                          "disabled": [{"name": n} for n in multi_disabled]}}
    out.update(points)
    return out


def en(*entries):
    return {"enabled": [{"name": e} if isinstance(e, str) else {"name": e[0], "weight": e[1]}
                        for e in entries]}


def dis(*names):
    return {"disabled": [{"name": n} for n in names]}


CASES = [
    ("plugin expansion", plugins([{"name": T, "weight": 5}]),
     only_test_plugin(score=[(T, 5)])),
    ("disable MultiPoint plugin at some extension points",
     plugins([{"name": T}], preScore=dis(T), score=dis(T)),
     only_test_plugin(preScore=[], score=[])),
    ("Multiple MultiPoint plugins", plugins([{"name": T}, {"name": S1}]),
     only_test_plugin(preScore=[T, S1], score=[(T, 1), (S1, 1)])),
    ("disable MultiPoint extension", plugins([{"name": T}, {"name": S1}], preScore=dis("*")),
     only_test_plugin(preScore=[], score=[(T, 1), (S1, 1)])),
    ("Reorder MultiPoint plugins (specified extension takes precedence)",
     plugins([{"name": SN}, {"name": T}, {"name": S1}], score=en(S1, T)),
     only_test_plugin(preScore=[T, S1], score=[(S1, 1), (T, 1), (SN, 1)])),
    (("Reorder MultiPoint plugins (specified extension only takes precedence when it exists in "
     "MultiPoint)"),
     plugins([{"name": T}, {"name": S1}], score=en(SN, S1, T)),
     only_test_plugin(preScore=[T, S1], score=[(S1, 1), (T, 1), (SN, 1)])),
    ("Override MultiPoint plugins weights",
     plugins([{"name": T}, {"name": S1}], score=en((S1, 5), (T, 3))),
     only_test_plugin(preScore=[T, S1], score=[(S1, 5), (T, 3)])),
    ("disable and enable MultiPoint plugins with '*'",
     plugins([{"name": "queue-sort-plugin"}, {"name": "bind-plugin"}, {"name": S1}], ["*"]),
     {"queueSort": ["queue-sort-plugin"], "preScore": [S1], "score": [(S1, 1)],
      "bind": ["bind-plugin"]}),
    ("disable and enable MultiPoint plugin by name",
     plugins([{"name": "bind-plugin"}, {"name": "queue-sort-plugin"}, {"name": S1}], [S1]),
     {"queueSort": ["queue-sort-plugin"], "preScore": [S1], "score": [(S1, 1)],
      "bind": ["bind-plugin"]}),
    ("Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
     plugins([{"name": T}, {"name": S1}], score=en((S1, 5), (S2, 5), (T, 3))),
     only_test_plugin(preScore=[T, S1], score=[(S1, 5), (T, 3), (S2, 5)])),
]


@pytest.mark.parametrize("name, given, want", CASES, ids=[c[0] for c in CASES])
def test_multipoint_expansion(name, given, want):
    got = expand("default-scheduler", given, RESOLVE)
    listed = {point: [(r.name, r.weight) if point == "score" else r.name for r in refs]
              for point, refs in got.items() if refs}
    assert listed == want


def test_already_registered():
    with pytest.raises(FrameworkError, match="already registered"):
        expand("default-scheduler", plugins([{"name": T}, {"name": T}]), RESOLVE)


def test_a_registered_plugin_class_is_read_off_the_class(monkeypatch):
    """A plugin the in-tree registry holds as a class (say a v1.x predicate turned plugin)
    is known to the configuration without being listed in the data."""
    from minikube_py.scheduler.framework.config.expand import registered_points
    from minikube_py.scheduler.framework.plugins import registry

    monkeypatch.setitem(registry.IN_TREE, "FakeRegistered", ("registry", "FakeRegistered"))

    class FakeRegistered:
        name = "FakeRegistered"

        def filter(self, state, pod, nodes, candidates):
            return []

    monkeypatch.setattr(registry, "FakeRegistered", FakeRegistered, raising=False)
    assert registered_points("FakeRegistered") == {"filter"}
    assert registered_points("NotRegistered") is None
    got = expand("default-scheduler", plugins([{"name": "queue-sort-plugin"},
                                               {"name": "bind-plugin"},
                                               {"name": "FakeRegistered"}]), RESOLVE)
    assert [r.name for r in got["filter"]] == ["FakeRegistered"]
