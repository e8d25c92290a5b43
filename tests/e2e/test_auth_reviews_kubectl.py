"""`kubectl auth can-i` and `kubectl auth whoami`, every kubectl on the machine, over TLS.

An API server with token users and an ABAC policy runs in-process on a background thread
(TLS site on port 0, read back), and each kubectl talks to it with a kubeconfig of CA +
token, as a user would. can-i is a SelfSubjectAccessReview (exit 0 "yes", exit 1 "no"),
`can-i --list` a SelfSubjectRulesReview, whoami a SelfSubjectReview (authentication.k8s.io
v1 from kubectl 1.28, v1beta1 for 1.27).
"""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.apiserver.test_access_reviews import SELF_REVIEWS
from tests.apiserver.test_secure import serve
from tests.e2e.test_auth_kubectl import DISCOVERY
from tests.e2e.test_kubectl import KUBECTLS

pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine")

POLICY = """{"user":"admin"}
{"user":"reader","readonly":true,"resource":"pods"}
{"group":"ops","readonly":true}
""" + SELF_REVIEWS + "\n" + DISCOVERY


class SecureThread:
    """serve() (tests/apiserver/test_secure.py) on its own event loop in a thread."""

    def __init__(self, tmp: Path, tokens: str | None = None, **options: Any) -> None:
        """`tokens` and `options` go to serve() (default: its tokens, this file's ABAC
        policy)."""
        self.tmp = tmp
        self.tokens, self.options = tokens, options
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.url = ""
        self.ca: Path | None = None
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="secure-apiserver", daemon=True)

    def _run(self) -> None:
        try:
            self.loop.run_until_complete(self._serve())
        except BaseException as exc:  # noqa: BLE001 -- surfaced to start()
            self._error = exc
            self.ready.set()

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        (self.tmp / "reviews-policy.jsonl").write_text(POLICY)
        options = {"authorization_policy_file": str(self.tmp / "reviews-policy.jsonl"),
                   **self.options}
        api, close = await (serve(self.tmp, self.tokens, **options) if self.tokens
                            else serve(self.tmp, **options))
        self.url, self.ca = api.https, api.ca
        self.ready.set()
        try:
            await self._stop.wait()
        finally:
            await close()

    def start(self) -> SecureThread:
        self.thread.start()
        if not self.ready.wait(30) or self._error is not None:
            raise RuntimeError(f"secure API server did not start: {self._error!r}")
        return self

    def stop(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(30)


@pytest.fixture(scope="module")
def secure_api(tmp_path_factory) -> Iterator[SecureThread]:
    server = SecureThread(tmp_path_factory.mktemp("reviews")).start()
    try:
        yield server
    finally:
        server.stop()


def kubeconfig(server: SecureThread, token: str) -> Path:
    assert server.ca is not None
    ca = base64.b64encode(server.ca.read_bytes()).decode()
    path = server.tmp / f"kubeconfig-{token}"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": server.url,
                                               "certificate-authority-data": ca}}],
        "users": [{"name": "u", "user": {"token": token}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


def runner(server: SecureThread, kubectl: str):
    home = server.tmp / f"home-{Path(kubectl).name}"
    home.mkdir(exist_ok=True)

    def run(token: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([kubectl, "--kubeconfig", str(kubeconfig(server, token)), *args],
                              check=False, capture_output=True, text=True, timeout=60,
                              env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})

    return run


def _id(path: str) -> str:
    return path.rsplit("kubectl", 1)[1] or "default"


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=_id)
def test_auth_can_i(secure_api: SecureThread, kubectl: str) -> None:
    run = runner(secure_api, kubectl)
    yes = run("admin-token", "auth", "can-i", "create", "pods")
    assert (yes.returncode, yes.stdout.strip()) == (0, "yes"), yes.stderr
    no = run("reader-token", "auth", "can-i", "create", "pods")
    # kubectl prints the authorizer's reason after a "no" (ABAC's, as upstream's)
    assert (no.returncode, no.stdout.strip()) == (1, "no - No policy matched."), no.stderr
    read = run("reader-token", "auth", "can-i", "list", "pods", "-n", "kube-system")
    assert (read.returncode, read.stdout.strip()) == (0, "yes"), read.stderr
    ops = run("ops-token", "auth", "can-i", "delete", "secrets")
    assert ops.returncode == 1 and ops.stdout.startswith("no"), ops.stderr


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=_id)
def test_auth_can_i_list(secure_api: SecureThread, kubectl: str) -> None:
    run = runner(secure_api, kubectl)
    listed = run("reader-token", "auth", "can-i", "--list", "-n", "default")
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0][:2] == ["Resources", "Non-Resource"], listed.stdout
    # a v0 ABAC line's apiGroup is `*` (upstream's conversion), which kubectl prints `pods.*`
    assert ["pods.*", "[]", "[]", "[get", "list", "watch]"] in rows, listed.stdout
    assert any(row[0] == "selfsubjectaccessreviews.authorization.k8s.io" for row in rows)
    assert ["[/api*]", "[]", "[get", "list", "watch]"] not in rows  # namespace "" ≠ default


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=_id)
def test_auth_whoami(secure_api: SecureThread, kubectl: str) -> None:
    run = runner(secure_api, kubectl)
    who = run("ops-token", "auth", "whoami")
    assert who.returncode == 0, who.stderr
    rows = [line.split(None, 1) for line in who.stdout.splitlines()]
    assert ["Username", "olga"] in rows, who.stdout
    assert ["UID", "4"] in rows, who.stdout
    assert ["Groups", "[ops dev system:authenticated]"] in rows, who.stdout
    as_json = run("admin-token", "auth", "whoami", "-o", "json")
    assert as_json.returncode == 0, as_json.stderr
    assert '"username": "admin"' in as_json.stdout


def test_auth_can_i_as_another_user(secure_api: SecureThread) -> None:
    run = runner(secure_api, KUBECTLS[0])
    result = run("admin-token", "auth", "can-i", "create", "pods", "--as", "reader")
    assert (result.returncode, result.stdout.strip()) == (1, "no - No policy matched."), \
        result.stderr
    allowed = run("admin-token", "auth", "can-i", "get", "pods", "--as", "reader")
    assert (allowed.returncode, allowed.stdout.strip()) == (0, "yes"), allowed.stderr
    who = run("admin-token", "auth", "whoami", "--as", "reader", "--as-group", "ops")
    assert who.returncode == 0, who.stderr
    rows = [line.split(None, 1) for line in who.stdout.splitlines()]
    assert ["Username", "reader"] in rows, who.stdout
    assert ["Groups", "[ops system:authenticated]"] in rows, who.stdout
