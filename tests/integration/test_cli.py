"""The `minikube-py` command line: storage inspection and `start`.

Most tests call `main([...])` in-process (capsys captures its output); they are plain
functions because `main` runs its own event loop. The subprocess tests check what only real
processes show: a server process holding a data dir while another process reads it, follows
its writes across a snapshot rotation, and is refused the dir's lock; and `start` serving and
stopping on SIGTERM.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest

from minikube_py.api.flowcontrol import load_bootstrap
from minikube_py.apiserver.authz.rbac import bootstrap
from minikube_py.cli.main import main
from minikube_py.storage import EmbeddedStore
from minikube_py.storage.datadir import DataDir
from minikube_py.storage.wal import list_segments
from tests.etcd_server import free_port

REPO = Path(__file__).resolve().parents[2]
P = "/registry/pods/default/"
CLI = [sys.executable, "-m", "minikube_py.cli.main"]


def seed(data: Path) -> dict[str, int]:
    """A data dir with JSON, text and binary values, an update, a delete and a re-create.
    Returns the revision of each write by name."""

    async def write() -> dict[str, int]:
        store = await EmbeddedStore.open(data, fsync=False, compaction_interval=0)
        try:
            revs = {}
            revs["a"] = (await store.create(P + "a", b'{"kind":"Pod","metadata":{"name":"a"}}')).mod_revision
            revs["b1"] = (await store.create(P + "b", b"plain text")).mod_revision
            revs["b2"] = (await store.update(P + "b", b"\x00\xffbin", expected_mod_revision=None)).mod_revision
            revs["c1"] = (await store.create(P + "c", b'"one"')).mod_revision
            await store.delete(P + "c")
            revs["c_del"] = await store.current_revision()
            revs["c2"] = (await store.create(P + "c", b'"two"')).mod_revision
            revs["other"] = (await store.create("/registry/minions/n1", b"{}")).mod_revision
            return revs
        finally:
            await store.close()

    return asyncio.run(write())


def run(capsys: pytest.CaptureFixture, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()  # drop what seeding logged
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(err: str, *needles: str) -> None:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], lines[0]


# -------------------------------------------------------------------------------- ls, get


def test_ls_table_json_keys_limit_and_revision(tmp_path: Path, capsys):
    data = tmp_path / "data"
    revs = seed(data)
    code, out, err = run(capsys, "storage", "ls", "--data-dir", str(data))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["KEY", "CREATE_REV", "MOD_REV", "VERSION", "LEASE", "SIZE"]
    assert [line.split()[0] for line in lines[1:]] == ["/registry/minions/n1", P + "a", P + "b", P + "c"]
    b_row = next(line.split() for line in lines if line.startswith(P + "b"))
    assert b_row == [P + "b", str(revs["b1"]), str(revs["b2"]), "2", "0", "5"]
    assert f"4 keys under '/' at revision {revs['other']}" in err

    code, out, _ = run(capsys, "storage", "ls", P, "--data-dir", str(data), "-o", "keys", "--limit", "2")
    assert code == 0 and out.split() == [P + "a", P + "b"]

    at = str(revs["c1"])
    code, out, _ = run(capsys, "storage", "ls", P, "--data-dir", str(data), "-o", "json", "--revision", at)
    body = json.loads(out)
    assert body["revision"] == revs["c1"] and body["more"] is False
    by_key = {kv["key"]: kv for kv in body["kvs"]}
    assert by_key[P + "a"]["value"] == {"kind": "Pod", "metadata": {"name": "a"}}
    assert by_key[P + "b"]["encoding"] == "base64"
    assert base64.b64decode(by_key[P + "b"]["value"]) == b"\x00\xffbin"
    assert by_key[P + "c"]["value"] == "one"


def test_get_prints_values_for_people_and_programs(tmp_path: Path, capsys):
    data = tmp_path / "data"
    revs = seed(data)
    code, out, err = run(capsys, "storage", "get", P + "a", "--data-dir", str(data))
    assert code == 0 and json.loads(out) == {"kind": "Pod", "metadata": {"name": "a"}}
    assert out.startswith("{\n  ")  # pretty-printed
    code, out, err = run(capsys, "storage", "get", P + "b", "--data-dir", str(data))
    assert code == 0 and base64.b64decode(out.strip()) == b"\x00\xffbin"
    assert "binary" in err and "base64" in err
    code, out, _ = run(capsys, "storage", "get", P + "b", "--revision", str(revs["b1"]), "--data-dir", str(data))
    assert out == "plain text\n"
    code, out, _ = run(capsys, "storage", "get", P + "c", "-o", "json", "--data-dir", str(data))
    assert json.loads(out)["create_revision"] == revs["c2"]
    code, out, _ = run(capsys, "storage", "get", P + "c", "-o", "table", "--data-dir", str(data))
    assert out.splitlines()[1].split()[:3] == [P + "c", str(revs["c2"]), str(revs["c2"])]


def test_errors_are_one_line_and_non_zero(tmp_path: Path, capsys):
    data = tmp_path / "data"
    seed(data)
    code, _, err = run(capsys, "storage", "get", "/nope", "--data-dir", str(data))
    assert code == 1
    one_line_error(err, "storage get: error:", "key not found: /nope")
    code, _, err = run(capsys, "storage", "ls", "--data-dir", str(tmp_path / "missing"))
    assert code == 1
    one_line_error(err, "no data dir at", "minikube-py start --data-dir")
    assert not (tmp_path / "missing").exists()
    code, _, err = run(capsys, "storage", "ls", "--data-dir", str(data), "--etcd-servers", "127.0.0.1:1")
    assert code == 1
    one_line_error(err, "either --data-dir or --etcd-servers")
    assert run(capsys, "storage", "compact", "2", "--data-dir", str(data))[0] == 0
    code, _, err = run(capsys, "storage", "get", P + "a", "--revision", "1", "--data-dir", str(data))
    assert code == 1
    one_line_error(err, "compacted")
    code, _, err = run(capsys, "storage", "ls", "--bogus")
    assert code == 2 and "unrecognized arguments" in err
    assert run(capsys)[0] == 2
    code, out, _ = run(capsys, "--version")
    assert code == 0 and "minikube-py" in out


# --------------------------------------------------------------------- history, watch, compact


def test_history_shows_every_retained_revision_including_deletions(tmp_path: Path, capsys):
    data = tmp_path / "data"
    revs = seed(data)
    code, out, _ = run(capsys, "storage", "history", P + "c", "--data-dir", str(data))
    assert code == 0
    rows = [line.split() for line in out.splitlines()[1:]]
    assert [(int(r[0]), r[1]) for r in rows] == [
        (revs["c1"], "PUT"),
        (revs["c_del"], "DELETE"),
        (revs["c2"], "PUT"),
    ]
    code, out, _ = run(capsys, "storage", "history", P + "b", "-o", "json", "--data-dir", str(data))
    events = json.loads(out)["events"]
    assert [e["revision"] for e in events] == [revs["b1"], revs["b2"]]
    assert events[1]["prev_kv"]["value"] == "plain text"

    # After compaction the value written before the retained history is still shown, marked.
    assert run(capsys, "storage", "compact", "--data-dir", str(data))[0] == 0
    code, out, err = run(capsys, "storage", "history", P + "a", "--data-dir", str(data))
    assert code == 0
    [row] = [line.split() for line in out.splitlines()[1:]]
    assert row[:2] == [str(revs["a"]), "PUT*"] and "before the retained history" in err
    code, _, err = run(capsys, "storage", "history", P + "zzz", "--data-dir", str(data))
    assert code == 1
    one_line_error(err, "no retained history")


def test_watch_prints_history_then_stops_at_timeout(tmp_path: Path, capsys):
    data = tmp_path / "data"
    revs = seed(data)
    started = time.monotonic()
    target = ["--data-dir", str(data)]
    code, out, err = run(capsys, "storage", "watch", P, "--revision", "1", "--timeout", "0.3", *target)
    assert code == 0 and 0.25 < time.monotonic() - started < 3
    assert "watching '/registry/pods/default/' from revision 1" in err
    lines = out.splitlines()
    assert len(lines) == 6 and lines[4].split()[:3] == [str(revs["c_del"]), "DELETE", P + "c"]
    code, out, _ = run(capsys, "storage", "watch", "--revision", "1", "--timeout", "0.2", "-o", "json", *target)
    events = [json.loads(line) for line in out.splitlines()]
    assert [e["revision"] for e in events] == sorted(revs.values())
    assert events[-1]["key"] == "/registry/minions/n1"


def test_compact_and_its_refusal_on_a_held_dir(tmp_path: Path, capsys):
    data = tmp_path / "data"
    revs = seed(data)
    code, out, _ = run(capsys, "storage", "compact", str(revs["c1"]), "--data-dir", str(data))
    assert code == 0 and f"compacted history to revision {revs['c1']}" in out
    code, _, err = run(capsys, "storage", "compact", "2", "--data-dir", str(data))
    assert code == 1
    one_line_error(err, f"already compacted to revision {revs['c1']}")
    holder = DataDir(data)
    holder.lock()  # as a running server would
    try:
        code, _, err = run(capsys, "storage", "compact", "--data-dir", str(data))
        assert code == 1
        one_line_error(err, f"held by running process {os.getpid()}", "every 5 minutes")
        # Reads still work on the held dir.
        code, out, _ = run(capsys, "storage", "get", P + "c", "--data-dir", str(data))
        assert code == 0 and out == '"two"\n'
    finally:
        holder.unlock()


@pytest.mark.etcd
def test_storage_commands_on_real_etcd(etcd_server, capsys):
    from minikube_py.storage.etcd_backend import EtcdStore

    prefix = f"/cli-{os.getpid()}-{time.monotonic_ns()}"

    async def write() -> list[int]:
        store = await EtcdStore.connect([etcd_server.endpoint], key_prefix=prefix)
        try:
            first = await store.create(P + "x", b'{"n": 1}')
            second = await store.update(P + "x", b'{"n": 2}', expected_mod_revision=first.mod_revision)
            return [first.mod_revision, second.mod_revision]
        finally:
            await store.close()

    revs = asyncio.run(write())
    target = ["--etcd-servers", etcd_server.endpoint, "--etcd-key-prefix", prefix]
    code, out, _ = run(capsys, "storage", "ls", "-o", "keys", *target)
    assert code == 0 and out.split() == [P + "x"]
    code, out, _ = run(capsys, "storage", "get", P + "x", *target)
    assert json.loads(out) == {"n": 2}
    code, out, _ = run(capsys, "storage", "history", P + "x", "-o", "json", *target)
    assert [e["revision"] for e in json.loads(out)["events"]] == revs


# -------------------------------------------------------------- across processes (real ones)

_HOLDER = r"""
import asyncio, json, os, sys
from minikube_py.logs import configure_logging
from minikube_py.storage import EmbeddedStore

