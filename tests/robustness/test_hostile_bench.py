"""The hostile phase of bench/robustness.py measures what it claims: its /healthz prober sees a
held event loop and charges it to the request that ran then, and the phase reports every case
of bench/hostile.py with an answer. A benchmark whose instrument cannot see a stall would
print "ok" for ever; these tests would fail then.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Iterator

import pytest

from bench import hostile
from bench.robustness import HEALTHZ_EVERY, HealthProber, hostile_phase
from tests.apiserver_thread import ServerThread


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerThread]:
    srv = ServerThread(tmp_path / "data").start()
    try:
        yield srv
    finally:
        srv.stop()


def test_prober_charges_a_held_loop_to_the_window_it_happened_in(server: ServerThread) -> None:
    with HealthProber(server.url) as prober:
        time.sleep(5 * HEALTHZ_EVERY)
        quiet_start = time.monotonic()
        time.sleep(5 * HEALTHZ_EVERY)
        quiet_end = time.monotonic()
        time.sleep(5 * HEALTHZ_EVERY)  # past the quiet window's tail (the probe after it counts)
        start = time.monotonic()
        server.loop.call_soon_threadsafe(time.sleep, 0.3)  # the loop is held for 300 ms
        time.sleep(0.3)
        end = time.monotonic()
        time.sleep(5 * HEALTHZ_EVERY)
    assert prober.worst_during(start, end) >= 0.2
    assert prober.worst_during(quiet_start, quiet_end) < 0.2
    assert prober.worst() >= 0.2 and prober.failures() == 0


@pytest.mark.slow
def test_hostile_phase_reports_every_case(server: ServerThread) -> None:
    result = hostile_phase(server.url)
    names = [row["case"] for row in result["cases"]]
    assert names == [c.name for c in hostile.issue_cases("t") + hostile.heavy_cases("t")]
    assert all(row["status"] for row in result["cases"]), "a case got no answer"
    assert result["healthz_probes"] > len(names)
    assert result["targets"] == {"worst_healthz_ms": 50.0, "hostile_answer_ms": 100.0}
