"""`kubectl explain` on a custom resource with every kubectl 1.27..1.33 on the machine.

kubectl 1.27+ explain from the `apis/<group>/<version>` document of /openapi/v3 (found through
the index), and with `--output=plaintext-openapiv2` from /openapi/v2's protobuf form: both
must describe the CRD's schema (upstream's apiextensions openapi builder), follow a CRD
update, and forget the kind once the CRD is deleted.
"""

from __future__ import annotations

import glob
import os
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.apiserver.test_crd_openapi import crontab_crd
from tests.apiserver_thread import ServerThread

KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                  key=lambda p: [int(x) for x in p.rsplit("kubectl.", 1)[1].split(".")])
NEWEST = KUBECTLS[-1] if KUBECTLS else "/usr/bin/kubectl"

pytestmark = pytest.mark.skipif(not KUBECTLS, reason="needs kubectl 1.27+ binaries")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    home = tmp_path_factory.mktemp("crd-explain")
    s = ServerThread(home / "data").start()
    try:
        _kubectl(NEWEST, s, home, "apply", "-f", "-", stdin=yaml.safe_dump(crontab_crd()))
        _kubectl(NEWEST, s, home, "wait", "--for=condition=Established", "--timeout=10s",
                 "crd/crontabs.stable.example.com")
        yield s
    finally:
        s.stop()


def _kubectl(binary: str, server: ServerThread, home: Path, *args: str,
             stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    # a fresh cache per call: kubectl caches discovery and OpenAPI on disk
    cache = home / f"cache-{time.monotonic_ns()}"
    result = subprocess.run([binary, "-s", server.url, "--cache-dir", str(cache), *args],
                            check=False, input=stdin, capture_output=True, text=True, timeout=60,
                            env={"HOME": str(home), "PATH": os.environ.get("PATH", "")})
    if ok:
        assert result.returncode == 0, (binary, args, result.stdout, result.stderr)
    return result


@pytest.mark.parametrize("binary", KUBECTLS, ids=lambda p: p.rsplit("kubectl.", 1)[1])
def test_explain_custom_resource_from_openapi_v3(binary: str, server: ServerThread,
                                                 tmp_path: Path) -> None:
    out = _kubectl(binary, server, tmp_path, "explain", "crontabs.spec").stdout
    assert "KIND:       CronTab" in out and "GROUP:      stable.example.com" in out, out
    assert "What to run." in out
    assert "cronSpec\t<string> -required-" in out and "When to run." in out
    out = _kubectl(binary, server, tmp_path, "explain", "ct").stdout  # the short name
    assert "CronTab runs a command on a schedule." in out
    assert "metadata\t<ObjectMeta>" in out and "spec\t<Object>" in out
    out = _kubectl(binary, server, tmp_path, "explain", "crontab.metadata.labels").stdout
    assert "FIELD: labels <map[string]string>" in out


@pytest.mark.parametrize("binary", KUBECTLS, ids=lambda p: p.rsplit("kubectl.", 1)[1])
def test_explain_custom_resource_from_openapi_v2(binary: str, server: ServerThread,
                                                 tmp_path: Path) -> None:
    out = _kubectl(binary, server, tmp_path, "explain", "crontabs.spec",
                   "--output=plaintext-openapiv2").stdout
    assert "KIND:     CronTab" in out and "VERSION:  stable.example.com/v1" in out, out
    assert "cronSpec\t<string>" in out and "When to run." in out
    assert "-required-" not in out  # v2 carries no value validations, as upstream's


def test_explain_follows_crd_update_and_delete(tmp_path: Path) -> None:
    s = ServerThread(tmp_path / "data").start()
    try:
        crd = crontab_crd()
        _kubectl(NEWEST, s, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump(crd))
        _kubectl(NEWEST, s, tmp_path, "wait", "--for=condition=Established", "--timeout=10s",
                 "crd/crontabs.stable.example.com")
        spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        spec["properties"]["replicas"] = {"type": "integer", "description": "How many."}
        _kubectl(NEWEST, s, tmp_path, "apply", "-f", "-", stdin=yaml.safe_dump(crd))
        out = ""
        for _ in range(50):
            out = _kubectl(NEWEST, s, tmp_path, "explain", "crontabs.spec.replicas",
                           ok=False).stdout
            if "How many." in out:
                break
            time.sleep(0.1)
        assert "FIELD: replicas <integer>" in out and "How many." in out, out
        _kubectl(NEWEST, s, tmp_path, "delete", "crd", "crontabs.stable.example.com")
        result = _kubectl(NEWEST, s, tmp_path, "explain", "crontabs", ok=False)
        assert result.returncode != 0
        assert "doesn't have a resource type" in result.stderr, result.stderr
    finally:
        s.stop()
