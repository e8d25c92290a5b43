"""Generated identities of api/meta.py: uids and generateName suffixes."""

from __future__ import annotations

import random
import uuid

from minikube_py.api.meta import GENERATED_SUFFIX_LENGTH, generate_name, new_uid


def test_new_uid_is_a_canonical_random_uuid() -> None:
    seen = set()
    for _ in range(2000):
        uid = new_uid()
        parsed = uuid.UUID(uid)
        assert str(parsed) == uid  # canonical: lower-case hex, 8-4-4-4-12
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122
        seen.add(uid)
    assert len(seen) == 2000


def test_generate_name_suffix() -> None:
    rng = random.Random(7)
    names = {generate_name("kube-api-access-", rng) for _ in range(200)}
    assert len(names) > 190
    for name in names:
        suffix = name[len("kube-api-access-"):]
        assert name.startswith("kube-api-access-") and len(suffix) == GENERATED_SUFFIX_LENGTH
        assert set(suffix) <= set("bcdfghjklmnpqrstvwxz2456789")
    assert len(generate_name("x" * 300)) == 63
