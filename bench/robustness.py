"""Robustness: bad input, overload and repeated kill -9 against `minikube-py apiserver`.

Kubernetes piece: none by itself — this checks the promises issue 6 makes of kube-apiserver
(v1.0's RecoverPanics and MaxInFlightLimit filters, etcd's durability): every rejection is a
Status with a 4xx code, overload is answered with 429 + Retry-After and never a 5xx, and no
acknowledged write is lost however often the process is SIGKILLed.

Four phases, each against the real command in a subprocess (`--fsync always`):

- bad input: a few hundred malformed requests of several kinds (bad JSON bodies, bad label and
  field selectors, bad patches, bad query values, unknown paths); "rejected correctly" means a
  4xx answer whose body is a Status; the target object must be unchanged afterwards;
- overload: many more concurrent creates than --max-mutating-requests-inflight; counts 429s
  (with Retry-After) and 5xx, then checks later requests all succeed;
- kill cycles: a mixed create/update/delete load, SIGKILL mid-load, restart, compare the store
  with every acknowledged operation (tests/robustness/test_faults.py runs the same driver);
- hostile bodies (issue 14): each request of bench/hostile.py -- the reported decoder and patch
  abuses (YAML self-aliases and billion laughs, JSON patch self-copies, deep merge patches,
  non-string YAML keys, `!!binary`, fake gzip, text/plain) and the fuzzer's worst shapes (bodies
  near the 3 MiB limit, deep nesting, wide alias fan-out, long copy chains, a gzip bomb, wide
  protobuf) -- sent one by one while /healthz is probed every 20 ms from another connection;
  per case the answer, its latency and the worst /healthz latency during it, against the
  targets (answer <= 100 ms, /healthz <= 50 ms: no request may hold the shared event loop).

    python -m bench.robustness [--cycles 5] [--bad-requests 300] [--seed N]
    python -m bench.robustness --phases hostile [--hostile-url http://127.0.0.1:8080]
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from bench import common, hostile

CLI = [sys.executable, "-m", "minikube_py.cli.main"]
NAMESPACE = "default"
CM_PATH = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
RESULTS = Path(__file__).parent / "results" / "robustness.json"


# ------------------------------------------------------------------------------ the server


@dataclass
class Server:
    """One `minikube-py apiserver` subprocess on a free loopback port."""

    data_dir: Path
    extra: tuple[str, ...] = ()
    proc: subprocess.Popen | None = None
    url: str = ""
    log_path: Path | None = None

    async def start(self, timeout: float = 30.0) -> None:
        port = common.free_port()
        self.url = f"http://127.0.0.1:{port}"
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.log"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*CLI, "apiserver", "--data-dir", str(self.data_dir), "--insecure-port", str(port),
                 "--secure-port", "0", "--fsync", "always", "--log-level", "warning",
                 "--scheduler-health-url", "http://127.0.0.1:1/healthz",
                 "--controller-manager-health-url", "http://127.0.0.1:1/healthz", *self.extra],
                stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + timeout
        async with aiohttp.ClientSession() as session:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"apiserver exited with {self.proc.returncode}: {self.log_tail()}")
                try:
                    async with session.get(self.url + "/readyz") as resp:
                        if resp.status == 200:
                            return
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
        self.kill()
        raise RuntimeError(f"apiserver not ready within {timeout}s: {self.log_tail()}")

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()

    def stop(self) -> int | None:
        """SIGTERM and wait; returns the exit code (None if it had to be killed)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
                return None
        return self.proc.returncode

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text()[-2000:] if self.log_path else ""
        except OSError:
            return ""


def configmap(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"v": str(value)}}


async def call(session: aiohttp.ClientSession, method: str, url: str, *, body: Any = None,
               raw: bytes | None = None, content_type: str = "application/json",
               ) -> tuple[int, Any, dict[str, str]]:
    """(status, parsed JSON or None, headers)."""
    data = raw if raw is not None else (orjson.dumps(body) if body is not None else None)
    headers = {"Content-Type": content_type} if data is not None else {}
    async with session.request(method, url, data=data, headers=headers) as resp:
        text = await resp.read()
        try:
            parsed = orjson.loads(text)
        except orjson.JSONDecodeError:
            parsed = None
        return resp.status, parsed, dict(resp.headers)