async def main(data):
    store = await EmbeddedStore.open(data, fsync=False, snapshot_count=5, compaction_interval=0)
    loop = asyncio.get_running_loop()
    print(json.dumps({"pid": os.getpid()}), flush=True)
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line or line.strip() == "exit":
            break
        op, key, *value = json.loads(line)
        if op == "put":
            try:
                kv = await store.create(key, value[0].encode())
            except Exception:
                kv = await store.update(key, value[0].encode(), expected_mod_revision=None)
            rev = kv.mod_revision
        else:
            await store.delete(key)
            rev = await store.current_revision()
        print(json.dumps({"rev": rev, "snapshots": store.snapshots_written}), flush=True)
    await store.close()

configure_logging(level="warning")  # stdout is the reply channel
asyncio.run(main(sys.argv[1]))
"""


class Lines:
    """Lines of a pipe, read by a thread, so a test can wait for one with a deadline."""

    def __init__(self, stream) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream) -> None:
        for line in stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def next(self, timeout: float = 10.0) -> str:
        line = self._queue.get(timeout=timeout)
        if line is None:
            raise EOFError("stream closed; so far: " + "\n".join(self.seen))
        self.seen.append(line)
        return line

    def drain(self, timeout: float = 2.0) -> list[str]:
        """Every line seen so far and every line until the stream closes (a dead process)."""
        try:
            while True:
                self.next(timeout)
        except (EOFError, queue.Empty):
            return self.seen

    def until(self, needle: str, timeout: float = 10.0) -> str:
        deadline = time.monotonic() + timeout
        while True:
            line = self.next(max(0.01, deadline - time.monotonic()))
            if needle in line:
                return line


class Holder:
    """A child process holding an EmbeddedStore open and writing on request."""

    def __init__(self, data: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(data)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, cwd=REPO,
        )
        self.out = Lines(self.proc.stdout)
        self.pid = json.loads(self.out.next())["pid"]

    def put(self, key: str, value: str) -> dict:
        return self._send(["put", key, value])

    def delete(self, key: str) -> dict:
        return self._send(["delete", key])

    def _send(self, command: list) -> dict:
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.out.next())

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.write("exit\n")
            self.proc.stdin.flush()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def cli(*argv: str, timeout: float = 15.0) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *argv], capture_output=True, text=True, timeout=timeout, cwd=REPO)


def test_reading_a_dir_held_by_another_process_follows_its_writes(tmp_path: Path):
    data = tmp_path / "data"
    holder = Holder(data)
    watcher = None
    try:
        holder.put(P + "a", '{"v": 1}')
        holder.put(P + "b", "text")
        holder.delete(P + "b")

        done = cli("storage", "ls", "--data-dir", str(data), "-o", "keys")
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [P + "a"]
        done = cli("storage", "get", P + "a", "--data-dir", str(data))
        assert done.returncode == 0 and json.loads(done.stdout) == {"v": 1}
        done = cli("storage", "history", P + "b", "--data-dir", str(data))
        assert [line.split()[1] for line in done.stdout.splitlines()[1:]] == ["PUT", "DELETE"]
        done = cli("storage", "compact", "--data-dir", str(data))
        assert done.returncode == 1
        assert f"held by running process {holder.pid}" in done.stderr and "Traceback" not in done.stderr

        watcher = subprocess.Popen(
            [*CLI, "storage", "watch", P, "--data-dir", str(data), "--timeout", "30"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
        )
        events = Lines(watcher.stdout)
        Lines(watcher.stderr).until("watching")
        # snapshot_count=5: the fifth record (in the first segment) starts a snapshot, which
        # rotates the WAL to a new segment and deletes the old one under the reader's feet.
        first = holder.put(P + "c", "1")
        assert events.until(P + "c").split()[:2] == [str(first["rev"]), "PUT"]
        rotated = holder.put(P + "a", '{"v": 2}')
        after = [holder.put(P + f"d{i}", str(i)) for i in range(3)]
        assert after[-1]["snapshots"] >= 1
        seqs = [seq for seq, _ in list_segments(data / "wal")]
        assert seqs and min(seqs) > 1, seqs
        assert events.until(P + "a").split()[0] == str(rotated["rev"])
        for i, written in enumerate(after):
            assert events.until(P + f"d{i}").split()[0] == str(written["rev"])
        watcher.send_signal(signal.SIGINT)
        assert watcher.wait(10) == 0

        console = shutil.which("minikube-py", path=os.path.dirname(sys.executable))
        command = [console] if console else [sys.executable, str(REPO / "cmd" / "minikube-py")]
        done = subprocess.run([*command, "storage", "ls", P, "--data-dir", str(data), "-o", "keys"],
                              capture_output=True, text=True, timeout=15)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [P + "a", P + "c"] + [P + f"d{i}" for i in range(3)]
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        holder.close()


def _http(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_start_serves_health_and_metrics_and_stops_on_sigterm(tmp_path: Path):
    data = tmp_path / "data"
    port = free_port()
    server = subprocess.Popen(
        [*CLI, "start", "--port", str(port), "--data-dir", str(data), "--fsync", "never",
         "--log-format", "json", "--scheduler-port", str(free_port()), "--nodes", "0",
         "--disable", "controller-manager", "--kubeconfig-out", "", "--secure-port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
    )
    try:
        logs = Lines(server.stderr)
        ready = json.loads(logs.until('"ready"'))
        # the API server creates the system namespaces (default, kube-system, ...) and the
        # `kubernetes` service (its IP taken in the service-IP range) at start; no endpoints:
        # with --secure-port 0 its address is the loopback insecure one (bootstrap.py); and
        # the two system PriorityClasses (upstream's scheduling bootstrap hook); and one local
        # APIService per served group version (the aggregator's autoregister, done before ready)
        status, listed = _http(f"http://127.0.0.1:{port}/apis/apiregistration.k8s.io/v1/apiservices")
        local = len(orjson.loads(listed)["items"])
        assert status == 200 and local >= 7  # v1, apps/v1, apiextensions.k8s.io/v1, ...
        # each is created, then its status says Available (Local): two revisions; and, with
        # start's default Node,RBAC, upstream's bootstrap RBAC policy, each object once, then
        # admin/edit/view filled by aggregation (once or twice each, as their sources land)
        policy = bootstrap.policy()
        rbac = sum(len(objects) for objects in policy.values())
        aggregated = sum("aggregationRule" in role for role in policy["clusterroles"])
        # and start's storage addon (cli/storage_addon.py): the CSI driver's ServiceAccount,
        # ClusterRole and binding, its CSIDriver, and the default StorageClass
        addon = 5
        # and API Priority and Fairness' mandatory and suggested objects, each created and
        # (FlowSchemas) its status written by the config producer (flowcontrol_bootstrap.py)
        apf_objects = load_bootstrap()
        apf = len(apf_objects.levels()) + len(apf_objects.schemas())
        base = 9 + 2 * local + rbac + addon
        assert ready["data_dir"] == str(data)
        assert base + aggregated + apf <= ready["revision"] <= base + 2 * (aggregated + apf)
        assert ready["keys"] == 8 + local + rbac + addon + apf
        assert ready["inspect"] == f"minikube-py storage ls --data-dir {data}"
        assert _http(f"http://127.0.0.1:{port}/healthz") == (200, "ok")
        status, metrics = _http(f"http://127.0.0.1:{port}/metrics")
        assert status == 200 and "minikube_storage_revision" in metrics
        status, version = _http(f"http://127.0.0.1:{port}/version")
        assert status == 200 and "minikube_py" in orjson.loads(version)
        assert orjson.loads(version)["gitVersion"].startswith("v1.")
        status, cs = _http(f"http://127.0.0.1:{port}/api/v1/componentstatuses/scheduler")
        assert status == 200 and orjson.loads(cs)["conditions"][0]["status"] == "True"
        assert _http(ready["scheduler"] + "/healthz") == (200, "ok")
        status, namespaces = _http(f"http://127.0.0.1:{port}/api/v1/namespaces")
        assert status == 200 and {"default", "kube-system"} <= {
            item["metadata"]["name"] for item in orjson.loads(namespaces)["items"]}

        second = cli("start", "--port", str(free_port()), "--data-dir", str(data),
                     "--scheduler-port", "0", "--nodes", "0", "--kubeconfig-out", "",
                     "--secure-port", "0")
        assert second.returncode == 1
        assert f"in use by process {server.pid}" in second.stderr and "Traceback" not in second.stderr

        server.send_signal(signal.SIGTERM)
        assert server.wait(10) == 0
        assert '"stopped"' in logs.until('"stopped"')
        assert not DataDir(data).is_locked() and DataDir(data).holder_pid() is None
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
