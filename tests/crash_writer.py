"""Child process for the crash test: writes to an EmbeddedStore until it is SIGKILLed.

Run as `python -m tests.crash_writer DATA_DIR WRITERS`. Each writer task creates keys
/crash/w<W>/<n> (n counting on from what the store already holds) and then CAS-updates its
counter key /crash/counter/w<W> to n. After each acknowledged write it prints one line,
`ACK <revision> <key> <n>`, and flushes, so the parent knows exactly which writes were
acknowledged before the kill. Values carry a checksum so a half-written value is detectable.
"""

from __future__ import annotations

import asyncio
import hashlib
import sys

import orjson

from minikube_py.storage import EmbeddedStore, KeyNotFoundError


def make_value(key: str, n: int) -> bytes:
    pad = "x" * (64 + (n * 37) % 900)
    digest = hashlib.sha256(f"{key}|{n}|{pad}".encode()).hexdigest()
    return orjson.dumps({"key": key, "n": n, "pad": pad, "sha": digest})


def value_is_intact(key: str, value: bytes) -> bool:
    body = orjson.loads(value)
    expected = hashlib.sha256(f"{body['key']}|{body['n']}|{body['pad']}".encode()).hexdigest()
    return body["key"] == key and body["sha"] == expected


async def writer(store: EmbeddedStore, w: int) -> None:
    prefix = f"/crash/w{w}/"
    n = len((await store.range(prefix)).kvs)
    counter = f"/crash/counter/w{w}"
    try:
        current = (await store.get(counter)).mod_revision
    except KeyNotFoundError:
        current = (await store.create(counter, b"0")).mod_revision
    while True:
        n += 1
        key = f"{prefix}{n:08d}"
        kv = await store.create(key, make_value(key, n))
        print(f"ACK {kv.mod_revision} {key} {n}", flush=True)
        kv = await store.update(counter, str(n).encode(), expected_mod_revision=current)
        current = kv.mod_revision
        print(f"ACK {kv.mod_revision} {counter} {n}", flush=True)


async def main(data_dir: str, writers: int) -> None:
    store = await EmbeddedStore.open(data_dir, snapshot_count=300)
    print(f"READY {await store.current_revision()}", flush=True)
    await asyncio.gather(*(writer(store, w) for w in range(writers)))


if __name__ == "__main__":
    import structlog

    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
