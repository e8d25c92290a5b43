"""--config on `minikube-py scheduler` and --scheduler-config on `minikube-py start`: a bad file
stops the command at start with upstream's message and exit status 1 (real subprocesses), and
/configz shows the loaded KubeSchedulerConfiguration in v1 field names."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import aiohttp
import pytest

from minikube_py.cli.main import build_parser, main
from minikube_py.cli.start import running_cluster
from minikube_py.cli.start_options import StartOptions
from tests.apiserver_thread import ServerThread
from tests.etcd_server import free_port
from tests.port_race import lost_port_race, start_retrying_port_races

REPO = Path(__file__).resolve().parents[3]
CLI = [sys.executable, "-m", "minikube_py.cli.main"]

GOOD = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 40
clientConnection: {burst: 77}
leaderElection: {leaseDuration: 20s}
profiles:
- schedulerName: default-scheduler
- schedulerName: bin-packing
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""
BAD = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podInitialBackoffSeconds: 0
profiles:
- schedulerName: a
  plugin: {}
"""


def cli(*argv: str, timeout: float = 30.0) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], check=False, capture_output=True, text=True,
                          timeout=timeout,
                          cwd=REPO)


def assert_one_line_error(proc: subprocess.CompletedProcess, message: str) -> None:
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert message in proc.stderr.strip().splitlines()[-1], proc.stderr


