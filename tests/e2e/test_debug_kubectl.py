"""`kubectl debug` against us: it must end in kubectl's own error, not a nil-pointer panic
(kubectl 1.27, 1.31 and 1.33 panicked: our path 404 Status had no `details`, which upstream's
NotFoundHandler always sends and kubectl dereferences). Ephemeral containers are not served
yet, so kubectl says so, as it does against a cluster with the feature off."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from tests.apiserver_thread import ServerThread
from tests.e2e.test_kubectl import KUBECTLS

pytestmark = pytest.mark.skipif(not KUBECTLS, reason="no kubectl binary on this machine "
                                "(/usr/bin/kubectl or /usr/lib/google-cloud-sdk/bin/kubectl.1.*)")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    thread = ServerThread(Path(tmp_path_factory.mktemp("debug")) / "data",
                          scheduler_health_url="http://127.0.0.1:1/healthz",
                          controller_manager_health_url="http://127.0.0.1:1/healthz").start()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    import urllib.request
    urllib.request.urlopen(urllib.request.Request(
        thread.url + "/api/v1/namespaces/default/pods", data=orjson.dumps(pod), method="POST",
        headers={"Content-Type": "application/json"}), timeout=10).read()
    yield thread
    thread.stop()


@pytest.mark.parametrize("kubectl", KUBECTLS)
def test_kubectl_debug_ends_in_an_error_not_a_panic(server: ServerThread, kubectl: str) -> None:
    run = subprocess.run([kubectl, "-s", server.url, "debug", "web", "--image=busybox", "-q"],
                         capture_output=True, text=True, timeout=60)
    output = run.stdout + run.stderr
    assert "panic" not in output and "nil pointer" not in output, output
    assert run.returncode == 1 and "ephemeral containers are disabled" in output, output
