"""`kubectl --as/--as-group` against the secure port (TLS, token authn, ABAC), as a user types
it: the impersonated identity's permissions apply, a caller without `impersonate` gets
upstream's Forbidden. The server runs in-process on port 0 in its own thread and loop."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.apiserver.test_secure import serve

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(not Path(KUBECTL).exists(), reason="no kubectl on this machine")

TOKENS = "alice-token,alice,1\ncarol-token,carol,2\n"
DISCOVERY = "\n".join(
    '{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":'
    f'{{"group":"system:authenticated","readonly":true,"nonResourcePath":"{path}"}}}}'
    for path in ("/api*", "/version"))
POLICY = """{"user":"alice","resource":"users"}
{"user":"alice","resource":"groups"}
{"user":"bob","readonly":true,"resource":"pods"}
{"group":"dev","readonly":true,"resource":"configmaps"}
""" + DISCOVERY + "\n"


@pytest.fixture(scope="module")
def kubeconfigs(tmp_path_factory) -> Iterator[dict[str, Path]]:
    tmp = tmp_path_factory.mktemp("impersonation")
    (tmp / "imp").mkdir()
    (tmp / "imp" / "tokens.csv").write_text(TOKENS)
    (tmp / "imp" / "policy.jsonl").write_text(POLICY)
    loop = asyncio.new_event_loop()
    ready, stop = threading.Event(), threading.Event()
    state: dict = {}

    async def main() -> None:
        api, close = await serve(tmp, token_auth_file=str(tmp / "imp" / "tokens.csv"),
                                 authorization_policy_file=str(tmp / "imp" / "policy.jsonl"))
        state["api"] = api
        ready.set()
        while not stop.is_set():
            await asyncio.sleep(0.05)
        await close()

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(30)
    api = state["api"]
    configs = {}
    for user in ("alice", "carol"):
        config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
                  "clusters": [{"name": "c", "cluster": {"server": api.https,
                                                         "certificate-authority": str(api.ca)}}],
                  "users": [{"name": user, "user": {"token": f"{user}-token"}}],
                  "contexts": [{"name": "c", "context": {"cluster": "c", "user": user,
                                                         "namespace": "default"}}]}
        configs[user] = tmp / f"{user}.kubeconfig"
        configs[user].write_text(yaml.safe_dump(config))
    try:
        yield configs
    finally:
        stop.set()
        thread.join(30)
        loop.close()


def kubectl(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([KUBECTL, "--kubeconfig", str(config), *args], capture_output=True,
                          text=True, timeout=60, check=False)


def test_as_user_and_group_allowed_as_the_policy_says(kubeconfigs) -> None:
    alice = kubeconfigs["alice"]
    result = kubectl(alice, "--as=bob", "--as-group=dev", "get", "pods")
    assert result.returncode == 0, result.stderr
    assert "No resources found in default namespace." in result.stderr
    result = kubectl(alice, "--as=bob", "--as-group=dev", "get", "configmaps")
    assert result.returncode == 0, result.stderr
    # without --as-group=dev, bob may not read configmaps
    result = kubectl(alice, "--as=bob", "get", "configmaps")
    assert result.returncode == 1
    assert ('User "bob" cannot list resource "configmaps" in API group "" in the namespace '
            '"default"') in result.stderr
    # alice herself cannot list pods: the request really ran as bob
    assert kubectl(alice, "get", "pods").returncode == 1


def test_caller_without_impersonate_is_forbidden(kubeconfigs) -> None:
    result = kubectl(kubeconfigs["carol"], "--as=bob", "--as-group=dev", "get", "pods")
    assert result.returncode == 1
    assert ('Error from server (Forbidden): users "bob" is forbidden: User "carol" cannot '
            'impersonate resource "users" in API group "" at the cluster scope') in result.stderr
