"""Crash test: SIGKILL a writing process at random moments; after every reopen each
acknowledged write is present, nothing unacknowledged is half-present, and revisions keep
increasing."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minikube_py.storage import EmbeddedStore
from tests.crash_writer import value_is_intact

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 8
CYCLES = 6


def run_until_killed(data_dir: Path, seconds: float) -> list[tuple[int, str, int]]:
    """Start the writer child, SIGKILL it after `seconds` of writing, return its ACK lines."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.crash_writer", str(data_dir), str(WRITERS)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        ready = child.stdout.readline()
        assert ready.startswith("READY"), f"writer did not start: {ready!r}"
        time.sleep(seconds)
        child.send_signal(signal.SIGKILL)
        output = child.stdout.read()
    finally:
        child.kill()
        child.wait()
    acks = []
    for line in output.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "ACK":
            acks.append((int(parts[1]), parts[2], int(parts[3])))
    return acks


@pytest.mark.slow
async def test_sigkill_never_loses_acknowledged_writes(tmp_path: Path):
    rng = random.Random(int(os.environ.get("CRASH_SEED", "20261121")))
    last_revision = 1
    total_acks = 0
    for cycle in range(CYCLES):
        acks = run_until_killed(tmp_path, rng.uniform(0.2, 0.8))
        assert acks, f"cycle {cycle}: the writer acknowledged nothing"
        total_acks += len(acks)
        store = await EmbeddedStore.open(tmp_path)
        try:
            revision = await store.current_revision()
            max_acked = max(rev for rev, _, _ in acks)
            assert revision >= max_acked, "an acknowledged revision was lost"
            assert revision > last_revision, "revisions must keep increasing across crashes"
            last_revision = revision

            everything = {kv.key: kv for kv in (await store.range("/crash/")).kvs}
            last_acked_n: dict[str, int] = {}
            for rev, key, n in acks:
                assert key in everything, f"cycle {cycle}: acknowledged {key} (rev {rev}) is missing"
                if "/counter/" in key:
                    last_acked_n[key] = max(last_acked_n.get(key, 0), n)
                else:
                    assert everything[key].mod_revision == rev
            for key, kv in everything.items():
                if "/counter/" in key:
                    # The counter may be ahead of the last ACK we read (acknowledged but the
                    # line not yet printed) but never behind it.
                    assert int(kv.value) >= last_acked_n.get(key, 0), key
                else:
                    assert value_is_intact(key, kv.value), f"{key} is half-written"
            for w in range(WRITERS):
                ns = sorted(int(k.rsplit("/", 1)[1]) for k in everything if k.startswith(f"/crash/w{w}/"))
                assert ns == list(range(1, len(ns) + 1)), f"writer {w} has gaps: {ns[-5:]}"
        finally:
            await store.close()
    assert total_acks > 100
