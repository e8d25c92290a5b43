"""The console's journey and store routes over real sockets on a started cluster: a pod's
hops arriving live on the SSE stream up to Running, the journey's first answer, the
scheduler's decision table, the store tree down to the pod's key, the key's value/diff and
history, compaction; and the 4xx Statuses of bad input (unknown pod -> 404, bad revision ->
400)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from minikube_py.cli.start import running_cluster
from minikube_py.client import Client, InProcessTransport
from minikube_py.client.resources import PODS
from tests.integration.test_trace import (
    default_account,
    pod,
    read_events,
    start_options,
)


async def test_journey_and_store_routes(tmp_path: Path) -> None:
    async with running_cluster(start_options(tmp_path, "--log-level", "warning")) as cluster:
        assert cluster.console_url is not None
        base = cluster.console_url.rstrip("/")
        client = Client(InProcessTransport(cluster.runner.app, user_agent="kubectl/v1.31.0"))
        await default_account(client)
        async with aiohttp.ClientSession() as http:
            # the live stream first: while it is open the ring records
            stream = await http.get(f"{base}/console-api/journey/default/web/stream")
            assert stream.status == 200
            assert stream.headers["Content-Type"] == "text/event-stream"
            await asyncio.sleep(0.05)
            await client.create(PODS, pod("web"), "default")
            live = await read_events(stream, lambda hop: hop["label"] == "running")
            stream.close()
            labels = [h["label"] for h in live]
            assert labels[0] == "created" and labels[-1] == "running"
            assert {"bound", "scheduled"} <= set(labels)
            assert {"store", "apiserver", "scheduler", "kubelet"} <= {h["lane"] for h in live}

            async with http.get(f"{base}/console-api/journey/default/web") as resp:
                assert resp.status == 200
                body = await resp.json()
            assert body["pod"]["phase"] == "Running" and body["pod"]["node"]
            assert body["key"] == "/registry/pods/default/web"
            assert [h["seq"] for h in body["hops"]][:len(live)] == [h["seq"] for h in live]
            assert body["history"][-1]["type"] == "PUT" and body["history"][-1]["version"] == 1
            store_hop = next(h for h in body["hops"] if h["label"] == "stored")
            decision_hop = next(h for h in body["hops"] if h["label"] == "scheduled")

            link = store_hop["link"]["store"]
            async with http.get(f"{base}/console-api/store/key",
                                params={"key": link["key"],
                                        "revision": str(link["revision"])}) as resp:
                assert resp.status == 200
                value = await resp.json()
            assert value["current"]["mod_revision"] == link["revision"]
            assert value["previous"]["mod_revision"] == link["prev_revision"]
            assert any(c["path"] == ".spec.nodeName" for c in value["diff"]["changes"])

            async with http.get(f"{base}/console-api/journey/default/web/decision",
                                params={"seq": str(decision_hop["link"]["decision"])}) as resp:
                assert resp.status == 200
                table = await resp.json()
            assert table["algorithm"] == "framework" and table["result"] == "scheduled"
            assert table["nodes"][0]["chosen"] and table["nodes"][0]["name"] == table["node"]
            assert table["nodes"][0]["name"] == body["pod"]["node"]
            assert len(table["nodes"]) == 2 and table["scorers"]
            async with http.get(f"{base}/console-api/journey/default/web/decision") as resp:
                assert (await resp.json())["node"] == table["node"]

            # the store browser down to the pod's key
            async with http.get(f"{base}/console-api/store/tree") as resp:
                top = await resp.json()
            assert any(c["name"] == "pods/" and c["count"] >= 1 for c in top["children"])
            async with http.get(f"{base}/console-api/store/tree",
                                params={"prefix": "/registry/pods/default/"}) as resp:
                pods = await resp.json()
            assert [c["key"] for c in pods["children"]] == ["/registry/pods/default/web"]
            async with http.get(f"{base}/console-api/store/history",
                                params={"key": "/registry/pods/default/web"}) as resp:
                history = await resp.json()
            assert [r["revision"] for r in history["rows"]] == \
                [h["revision"] for h in body["history"]]

            # bad input: Statuses with the right codes
            async with http.get(f"{base}/console-api/journey/default/nope") as resp:
                assert resp.status == 404
                status = await resp.json()
            assert status["kind"] == "Status" and status["message"] == 'pods "nope" not found'
            for params in ({"key": "/registry/pods/default/web", "revision": "abc"},
                           {"key": "/registry/pods/default/web", "revision": "-3"},
                           {"key": "no-slash"}, {}):
                async with http.get(f"{base}/console-api/store/key", params=params) as resp:
                    assert resp.status == 400, params
                    assert (await resp.json())["reason"] == "BadRequest"
            async with http.get(f"{base}/console-api/store/key",
                                params={"key": "/registry/pods/default/none"}) as resp:
                assert resp.status == 404
            async with http.get(f"{base}/console-api/journey/default/web/decision",
                                params={"seq": "x"}) as resp:
                assert resp.status == 400
            for params in ({"since": "-1"}, {"start": "soon"}):
                async with http.get(f"{base}/console-api/journey/default/web/stream",
                                    params=params) as resp:
                    assert resp.status == 400, params
            async with http.get(f"{base}/console-api/store/tree",
                                params={"limit": "100000"}) as resp:
                assert resp.status == 400
            async with http.post(f"{base}/console-api/store/compact",
                                 json={"revision": "x"}) as resp:
                assert resp.status == 400

            # compact now: the old revision of the pod's key is gone (410)
            async with http.post(f"{base}/console-api/store/compact", json={}) as resp:
                assert resp.status == 200
                compacted = await resp.json()
            assert compacted["compact_revision"] == compacted["compacted"] > link["revision"]
            async with http.get(f"{base}/console-api/store/key",
                                params={"key": link["key"],
                                        "revision": str(link["revision"])}) as resp:
                assert resp.status == 410


async def test_decision_table_of_the_v1_algorithm(tmp_path: Path) -> None:
    """With --algorithm-provider the v1.x predicates and priorities schedule: the table has a
    column per priority (score x weight) and no framework profile."""
    options = start_options(tmp_path, "--log-level", "warning",
                            "--algorithm-provider", "DefaultProvider")
    async with running_cluster(options) as cluster:
        assert cluster.console_url is not None
        base = cluster.console_url.rstrip("/")
        client = Client(InProcessTransport(cluster.runner.app, user_agent="kubectl/v1.31.0"))
        await default_account(client)
        await client.create(PODS, pod("v1"), "default")
        async with aiohttp.ClientSession() as http:
            async with asyncio.timeout(20):
                while True:
                    async with http.get(f"{base}/console-api/journey/default/v1/decision") as resp:
                        if resp.status == 200:
                            table = await resp.json()
                            break
                        assert resp.status == 404
                    await asyncio.sleep(0.05)
            # created while nobody watched the ring: the journey still has its state and its
            # key's store history
            async with asyncio.timeout(20):
                while True:
                    async with http.get(f"{base}/console-api/journey/default/v1") as resp:
                        assert resp.status == 200
                        body = await resp.json()
                    if body["pod"]["phase"] == "Running":
                        break
                    await asyncio.sleep(0.05)
        assert body["key"] == "/registry/pods/default/v1"
        assert [row["version"] for row in body["history"]][-2:] == [2, 1]
        assert table["algorithm"] == "v1" and table["profile"] == ""
        names = {s["name"] for s in table["scorers"]}
        assert "LeastRequestedPriority" in names
        chosen = table["nodes"][0]
        assert chosen["chosen"] and chosen["name"] == table["node"]
        assert sum(p["weighted"] for p in chosen["scores"].values()) == chosen["total"]
