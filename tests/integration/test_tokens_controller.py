"""The serviceaccount-token controller against a real API server: 1.31's filling-in of
hand-made token Secrets, and with --legacy-service-account-token-secrets the pre-1.24
`<account>-token-xxxxx` Secret every account lists in its `secrets`."""

from __future__ import annotations

import argparse
import asyncio
import base64
import re
from pathlib import Path

from minikube_py.cli.component_settings import CONTROLLER_MANAGER, controller_options
from minikube_py.cli.settings import add_flags, resolve
from minikube_py.client import Client
from minikube_py.client.resources import SECRETS, SERVICEACCOUNTS
from minikube_py.controllers.manager import parse_controllers
from minikube_py.controllers.tokens import NAME_KEY, TOKEN_TYPE, UID_KEY, TokensController
from tests.integration.test_cluster_controllers import (  # noqa: F401  (client: the fixture)
    client,
    eventually,
    get_or_none,
    running,
)

NS = "default"
CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _decoded(secret: dict, key: str) -> str:
    return base64.b64decode(secret["data"][key]).decode()


async def _account(client: Client, name: str) -> dict:
    return await client.create(SERVICEACCOUNTS, {"metadata": {"name": name, "namespace": NS}}, NS)


async def test_a_hand_made_token_secret_is_filled_in(client: Client, tmp_path: Path) -> None:
    ca_file = tmp_path / "ca.crt"
    ca_file.write_text(CA)
    account = await _account(client, "builder")
    await client.create(SECRETS, {"metadata": {"name": "builder-token", "namespace": NS,
                                               "annotations": {NAME_KEY: "builder"}},
                                  "type": TOKEN_TYPE}, NS)
    await client.create(SECRETS, {"metadata": {"name": "orphan-token", "namespace": NS,
                                               "annotations": {NAME_KEY: "nobody"}},
                                  "type": TOKEN_TYPE}, NS)
    async with running(client, TokensController, root_ca_file=str(ca_file)):
        async def filled():
            """token, ca.crt, namespace and the uid annotation written"""
            secret = await client.get(SECRETS, "builder-token", NS)
            return secret if len(secret.get("data") or {}) == 3 else None
        secret = await eventually(filled)
        assert _decoded(secret, "namespace") == NS and _decoded(secret, "ca.crt") == CA
        assert len(_decoded(secret, "token")) >= 40
        assert secret["metadata"]["annotations"][UID_KEY] == account["metadata"]["uid"]

        async def orphan_gone() -> bool:
            """the Secret of an account that does not exist is deleted"""
            return await get_or_none(client, SECRETS, "orphan-token", NS) is None
        await eventually(orphan_gone)
        # no account gets a Secret of its own without the legacy flag
        await asyncio.sleep(0.2)
        assert not (await client.get(SERVICEACCOUNTS, "builder", NS)).get("secrets")


async def test_legacy_flag_gives_every_account_a_token_secret(client: Client) -> None:
    await _account(client, "default")
    async with running(client, TokensController, legacy_service_account_token_secrets=True):
        async def referenced():
            """the account lists its new token Secret"""
            account = await client.get(SERVICEACCOUNTS, "default", NS)
            refs = account.get("secrets") or []
            return refs[0]["name"] if refs else None
        name = await eventually(referenced)
        assert re.fullmatch(r"default-token-[bcdfghjklmnpqrstvwxz2456789]{5}", name)
        secret = await client.get(SECRETS, name, NS)
        assert secret["type"] == TOKEN_TYPE and set(secret["data"]) == {"token", "namespace"}
        assert secret["metadata"]["annotations"][NAME_KEY] == "default"

        await client.delete(SECRETS, name, NS)

        async def replaced():
            """a deleted token is dropped from the list and replaced"""
            refs = (await client.get(SERVICEACCOUNTS, "default", NS)).get("secrets") or []
            names = [r["name"] for r in refs]
            return names if names and name not in names else None
        names = await eventually(replaced)
        assert len(names) == 1
        await asyncio.sleep(0.3)  # and only one is ever made
        tokens = [s for s in (await client.list(SECRETS, NS))["items"]
                  if s.get("type") == TOKEN_TYPE]
        assert [s["metadata"]["name"] for s in tokens] == names

        await client.delete(SERVICEACCOUNTS, "default", NS)

        async def collected() -> bool:
            """the account's token goes with it"""
            return await get_or_none(client, SECRETS, names[0], NS) is None
        await eventually(collected)


def test_the_flag_and_the_controller_name() -> None:
    parser = argparse.ArgumentParser()
    add_flags(parser, CONTROLLER_MANAGER)
    on = controller_options(resolve(parser.parse_args(["--legacy-service-account-token-secrets"]),
                                    CONTROLLER_MANAGER, {}))
    off = controller_options(resolve(parser.parse_args([]), CONTROLLER_MANAGER, {}))
    assert on.legacy_service_account_token_secrets and not off.legacy_service_account_token_secrets
    assert "serviceaccount-token" in off.controllers
    assert "serviceaccount-token" not in parse_controllers("*,-serviceaccount-token")
