"""etcd's wire definitions as we ship them (minikube_py/etcdserver/proto/): every message and
field matches an independent build of etcd's protos (the one aetcd ships), every RPC of the
six services is there, and the committed descriptor set is what the .proto files compile to."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from minikube_py.etcdserver.messages import _load, methods

ROOT = Path(__file__).resolve().parents[3]


def _fields(descriptor) -> set[tuple]:
    return {(f.name, f.number, f.type, f.is_repeated) for f in descriptor.fields}


def test_messages_match_aetcds_build_of_etcds_protos():
    rpc = pytest.importorskip("aetcd.rpc.rpc_pb2", reason="aetcd is not installed: pip install -e .[etcd]")
    kv = pytest.importorskip("aetcd.rpc.kv_pb2", reason="aetcd is not installed: pip install -e .[etcd]")
    auth = pytest.importorskip("aetcd.rpc.auth_pb2", reason="aetcd is not installed: pip install -e .[etcd]")
    theirs = {name: d for module in (rpc, kv, auth)
              for name, d in module.DESCRIPTOR.message_types_by_name.items()}
    ours = {name: cls.DESCRIPTOR for name, cls in _load()[0].items()}
    assert set(ours) == set(theirs)
    mismatched = {name for name in ours if _fields(ours[name]) != _fields(theirs[name])}
    assert not mismatched
    served = set(methods())
    for service in rpc.DESCRIPTOR.services_by_name.values():
        for m in service.methods:
            assert f"/etcdserverpb.{service.name}/{m.name}" in served


def test_committed_descriptor_set_is_the_compiled_protos(tmp_path, monkeypatch):
    if importlib.util.find_spec("grpc_tools") is None:
        pytest.skip("grpcio-tools not installed (a development-time tool: pip install grpcio-tools)")
    spec = importlib.util.spec_from_file_location("gen", ROOT / "hack" / "gen_etcd_descriptors.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    committed = gen.OUTPUT.read_bytes()
    monkeypatch.setattr(gen, "OUTPUT", tmp_path / "etcd.fds")
    assert gen.main() == 0
    assert (tmp_path / "etcd.fds").read_bytes() == committed
