"""An independent protobuf implementation of upstream's kinds, for checking ours.

The `protobuf` package's dynamic messages, built from the FileDescriptorProtos a kubectl binary
embeds (upstream's compiled generated.proto), encode and decode with Google's own code: bytes
our codec writes must parse there to the same values, and bytes it writes must decode here.
Skips when no kubectl binary is on the machine.
"""

from __future__ import annotations

import importlib.util
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