def is_status(body: Any) -> bool:
    return isinstance(body, dict) and body.get("kind") == "Status" and body.get("apiVersion") == "v1"


# ------------------------------------------------------------------------------ bad input

_BAD_BODIES: list[bytes] = [
    b"", b"{", b"not json", b"[]", b"null", b"42", b'"str"', b"{\"metadata\": 5}",
    b'{"apiVersion": "v1", "kind": "ConfigMap"}',  # no name
    b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name!"}}',
    b'{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}',  # wrong kind for the path
    b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"k": 5}}',
    b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": 1}}}',
    b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"bad key": "v"}}',
    b"\xff\xfe\x00garbage", b'{"a": "\\ud800"}', b"[" * 5000 + b"]" * 5000,
    b'{"metadata": ' * 2000 + b"{}" + b"}" * 2000,
]
_BAD_LABEL_SELECTORS = ["a in (", "!!", "=x", "a==b==c", "a in (b", "a,,b", "a notin", "(", "a=(b)",
                        "a in b", "a!", "-a=b", "a=" + "x" * 70, "!a=b"]
_BAD_FIELD_SELECTORS = ["foo.bar=1", "metadata.name", "=x", "metadata.name==a==b", "spec.nothing=1",
                        "metadata.name in (a)", "!metadata.name"]
_BAD_QUERIES = ["limit=abc", "limit=-1", "watch=1&timeoutSeconds=-1", "watch=1&timeoutSeconds=xyz",
                "resourceVersion=xyz", "continue=%%%garbage", "continue=bm90LWEtdG9rZW4",
                "resourceVersion=-5", "resourceVersionMatch=Bogus", "resourceVersion=1&resourceVersionMatch=Exact&limit=q"]
_BAD_PATCHES: list[tuple[str, bytes]] = [
    ("application/json-patch+json", b'[{"op": "explode", "path": "/data/v"}]'),
    ("application/json-patch+json", b'[{"op": "replace", "path": "/nope/deeper", "value": 1}]'),
    ("application/json-patch+json", b'{"op": "add"}'),
    ("application/json-patch+json", b'[{"op": "test", "path": "/data/v", "value": "never"}]'),
    ("application/json-patch+json", b'[{"op": "remove", "path": "/metadata/name"}]'),
    ("application/merge-patch+json", b"{"),
    ("application/merge-patch+json", b'{"data": 5}'),
    ("application/merge-patch+json", b'{"metadata": {"name": "renamed"}}'),
    ("application/strategic-merge-patch+json", b'{"data": {"v": 5}}'),
    ("application/strategic-merge-patch+json", b"[1,2]"),
    ("text/plain", b"data=v"),
]
_UNKNOWN_PATHS = ["/api/v2/pods", "/apis/foo/v1/bars", f"/api/v1/namespaces/{NAMESPACE}/nonexistent",
                  "/api/v1/namespaces/default/configmaps/x/y/z", "/apis/apps/v9/deployments",
                  "/api/v1/namespaces/default/configmaps/" + "n" * 300, "/%00", "/api/v1/nodes/../../etc"]


