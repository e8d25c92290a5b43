"""CertificateSigningRequests (certificates.k8s.io/v1): ask the cluster to sign a certificate.

Kubernetes piece: pkg/registry/certificates/certificatesigningrequest (strategy.go, storage):
cluster-scoped, with a `status` subresource (the signer writes `status.certificate`) and an
`approval` subresource (`kubectl certificate approve|deny` PUTs the object with an Approved or
Denied condition there). The three writes keep different parts:

- create (PrepareForCreate): the status is dropped and `spec.username/uid/groups/extra` are
  set from the authenticated requestor (never from the body);
- update: nothing of spec or status changes (both kept from the stored object);
- status: the spec is kept; approval: only `status.conditions` is taken from the body.

Condition timestamps are filled in as upstream's populateConditionTimestamps does. Validation
(which update may add what) is api/validation/certificates.py; the signer is
controllers/csrsigning.py.
"""

from __future__ import annotations

from typing import Any

from ..api import meta
from . import codec
from .request_context import current_user
from .strategy import Obj, Strategy, SubresourceSpec, field_getter

GROUP = "certificates.k8s.io"
KIND = "CertificateSigningRequest"


def _user_fields(spec: dict[str, Any]) -> None:
    """PrepareForCreate: the requestor's identity, whatever the body said."""
    for field in ("username", "uid", "groups", "extra"):
        spec.pop(field, None)
    user = current_user()
    if user is None:
        return
    if getattr(user, "name", ""):
        spec["username"] = user.name
    if getattr(user, "uid", ""):
        spec["uid"] = user.uid
    groups = list(getattr(user, "groups", ()) or ())
    if groups:
        spec["groups"] = groups
    extra = getattr(user, "extra", None) or {}
    if extra:
        spec["extra"] = {k: list(v) for k, v in extra.items()}


async def _prepare_create(registry: Any, obj: Obj) -> None:
    obj["status"] = {}
    spec = obj.get("spec")
    if isinstance(spec, dict):
        _user_fields(spec)


async def _prepare_update(registry: Any, new: Obj, old: Obj) -> None:
    """Updates change neither spec nor status (the status was already kept by the registry)."""
    if "spec" in old:
        new["spec"] = codec.clone(old["spec"])
    else:
        new.pop("spec", None)


def populate_condition_timestamps(new: Obj, old: Obj, now: str | None = None) -> None:
    """populateConditionTimestamps: lastUpdateTime defaults to now; lastTransitionTime is
    kept from the old condition of the same type and status, else now."""
    now = now or meta.now_rfc3339()
    status = new.get("status")
    conditions = status.get("conditions") if isinstance(status, dict) else None
    if not isinstance(conditions, list):
        return
    old_status = old.get("status") if isinstance(old.get("status"), dict) else {}
    old_conditions = [c for c in (old_status.get("conditions") or []) if isinstance(c, dict)]
    for cond in conditions:
        if not isinstance(cond, dict):
            continue
        if not cond.get("lastUpdateTime"):
            cond["lastUpdateTime"] = now
        if cond.get("lastTransitionTime"):
            continue
        previous = next((c for c in old_conditions if c.get("type") == cond.get("type")), None)
        if (previous is not None and previous.get("status") == cond.get("status")
                and previous.get("lastTransitionTime")):
            cond["lastTransitionTime"] = previous["lastTransitionTime"]
        else:
            cond["lastTransitionTime"] = now


async def _prepare_status(registry: Any, new: Obj, old: Obj) -> None:
    populate_condition_timestamps(new, old)


def apply_approval(old: Obj, body: Obj) -> Obj:
    """csrApprovalStrategy.PrepareForUpdate: the stored object with the body's conditions."""
    new = codec.clone(old)
    status = body.get("status") if isinstance(body.get("status"), dict) else {}
    conditions = status.get("conditions")
    new_status = new.setdefault("status", {})
    if conditions is None:
        new_status.pop("conditions", None)
    else:
        new_status["conditions"] = codec.clone(conditions)
    populate_condition_timestamps(new, old)
    return new


_FIELDS = ("spec.signerName",)

CERTIFICATE_SIGNING_REQUESTS = Strategy(
    group=GROUP, version="v1", resource="certificatesigningrequests", kind=KIND,
    namespaced=False, key_root="certificatesigningrequests", short_names=("csr",),
    subresources=(SubresourceSpec("approval", ("get", "patch", "update")),
                  SubresourceSpec("status", ("get", "patch", "update"))),
    has_status=True, prepare_create=_prepare_create, prepare_update=_prepare_update,
    prepare_status=_prepare_status, subresource_updates={"approval": apply_approval},
    field_attrs=field_getter(*_FIELDS), selectable_fields=_FIELDS,
)
