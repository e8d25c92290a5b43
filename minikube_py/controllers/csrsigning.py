"""The CSR signing controller: approved CertificateSigningRequests get a certificate.

Kubernetes piece: pkg/controller/certificates/signer (`csrsigning`, the kube-controller-manager
controller started when --cluster-signing-cert-file/--cluster-signing-key-file name the cluster
CA) over pkg/controller/certificates/certificate_controller.go's loop. Every CSR event queues
the CSR; a sync skips what is not approved, denied, failed or already issued, and what names a
signer other than kubernetes.io/kube-apiserver-client(-kubelet); an invalid request for one of
those gets a Failed condition (reason SignerValidationFailure); a valid one is signed by the
cluster CA (csr_authority.py, off the loop) and `status.certificate` is written through the
status subresource. Without the two files the controller runs idle, as upstream's is not
started: `minikube-py start` passes its generated CA only when the secure port is on.
"""

from __future__ import annotations

import asyncio
import datetime
from pathlib import Path

from .. import offload
from ..api.errors import StatusError
from ..api.meta import now_rfc3339
from ..client.resources import CERTIFICATE_SIGNING_REQUESTS as CSRS
from .base import Controller, ControllerContext, Obj
from .csr_authority import (
    Authority,
    SignerValidationError,
    check_request,
    encode_certificate,
    needs_signing,
)


class CSRSigningController(Controller):
    name = "csrsigning"
    service_account = "certificate-controller"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        opts = ctx.options
        self.authority: Authority | None = None
        if opts.cluster_signing_cert_file and opts.cluster_signing_key_file:
            self.authority = Authority.from_pem(
                Path(opts.cluster_signing_cert_file).read_bytes(),
                Path(opts.cluster_signing_key_file).read_bytes(),
                datetime.timedelta(seconds=opts.cluster_signing_duration))
            self.csrs = ctx.informers.informer(CSRS)
            self.csrs.add_event_handler(on_add=self._enqueue,
                                        on_update=lambda old, new: self._enqueue(new))

    def _enqueue(self, csr: Obj) -> None:
        self.queue.add(csr["metadata"]["name"])

    async def run(self) -> None:
        if self.authority is None:
            self.log.info("no --cluster-signing-cert-file/--cluster-signing-key-file: "
                          "CSRs are not signed")
            await asyncio.Event().wait()  # idle until cancelled, like a disabled controller
        await super().run()

    async def sync(self, key: str) -> None:
        csr = self.csrs.indexer.get(key)
        if csr is None or self.authority is None or not needs_signing(csr):
            return
        try:
            request = check_request(csr)
        except SignerValidationError as exc:
            await self._failed(csr, str(exc))
            return
        if request is None:
            return  # another signer's request
        spec = csr.get("spec") or {}
        expiration = spec.get("expirationSeconds")
        pem = await offload.run(  # one signature: ~1 ms even with an RSA CA key
            self.authority.sign, request, list(spec.get("usages") or []),
            expiration if isinstance(expiration, int) else None)
        updated = {**csr, "status": {**(csr.get("status") or {}),
                                     "certificate": encode_certificate(pem)}}
        await self._write_status(updated)
        self.log.info("signed a certificate", csr=key, signer=spec.get("signerName"))

    async def _failed(self, csr: Obj, message: str) -> None:
        now = now_rfc3339()
        status = dict(csr.get("status") or {})
        status["conditions"] = [*(status.get("conditions") or []), {
            "type": "Failed", "status": "True", "reason": "SignerValidationFailure",
            "message": message, "lastUpdateTime": now, "lastTransitionTime": now}]
        await self._write_status({**csr, "status": status})
        self.log.info("refused to sign", csr=csr["metadata"]["name"], reason=message)

    async def _write_status(self, csr: Obj) -> None:
        try:
            await self.client.update_status(CSRS, csr)
        except StatusError as exc:
            if exc.code in (404, 409):  # deleted, or our cache is behind: the next event retries
                return
            raise