def bad_requests(count: int, rng: random.Random, target: str) -> list[tuple[str, str, str, str, bytes | None]]:
    """`count` malformed requests: (kind, method, path+query, content type, body)."""
    makers = [
        lambda: ("bad JSON", "POST", CM_PATH, "application/json", rng.choice(_BAD_BODIES)),
        lambda: ("bad JSON", "PUT", f"{CM_PATH}/{target}", "application/json", rng.choice(_BAD_BODIES)),
        lambda: ("bad selector", "GET", f"{CM_PATH}?labelSelector={rng.choice(_BAD_LABEL_SELECTORS)}", "", None),
        lambda: ("bad selector", "GET", f"/api/v1/pods?fieldSelector={rng.choice(_BAD_FIELD_SELECTORS)}", "", None),
        lambda: ("bad patch", "PATCH", f"{CM_PATH}/{target}", *rng.choice(_BAD_PATCHES)),
        lambda: ("bad query", "GET", f"{CM_PATH}?{rng.choice(_BAD_QUERIES)}", "", None),
        lambda: ("unknown path", rng.choice(["GET", "POST", "DELETE"]), rng.choice(_UNKNOWN_PATHS), "", None),
        # past Go's 1 MiB header limit: the HTTP parser rejects it, the connection layer says 431
        lambda: ("oversized request line", "GET",
                 f"{CM_PATH}?labelSelector={'a' * ((1 << 20) + rng.randrange(1, 4096))}", "", None),
    ]
    return [rng.choice(makers)() for _ in range(count)]


async def bad_input_phase(url: str, count: int, rng: random.Random) -> dict[str, Any]:
    target = "robustness-target"
    by_kind: dict[str, Counter] = {}
    accepted: list[str] = []
    async with aiohttp.ClientSession() as session:
        status, created, _ = await call(session, "POST", url + CM_PATH, body=configmap(target, 1))
        assert status == 201, (status, created)
        for kind, method, path, ctype, body in bad_requests(count, rng, target):
            counts = by_kind.setdefault(kind, Counter())
            try:
                status, parsed, _ = await call(session, method, url + path, raw=body,
                                               content_type=ctype or "application/json")
            except aiohttp.ClientError as exc:
                counts["connection_error"] += 1
                counts[f"error {type(exc).__name__}"] += 1
                continue
            counts["tried"] += 1
            if 400 <= status < 500 and is_status(parsed):
                counts["rejected_correctly"] += 1
            elif status >= 500:
                counts["5xx"] += 1
            elif status < 400:
                counts["accepted"] += 1
                accepted.append(f"{method} {path} {ctype} {(body or b'')[:60]!r} -> {status}")
            else:
                counts["4xx_not_status"] += 1
        _, after, _ = await call(session, "GET", f"{url}{CM_PATH}/{target}")
        unchanged = (after or {}).get("metadata", {}).get("resourceVersion") == \
            created["metadata"]["resourceVersion"] and after.get("data") == created.get("data")
    total = sum((c for c in by_kind.values()), Counter())
    return {"tried": total["tried"], "rejected_correctly": total["rejected_correctly"],
            "5xx": total["5xx"], "accepted": total["accepted"], "4xx_not_status": total["4xx_not_status"],
            "connection_errors": total["connection_error"], "target_unchanged": unchanged,
            "accepted_examples": sorted(set(accepted))[:20],
            "by_kind": {k: dict(v) for k, v in by_kind.items()}}


# ------------------------------------------------------------------------------ overload


async def overload_burst(url: str, concurrent: int, prefix: str = "burst") -> dict[str, Any]:
    """`concurrent` creates at once, then `concurrent` sequential requests (each must succeed)."""
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(i: int) -> tuple[int, Any, dict[str, str]]:
            return await call(session, "POST", url + CM_PATH, body=configmap(f"{prefix}-{i}", i))

        answers = await asyncio.gather(*(one(i) for i in range(concurrent)), return_exceptions=True)
        statuses: Counter = Counter()
        retry_after_ok = True
        for answer in answers:
            if isinstance(answer, BaseException):
                statuses["connection_error"] += 1
                continue
            status, body, headers = answer
            statuses[status] += 1
            if status == 429:
                retry_after_ok &= (headers.get("Retry-After", "").isdigit() and is_status(body)
                                   and body.get("reason") == "TooManyRequests")
        later_failures = 0
        for i in range(min(concurrent, 50)):
            status, _, _ = await call(session, "GET", f"{url}{CM_PATH}?limit=1")
            status2, _, _ = await call(session, "POST", url + CM_PATH, body=configmap(f"{prefix}-after-{i}", i))
            later_failures += status != 200 or status2 != 201
    return {"tried": concurrent, "429": statuses[429], "5xx": sum(n for s, n in statuses.items()
                                                                 if isinstance(s, int) and s >= 500),
            "ok": statuses[201], "connection_errors": statuses["connection_error"],
            "retry_after_ok": retry_after_ok, "later_failures": later_failures,
            "statuses": {str(k): v for k, v in statuses.items()}}


