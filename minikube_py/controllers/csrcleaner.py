"""The CSR cleaner: old CertificateSigningRequests are deleted, so they do not pile up.

Kubernetes piece: pkg/controller/certificates/cleaner/cleaner.go (`csrcleaner` in
kube-controller-manager, on by default). Kubelets renew their certificates through CSRs and
csrapproving approves them without a human, so without a collector the list only grows. Once
an hour (upstream's pollingInterval) every cached CSR is checked, and deleted when:

- approved and issued, the Approved condition's lastUpdateTime more than 1 hour ago;
- denied, or failed, the condition's lastUpdateTime more than 1 hour ago;
- pending (no condition at all), created more than 24 hours ago;
- approved and issued with a certificate whose notAfter has passed.

The decision is a pure function of the CSR and "now"; the controller's `clock` is an attribute
(epoch seconds) so a test can move time instead of waiting an hour, and `clean()` is one pass.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import datetime
import time
from collections.abc import Callable

from cryptography import x509

from ..api.errors import StatusError
from ..api.validation.certificates import APPROVED, DENIED, FAILED
from ..client.resources import CERTIFICATE_SIGNING_REQUESTS as CSRS
from .base import Controller, ControllerContext, Obj

POLLING_INTERVAL = 3600.0
APPROVED_EXPIRATION = datetime.timedelta(hours=1)
DENIED_EXPIRATION = datetime.timedelta(hours=1)
PENDING_EXPIRATION = datetime.timedelta(hours=24)


def _time(value: object) -> datetime.datetime | None:
    """A metav1.Time from its RFC 3339 text; None when unset (upstream's IsZero)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def _older_than(value: object, age: datetime.timedelta, now: datetime.datetime) -> bool:
    """isOlderThan: a set time more than `age` before now."""
    when = _time(value)
    return when is not None and now - when > age


def _conditions(csr: Obj) -> list[Obj]:
    status = csr.get("status") if isinstance(csr.get("status"), dict) else {}
    return [c for c in status.get("conditions") or [] if isinstance(c, dict)]


def _certificate(csr: Obj) -> str:
    status = csr.get("status") if isinstance(csr.get("status"), dict) else {}
    value = status.get("certificate")
    return value if isinstance(value, str) else ""


def certificate_expired(csr: Obj, now: datetime.datetime) -> bool:
    """isExpired: the issued certificate (first PEM block) is past its notAfter; a
    certificate that does not parse is not expired."""
    try:
        pem = base64.b64decode(_certificate(csr), validate=True)
        cert = x509.load_pem_x509_certificate(pem)
    except (binascii.Error, ValueError):
        return False
    return now > cert.not_valid_after_utc


def clean_reason(csr: Obj, now: datetime.datetime) -> str | None:
    """Why `csr` is to be deleted at `now` (upstream's log text), or None to keep it."""
    conditions = _conditions(csr)
    issued = bool(_certificate(csr))
    for cond in conditions:
        if (cond.get("type") == APPROVED and issued
                and _older_than(cond.get("lastUpdateTime"), APPROVED_EXPIRATION, now)):
            return "more than approvedExpiration duration old and approved"
    for cond in conditions:
        if cond.get("type") == DENIED and _older_than(cond.get("lastUpdateTime"),
                                                      DENIED_EXPIRATION, now):
            return "more than deniedExpiration duration old and denied"
    for cond in conditions:
        if cond.get("type") == FAILED and _older_than(cond.get("lastUpdateTime"),
                                                      DENIED_EXPIRATION, now):
            return "more than deniedExpiration duration old and failed"
    created = (csr.get("metadata") or {}).get("creationTimestamp")
    if not conditions and _older_than(created, PENDING_EXPIRATION, now):
        return "more than pendingExpiration duration old and unhandled"
    if issued and any(c.get("type") == APPROVED for c in conditions) \
            and certificate_expired(csr, now):
        return "the associated certificate is expired"
    return None


class CSRCleanerController(Controller):
    name = "csrcleaner"
    service_account = "certificate-controller"  # upstream starts it with that client

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.csrs = ctx.informers.informer(CSRS)
        #: epoch seconds; tests replace it to move time
        self.clock: Callable[[], float] = time.time
        self.polling_interval = POLLING_INTERVAL

    async def background(self) -> None:
        """wait.Until(worker, pollingInterval): a pass now, then one per interval."""
        while True:
            await self.resumed()
            await self.clean()
            await asyncio.sleep(self.polling_interval)

    async def clean(self) -> list[str]:
        """One pass over the cache; the names deleted."""
        now = datetime.datetime.fromtimestamp(self.clock(), datetime.UTC)
        deleted = []
        for csr in list(self.csrs.indexer.list()):
            reason = clean_reason(csr, now)
            if reason is None:
                continue
            name = csr["metadata"]["name"]
            try:
                await self.client.delete(CSRS, name)
            except StatusError as exc:
                if exc.code != 404:
                    self.log.warning("unable to delete CSR", csr=name, error=str(exc))
                continue
            self.log.info("cleaned CSR", csr=name, reason=reason)
            deleted.append(name)
        return deleted
