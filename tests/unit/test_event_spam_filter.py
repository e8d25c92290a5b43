"""The event recorder's spam filter (client-go's EventSourceObjectSpamFilter): a burst of 25
events per source and object, then one per 5 minutes."""

from __future__ import annotations

from minikube_py.client.record import SPAM_BURST, SpamFilter


def test_a_burst_then_one_per_five_minutes() -> None:
    spam = SpamFilter()
    key = ("DaemonSet", "default", "fluentd", "uid-1", "apps/v1")
    assert all(spam.allow(key, 0.0) for _ in range(SPAM_BURST))
    assert not spam.allow(key, 1.0)
    assert not spam.allow(key, 299.0)
    assert spam.allow(key, 301.0)  # one token back after 300 s
    assert not spam.allow(key, 302.0)
    # another object (or another source's recorder) has its own bucket
    assert spam.allow(("Pod", "default", "web-0", "uid-2", "v1"), 1.0)


def test_a_quiet_object_refills_to_the_burst_only() -> None:
    spam = SpamFilter()
    key = ("Pod", "default", "p", "u", "v1")
    for _ in range(SPAM_BURST):
        spam.allow(key, 0.0)
    later = 10 * 300.0 * SPAM_BURST  # long enough for far more than a burst
    assert sum(spam.allow(key, later) for _ in range(SPAM_BURST + 5)) == SPAM_BURST


def test_the_least_recently_used_buckets_are_forgotten() -> None:
    spam = SpamFilter(burst=1, size=2)
    a, b, c = ("a",), ("b",), ("c",)
    assert spam.allow(a, 0.0) and not spam.allow(a, 0.0)
    spam.allow(b, 0.0)
    spam.allow(c, 0.0)  # a is the oldest: dropped from the cache
    assert spam.allow(a, 0.0)  # a fresh bucket
