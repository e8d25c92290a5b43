"""gc_monitors: which resources the garbage collector watches (upstream GetDeletableResources,
gcIgnoredResources, GraphBuilder.syncMonitors), without a server."""

from __future__ import annotations

from minikube_py.client.resources import CONFIGMAPS, EVENTS, PODS, Resource
from minikube_py.controllers.discovery import APIResource
from minikube_py.controllers.gc_monitors import (
    deletable_resources,
    metadata_only,
    plan_monitors,
    unwatched_owner_kinds,
)

ALL = frozenset({"create", "delete", "deletecollection", "get", "list", "patch", "update",
                 "watch"})
EVC = Resource("kopf.dev", "v1", "ephemeralvolumeclaims", True, "EphemeralVolumeClaim")
EVC_BETA = EVC._replace(version="v1beta1")
NEW_EVENTS = Resource("events.k8s.io", "v1", "events", True, "Event")
REVIEWS = Resource("authorization.k8s.io", "v1", "subjectaccessreviews", False,
                   "SubjectAccessReview")


def test_deletable_resources_need_delete_list_and_watch_and_skip_events():
    found = [APIResource(PODS, ALL), APIResource(EVC, ALL), APIResource(EVENTS, ALL),
             APIResource(NEW_EVENTS, ALL), APIResource(REVIEWS, frozenset({"create"})),
             APIResource(CONFIGMAPS, frozenset({"get", "list", "watch"}))]
    assert deletable_resources(found) == {PODS, EVC}


def test_plan_starts_the_new_and_stops_the_gone_but_never_the_fixed():
    plan = plan_monitors([EVC, CONFIGMAPS], {PODS, CONFIGMAPS}, fixed=[PODS])
    assert plan.start == [] and plan.stop == [EVC]
    plan = plan_monitors([], {PODS, EVC}, fixed=[PODS])
    assert plan.start == [EVC] and plan.stop == []


def test_a_new_preferred_version_replaces_the_monitor_but_not_a_fixed_one():
    assert plan_monitors([EVC], {EVC_BETA}) == ([EVC_BETA], [EVC])
    assert plan_monitors([], {EVC_BETA}, fixed=[EVC]) == ([], [])


def test_unwatched_owner_kinds():
    obj = {"metadata": {"ownerReferences": [
        {"apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim"},
        {"apiVersion": "v1", "kind": "Pod"}, {"apiVersion": "apps/v1", "kind": "ReplicaSet"}]}}
    watched = {("", "Pod"), ("apps", "ReplicaSet")}
    assert unwatched_owner_kinds(obj, watched) == {("kopf.dev", "EphemeralVolumeClaim")}
    assert unwatched_owner_kinds({"metadata": {}}, watched) == set()


def test_metadata_only_keeps_what_the_graph_reads():
    obj = {"metadata": {"name": "c", "uid": "u", "ownerReferences": [{"uid": "o"}],
                        "managedFields": [{"manager": "kopf"}]},
           "spec": {"size": "1G"}, "status": {"phase": "Bound"}}
    assert metadata_only(EVC)(obj) == {
        "apiVersion": "kopf.dev/v1", "kind": "EphemeralVolumeClaim",
        "metadata": {"name": "c", "uid": "u", "ownerReferences": [{"uid": "o"}]}}