def test_scheduler_refuses_a_bad_file_with_upstreams_message(tmp_path: Path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    proc = cli("scheduler", "--config", str(bad), "--port", "0",
               "--master", "http://127.0.0.1:9")
    assert_one_line_error(proc, f'scheduler: error: --config {bad}: strict decoding error: '
                                'unknown field "profiles[0].plugin"')


def run_main(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str]:
    """The same command in this process (the CLI's error path without a new interpreter)."""
    code = main(list(argv))
    return code, capsys.readouterr().err


@pytest.mark.parametrize("content, message", [
    (BAD.replace("  plugin: {}\n", ""),
     "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    (None, "missing.yaml: no such file or directory"),
])
def test_scheduler_errors_in_process(tmp_path: Path, capsys, content, message):
    path = tmp_path / "missing.yaml"
    if content is not None:
        path.write_text(content)
    code, err = run_main(capsys, "scheduler", "--config", str(path), "--port", "0",
                         "--master", "http://127.0.0.1:9")
    assert code == 1 and err.startswith(f"minikube-py scheduler: error: --config {path}: ")
    assert message in err and len(err.strip().splitlines()) == 1


def test_config_and_policy_file_are_exclusive(tmp_path: Path, capsys):
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    code, err = run_main(capsys, "scheduler", "--config", str(good), "--policy-config-file",
                         str(REPO / "configs" / "scheduler-policy.json"), "--port", "0",
                         "--master", "http://127.0.0.1:9")
    assert code == 1 and "--config and --policy-config-file cannot be used together" in err


def test_start_refuses_a_bad_scheduler_config(tmp_path: Path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD.replace("  plugin: {}\n", ""))
    # refused while the flags are read: nothing listens yet, so the ports are never bound
    code, err = run_main(capsys, "start", "--data-dir", str(tmp_path / "data"), "--fsync",
                         "never", "--insecure-port", str(free_port()), "--secure-port", "0",
                         "--scheduler-port", "0", "--controller-manager-port", "0",
                         "--kubelet-port", "0", "--nodes", "0", "--kubeconfig-out", "",
                         "--scheduler-config", str(bad))
    assert code == 1, err
    assert err.strip() == (f"minikube-py start: error: --scheduler-config {bad}: "
                           "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0")
    assert not (tmp_path / "data").exists()


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _assert_configz(config: dict) -> None:
    assert config["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert config["kind"] == "KubeSchedulerConfiguration"
    assert config["percentageOfNodesToScore"] == 40
    assert [p["schedulerName"] for p in config["profiles"]] == ["default-scheduler",
                                                               "bin-packing"]
    fit = {c["name"]: c["args"] for c in config["profiles"][1]["pluginConfig"]}
    assert fit["NodeResourcesFit"]["scoringStrategy"] == {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}
    assert config["profiles"][0]["plugins"]["multiPoint"]["enabled"][0] == {
        "name": "SchedulingGates", "weight": 0}


def test_scheduler_process_shows_the_config_on_configz(tmp_path: Path):
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    server = ServerThread(tmp_path / "data").start()
    procs: list[subprocess.Popen] = []

    def start() -> dict:
        port = free_port()
        proc = subprocess.Popen([*CLI, "scheduler", "--config", str(good), "--port", str(port),
                                 "--master", server.url], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True, cwd=REPO)
        procs.append(proc)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read())  # a lost port race is retried
            try:
                return _get_json(f"http://127.0.0.1:{port}/configz")
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        raise TimeoutError("no /configz")

    def cleanup() -> None:
        procs.pop().wait()

    try:
        body = start_retrying_port_races(start, cleanup=cleanup)
        config = body["componentconfig"]
        _assert_configz(config)
        # the file's client and leader-election settings run the component; what the file
        # leaves out keeps the component's defaults (no leader election, JSON, no QPS limit)
        assert config["clientConnection"] == {
            "kubeconfig": "", "acceptContentTypes": "", "contentType": "application/json",
            "qps": 0.0, "burst": 77}
        assert config["leaderElection"]["leaseDuration"] == "20s"
        assert config["leaderElection"]["leaderElect"] is False
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
        server.stop()


async def test_start_shows_the_config_on_configz(tmp_path: Path):
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    for attempt in range(4):
        args = ["start", "--data-dir", str(tmp_path / f"data{attempt}"), "--fsync", "never",
                "--nodes", "0", "--insecure-port", str(free_port()), "--secure-port", "0",
                "--scheduler-port", str(free_port()), "--controller-manager-port", "0",
                "--kubelet-port", "0", "--kubeconfig-out", "", "--scheduler-config", str(good)]
        options = StartOptions.from_args(build_parser().parse_args(args))
        try:
            async with running_cluster(options) as cluster:
                url = cluster.component("scheduler").url
                async with aiohttp.ClientSession() as session, \
                        session.get(f"{url}/configz") as response:
                    assert response.status == 200
                    _assert_configz((await response.json())["componentconfig"])
                return
        except OSError as exc:
            if not lost_port_race(exc) or attempt == 3:
                raise
            await asyncio.sleep(0)
    pytest.fail("unreachable")


def test_extender_fields_the_http_extender_ignores_are_logged(tmp_path: Path):
    from structlog.testing import capture_logs

    from minikube_py.cli import scheduler_config

    path = tmp_path / "ext.yaml"
    path.write_text(GOOD + "extenders:\n- {urlPrefix: 'http://127.0.0.1:9/x', filterVerb: f, "
                           "bindVerb: b}\n")
    with capture_logs() as logs:
        loaded = scheduler_config.load(str(path), None)
    assert loaded is not None and loaded.configuration.extenders[0]["bindVerb"] == "b"
    assert loaded.settings == {"kube_api_burst": 77, "leader_elect_lease_duration": "20s"}
    [warning] = [e for e in logs if e["log_level"] == "warning"]
    assert warning["ignored"] == ["bindVerb"] and warning["extender"] == "http://127.0.0.1:9/x"
    assert scheduler_config.load(None, "policy.json") is None  # no file: nothing to refuse


def test_write_config_to_prints_the_defaulted_configuration_and_exits(tmp_path: Path, capsys):
    import yaml

    from minikube_py.scheduler.framework.config.load import default_configuration

    out = tmp_path / "out.yaml"
    code, err = run_main(capsys, "scheduler", "--write-config-to", str(out),
                         "--master", "http://127.0.0.1:9")
    assert code == 0, err
    text = out.read_text()
    assert yaml.safe_load(text) == default_configuration().versioned
    assert text.startswith("apiVersion: kubescheduler.config.k8s.io/v1\nclientConnection:\n")
    good = tmp_path / "good.yaml"
    good.write_text(GOOD)
    code, err = run_main(capsys, "scheduler", "--config", str(good), "--write-config-to",
                         str(out))
    assert code == 0, err
    _assert_configz(yaml.safe_load(out.read_text()))


def test_which_algorithm_schedules():
    """No flag: the framework's default profile (1.31), serving --scheduler-name; a v1.x
    provider or Policy file: the v1.x algorithm (None); a configuration file: its profiles."""
    from minikube_py.cli.scheduler_config import chosen
    from minikube_py.scheduler.framework.config.load import default_configuration

    framework = chosen(None, "", None)
    assert [p.scheduler_name for p in framework.profiles] == ["default-scheduler"]
    assert "DefaultPreemption" in [r.name for r in framework.profiles[0].enabled("postFilter")]
    named = chosen(None, "", None, "batch-scheduler")
    assert named.profiles[0].scheduler_name == "batch-scheduler"
    assert named.versioned["profiles"][0]["schedulerName"] == "batch-scheduler"
    assert chosen(None, "DefaultProvider", None) is None
    assert chosen(None, "", "policy.json") is None
    given = default_configuration()
    assert chosen(given, "V1.0Provider", None) is given
