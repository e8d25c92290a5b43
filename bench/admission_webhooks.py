"""What one mutating plus one validating admission webhook add to a CREATE.

Real API servers (tests/apiserver_thread.py: each its own thread and loop, embedded store, the
1.31 default admission chain) and a real HTTPS webhook server (tests/webhook_server.py: its own
thread and loop, TLS with its own CA) answer sequential ConfigMap CREATEs from an aiohttp client
in the main thread. Three cases, their requests interleaved one by one (so a load spike on a
shared machine hits all three alike), each the median and p90 over N creates after a warm-up:

  none       a server with no webhook configuration at all
  unmatched  a second server with both configurations installed, creating a ConfigMap their
             objectSelector excludes (the plugins run, match rules, call nothing)
  matched    the second server, a ConfigMap both webhooks are called for: the mutating one
             answers a one-operation JSONPatch (adds a label), the validating one allows

Besides the round trip, the time spent inside the two plugins' `admit` is measured on the
server (the webhook calls, TLS included, plus matching and patching).

    /work/main/.venv-test/bin/python -m bench.admission_webhooks [--n 200]

All threads share one machine (and one GIL): compare the cases, not the absolute figures.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import logging
import statistics
import tempfile
import time
from pathlib import Path

import aiohttp
import orjson

from minikube_py.apiserver.admission import PLUGINS
from minikube_py.apiserver.admission.order import enabled
from tests.apiserver_thread import ServerThread
from tests.webhook_server import WebhookServer

GROUP = "/apis/admissionregistration.k8s.io/v1"
PATCH = base64.b64encode(orjson.dumps([{"op": "add", "path": "/metadata/labels/hooked",
                                        "value": "yes"}])).decode()


def _allow(body: dict, mutate: bool) -> dict:
    response = {"uid": body["request"]["uid"], "allowed": True}
    if mutate:
        response.update(patchType="JSONPatch", patch=PATCH)
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}


def _configs(hook: WebhookServer) -> list[tuple[str, dict]]:
    def one(kind: str, name: str, path: str) -> dict:
        return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": name},
                "webhooks": [{"name": f"{name}.example.com", "sideEffects": "None",
                              "admissionReviewVersions": ["v1"],
                              "clientConfig": {"url": hook.url + path, "caBundle": hook.ca_bundle},
                              "objectSelector": {"matchLabels": {"hook": "yes"}},
                              "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                         "apiVersions": ["v1"], "resources": ["configmaps"]}]}]}
    return [(f"{GROUP}/mutatingwebhookconfigurations",
             one("MutatingWebhookConfiguration", "labeler", "/mutate")),
            (f"{GROUP}/validatingwebhookconfigurations",
             one("ValidatingWebhookConfiguration", "checker", "/validate"))]


async def _create(session: aiohttp.ClientSession, url: str, name: str, hook: str) -> float:
    body = orjson.dumps({"metadata": {"name": name, "labels": {"hook": hook}},
                         "data": {"k": "v"}})
    start = time.perf_counter()
    async with session.post(f"{url}/api/v1/namespaces/default/configmaps", data=body,
                            headers={"Content-Type": "application/json"}) as resp:
        await resp.read()
        assert resp.status == 201, resp.status
    return time.perf_counter() - start


def _timed_plugins(server: ServerThread) -> list[float]:
    """Wrap the webhook plugins' admit to record the time each request spends in them."""
    spent: list[float] = []
    for plugin in server.server.admission.plugins:
        if plugin.name in ("MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"):
            def wrap(admit):
                async def timed(attrs):
                    start = time.perf_counter()
                    try:
                        await admit(attrs)
                    finally:
                        spent.append(time.perf_counter() - start)
                return timed
            plugin.admit = wrap(plugin.admit)
    return spent


async def _install(session: aiohttp.ClientSession, server: ServerThread,
                   configs: list[tuple[str, dict]]) -> None:
    for path, config in configs:
        async with session.post(server.url + path, data=orjson.dumps(config),
                                headers={"Content-Type": "application/json"}) as resp:
            assert resp.status == 201, await resp.text()
    await asyncio.sleep(0.5)  # the plugins' watch delivers the configurations


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(ordered) * 1000, 4),
            "p90_ms": round(ordered[int(len(ordered) * 0.9)] * 1000, 4)}


async def main(n: int, warmup: int = 20) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-webhooks-"))
    plain = ServerThread(tmp / "plain", admission_control=enabled(PLUGINS)).start()
    hooked = ServerThread(tmp / "hooked", admission_control=enabled(PLUGINS)).start()
    hook = WebhookServer(tmp / "certs").start()
    hook.json("/mutate", lambda body: _allow(body, True))
    hook.json("/validate", lambda body: _allow(body, False))
    times: dict[str, list[float]] = {"none": [], "unmatched": [], "matched": []}
    try:
        async with aiohttp.ClientSession() as session:
            await _install(session, hooked, _configs(hook))
            spent = {"none": _timed_plugins(plain), "hooked": _timed_plugins(hooked)}
            for i in range(n + warmup):
                rounds = {"none": await _create(session, plain.url, f"c{i}", "no"),
                          "unmatched": await _create(session, hooked.url, f"u{i}", "no"),
                          "matched": await _create(session, hooked.url, f"m{i}", "yes")}
                if i >= warmup:
                    for case, seconds in rounds.items():
                        times[case].append(seconds)
            assert len(hook.requests) == 2 * (n + warmup), len(hook.requests)
    finally:
        hook.stop()
        hooked.stop()
        plain.stop()
    results: dict = {case: _summary(values) for case, values in times.items()}
    # per request: the mutating and the validating plugin's time, summed
    in_plugins = spent["hooked"][4 * warmup:]  # 2 requests a round, 2 plugins each
    pairs = [a + b for a, b in zip(in_plugins[::2], in_plugins[1::2])]
    results["in_plugins_matched"] = _summary(pairs[1::2])
    results["in_plugins_unmatched"] = _summary(pairs[0::2])
    none_pairs = spent["none"][2 * warmup:]
    results["in_plugins_none"] = _summary([a + b for a, b in zip(none_pairs[::2],
                                                                   none_pairs[1::2])])
    results["added_median_ms"] = round(results["matched"]["median_ms"]
                                       - results["none"]["median_ms"], 3)
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    logging.disable(logging.INFO)
    import structlog
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    print(orjson.dumps(asyncio.run(main(args.n)), option=orjson.OPT_INDENT_2).decode())
