"""Debian's etcdctl (v3 API) against our etcd server on a real socket.

Each command runs as a subprocess while the server runs on the test's event loop (so the
subprocess is awaited, never waited for in a blocking call). Skips when etcdctl is missing.
"""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

from minikube_py.storage import EmbeddedStore

ETCDCTL = shutil.which("etcdctl") or "/usr/bin/etcdctl"
pytestmark = pytest.mark.skipif(
    shutil.which("etcdctl") is None, reason="etcdctl not found: install Debian's etcd-client"
)


async def etcdctl(endpoint: str, *args: str, stdin: str | None = None, timeout: float = 10.0,
                  check: bool = True) -> str:
    proc = await asyncio.create_subprocess_exec(
        ETCDCTL, f"--endpoints={endpoint}", *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"},
    )
    out, err = await asyncio.wait_for(
        proc.communicate(stdin.encode() if stdin is not None else None), timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"etcdctl {' '.join(args)} failed ({proc.returncode}): {err.decode()}")
    return out.decode() + (err.decode() if not check else "")


async def get_json(endpoint: str, *args: str) -> dict:
    return json.loads(await etcdctl(endpoint, "get", "-w", "json", *args))


async def test_put_get_prefix_rev_limit_keys_only_and_del(served):
    ep = served.server.endpoint
    assert (await etcdctl(ep, "put", "/registry/pods/a", "one")).strip() == "OK"
    await etcdctl(ep, "put", "/registry/pods/b", "two")
    await etcdctl(ep, "put", "/registry/pods/b", "three")
    await etcdctl(ep, "put", "/registry/podsx", "outside")

    got = await get_json(ep, "/registry/pods/", "--prefix")
    assert [bytes_of(kv["key"]) for kv in got["kvs"]] == [b"/registry/pods/a", b"/registry/pods/b"]
    assert got["count"] == 2
    assert got["header"]["revision"] == await served.store.current_revision()
    b = got["kvs"][1]
    assert (b["create_revision"], b["mod_revision"], b["version"]) == (3, 4, 2)

    # a past revision sees the older value
    old = await etcdctl(ep, "get", "/registry/pods/b", "--rev=3", "--print-value-only")
    assert old.strip() == "two"
    # limit: one key and `more`
    limited = await get_json(ep, "/registry/pods/", "--prefix", "--limit=1")
    assert len(limited["kvs"]) == 1 and limited["more"] is True and limited["count"] == 2
    # keys only, descending by key
    keys = await etcdctl(ep, "get", "/registry/", "--prefix", "--keys-only", "--order=DESCEND")
    assert [line for line in keys.splitlines() if line] == [
        "/registry/podsx", "/registry/pods/b", "/registry/pods/a"]
    # range [key, range_end) and --from-key ("\0" range end)
    ranged = await etcdctl(ep, "get", "/registry/pods/a", "/registry/pods/b", "--keys-only")
    assert ranged.split() == ["/registry/pods/a"]
    from_key = await etcdctl(ep, "get", "/registry/pods/b", "--from-key", "--keys-only")
    assert from_key.split() == ["/registry/pods/b", "/registry/podsx"]

    deleted = await etcdctl(ep, "del", "/registry/pods/", "--prefix", "--prev-kv")
    assert deleted.splitlines()[0] == "2"
    assert "three" in deleted
    assert (await get_json(ep, "/registry/pods/", "--prefix")).get("count", 0) == 0


def bytes_of(b64: str) -> bytes:
    import base64

    return base64.b64decode(b64)


async def test_watch_prev_kv_from_start_revision(served):
    ep = served.server.endpoint
    start = await served.store.current_revision() + 1
    await etcdctl(ep, "put", "/w/a", "1")
    await etcdctl(ep, "put", "/w/a", "2")
    await etcdctl(ep, "del", "/w/a")
    await etcdctl(ep, "put", "/x", "not watched")
    out = await watch_until(ep, ["watch", "/w/", "--prefix", "--prev-kv", f"--rev={start}"],
                            expect_lines=12)
    # etcdctl prints an event's previous kv before its kv; a deletion's kv has no value
    assert out[:12] == ["PUT", "/w/a", "1",
                        "PUT", "/w/a", "1", "/w/a", "2",
                        "DELETE", "/w/a", "2", "/w/a"], out
    assert "/x" not in out


async def watch_until(ep: str, args: list[str], *, expect_lines: int, timeout: float = 10.0) -> list[str]:
    proc = await asyncio.create_subprocess_exec(
        ETCDCTL, f"--endpoints={ep}", *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={"ETCDCTL_API": "3"})
    lines: list[str] = []
    try:
        async with asyncio.timeout(timeout):
            while len([x for x in lines if x]) < expect_lines:
                line = await proc.stdout.readline()
                if not line:
                    break
                lines.append(line.decode().rstrip("\n"))
    finally:
        proc.kill()
        await proc.wait()
    return [x for x in lines if x]


