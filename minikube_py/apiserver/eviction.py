"""`POST pods/{name}/eviction`: delete a pod only if its PodDisruptionBudget allows it.

Kubernetes piece: pkg/registry/core/pod/storage/eviction.go (EvictionREST.Create). The order
of upstream's decision is kept, its arithmetic is api/poddisruptionbudget.py:

1. the body is a policy/v1 (or v1beta1) Eviction naming the pod of the URL; a dry run may come
   from the query or from the Eviction's deleteOptions (they must agree);
2. a pod that is Pending, Succeeded, Failed or already terminating is deleted at once (it does
   not count towards any budget);
3. otherwise the budgets of the pod's namespace that select it are found: more than one is a
   500 Status (unsupported), none means delete;
4. an unready pod may go without spending budget (unhealthyPodEvictionPolicy);
5. else one disruption is spent: `disruptionsAllowed` is decremented and the pod recorded in
   `status.disruptedPods`, in one compare-and-swap of the budget's status (the registry's
   update retries on a conflict with the fresh budget), or the answer is 429 TooManyRequests
   with a DisruptionBudget cause;
6. the pod is deleted with the Eviction's deleteOptions — with a resourceVersion precondition
   when the decision depended on the pod's readiness, so a pod that became ready meanwhile is
   not deleted (429, and the client retries).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from ..api import errors
from ..api import poddisruptionbudget as pdbutil
from ..registry.generic import Registry
from ..registry.strategy import Obj
from . import deleteoptions, render
from .negotiation import Output, body_type, decode_json_object, output_format, read_body

if TYPE_CHECKING:
    from .requestinfo import RequestInfo
    from .serving import Verbs

_EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")
#: upstream's EvictionsRetry steps: how often a conflict on the pod is decided again
EVICTION_RETRIES = 20


def _refusal_error(refusal: pdbutil.Refusal) -> errors.StatusError:
    details: dict[str, Any] = {}
    headers: dict[str, str] = {}
    if refusal.cause:
        details["causes"] = [{"reason": pdbutil.DISRUPTION_BUDGET_CAUSE,
                              "message": refusal.cause}]
    if refusal.retry_after:
        details["retryAfterSeconds"] = refusal.retry_after
        headers["Retry-After"] = str(refusal.retry_after)
    return errors.StatusError(refusal.code, refusal.reason, refusal.message, details, headers)


def _delete_options(eviction: Obj, query_dry_run: list[str]) -> tuple[dict[str, Any], bool]:
    """propagateDryRun: the Eviction's deleteOptions with the request's dryRun pushed in (a
    different dryRun in both places is a 400), checked as any DeleteOptions; and whether this
    is a dry run."""
    options = eviction.get("deleteOptions")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise errors.bad_request("deleteOptions must be an object")
    body_dry_run = deleteoptions.body_dry_run(options)
    if not body_dry_run:
        dry_run = list(query_dry_run)
    elif query_dry_run and body_dry_run != query_dry_run:
        raise errors.bad_request(
            f"Non-matching dry-run options in request and content: "
            f"{errors.go_string_slice(query_dry_run)} and {errors.go_string_slice(body_dry_run)}")
    else:
        dry_run = body_dry_run
    options = {k: v for k, v in options.items() if k not in ("dryRun", "kind", "apiVersion")}
    return deleteoptions.check_delete_options(options, dry_run)


def _decode(body: Any, name: str, namespace: str) -> Obj:
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if (api_version not in (None, "", *_EVICTION_VERSIONS)) or kind not in (None, "", "Eviction"):
        raise errors.bad_request(f"not a Eviction object: {api_version}, Kind={kind}")
    md = body.get("metadata") or {}
    if not isinstance(md, dict):
        raise errors.bad_request("metadata must be an object")
    if md.get("name") != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    if md.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("the namespace of the provided object does not match the "
                                 "namespace sent on the request")
    return body


def _with_rv_precondition(options: dict[str, Any], pod: Obj) -> dict[str, Any]:
    pre = dict(options.get("preconditions") or {})
    pre["resourceVersion"] = (pod.get("metadata") or {}).get("resourceVersion")
    return dict(options, preconditions=pre)


def _rv_unset(options: dict[str, Any]) -> bool:
    return not (options.get("preconditions") or {}).get("resourceVersion")


async def create_eviction(handlers: Verbs, request: web.Request, info: RequestInfo,
                          pods: Registry) -> web.Response:
    namespace, name = info.namespace, info.name
    eviction = _decode(decode_json_object(await read_body(request), body_type(request)),
                       name, namespace)
    options, dry_run = _delete_options(eviction, request.query.getall("dryRun", []))
    await handlers.admit(request, "CREATE", pods, namespace, name, "eviction", eviction)
    output = output_format(request.headers.get("Accept"))
    output = Output.JSON if output is Output.TABLE else output

    pod = await _delete_if_budget_irrelevant(pods, namespace, name, options, dry_run)
    if pod is not None:
        budgets = handlers.serving.resources.registry_for("policy", "v1",
                                                          "poddisruptionbudgets")
        refused = await _evict_within_budget(pods, budgets, pod, options, dry_run)
        if refused is not None:
            return render.object_response(refused, output, refused["code"])
    return render.object_response(render.success_status(201), output, 201)


async def _delete_if_budget_irrelevant(pods: Registry, namespace: str, name: str,
                                       options: dict[str, Any], dry_run: bool) -> Obj | None:
    """Steps 1-2: delete a pod no budget counts (None), else hand back the pod read. A
    conflict (the pod was bound or its status written meanwhile) is decided again on the new
    version, unless the client pinned one (upstream's EvictionsRetry)."""
    for attempt in range(EVICTION_RETRIES):
        pod = await pods.get(namespace, name)
        if not pdbutil.can_ignore_pdb(pod):
            return pod
        delete_options = options
        if pdbutil.should_enforce_resource_version(pod) and _rv_unset(options):
            delete_options = _with_rv_precondition(options, pod)
        try:
            await _mark_and_delete(pods, namespace, name, delete_options, dry_run)
        except errors.StatusError as exc:
            if exc.code == 409 and _rv_unset(options) and attempt + 1 < EVICTION_RETRIES:
                continue
            raise
        return None
    raise AssertionError("unreachable: the last attempt raises or returns")


async def _evict_within_budget(pods: Registry, budgets: Registry, pod: Obj,
                               options: dict[str, Any], dry_run: bool) -> Obj | None:
    """Steps 3-6 for a pod a budget may count; returns the 500 Status of "more than one
    budget" (an answer, not an error, as upstream), raises the 429s, else deletes the pod."""
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    listed = (await budgets.list(namespace)).decoded()
    covering = [pdb for pdb in listed if pdbutil.budget_covers(pdb, pod)]
    if len(covering) > 1:
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": pdbutil.MULTIPLE_PDBS_MESSAGE, "code": 500}
    guard_readiness = False
    if covering:
        pdb_name = covering[0]["metadata"]["name"]
        if pdbutil.unhealthy_pod_may_go(pod, covering[0]):
            guard_readiness = True
        else:
            await _spend_disruption(budgets, namespace, pdb_name, name, dry_run)
    delete_options = _with_rv_precondition(options, pod) if guard_readiness else options
    try:
        await _mark_and_delete(pods, namespace, name, delete_options, dry_run)
    except errors.StatusError as exc:
        if exc.code == 409 and guard_readiness and _rv_unset(options):
            # the unready pod changed (perhaps became ready): the client should try again
            raise _refusal_error(pdbutil.still_processing(pdb_name)) from None
        raise
    return None


async def _mark_and_delete(pods: Registry, namespace: str, name: str, options: dict[str, Any],
                           dry_run: bool) -> None:
    """addConditionAndDeletePod: the pod gets the DisruptionTarget condition (reason
    EvictionByEvictionAPI) on the version the options' preconditions name, then is deleted;
    a resourceVersion precondition moves to the version that condition wrote."""
    if not dry_run:
        pre = options.get("preconditions") or {}

        def produce(old: Obj | None) -> Obj:
            assert old is not None
            md = old["metadata"]
            for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                if pre.get(field) and pre[field] != md.get(field):
                    raise errors.conflict(
                        "pods", name, f"Precondition failed: {label} in precondition: "
                        f"{pre[field]}, {label} in object meta: {md.get(field)}")
            md.pop("resourceVersion", None)
            status = old.setdefault("status", {})
            status["conditions"] = pdbutil.with_disruption_target(
                status.get("conditions") or [], time.time())
            return old

        updated, _ = await pods.update(namespace, name, produce, subresource="status")
        if pre.get("resourceVersion"):
            options = dict(options, preconditions=dict(
                pre, resourceVersion=updated["metadata"]["resourceVersion"]))
    await pods.delete(namespace, name, options, dry_run=dry_run)


async def _spend_disruption(budgets: Registry, namespace: str, pdb_name: str, pod_name: str,
                            dry_run: bool) -> None:
    """checkAndDecrement against the stored budget, written as one status update (the
    registry re-reads and re-decides on a conflict); a dry run only decides."""
    now = time.time()

    def produce(old: Obj | None) -> Obj:
        if old is None:
            raise errors.not_found("poddisruptionbudgets", pdb_name, "policy")
        decided = pdbutil.check_and_decrement(old, pod_name, now, dry_run)
        if isinstance(decided, pdbutil.Refusal):
            raise _refusal_error(decided)
        old["metadata"].pop("resourceVersion", None)  # no precondition: re-decide on conflict
        old["status"] = decided
        return old

    if dry_run:
        produce(await budgets.get(namespace, pdb_name))
        return
    await budgets.update(namespace, pdb_name, produce, subresource="status")