# ------------------------------------------------------------------------------ kill cycles


@dataclass
class Ledger:
    """What the clients were told. `expected[name]` is the latest acknowledged value (None =
    acknowledged deleted); names whose last operation got no answer are `uncertain` until the
    next check reads what the store decided."""

    expected: dict[str, int | None] = field(default_factory=dict)
    uncertain: set[str] = field(default_factory=set)
    acknowledged: int = 0
    unanswered: int = 0


async def _load_worker(session: aiohttp.ClientSession, url: str, names: list[str], ledger: Ledger,
                       rng: random.Random, stop: asyncio.Event) -> None:
    counter = 0
    while not stop.is_set():
        name = rng.choice(names)
        if name in ledger.uncertain:
            continue
        current = ledger.expected.get(name)
        counter += 1
        value = counter
        if current is None:
            op, method, path, body, ctype, want = "create", "POST", url + CM_PATH, configmap(name, value), \
                "application/json", 201
        elif rng.random() < 0.25:
            op, method, path, body, ctype, want = "delete", "DELETE", f"{url}{CM_PATH}/{name}", None, \
                "application/json", 200
        else:
            op, method, path, body, ctype, want = "update", "PATCH", f"{url}{CM_PATH}/{name}", \
                {"data": {"v": str(value)}}, "application/merge-patch+json", 200
        ledger.uncertain.add(name)
        try:
            status, answer, _ = await call(session, method, path, body=body, content_type=ctype)
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
            ledger.unanswered += 1
            return  # the server is gone: the name stays uncertain
        if status != want:
            raise AssertionError(f"{op} {name}: unexpected {status}: {answer}")
        ledger.uncertain.discard(name)
        ledger.acknowledged += 1
        ledger.expected[name] = None if op == "delete" else value


async def check_ledger(url: str, ledger: Ledger) -> list[str]:
    """Compare the store with the ledger; returns the lost/wrong names (empty: all good), and
    settles every uncertain name to what the store holds."""
    async with aiohttp.ClientSession() as session:
        status, body, _ = await call(session, "GET", url + CM_PATH)
        assert status == 200, (status, body)
    actual = {item["metadata"]["name"]: int(item["data"]["v"]) for item in body["items"]
              if item["metadata"]["name"].startswith("kc-")}
    problems = []
    for name, value in ledger.expected.items():
        if name in ledger.uncertain:
            continue
        if actual.get(name) != value:
            problems.append(f"{name}: acknowledged {value!r}, store has {actual.get(name)!r}")
    for name in ledger.uncertain:
        ledger.expected[name] = actual.get(name)
    ledger.uncertain.clear()
    return problems


