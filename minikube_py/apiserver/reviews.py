"""The access reviews: ask the API server's own authenticators and authorizer a question.

Kubernetes pieces: pkg/registry/authorization/{subjectaccessreview,localsubjectaccessreview,
selfsubjectaccessreview,selfsubjectrulesreview}/rest.go, pkg/registry/authorization/util
(ResourceAttributesFrom, NonResourceAttributesFrom) and pkg/registry/authentication/
{tokenreview/storage.go,selfsubjectreview/rest.go}. Each is a create that stores nothing: the
body is validated, answered with whatever authenticator and authorizer the secure port runs
(authz/guard.py — AlwaysAllow, ABAC, and later RBAC through the same Authorizer protocol and
authz/rules.py), and returned with `status` filled, 201 Created.

The "self" kinds need the caller: on the secure port the authenticated user (guard.USER); on
the insecure port, or a secure port that checks nobody, upstream's insecure superuser
`system:unsecured` (group `system:masters`), whom nothing is denied there — so a self review
says allowed and a rules review lists `*`.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..api import errors, meta
from ..api.validation import reviews as validation
from ..registry import reviews as kinds
from ..registry.strategy import Strategy
from . import render, strictness
from .authn import ALL_AUTHENTICATED, INSECURE_SUPERUSER, UnionAuthenticator, UserInfo
from .authz import AlwaysAllow, Attributes, Authorizer
from .authz.guard import USER
from .authz.rules import rules_for
from .negotiation import (
    Output,
    Partial,
    body_type,
    decode_json_object,
    output_format,
    read_body,
)

if TYPE_CHECKING:
    from .authz.guard import Guard
    from .requestinfo import RequestInfo

Obj = dict[str, Any]
RESOURCES = kinds.RESOURCES


# -- pure: questions to attributes, answers to status ------------------------------------
def spec_user(spec: Obj) -> UserInfo:
    """The user a (Local)SubjectAccessReview asks about (authorizationutil's user.DefaultInfo
    from spec.user/uid/groups; extra is not used by our authorizers)."""
    return UserInfo(spec.get("user") or "", spec.get("uid") or "",
                    tuple(spec.get("groups") or ()))


def attributes_from(user: UserInfo, spec: Obj) -> Attributes:
    """ResourceAttributesFrom / NonResourceAttributesFrom."""
    resource = spec.get("resourceAttributes")
    if resource is not None:
        return Attributes(user, resource.get("verb", ""), True, "",
                          resource.get("namespace", ""), resource.get("resource", ""),
                          resource.get("subresource", ""), resource.get("name", ""),
                          resource.get("group", ""), resource.get("version", ""))
    non_resource = spec.get("nonResourceAttributes") or {}
    return Attributes(user, non_resource.get("verb", ""), False, non_resource.get("path", ""))


def access_status(authorizer: Authorizer, attrs: Attributes) -> Obj:
    """SubjectAccessReviewStatus: our authorizers answer allow or no-opinion, never an
    explicit deny, so `denied` is never set (as with upstream's ABAC and AlwaysDeny)."""
    allowed, reason = authorizer.authorize(attrs)
    status: Obj = {"allowed": allowed}
    if reason and not allowed:
        status["reason"] = reason
    return status


def user_info_json(user: UserInfo) -> Obj:
    """authentication/v1 UserInfo."""
    return user.to_api()


def token_review_status(authenticator: UnionAuthenticator, token: str,
                        audiences: list[str]) -> Obj:
    """TokenReviewStatus: the token as a bearer header through the server's authenticators
    (the union adds `system:authenticated`). Our static tokens are audience-agnostic, so the
    audiences asked for are the audiences answered."""
    user = authenticator.authenticate({"Authorization": f"Bearer {token}"}, None)
    if user is None:
        return {"user": {}}
    status: Obj = {"authenticated": True, "user": user_info_json(user)}
    if audiences:
        status["audiences"] = list(audiences)
    return status


# -- I/O: the create handler ---------------------------------------------------------------
def _output(request: web.Request) -> Output | Partial:
    """The negotiated format of the answer (protobuf too: the review kinds have messages); a
    Table, which upstream has for none of them, is plain JSON."""
    output = output_format(request.headers.get("Accept"))
    return Output.JSON if output is Output.TABLE else output


def _caller(request: web.Request, guard: Guard | None) -> tuple[UserInfo, Authorizer]:
    """The requesting user and the authorizer that judges them (the insecure superuser and
    AlwaysAllow where the port checks nobody)."""
    user = request.get(USER)
    if user is None or guard is None:
        return INSECURE_SUPERUSER, AlwaysAllow()
    return user, guard.authorizer


def _invalid(strategy: Strategy, errs: list[errors.FieldError]) -> errors.StatusError:
    return errors.invalid_object(strategy.kind, "", errs, group=strategy.group)


async def create(request: web.Request, info: RequestInfo, strategy: Strategy,
                 guard: Guard | None,
                 admit: Callable[[Obj], Awaitable[None]] | None = None) -> web.Response:
    """POST to one of the review resources; 201 with the answered object. `admit` runs the
    admission chain on the review as sent (upstream: mutating admission in the create
    handler, validating admission as the REST storage's createValidation — so webhooks and
    ValidatingAdmissionPolicies see reviews too, though nothing is stored)."""
    body = decode_json_object(await read_body(request), body_type(request))
    strictness.check_type_meta(body, strategy)
    md = body.get("metadata")
    if md is not None and not isinstance(md, dict):
        raise strictness.cannot_handle(strategy, "metadata: expected an object")
    if strategy.namespaced:
        namespace = (md or {}).get("namespace") or ""
        if namespace and namespace != info.namespace:
            raise errors.bad_request("the namespace of the provided object does not match "
                                     "the namespace sent on the request")
        body.setdefault("metadata", {})["namespace"] = info.namespace
    if admit is not None:
        await admit(body)
    if strategy.resource == "tokenreviews":  # may read the store (service-account tokens)
        answer = await _token_review(strategy, body, guard)
    else:
        answer = _answer(request, strategy, body, guard)
    answer["apiVersion"], answer["kind"] = strategy.api_version, strategy.kind
    return render.object_response(answer, _output(request), 201)


def _answer(request: web.Request, strategy: Strategy, body: Obj, guard: Guard | None) -> Obj:
    resource = strategy.resource
    spec = body.get("spec")
    if resource == "selfsubjectreviews":
        user, _ = _caller(request, guard)
        return {"metadata": {"creationTimestamp": meta.now_rfc3339()},
                "status": {"userInfo": user_info_json(user)}}
    problem = validation.type_errors(spec, resource.startswith("self"))
    if problem:
        raise strictness.cannot_handle(strategy, problem)
    spec = spec or {}
    answer = copy.deepcopy(body)
    answer.setdefault("metadata", {})
    answer["spec"] = spec
    if resource == "selfsubjectrulesreviews":
        namespace = spec.get("namespace") or ""
        if not isinstance(namespace, str) or not namespace:
            raise errors.bad_request("no namespace on request")
        user, authorizer = _caller(request, guard)
        answer["status"] = rules_for(authorizer, user, namespace).status()
        return answer
    if resource == "selfsubjectaccessreviews":
        errs = validation.validate_self_subject_access_review(body)
        if errs:
            raise _invalid(strategy, errs)
        user, authorizer = _caller(request, guard)
    else:
        validate = (validation.validate_local_subject_access_review
                    if resource == "localsubjectaccessreviews"
                    else validation.validate_subject_access_review)
        errs = validate(body)
        if errs:
            raise _invalid(strategy, errs)
        user = spec_user(spec)
        authorizer = guard.authorizer if guard is not None else AlwaysAllow()
    answer["status"] = access_status(authorizer, attributes_from(user, spec))
    return answer


async def _token_review(strategy: Strategy, body: Obj, guard: Guard | None) -> Obj:
    spec = body.get("spec") or {}
    if not isinstance(spec, dict):
        raise strictness.cannot_handle(strategy, "spec: expected an object")
    token, audiences = spec.get("token") or "", spec.get("audiences") or []
    if not isinstance(token, str) or not isinstance(audiences, list) or not all(
            isinstance(a, str) for a in audiences):
        raise strictness.cannot_handle(strategy, "spec: token must be a string, audiences "
                                                 "a list of strings")
    if not token:
        raise errors.bad_request("token is required for TokenReview in authentication")
    answer = copy.deepcopy(body)
    answer.setdefault("metadata", {})
    if guard is None:  # no authenticator configured: upstream answers the review unfilled
        answer["status"] = {"user": {}}
    elif guard.service_accounts is not None and guard.service_accounts.handles(token):
        # a service-account JWT (serviceaccount/authenticator.py): its audiences must meet
        # the ones asked for (default the API server's); the answer names the ones that do
        user, matched = await guard.service_accounts.review(token, audiences)
        answer["status"] = {"user": {}} if user is None else {
            "authenticated": True, "audiences": matched, "user": user_info_json(
                UserInfo(user.name, user.uid, (*user.groups, ALL_AUTHENTICATED)))}
    else:
        answer["status"] = token_review_status(guard.authenticator, token, audiences)
    return answer
