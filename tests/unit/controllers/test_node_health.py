"""The node lifecycle controller's judgement (upstream nodecontroller_test cases) and its
rate-limited eviction queue, on a fake clock."""

from __future__ import annotations

from minikube_py.api import meta
from minikube_py.controllers.node_health import (
    NEVER_MESSAGE,
    NEVER_REASON,
    STOPPED_MESSAGE,
    STOPPED_REASON,
    Eviction,
    NodeHealth,
    after_marked_unknown,
    conditions_unknown,
    eviction_decision,
    grace_period,
    observe,
    stale,
)
from minikube_py.controllers.rate_limited_queue import RateLimitedTimedQueue, TokenBucket

CREATED = "2024-01-01T00:00:00Z"


def node(*conditions: dict) -> dict:
    return {"metadata": {"name": "n", "creationTimestamp": CREATED},
            "status": {"conditions": list(conditions)}}


def ready(status: str = "True", beat: str = "2024-01-01T00:01:00Z",
          transition: str = "2024-01-01T00:00:30Z") -> dict:
    return {"type": "Ready", "status": status, "lastHeartbeatTime": beat,
            "lastTransitionTime": transition}


def test_a_node_that_never_posted_is_judged_from_its_creation():
    health = observe(None, node(), now=10_000.0)
    assert health.probe_timestamp == meta.parse_rfc3339(CREATED)
    assert grace_period(node(), 40, 60) == 60
    assert grace_period(node(ready()), 40, 60) == 40


def test_first_sight_uses_our_clock_not_the_kubelets():
    health = observe(None, node(ready(beat="1999-01-01T00:00:00Z")), now=500.0)
    assert (health.probe_timestamp, health.ready_transition_timestamp) == (500.0, 500.0)
    assert not stale(health, 40, now=540.0)
    assert stale(health, 40, now=540.1)


def test_heartbeat_change_moves_probe_and_transition_only_when_it_moved():
    first = observe(None, node(ready()), now=100.0)
    same = observe(first, node(ready()), now=150.0)
    assert same is first                                      # nothing happened on that node
    beat = observe(first, node(ready(beat="2024-01-01T00:01:10Z")), now=160.0)
    assert (beat.probe_timestamp, beat.ready_transition_timestamp) == (160.0, 100.0)
    flipped = observe(beat, node(ready("False", beat="2024-01-01T00:01:20Z",
                                       transition="2024-01-01T00:01:20Z")), now=170.0)
    assert (flipped.probe_timestamp, flipped.ready_transition_timestamp) == (170.0, 170.0)


def test_ready_newly_posted_after_none_starts_now():
    never = observe(None, node(), now=100.0)
    assert observe(never, node(ready()), now=200.0).probe_timestamp == 200.0


def test_conditions_go_unknown_keeping_heartbeats_and_network_condition():
    n = node(ready(), {"type": "MemoryPressure", "status": "False",
                       "lastHeartbeatTime": "2024-01-01T00:01:00Z"},
             {"type": "NetworkUnavailable", "status": "False"})
    out = {c["type"]: c for c in conditions_unknown(n, "2024-01-01T00:05:00Z")}
    assert out["Ready"] == {"type": "Ready", "status": "Unknown", "reason": STOPPED_REASON,
                            "message": STOPPED_MESSAGE,
                            "lastHeartbeatTime": "2024-01-01T00:01:00Z",
                            "lastTransitionTime": "2024-01-01T00:05:00Z"}
    assert out["MemoryPressure"]["status"] == "Unknown"
    assert out["NetworkUnavailable"]["status"] == "False"
    assert out["DiskPressure"]["reason"] == NEVER_REASON       # missing ones added
    assert n["status"]["conditions"][0]["status"] == "True"    # input untouched


def test_never_posted_node_gets_a_never_updated_ready():
    out = {c["type"]: c for c in conditions_unknown(node(), "2024-01-01T00:05:00Z")}
    assert out["Ready"]["status"] == "Unknown"
    assert out["Ready"]["reason"] == NEVER_REASON and out["Ready"]["message"] == NEVER_MESSAGE
    assert out["Ready"]["lastHeartbeatTime"] == CREATED


def test_already_unknown_stays_as_it_was():
    unknown = dict(ready("Unknown"), reason=STOPPED_REASON, message=STOPPED_MESSAGE)
    out = conditions_unknown(node(unknown), "2024-01-01T00:09:00Z")
    assert out[0] == unknown


def test_after_our_write_the_next_observation_sees_no_change():
    health = NodeHealth(100.0, 100.0, "2024-01-01T00:01:00Z", "2024-01-01T00:00:30Z")
    written = node(dict(ready("Unknown"), lastTransitionTime="2024-01-01T00:05:00Z"))
    after = after_marked_unknown(health, written, now=150.0)
    assert after.ready_transition_timestamp == 150.0 and after.probe_timestamp == 100.0
    assert observe(after, written, now=160.0) is after


def test_eviction_decisions():
    h = NodeHealth(probe_timestamp=100.0, ready_transition_timestamp=200.0)
    assert eviction_decision("Unknown", h, 400.0, 300) is Eviction.NONE
    assert eviction_decision("Unknown", h, 400.1, 300) is Eviction.EVICT   # from the probe
    assert eviction_decision("False", h, 400.1, 300) is Eviction.NONE      # from the transition
    assert eviction_decision("False", h, 500.1, 300) is Eviction.EVICT
    assert eviction_decision("True", h, 9999.0, 300) is Eviction.CANCEL


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_token_bucket_starts_full_and_refills_at_qps():
    clock = Clock()
    bucket = TokenBucket(qps=2.0, burst=2, clock=clock)
    assert [bucket.try_accept() for _ in range(3)] == [True, True, False]
    clock.t = 0.5
    assert bucket.try_accept() and not bucket.try_accept()
    clock.t = 100.0
    assert [bucket.try_accept() for _ in range(3)] == [True, True, False]  # capped at burst


async def test_queue_is_drained_at_the_limited_rate_and_once_per_outage():
    clock = Clock()
    queue = RateLimitedTimedQueue(TokenBucket(qps=1.0, burst=1, clock=clock), clock=clock)
    done: list[str] = []

    async def evict(node: str) -> tuple[bool, float]:
        done.append(node)
        return True, 0.0
    assert queue.add("a") and queue.add("b") and not queue.add("a")
    await queue.try_process(evict)
    assert done == ["a"]                 # one token: one node
    clock.t = 1.0
    await queue.try_process(evict)
    assert done == ["a", "b"] and len(queue) == 0
    assert not queue.add("a")            # processed: not evicted again ...
    queue.remove("a")                    # ... until the node came back
    assert queue.add("a")


async def test_failed_action_retries_after_its_wait_and_remove_cancels():
    clock = Clock()
    queue = RateLimitedTimedQueue(TokenBucket(qps=100.0, burst=100, clock=clock), clock=clock)
    calls: list[str] = []

    async def failing(node: str) -> tuple[bool, float]:
        calls.append(node)
        return False, 5.0
    queue.add("a")
    await queue.try_process(failing)
    await queue.try_process(failing)
    assert calls == ["a"]                # not due again yet
    clock.t = 5.0
    await queue.try_process(failing)
    assert calls == ["a", "a"]
    assert queue.remove("a") and "a" not in queue
