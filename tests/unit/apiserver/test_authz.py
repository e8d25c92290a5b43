"""ABAC parsing and matching, union of modes, the Forbidden message."""

from __future__ import annotations

from pathlib import Path

import pytest

from minikube_py.apiserver.authn import ALL_AUTHENTICATED, UserInfo
from minikube_py.apiserver.authz import (
    Attributes,
    build_authorizer,
    first_denied,
    forbidden_error,
    required_checks,
)
from minikube_py.apiserver.authz.abac import (
    ABACAuthorizer,
    Policy,
    parse_policy,
    parse_policy_lines,
)

ALICE = UserInfo("alice", "1", (ALL_AUTHENTICATED,))
BOB = UserInfo("bob", "2", (ALL_AUTHENTICATED,))
CAROL = UserInfo("carol", "3", ("dev", ALL_AUTHENTICATED))
DAVE = UserInfo("dave", "4", (ALL_AUTHENTICATED,))

POLICY = "\n".join([
    '# v1.0 examples',
    '{"user":"alice"}',
    '{"user":"bob","readonly":true,"resource":"pods","namespace":"projectCaribou"}',
    '{"group":"dev","resource":"deployments"}',
    '',
    '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":'
    '{"user":"dave","namespace":"*","resource":"replicasets","apiGroup":"apps"}}',
    '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":'
    '{"user":"dave","readonly":true,"nonResourcePath":"/apis/*"}}',
])


def res(user: UserInfo, verb: str, resource: str, namespace: str = "", group: str = "",
        name: str = "", subresource: str = "") -> Attributes:
    return Attributes(user, verb, True, "", namespace, resource, subresource, name, group, "v1")


def path(user: UserInfo, verb: str, p: str) -> Attributes:
    return Attributes(user, verb, False, p)


@pytest.mark.parametrize("attrs,allowed", [
    (res(ALICE, "delete", "secrets", "kube-system"), True),  # alice: everything
    (path(ALICE, "get", "/version"), True),
    (res(BOB, "list", "pods", "projectCaribou"), True),
    (res(BOB, "watch", "pods", "projectCaribou"), True),
    (res(BOB, "get", "pods", "projectCaribou", name="x"), True),
    (res(BOB, "create", "pods", "projectCaribou"), False),  # readonly
    (res(BOB, "delete", "pods", "projectCaribou", name="x"), False),
    (res(BOB, "list", "pods", "default"), False),  # other namespace
    (res(BOB, "list", "services", "projectCaribou"), False),  # other resource
    (path(BOB, "get", "/api"), False),  # a v0 line naming a resource: no non-resource path
    (path(ALICE, "post", "/metrics"), True),  # naming neither namespace nor resource: every path
    (res(CAROL, "create", "deployments", "any", "apps"), True),  # v0: any apiGroup
    (res(CAROL, "create", "pods", "any"), False),
    (res(DAVE, "create", "replicasets", "ns1", "apps"), True),
    (res(DAVE, "create", "replicasets", "ns1", "extensions"), False),  # v1beta1: exact group
    (path(DAVE, "get", "/apis/apps/v1"), True),  # trailing * prefix
    (path(DAVE, "get", "/api/v1"), False),
    (path(DAVE, "post", "/apis/apps"), False),  # readonly
    (res(DAVE, "get", "pods", "ns1"), False),  # non-resource policy never matches resources
])
def test_abac_matching(attrs: Attributes, allowed: bool) -> None:
    authorizer = ABACAuthorizer(parse_policy_lines(POLICY, "policy.jsonl"))
    assert authorizer.authorize(attrs) == ((True, "") if allowed else (False, "No policy matched."))


def test_v0_wildcards_mean_all_authenticated() -> None:
    for line in ('{"user":"*","readonly":true}', '{"readonly":true}', '{"group":"*","readonly":true}'):
        authorizer = ABACAuthorizer(parse_policy_lines(line, "p"))
        assert authorizer.authorize(res(BOB, "list", "pods", "x"))[0]
        assert not authorizer.authorize(res(BOB, "create", "pods", "x"))[0]
        assert not authorizer.authorize(res(UserInfo("anon"), "list", "pods", "x"))[0]


