"""What kubectl reads from /openapi/v2, with real kubectl binaries against a real API server.

kubectl 1.20 (Debian's kubernetes-client: `bash hack/kubectl-1.20.sh` puts it at
.venv-test/bin/kubectl.1.20, or name it in $KUBECTL_1_20) reads only the protobuf v2 document:
with an empty one it refused `apply --dry-run=server` and `diff` ("doesn't support dry-run")
and `explain` ("couldn't find resource"). The newer kubectls read v3 first; they must keep
working now that v2 is a real document too.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.apiserver_thread import ServerThread


def _kubectl_1_20() -> str | None:
    for candidate in (os.environ.get("KUBECTL_1_20", ""),
                      os.path.join(os.path.dirname(sys.executable), "kubectl.1.20"),
                      "/usr/lib/google-cloud-sdk/bin/kubectl.1.20"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


OLD = _kubectl_1_20()
NEW = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
             key=lambda p: [int(x) for x in p.rsplit("kubectl.", 1)[1].split(".")])
BINARIES = ([OLD] if OLD else []) + [p for p in NEW if p != OLD]
POD = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: c, image: nginx}}]
"""
#: fields our schema tables do not describe (filled in from the protobuf description), and a
#: kind with no table at all: kubectl 1.20 validates them against /openapi/v2 before sending
UNTABLED = """apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  securityContext: {{windowsOptions: {{runAsUserName: app}}}}
  containers:
  - name: c
    image: nginx
    resizePolicy: [{{resourceName: cpu, restartPolicy: NotRequired}}]
    volumeMounts: [{{name: v, mountPath: /v, recursiveReadOnly: Disabled}}]
  volumes: [{{name: v, csi: {{driver: example.com, readOnly: true}}}}]
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {{name: {name}}}
value: 1000
globalDefault: false
description: a class
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    thread = ServerThread(tmp_path_factory.mktemp("apiserver") / "data").start()
    yield thread
    thread.stop()


def _label(path: str) -> str:
    return "1.20" if path == OLD else path.rsplit("kubectl.", 1)[1]


def test_kubectl_1_20_is_available() -> None:
    if OLD is None:
        pytest.skip("no kubectl 1.20: run `bash hack/kubectl-1.20.sh` (Debian's "
                    "kubernetes-client) or set KUBECTL_1_20")


@pytest.mark.skipif(not BINARIES, reason="no kubectl binary on this machine")
@pytest.mark.parametrize("binary", BINARIES, ids=[_label(p) for p in BINARIES])
def test_dry_run_diff_and_explain(binary: str, server: ServerThread, tmp_path: Path) -> None:
    name = "web-" + _label(binary).replace(".", "-")
    manifest = tmp_path / "pod.yaml"
    manifest.write_text(POD.format(name=name))

    def kubectl(*args: str, codes: tuple[int, ...] = (0,)) -> str:
        result = subprocess.run(
            [binary, "-s", server.url, "--cache-dir", str(tmp_path / "cache"), *args],
            capture_output=True, text=True, timeout=60,
            env={"HOME": str(tmp_path), "PATH": os.environ.get("PATH", "")})
        assert result.returncode in codes, (args, result.stdout, result.stderr)
        return result.stdout

    assert f"pod/{name} created (server dry run)" in kubectl(
        "apply", "--dry-run=server", "-f", str(manifest))
    # diff exits 1 when there are differences (here: the pod does not exist yet)
    assert f"+  name: {name}" in kubectl("diff", "-f", str(manifest), codes=(1,))
    kubectl("apply", "-f", str(manifest))
    assert kubectl("diff", "-f", str(manifest)) == ""
    explained = kubectl("explain", "pod.spec")
    assert "KIND:" in explained and "Pod" in explained and "containers" in explained
    assert "driver" in kubectl("explain", "pod.spec.volumes.csi")
    untabled = tmp_path / "untabled.yaml"
    untabled.write_text(UNTABLED.format(name=name + "-x"))
    out = kubectl("apply", "--dry-run=server", "-f", str(untabled))
    assert f"priorityclass.scheduling.k8s.io/{name}-x created (server dry run)" in out
