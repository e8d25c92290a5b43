"""The store browser's reads over a real embedded store: a tree level by skip-scan (counts,
paging, keys beside directories), a key at a revision with its previous value and diff, a
deleted revision, history rows, compaction, and the 4xx Statuses of bad input."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from minikube_py.api.errors import StatusError
from minikube_py.console import store_browser as sb
from minikube_py.storage import EmbeddedStore, Store

# `store`: tests/conftest.py's, one per backend (the embedded store, and a real etcd when the
# etcd binary is installed): the browser reads through the Store contract only.


@pytest.fixture
async def embedded(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Compaction is store-wide: on the shared etcd it would compact other tests' history."""
    s = await EmbeddedStore.open(tmp_path / "data", fsync=False)
    yield s
    await s.close()


def obj(**fields: object) -> bytes:
    return orjson.dumps(fields)


async def test_tree_counts_children_and_pages(store: Store) -> None:
    for ns, n in (("default", 3), ("kube-system", 2), ("a-b", 1)):
        for i in range(n):
            await store.create(f"/registry/pods/{ns}/p{i}", obj(i=i))
    await store.create("/registry/minions/node-0", obj(n=0))
    await store.create("/registry/pods-leaf", obj(x=1))  # a key, not under /registry/pods/
    await store.create("/other/x", obj())
    top = await sb.tree(store, "/registry")
    assert top["prefix"] == "/registry/"
    assert [(c["name"], c["dir"], c["count"]) for c in top["children"]] == [
        ("minions/", True, 1), ("pods-leaf", False, 1), ("pods/", True, 6)]
    assert top["children"][1]["mod_revision"] > 0 and not top["more"]
    assert top["revision"] == await store.current_revision()
    pods = await sb.tree(store, "/registry/pods/", limit=2)
    assert [(c["name"], c["count"]) for c in pods["children"]] == [("a-b/", 1), ("default/", 3)]
    assert pods["more"] and pods["next"] == "default/"
    rest = await sb.tree(store, "/registry/pods/", limit=2, after=pods["next"])
    assert [(c["name"], c["count"]) for c in rest["children"]] == [("kube-system/", 2)]
    assert not rest["more"]
    leaves = await sb.tree(store, "/registry/pods/default/")
    assert [c["key"] for c in leaves["children"]] == [
        "/registry/pods/default/p0", "/registry/pods/default/p1", "/registry/pods/default/p2"]
    assert (await sb.tree(store, "/nothing/"))["children"] == []


async def test_key_at_a_revision_with_previous_value_and_diff(store: Store) -> None:
    created = await store.create("/registry/pods/default/web", obj(phase="Pending"))
    updated = await store.update("/registry/pods/default/web", obj(phase="Running"),
                                 expected_mod_revision=created.mod_revision)
    now = await sb.key_at(store, "/registry/pods/default/web")
    assert now["current"]["value"] == {"phase": "Running"}
    assert now["previous"]["mod_revision"] == created.mod_revision
    assert now["diff"]["changes"] == [{"path": ".phase", "op": "replace", "old": "Pending",
                                       "new": "Running"}]
    first = await sb.key_at(store, "/registry/pods/default/web", created.mod_revision)
    assert first["current"]["version"] == 1 and first["previous"] is None
    assert first["diff"]["unified"][1] == f"+++ revision {created.mod_revision}"
    await store.delete("/registry/pods/default/web")  # returns the deleted value
    deleted = await sb.key_at(store, "/registry/pods/default/web",
                              await store.current_revision())
    assert deleted["deleted"] and deleted["current"] is None
    assert deleted["previous"]["mod_revision"] == updated.mod_revision
    with pytest.raises(StatusError) as missing:
        await sb.key_at(store, "/registry/pods/default/web")
    assert missing.value.code == 404
    assert missing.value.message == 'key "/registry/pods/default/web" not found'


async def test_bad_input(store: Store) -> None:
    kv = await store.create("/k", obj(a=1))
    await store.update("/k", obj(a=2), expected_mod_revision=kv.mod_revision)
    for text in ("x", "-1", "1.5"):
        with pytest.raises(StatusError) as bad:
            sb.parse_revision(text)
        assert bad.value.code == 400
    assert sb.parse_revision("") == 0
    with pytest.raises(StatusError) as future:
        await sb.key_at(store, "/k", 10_000)
    assert future.value.code == 400 and "future revision" in future.value.message
    with pytest.raises(StatusError) as relative:
        await sb.key_at(store, "k")
    assert relative.value.code == 400
    with pytest.raises(StatusError) as limit:
        sb.parse_limit("0")
    assert limit.value.code == 400


async def test_compaction_and_compacted_revisions(embedded: EmbeddedStore) -> None:
    store = embedded
    kv = await store.create("/k", obj(a=1))
    await store.update("/k", obj(a=2), expected_mod_revision=kv.mod_revision)
    result = await sb.compact(store)
    assert result["compacted"] == result["revision"] == await store.compact_revision()
    with pytest.raises(StatusError) as old:
        await sb.key_at(store, "/k", kv.mod_revision)
    assert old.value.code == 410 and old.value.reason == "Expired"
    with pytest.raises(StatusError) as again:
        await sb.compact(store)
    assert again.value.code == 400 and "already compacted" in again.value.message


async def test_history_rows_newest_first_with_diffs(store: Store) -> None:
    kv = await store.create("/registry/pods/default/web", obj(phase="Pending"))
    kv = await store.update("/registry/pods/default/web", obj(phase="Running"),
                            expected_mod_revision=kv.mod_revision)
    await store.delete("/registry/pods/default/web")
    found = await sb.key_history(store, "/registry/pods/default/web")
    assert [row["type"] for row in found["rows"]] == ["DELETE", "PUT", "PUT"]
    assert found["rows"][1]["diff"]["changes"][0]["path"] == ".phase"
    assert found["rows"][2]["diff"]["changes"] == []  # a creation: unified lines only
    bare = await sb.key_history(store, "/registry/pods/default/web", diffs=False)
    assert [row["revision"] for row in bare["rows"]] == [row["revision"] for row in found["rows"]]
    assert all(row["diff"] is None for row in bare["rows"])
    with pytest.raises(StatusError) as unknown:
        await sb.key_history(store, "/registry/pods/default/none")
    assert unknown.value.code == 404