@pytest.mark.parametrize("line,fragment", [
    ('{"user":"alice"', "invalid JSON"),
    ('["alice"]', "must be a JSON object"),
    ('{"usr":"alice"}', "unknown field 'usr'"),
    ('{"user":"alice","readonly":"yes"}', "field 'readonly' must be a bool"),
    ('{"apiVersion":"abac.authorization.kubernetes.io/v2","kind":"Policy","spec":{}}',
     "unrecognized apiVersion"),
    ('{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Pol","spec":{}}',
     "kind must be 'Policy'"),
    ('{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":[]}',
     "spec must be an object"),
])
def test_bad_policy_line_names_file_and_line(tmp_path: Path, line: str, fragment: str) -> None:
    policy = tmp_path / "policy.jsonl"
    policy.write_text('{"user":"alice"}\n\n' + line + "\n")
    with pytest.raises(ValueError) as exc:
        build_authorizer("ABAC", policy)
    assert str(exc.value).startswith(f"{policy} line 3: ")
    assert fragment in str(exc.value)


def test_modes_and_union(tmp_path: Path) -> None:
    policy = tmp_path / "p.jsonl"
    policy.write_text('{"user":"bob","readonly":true}\n')
    attrs = res(BOB, "create", "pods", "default")
    assert build_authorizer("AlwaysAllow").authorize(attrs) == (True, "")
    assert build_authorizer("AlwaysDeny").authorize(attrs) == (False, "Everything is forbidden.")
    assert build_authorizer("ABAC", policy).authorize(attrs) == (False, "No policy matched.")
    assert build_authorizer("AlwaysDeny,ABAC", policy).authorize(attrs) == (
        False, "Everything is forbidden.\nNo policy matched.")
    assert build_authorizer("AlwaysDeny,ABAC", policy).authorize(
        res(BOB, "list", "pods", "default")) == (True, "")
    assert build_authorizer("ABAC,AlwaysAllow", policy).authorize(attrs) == (True, "")


