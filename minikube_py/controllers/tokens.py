"""The service account tokens controller: `kubernetes.io/service-account-token` Secrets.

Kubernetes piece: pkg/controller/serviceaccount/tokens_controller.go (TokensController,
`--controllers` name `serviceaccount-token`). What 1.31 does, always:
- a Secret of type `kubernetes.io/service-account-token` naming an account in its
  `kubernetes.io/service-account.name` annotation gets its data filled in: `token`, `ca.crt`
  (--root-ca-file) and `namespace`, and the account's uid in the
  `kubernetes.io/service-account.uid` annotation (the documented way to make a long-lived
  token by hand);
- such a Secret whose account is gone (or was recreated: another uid) is deleted.
What releases before 1.24 also did, and this controller does with
`--legacy-service-account-token-secrets` (off by default, as auto-generation is off in 1.31):
every ServiceAccount gets a Secret `<account>-token-<5 random characters>` and lists it in its
`secrets`; a deleted token Secret is dropped from the list and replaced. Clients older than 1.24
wait for that Secret of the `default` account before they do anything in a namespace.

The token: as upstream, a legacy JWT (issuer `kubernetes/serviceaccount`, no expiry) signed
with --service-account-private-key-file, which the API server's service-account authenticator
accepts while the Secret (holding that very token) and the account exist. Without the flag
(`start --secure-port 0`, a bare controller-manager) it is an opaque random string no
authenticator accepts.
"""

from __future__ import annotations

import base64
import secrets
from pathlib import Path
from typing import Any

from ..api.errors import StatusError
from ..client.resources import SECRETS, SERVICEACCOUNTS, Resource
from ..serviceaccount_keys import TokenSigner, legacy_claims, load_signing_key
from .base import Controller, ControllerContext

Obj = dict[str, Any]

TOKEN_TYPE = "kubernetes.io/service-account-token"
NAME_KEY = "kubernetes.io/service-account.name"
UID_KEY = "kubernetes.io/service-account.uid"
DATA_KEYS = ("token", "ca.crt", "namespace")
#: upstream utilrand.String's alphabet: no vowels, no confusable characters
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def secret_name(account: str) -> str:
    """upstream: `<account>-token-` plus utilrand.String(5)."""
    return f"{account}-token-" + "".join(secrets.choice(_ALPHABET) for _ in range(5))


def new_token() -> str:
    return secrets.token_urlsafe(48)


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _meta(obj: Obj) -> Obj:
    md = obj.get("metadata")
    return md if isinstance(md, dict) else {}


def is_token_secret(secret: Obj) -> bool:
    return secret.get("type") == TOKEN_TYPE and bool(
        (_meta(secret).get("annotations") or {}).get(NAME_KEY))


def needs_data(secret: Obj, account_uid: str, with_ca: bool) -> bool:
    data = secret.get("data") or {}
    annotations = _meta(secret).get("annotations") or {}
    return (not data.get("token") or not data.get("namespace") or (with_ca and not data.get(
        "ca.crt")) or annotations.get(UID_KEY) != account_uid)


def filled(secret: Obj, account: Obj, ca: str, signer: TokenSigner | None = None) -> Obj:
    """The secret with upstream's generateTokenIfNeeded applied: a token when it has none
    (signed by `signer` when there is one), the CA and namespace, and the account's name and
    uid annotations."""
    md = _meta(secret)
    account_md = _meta(account)
    data = dict(secret.get("data") or {})
    if not data.get("token"):
        token = new_token() if signer is None else signer.sign(legacy_claims(
            md.get("namespace", ""), account_md.get("name", ""), account_md.get("uid", ""),
            md.get("name", "")))
        data["token"] = _b64(token)
    data["namespace"] = _b64(md.get("namespace", ""))
    if ca:
        data["ca.crt"] = _b64(ca)
    annotations = {**(md.get("annotations") or {}), NAME_KEY: account_md.get("name", ""),
                   UID_KEY: account_md.get("uid", "")}
    return {**secret, "metadata": {**md, "annotations": annotations}, "data": data}


def token_secret(account: Obj, ca: str, signer: TokenSigner | None = None) -> Obj:
    """A new legacy token Secret for `account` (upstream ensureReferencedToken)."""
    md = _meta(account)
    body = {"apiVersion": "v1", "kind": "Secret", "type": TOKEN_TYPE,
            "metadata": {"name": secret_name(md.get("name", "")),
                         "namespace": md.get("namespace", "")}}
    return filled(body, account, ca, signer)


