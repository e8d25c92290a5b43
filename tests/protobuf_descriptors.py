"""An independent protobuf implementation of upstream's kinds, for checking ours.

The `protobuf` package's dynamic messages, built from the FileDescriptorProtos a kubectl binary
embeds (upstream's compiled generated.proto), encode and decode with Google's own code: bytes
our codec writes must parse there to the same values, and bytes it writes must decode here.
Skips when no kubectl binary is on the machine.
"""

from __future__ import annotations

import importlib.util
import struct
from functools import cache
from pathlib import Path

import pytest

BINARY = Path("/usr/lib/google-cloud-sdk/bin/kubectl.1.33")
_HACK = Path(__file__).resolve().parent.parent / "hack" / "gen_protobuf_kinds.py"


@cache
def _pool():
    from google.protobuf import descriptor_pool

    spec = importlib.util.spec_from_file_location("gen_protobuf_kinds", _HACK)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    files = gen.file_descriptors(BINARY.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(name: str) -> None:
        if name in added or name not in files:
            return
        fd = files[name]
        for dep in fd.dependency:
            add(dep)
        keep = [dep for dep in fd.dependency if dep in files]  # gogo.proto: options only
        del fd.dependency[:]
        fd.dependency.extend(keep)
        pool.Add(fd)
        added.add(name)

    for name in sorted(files):
        add(name)
    return pool


def message_class(full_name: str):
    """The Google protobuf class of a k8s message (`k8s.io.api.core.v1.Pod`)."""
    if not BINARY.exists():
        pytest.skip(f"{BINARY} is not installed: no upstream descriptors to check against")
    from google.protobuf import message_factory

    return message_factory.GetMessageClass(_pool().FindMessageTypeByName(full_name))


def google_envelope(api_version: str, kind: str, message) -> bytes:
    """A request body as client-go writes it (`k8s\x00` + runtime.Unknown around the message),
    by Google's runtime."""
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown")(
        raw=message.SerializeToString())
    unknown.typeMeta.apiVersion, unknown.typeMeta.kind = api_version, kind
    return b"k8s\x00" + unknown.SerializeToString()


async def read_frames(resp, count: int) -> list[tuple[str, dict]]:
    """The next `count` events of a protobuf watch stream (4-byte length, WatchEvent), each
    frame parsed by Google's runtime and its object decoded by ours."""
    from minikube_py.api.protobuf import decode_object

    event_cls = message_class("k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent")
    out = []
    while len(out) < count:
        (length,) = struct.unpack(">I", await resp.content.readexactly(4))
        event = event_cls.FromString(await resp.content.readexactly(length))
        out.append((event.type, decode_object(event.object.raw)))
    return out