@pytest.mark.parametrize("modes,policy,fragment", [
    ("Bogus", None, "unknown authorization mode 'Bogus'"),
    ("", None, "at least one authorization mode"),
    ("ABAC", None, "policy file not passed"),
    ("AlwaysAllow", "p.jsonl", "without mode ABAC"),
])
def test_bad_mode_configuration(modes: str, policy: str | None, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        build_authorizer(modes, policy)


def test_forbidden_status_shapes() -> None:
    err = forbidden_error(res(BOB, "create", "pods", "default"), "No policy matched.")
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == ('pods is forbidden: User "bob" cannot create resource "pods" in API '
                           'group "" in the namespace "default": No policy matched.')
    assert err.details == {"name": "", "kind": "pods"}
    err = forbidden_error(res(BOB, "delete", "deployments", "ns", "apps", "web"), "")
    assert err.message == ('deployments.apps "web" is forbidden: User "bob" cannot delete '
                           'resource "deployments" in API group "apps" in the namespace "ns"')
    assert err.details == {"name": "web", "kind": "deployments", "group": "apps"}
    err = forbidden_error(res(BOB, "list", "nodes"), "")
    assert err.message.endswith('cannot list resource "nodes" in API group "" at the cluster scope')
    err = forbidden_error(path(BOB, "get", "/apis"), "Everything is forbidden.")
    assert err.message == 'forbidden: User "bob" cannot get path "/apis": Everything is forbidden.'


# -- ABAC v0 lines and non-resource paths (upstream's v0 conversion) ---------------------------
@pytest.mark.parametrize("line,policy", [
    ({"user": "bob"}, Policy("bob", "", False, "*", "*", "*", "*")),
    ({"user": "bob", "resource": "pods"}, Policy("bob", "", False, "*", "pods", "*", "")),
    ({"user": "bob", "namespace": "ns"}, Policy("bob", "", False, "*", "*", "ns", "")),
    ({"user": "bob", "readonly": True, "resource": "pods", "namespace": "ns"},
     Policy("bob", "", True, "*", "pods", "ns", "")),
    ({"readonly": True}, Policy("", ALL_AUTHENTICATED, True, "*", "*", "*", "*")),
    ({"user": "*", "group": "dev", "resource": "pods"},
     Policy("", ALL_AUTHENTICATED, False, "*", "pods", "*", "")),
])
def test_v0_conversion(line: dict, policy: Policy) -> None:
    assert parse_policy(line) == policy


@pytest.mark.parametrize("line,allowed", [
    ('{"user":"bob","resource":"pods"}', False),
    ('{"user":"bob","namespace":"default"}', False),
    ('{"user":"bob","readonly":true,"resource":"pods","namespace":"default"}', False),
    ('{"user":"bob","readonly":true}', True),
    ('{"user":"bob"}', True),
    ('{"group":"*","resource":"*"}', False),  # an explicit `*` resource is a resource line
])
def test_v0_resource_line_grants_no_metrics_pprof_or_openapi(line: str, allowed: bool) -> None:
    authorizer = ABACAuthorizer(parse_policy_lines(line, "p"))
    for p in ("/metrics", "/debug/pprof/", "/debug/pprof/profile", "/openapi/v2", "/openapi/v3",
              "/api", "/apis/apps/v1"):
        assert authorizer.authorize(path(BOB, "get", p))[0] is allowed, (line, p)


def test_abac_resource_ignores_the_subresource() -> None:
    """upstream's resourceMatches compares `resource` with the resource only."""
    pods = ABACAuthorizer(parse_policy_lines('{"user":"bob","resource":"pods"}', "p"))
    assert pods.authorize(res(BOB, "create", "pods", "default", name="web", subresource="exec"))[0]
    exec_only = ABACAuthorizer(parse_policy_lines('{"user":"bob","resource":"pods/exec"}', "p"))
    assert not exec_only.authorize(
        res(BOB, "create", "pods", "default", name="web", subresource="exec"))[0]


# -- the compound `create` check for WebSocket exec/attach/portforward (KEP-4006) ----------------
READER_POLICY = '{"user":"bob","readonly":true,"resource":"pods"}\n{"user":"alice"}'


@pytest.mark.parametrize("sub", ["exec", "attach", "portforward"])
def test_websocket_upgrade_into_a_pod_also_needs_create(sub: str) -> None:
    authorizer = ABACAuthorizer(parse_policy_lines(READER_POLICY, "p"))
    upgrade = res(BOB, "get", "pods", "default", name="web", subresource=sub)
    assert authorizer.authorize(upgrade) == (True, "")  # get pods/<sub> alone: allowed (ABAC)
    assert [a.verb for a in required_checks(upgrade)] == ["get", "create"]
    denied, reason = first_denied(authorizer, upgrade)
    err = forbidden_error(denied, reason)
    assert (err.code, err.reason) == (403, "Forbidden")
    assert err.message == (f'pods "web" is forbidden: User "bob" cannot create resource '
                           f'"pods/{sub}" in API group "" in the namespace "default": '
                           f'No policy matched.')
    assert err.details == {"name": "web", "kind": "pods"}
    spdy = res(BOB, "create", "pods", "default", name="web", subresource=sub)  # SPDY: a POST
    assert required_checks(spdy) == (spdy,)
    assert first_denied(authorizer, spdy) == (spdy, "No policy matched.")
    for writer in (res(ALICE, "get", "pods", "default", name="web", subresource=sub),
                   res(ALICE, "create", "pods", "default", name="web", subresource=sub)):
        assert first_denied(authorizer, writer) is None


@pytest.mark.parametrize("attrs", [
    res(BOB, "get", "pods", "default", name="web"),
    res(BOB, "get", "pods", "default", name="web", subresource="log"),
    res(BOB, "get", "pods", "default", name="web", subresource="proxy"),  # by the proxied method
    res(BOB, "get", "services", "default", name="web", subresource="proxy"),
    res(BOB, "get", "nodes", name="n", subresource="proxy"),
    res(BOB, "get", "pods", "default", "example.com", "web", "exec"),  # not the core group
])
def test_only_pod_connections_get_the_compound_check(attrs: Attributes) -> None:
    assert required_checks(attrs) == (attrs,)


def test_the_first_denial_is_reported() -> None:
    """A user who may not even read the pod is told about `get`, as upstream's filter does
    before the registry's compound check."""
    authorizer = ABACAuthorizer(parse_policy_lines('{"user":"alice","resource":"nodes"}', "p"))
    upgrade = res(ALICE, "get", "pods", "default", name="web", subresource="exec")
    denied, _ = first_denied(authorizer, upgrade)
    assert denied is upgrade