async def test_watch_from_compacted_revision_is_cancelled(served):
    ep = served.server.endpoint
    for i in range(3):
        await etcdctl(ep, "put", "/c", str(i))
    rev = await served.store.current_revision()
    out = await etcdctl(ep, "compact", str(rev))
    assert out.strip() == f"compacted revision {rev}"
    result = await etcdctl(ep, "watch", "/c", "--rev=1", check=False, timeout=10)
    assert "etcdserver: mvcc: required revision has been compacted" in result
    # and a read below the compaction point is refused with etcd's message
    refused = await etcdctl(ep, "get", "/c", "--rev=1", check=False)
    assert "etcdserver: mvcc: required revision has been compacted" in refused


async def test_lease_grant_attach_timetolive_keepalive_revoke(served):
    ep = served.server.endpoint
    granted = await etcdctl(ep, "lease", "grant", "60")
    lease = granted.split()[1]
    assert granted.strip().endswith("granted with TTL(60s)")
    await etcdctl(ep, "put", "/l/a", "v", f"--lease={lease}")
    ttl = await etcdctl(ep, "lease", "timetolive", lease, "--keys")
    assert "granted with TTL(60s)" in ttl and "attached keys([/l/a])" in ttl
    kept = await etcdctl(ep, "lease", "keep-alive", "--once", lease)
    assert f"lease {lease} keepalived with TTL(60)" in kept
    assert lease in await etcdctl(ep, "lease", "list")
    assert (await etcdctl(ep, "lease", "revoke", lease)).strip() == f"lease {lease} revoked"
    assert (await get_json(ep, "/l/a")).get("count", 0) == 0
    gone = await etcdctl(ep, "lease", "timetolive", lease)
    assert "already expired" in gone
    missing = await etcdctl(ep, "lease", "revoke", lease, check=False)
    assert "etcdserver: requested lease not found" in missing


async def test_txn_interactive(served):
    ep = served.server.endpoint
    script = 'mod("/t") = "0"\n\nput /t created\n\nget /t\n\n'
    first = await etcdctl(ep, "txn", "-i", stdin=script)
    assert "SUCCESS" in first
    second = await etcdctl(ep, "txn", "-i", stdin=script)
    assert "FAILURE" in second and "created" in second
    # compare on value and version; both branches writing
    script = 'value("/t") = "created"\nversion("/t") = "1"\n\nput /t updated\nput /u other\n\nput /t nope\n\n'
    third = await etcdctl(ep, "txn", "-i", stdin=script)
    assert "SUCCESS" in third
    got = await get_json(ep, "/t")
    assert bytes_of(got["kvs"][0]["value"]) == b"updated"
    # both puts of one txn share one revision
    u = await get_json(ep, "/u")
    assert u["kvs"][0]["mod_revision"] == got["kvs"][0]["mod_revision"]


async def test_endpoint_status_and_member_list(served):
    ep = served.server.endpoint
    status = json.loads(await etcdctl(ep, "endpoint", "status", "-w", "json"))[0]["Status"]
    assert status["version"].startswith("3.5.")
    assert status["leader"] == status["header"]["member_id"]
    assert status["raftIndex"] == await served.store.current_revision()
    members = await etcdctl(ep, "member", "list")
    assert "started, minikube-py" in members and served.server.url in members
    health = await etcdctl(ep, "endpoint", "health", check=False)
    assert "is healthy" in health
    assert "Finished defragmenting" in await etcdctl(ep, "defrag")


async def test_embedded_writers_and_etcdctl_share_one_store(served):
    """The in-process API server writes through the Store contract; etcdctl sees it."""
    store: EmbeddedStore = served.store
    await store.create("/registry/namespaces/default", b'{"kind":"Namespace"}')
    out = await etcdctl(served.server.endpoint, "get", "/registry", "--prefix", "--keys-only")
    assert out.split() == ["/registry/namespaces/default"]


async def test_lock_and_its_waiter(served):
    """etcdctl lock (clientv3/concurrency: a lease, a Txn on create revision 0, a Range with
    sort by create revision and max_create_revision, a watch on the predecessor's delete)."""
    ep = served.server.endpoint
    holder = await asyncio.create_subprocess_exec(
        ETCDCTL, f"--endpoints={ep}", "lock", "/locks/a", stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, env={"ETCDCTL_API": "3"})
    try:
        async with asyncio.timeout(10):
            held = (await holder.stdout.readline()).decode()
        assert held.startswith("/locks/a/")
        waiter = asyncio.create_task(etcdctl(ep, "lock", "/locks/a", "echo", "second", timeout=15))
        await asyncio.sleep(1.0)
        assert not waiter.done()  # blocked behind the holder
    finally:
        holder.terminate()  # releases the lock (revokes its lease)
        await holder.wait()
    assert (await asyncio.wait_for(waiter, 15)).strip() == "second"
