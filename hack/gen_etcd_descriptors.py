"""Regenerate minikube_py/etcdserver/proto/etcd.fds from the .proto files beside it.

Why a committed descriptor set rather than generated *_pb2 modules: the etcd server loads the
descriptors into a private DescriptorPool at import, so (1) installing minikube_py needs no
build step and no grpcio-tools, and (2) our `etcdserverpb` never collides with the one an etcd
client in the same process (aetcd, which our own etcd backend and the tests use) registers in
protobuf's default pool — two generated modules for one package name there fail at import.

Development-time only:  pip install grpcio-tools && python hack/gen_etcd_descriptors.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

PROTO_DIR = Path(__file__).resolve().parent.parent / "minikube_py" / "etcdserver" / "proto"
OUTPUT = PROTO_DIR / "etcd.fds"
SOURCES = ["kv.proto", "auth.proto", "rpc.proto"]


def main() -> int:
    from grpc_tools import protoc

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "etcd.fds"
        status = protoc.main(
            ["protoc", f"-I{PROTO_DIR}", f"--descriptor_set_out={out}", "--include_imports", *SOURCES]
        )
        if status != 0:
            print(f"protoc failed with status {status}", file=sys.stderr)
            return 1
        OUTPUT.write_bytes(out.read_bytes())
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