async def kill_cycles(data_dir: Path, cycles: int, *, seed: int = 6, workers: int = 8,
                      names: int = 40, load_seconds: tuple[float, float] = (0.3, 0.8)) -> dict[str, Any]:
    """Mixed create/update/delete load, SIGKILL mid-load, restart, check — `cycles` times."""
    rng = random.Random(seed)
    ledger = Ledger()
    all_names = [f"kc-{i:03d}" for i in range(names)]
    lost: list[str] = []
    crashes = 0
    per_cycle = []
    for cycle in range(cycles):
        server = Server(data_dir)
        await server.start()
        try:
            lost += [f"cycle {cycle} (after restart): {p}" for p in await check_ledger(server.url, ledger)]
            stop = asyncio.Event()
            before = ledger.acknowledged
            async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
                share = [all_names[w::workers] for w in range(workers)]
                tasks = [asyncio.create_task(_load_worker(session, server.url, share[w], ledger,
                                                          random.Random(rng.random()), stop))
                         for w in range(workers)]
                await asyncio.sleep(rng.uniform(*load_seconds))
                crashes += not server.alive()
                server.kill()  # SIGKILL while requests are in flight
                stop.set()
                await asyncio.gather(*tasks)
            per_cycle.append(ledger.acknowledged - before)
        finally:
            server.kill()
    server = Server(data_dir)
    await server.start()
    try:
        lost += [f"final check: {p}" for p in await check_ledger(server.url, ledger)]
        crashes += not server.alive()
        server.stop()
    finally:
        server.kill()
    return {"cycles": cycles, "acknowledged_writes": ledger.acknowledged, "unanswered": ledger.unanswered,
            "acknowledged_per_cycle": per_cycle, "lost": len(lost), "lost_detail": lost[:20],
            "crashes": crashes}


# ------------------------------------------------------------------------------ hostile bodies

HEALTHZ_EVERY = 0.020  # s between /healthz probes
HEALTHZ_TARGET_MS = 50.0  # worst /healthz latency while hostile requests run
HOSTILE_TARGET_MS = 100.0  # each hostile request answered (4xx, or upstream's 2xx) within