class TokensController(Controller):
    name = "serviceaccount-token"

    def __init__(self, ctx: ControllerContext) -> None:
        super().__init__(ctx)
        self.workers = ctx.options.concurrent_serviceaccount_syncs
        self.generate = ctx.options.legacy_service_account_token_secrets
        path = ctx.options.root_ca_file
        self.ca = Path(path).read_text() if path else ""
        key = ctx.options.service_account_private_key_file
        self.signer = TokenSigner(load_signing_key(key)) if key else None
        self.accounts = ctx.informers.informer(SERVICEACCOUNTS)
        self.secrets = ctx.informers.informer(SECRETS)
        self.accounts.add_event_handler(
            on_add=self._account, on_update=lambda old, new: self._account(new),
            on_delete=self._account)
        self.secrets.add_event_handler(
            on_add=self._secret, on_update=lambda old, new: self._secret(new),
            on_delete=self._secret_deleted)

    def _account(self, account: Obj) -> None:
        md = _meta(account)
        self.queue.add(f"account:{md.get('namespace')}/{md.get('name')}")

    def _secret(self, secret: Obj) -> None:
        if is_token_secret(secret):
            md = _meta(secret)
            self.queue.add(f"secret:{md.get('namespace')}/{md.get('name')}")

    def _secret_deleted(self, secret: Obj) -> None:
        """A token Secret gone: its account drops the reference (and gets a new one)."""
        if is_token_secret(secret):
            md = _meta(secret)
            account = md["annotations"][NAME_KEY]
            self.queue.add(f"account:{md.get('namespace')}/{account}")

    async def sync(self, key: str) -> None:
        kind, _, ref = key.partition(":")
        if kind == "secret":
            await self.sync_secret(ref)
        else:
            await self.sync_account(ref)

    # -- secrets ---------------------------------------------------------------------------
    async def _cached_or_live(self, informer: Any, resource: Resource, namespace: str,
                              name: str) -> Obj | None:
        """An object from the cache, else from the API (upstream's fetchOnCacheMiss: a new
        account, or the Secret just created, may not have reached the cache; nothing is
        deleted or created again on a cache miss alone)."""
        obj = informer.indexer.get(f"{namespace}/{name}")
        if obj is not None:
            return obj
        return await self.client.get_or_none(resource, name, namespace)

    async def sync_secret(self, ref: str) -> None:
        secret = self.secrets.indexer.get(ref)
        if secret is None or not is_token_secret(secret):
            return
        md = _meta(secret)
        namespace = md.get("namespace", "")
        annotations = md.get("annotations") or {}
        account = await self._cached_or_live(self.accounts, SERVICEACCOUNTS, namespace,
                                             annotations[NAME_KEY])
        wanted_uid = annotations.get(UID_KEY)
        if account is None or (wanted_uid and _meta(account).get("uid") != wanted_uid):
            await self._delete_secret(namespace, md.get("name", ""), md.get("uid", ""))
            return
        if not needs_data(secret, _meta(account).get("uid", ""), bool(self.ca)):
            return
        try:
            await self.client.update(SECRETS, filled(secret, account, self.ca, self.signer))
        except StatusError as exc:
            if exc.code in (404, 409):
                return  # gone, or changed under us: its event queues it again
            raise
        self.log.info("filled in service account token", namespace=namespace,
                      secret=md.get("name"), account=annotations[NAME_KEY])

    async def _delete_secret(self, namespace: str, name: str, uid: str) -> None:
        try:
            await self.client.delete(SECRETS, name, namespace, preconditions={"uid": uid})
        except StatusError as exc:
            if exc.code not in (404, 409):
                raise
            return
        self.log.info("deleted token of a service account that is gone", namespace=namespace,
                      secret=name)

    # -- accounts --------------------------------------------------------------------------
    async def sync_account(self, ref: str) -> None:
        namespace, _, name = ref.partition("/")
        account = self.accounts.indexer.get(ref)
        if account is None:
            # gone: its tokens go too (sync_secret checks each against the API)
            for secret in self.secrets.indexer.list():
                md = _meta(secret)
                if md.get("namespace") == namespace and is_token_secret(secret) and \
                        md["annotations"][NAME_KEY] == name:
                    await self.sync_secret(f"{namespace}/{md.get('name')}")
            return
        if not self.generate or _meta(account).get("deletionTimestamp"):
            return
        await self._ensure_referenced_token(account)

    def _token_for(self, secret: Obj | None, account: Obj) -> bool:
        if secret is None or not is_token_secret(secret):
            return False
        annotations = _meta(secret)["annotations"]
        return annotations[NAME_KEY] == _meta(account).get("name") and annotations.get(
            UID_KEY) in (None, "", _meta(account).get("uid"))

    async def _ensure_referenced_token(self, account: Obj) -> None:
        """upstream ensureReferencedToken: done when a referenced token Secret exists; else
        drop the references to token Secrets that are gone, create one and reference it."""
        md = _meta(account)
        namespace = md.get("namespace", "")
        kept = []
        for ref in account.get("secrets") or ():
            name = ref.get("name", "") if isinstance(ref, dict) else ""
            secret = await self._cached_or_live(self.secrets, SECRETS, namespace, name)
            if self._token_for(secret, account):
                return
            if secret is not None or not name.startswith(f"{md.get('name')}-token-"):
                kept.append(ref)
        try:
            secret = await self.client.create(
                SECRETS, token_secret(account, self.ca, self.signer), namespace)
        except StatusError as exc:
            if exc.code in (403, 404):  # the namespace is going away (or gone): nothing to do
                return
            raise
        secret_md = _meta(secret)
        try:
            await self.client.update(SERVICEACCOUNTS,
                                     {**account, "secrets": [*kept, {"name": secret_md["name"]}]})
        except StatusError as exc:
            # the account changed (or went) under us: take the Secret back, try again later
            await self._delete_secret(namespace, secret_md["name"], secret_md.get("uid", ""))
            if exc.code in (404, 409):
                return
            raise
        self.log.info("created legacy service account token", namespace=namespace,
                      account=md.get("name"), secret=secret_md["name"])
