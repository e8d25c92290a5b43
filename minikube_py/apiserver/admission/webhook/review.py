"""AdmissionReview out, AdmissionResponse in, and the errors both can end in. Pure functions.

Kubernetes pieces: k8s.io/apiserver/pkg/admission/plugin/webhook/request/admissionreview.go
(CreateAdmissionObjects, CreateV1AdmissionReview, VerifyAdmissionResponse),
.../webhook/errors (ToStatusErr, NewDryRunUnsupportedErr) and util/webhook's ErrCallingWebhook
("failed calling webhook %q: %v"). What the dispatcher (dispatch.py) does with an error —
fail open or closed — depends on which of the two exception types below it is.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any

import orjson

from ....api import errors
from ....api.patch import json_patch

Obj = dict[str, Any]

_KNOWN_VERSIONS = ("v1", "v1beta1")


class CallingWebhookError(Exception):
    """util/webhook.ErrCallingWebhook: the call did not yield a decision; failurePolicy
    decides (Ignore: skip the webhook; Fail: a 500 InternalError with this text)."""

    def __init__(self, webhook: str, reason: str) -> None:
        self.webhook, self.reason = webhook, reason
        super().__init__(f'failed calling webhook "{webhook}": {reason}')

    def status_error(self) -> errors.StatusError:
        """apierrors.NewInternalError(err), causes and all."""
        err = errors.internal_error(str(self))
        err.details = {"causes": [{"message": str(self)}]}
        return err


@dataclass(frozen=True)
class Response:
    """VerifyAdmissionResponse's AdmissionResponse (`patch` still base64: it is decoded only
    for an allowed answer, as upstream's dispatcher does)."""
    allowed: bool
    result: Obj | None = None
    patch: str = ""
    patch_type: str = ""
    warnings: tuple[str, ...] = ()
    audit_annotations: dict[str, str] = field(default_factory=dict)


def review_version(hook: Obj) -> str:
    """The first admissionReviewVersion we speak (validation guarantees there is one)."""
    for version in hook.get("admissionReviewVersions") or ():
        if version in _KNOWN_VERSIONS:
            return version
    raise CallingWebhookError(hook.get("name", ""), "could not create admission objects: webhook "
                              "does not accept known AdmissionReview versions (v1, v1beta1)")


def build_review(version: str, request: Obj) -> Obj:
    return {"kind": "AdmissionReview", "apiVersion": f"admission.k8s.io/{version}",
            "request": request}


def verify_response(name: str, version: str, uid: str, review: Any, mutating: bool) -> Response:
    """VerifyAdmissionResponse. v1: the uid echoed, the kind checked, a mutating webhook's
    `patch` and `patchType` together, none from a validating one. v1beta1 checked none of it
    (a patch there is a JSONPatch). Any violation is a CallingWebhookError."""
    def bad(reason: str) -> CallingWebhookError:
        return CallingWebhookError(name, f"received invalid webhook response: {reason}")

    response = review.get("response") if isinstance(review, dict) else None
    if not isinstance(response, dict):
        raise bad("webhook response was absent")
    patch = response.get("patch") or ""
    patch_type = response.get("patchType")
    if version == "v1":
        if response.get("uid") != uid:
            raise bad(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
        kind, api_version = review.get("kind", ""), review.get("apiVersion", "")
        if (api_version, kind) != ("admission.k8s.io/v1", "AdmissionReview"):
            group, _, ver = str(api_version).rpartition("/")
            raise bad(f"expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, "
                      f"got {group}/{ver}, Kind={kind}")
        if mutating:
            if patch and patch_type is None:
                raise bad("webhook returned response.patch but not response.patchType")
            if not patch and patch_type is not None:
                raise bad("webhook returned response.patchType but not response.patch")
            if patch_type is not None and not patch_type:
                raise bad('webhook returned invalid response.patchType of ""')
        elif patch:
            raise bad("validating webhook may not return response.patch")
        elif patch_type is not None:
            raise bad("validating webhook may not return response.patchType")
    elif mutating and patch:
        patch_type = "JSONPatch"
    warnings = response.get("warnings") or []
    annotations = response.get("auditAnnotations") or {}
    result = response.get("status")
    return Response(allowed=response.get("allowed") is True,
                    result=result if isinstance(result, dict) else None,
                    patch=str(patch) if mutating else "",
                    patch_type=str(patch_type or "") if mutating else "",
                    warnings=tuple(w for w in warnings if isinstance(w, str)),
                    audit_annotations={str(k): str(v) for k, v in annotations.items()}
                    if isinstance(annotations, dict) else {})


def decode_patch(name: str, text: Any) -> list:
    """`patch` is base64 of a JSON Patch document."""
    try:
        operations = orjson.loads(base64.b64decode(str(text), validate=True))
    except (binascii.Error, ValueError) as exc:
        raise CallingWebhookError(name, f"received undecodable patch in webhook response: "
                                  f"{exc}") from None
    if not isinstance(operations, list):
        raise CallingWebhookError(name, "received undecodable patch in webhook response: json: "
                                  "cannot unmarshal object into Go value of type jsonpatch.Patch")
    return operations


def apply_patch(name: str, obj: Obj, operations: list) -> Obj:
    """The patched object; a patch that does not apply is a 500, as upstream's
    apierrors.NewInternalError(patchObj.Apply error)."""
    try:
        return json_patch(obj, operations)
    except errors.StatusError as exc:
        raise errors.internal_error(f'admission webhook "{name}" returned a patch that could not '
                                    f"be applied: {exc.message}") from None


def denied(name: str, result: Obj | None) -> errors.StatusError:
    """webhookerrors.ToStatusErr: the webhook's Status, code at least 400, message prefixed."""
    result = dict(result or {})
    code = result.get("code")
    code = code if isinstance(code, int) and code >= 400 else 400
    prefix = f'admission webhook "{name}" denied the request'
    message, reason = str(result.get("message") or ""), str(result.get("reason") or "")
    if message:
        text = f"{prefix}: {message}"
    elif reason:
        text = f"{prefix}: {reason}"
    else:
        text = f"{prefix} without explanation"
    details = result.get("details") if isinstance(result.get("details"), dict) else None
    return errors.StatusError(code, reason, text, details)


def dry_run_unsupported(name: str) -> errors.StatusError:
    """webhookerrors.NewDryRunUnsupportedErr."""
    return errors.bad_request(f'admission webhook "{name}" does not support dry run')


def timeout_text(seconds: int) -> str:
    """The `timeout` query parameter upstream's REST client adds (Go duration text)."""
    return f"timeout={seconds}s"