class HealthProber:
    """Probes /healthz every HEALTHZ_EVERY from its own thread over one kept-alive connection:
    every component of a process shares one event loop, so the probe's latency is how long any
    watch, heartbeat or lease renewal would have waited. Samples are (start, end) monotonic
    times; `worst_during(a, b)` is the slowest probe that overlapped [a, b]."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.samples: list[tuple[float, float, int]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="healthz-prober", daemon=True)

    def __enter__(self) -> "HealthProber":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(15)

    def _run(self) -> None:
        import http.client
        from urllib.parse import urlsplit

        parts = urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
        while not self._stop.is_set():
            start = time.monotonic()
            try:
                status = common.http_call(self.url, "GET", "/healthz", connection=conn)[0]
            except (OSError, http.client.HTTPException):
                status = 0
                conn.close()
                conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=10)
            end = time.monotonic()
            self.samples.append((start, end, status))
            self._stop.wait(max(0.0, HEALTHZ_EVERY - (end - start)))
        conn.close()

    def worst_during(self, start: float, end: float) -> float:
        """Seconds of the slowest probe overlapping [start, end + two probe periods]: the probes
        in flight while the request ran, and the next one (which work the request left behind
        on the loop, or in threads holding the GIL, would slow)."""
        end += 2 * HEALTHZ_EVERY
        samples = list(self.samples)
        during = [e - s for s, e, _ in samples if s <= end and e >= start]
        if not during:  # no probe then (one was reconnecting): the first one after counts
            during = [e - s for s, e, _ in samples if s >= start][:1]
        return max(during, default=math.nan)

    def worst(self) -> float:
        return max((e - s for s, e, _ in self.samples), default=math.nan)

    def failures(self) -> int:
        return sum(status != 200 for _, _, status in self.samples)


def _answer_reason(status: int, data: bytes) -> str:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return "(not JSON)"
    if is_status(doc):
        return str(doc.get("reason", ""))
    return str(doc.get("kind", "")) if isinstance(doc, dict) else ""


def hostile_phase(url: str) -> dict[str, Any]:
    """Every case of bench/hostile.py (issue 14's reports and the fuzzer's worst shapes) sent
    once, one after another, while /healthz is probed from another connection. Blocking: run it
    in a thread (the prober is a second thread; neither shares the bench's event loop)."""
    target = "hostile-target"
    cm = hostile.splice(hostile.object_template("ConfigMap", name=target), '"x"')
    status, _, data = common.http_call(url, "POST", CM_PATH, cm, {"Content-Type": hostile.JSON})
    if status != 201:
        raise RuntimeError(f"could not create {target}: {status} {data[:300]!r}")
    created = orjson.loads(data)
    cases = hostile.issue_cases(target) + hostile.heavy_cases(target)  # built before the clock runs
    rows = []
    with HealthProber(url) as prober:
        time.sleep(0.2)  # a few quiet probes first: the baseline
        for case in cases:
            headers = {"Content-Type": case.content_type, **dict(case.headers)}
            start = time.monotonic()
            try:
                status, _, data = common.http_call(url, case.method, f"/api/v1/namespaces/{NAMESPACE}/{case.path}",
                                                   case.body, headers, timeout=30)
                reason = _answer_reason(status, data)
            except (OSError, TimeoutError) as exc:
                status, data, reason = 0, b"", f"no answer ({type(exc).__name__})"
            end = time.monotonic()
            time.sleep(3 * HEALTHZ_EVERY)  # the probe in flight finishes and is counted
            expected = case.expect
            ok_status = status == expected if expected is not None else 400 <= status < 500
            latency_ms = (end - start) * 1e3
            healthz_ms = prober.worst_during(start, end) * 1e3
            rows.append({"case": case.name, "bytes": len(case.body), "status": status, "reason": reason,
                         "expected": expected if expected is not None else "4xx",
                         "latency_ms": latency_ms, "worst_healthz_ms": healthz_ms,
                         "ok": ok_status and latency_ms <= HOSTILE_TARGET_MS and healthz_ms <= HEALTHZ_TARGET_MS})
            if 200 <= status < 300 and case.method == "POST":
                name = orjson.loads(data).get("metadata", {}).get("name")
                if name:
                    common.http_call(url, "DELETE", f"{CM_PATH}/{name}")
        worst = prober.worst() * 1e3
        failed_probes = prober.failures()
        probes = len(prober.samples)
    status, _, data = common.http_call(url, "GET", f"{CM_PATH}/{target}")
    unchanged = status == 200 and orjson.loads(data) == created  # every patch of it was refused
    return {"cases": rows, "worst_healthz_ms": worst, "healthz_probes": probes, "healthz_failures": failed_probes,
            "target_unchanged": unchanged,
            "targets": {"worst_healthz_ms": HEALTHZ_TARGET_MS, "hostile_answer_ms": HOSTILE_TARGET_MS}}


# ------------------------------------------------------------------------------ main


PHASES = ("bad", "overload", "kill", "hostile")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    phases = set(args.phases.split(","))
    result: dict[str, Any] = {}
    crashed = False
    with tempfile.TemporaryDirectory(prefix="robustness-") as tmp:
        if phases & {"bad", "overload"}:
            server = Server(Path(tmp) / "data", ("--max-requests-inflight", "4",
                                                 "--max-mutating-requests-inflight", "2"))
            await server.start()
            try:
                if "bad" in phases:
                    result["bad_input"] = await bad_input_phase(server.url, args.bad_requests, rng)
                if "overload" in phases:
                    result["overload"] = await overload_burst(server.url, args.concurrent)
                crashed |= not server.alive()
            finally:
                result["clean_exit_code"] = server.stop()
        if "kill" in phases:
            result["kill"] = await kill_cycles(Path(tmp) / "kill-data", args.cycles, seed=args.seed)
            crashed |= bool(result["kill"]["crashes"])
        if "hostile" in phases:
            if args.hostile_url:  # e.g. a running `minikube-py start` (http://127.0.0.1:8080)
                result["hostile"] = await asyncio.to_thread(hostile_phase, args.hostile_url)
            else:
                server = Server(Path(tmp) / "hostile-data")
                await server.start()
                try:
                    result["hostile"] = await asyncio.to_thread(hostile_phase, server.url)
                    crashed |= not server.alive()
                finally:
                    server.stop()
    result["crashes"] = int(crashed)
    return result


def print_hostile(hostile_result: dict[str, Any]) -> None:
    targets = hostile_result["targets"]
    rows = [[r["case"], common.fmt(r["bytes"]), f"{r['status']} {r['reason']}", str(r["expected"]),
             common.fmt(r["latency_ms"]), common.fmt(r["worst_healthz_ms"]), "ok" if r["ok"] else "MISSED"]
            for r in hostile_result["cases"]]
    print(common.render_table(["hostile request", "bytes", "answer", "expected",
                               f"latency ms (target <= {targets['hostile_answer_ms']:.0f})",
                               f"worst /healthz ms during (target <= {targets['worst_healthz_ms']:.0f})",
                               "verdict"], rows))
    missed = sum(not r["ok"] for r in hostile_result["cases"])
    print(f"\nworst /healthz over the phase: {common.fmt(hostile_result['worst_healthz_ms'])} ms "
          f"(target <= {targets['worst_healthz_ms']:.0f} ms; {hostile_result['healthz_probes']} probes, "
          f"{hostile_result['healthz_failures']} failed)   cases missing a target: {missed} of "
          f"{len(hostile_result['cases'])}   target object unchanged: "
          f"{common.fmt(hostile_result['target_unchanged'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cycles", type=int, default=5, help="kill -9 cycles")
    parser.add_argument("--bad-requests", type=int, default=300)
    parser.add_argument("--concurrent", type=int, default=200, help="concurrent creates in the burst")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("ROBUSTNESS_SEED", "6")))
    parser.add_argument("--phases", default=",".join(PHASES),
                        help=f"comma-separated subset of {','.join(PHASES)} (default: all)")
    parser.add_argument("--hostile-url", default="",
                        help="send the hostile phase to this running server (e.g. `minikube-py start`'s "
                             "http://127.0.0.1:8080) instead of a fresh `minikube-py apiserver`")
    parser.add_argument("--json", default="", help=f"results file (default {RESULTS}, or "
                                                   "robustness-<phases>.json for a subset)")
    args = parser.parse_args()
    unknown = set(args.phases.split(",")) - set(PHASES)
    if unknown:
        parser.error(f"unknown phases: {', '.join(sorted(unknown))}")
    if not args.json:
        subset = args.phases.split(",")
        args.json = str(RESULTS if set(subset) == set(PHASES) else
                        RESULTS.with_name(f"robustness-{'-'.join(subset)}.json"))
    loop_name = common.choose_loop("asyncio")
    common.quiet_logs()
    result = asyncio.run(run(args))
    rows = []
    bad, over, kill = result.get("bad_input"), result.get("overload"), result.get("kill")
    if bad:
        rows.append(["bad input", common.fmt(bad["tried"]), common.fmt(bad["rejected_correctly"]),
                     common.fmt(bad["5xx"]),
                     f"accepted {bad['accepted']}, 4xx without Status {bad['4xx_not_status']}, "
                     f"target unchanged {common.fmt(bad['target_unchanged'])}"])
    if over:
        rows.append(["overload", common.fmt(over["tried"]), f"{over['429']} x 429", common.fmt(over["5xx"]),
                     f"{over['ok']} created, Retry-After ok {common.fmt(over['retry_after_ok'])}, "
                     f"later failures {over['later_failures']}"])
    if kill:
        rows.append(["kill -9 cycles", common.fmt(kill["acknowledged_writes"]), "-", "-",
                     f"{kill['cycles']} cycles, unanswered {kill['unanswered']}, acknowledged lost {kill['lost']}"])
    if rows:
        print(common.render_table(["phase", "requests tried", "rejected correctly", "5xx", "notes"], rows))
        five_xx = (bad or {}).get("5xx", 0) + (over or {}).get("5xx", 0)
        print(f"\ncrashes: {result['crashes']}   5xx total: {five_xx}" + (
            f"   acknowledged writes lost after {kill['cycles']} kill cycles: {kill['lost']}" if kill else ""))
        for line in (kill or {}).get("lost_detail", []):
            print("  LOST", line)
    if "hostile" in result:
        if rows:
            print()
        print_hostile(result["hostile"])
    path = common.write_json(args.json, {"machine": common.machine_facts(loop_name), "args": vars(args), **result})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
