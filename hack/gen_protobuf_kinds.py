"""Write minikube_py/api/kinds/protobuf.json: upstream's protobuf wire shapes of every built-in kind.

Kubernetes piece: the generated.proto files of k8s.io/api (every group) and k8s.io/apimachinery
(meta/v1, runtime, resource, intstr), and the Go struct tags of the types they are generated
from. Why a generator: the API server must decode and encode `application/vnd.kubernetes.protobuf`
for every kind it serves, and protobuf carries field numbers, not names. Hand-typed tables drift;
these facts are read from a binary upstream built from those very sources.

Usage: `python hack/gen_protobuf_kinds.py [/usr/lib/google-cloud-sdk/bin/kubectl.1.33]`

Two sources inside one kubectl binary (Apache-2.0, built from kubernetes/kubernetes):
1. the gzipped FileDescriptorProtos every gogo-generated `generated.pb.go` registers: field
   numbers, proto types, repeated/map, and the gogoproto `nullable` option (65001). A field without
   `nullable=false` is a Go pointer (`*int32`, `*PodTemplateSpec`): present on the wire means set,
   so a zero is kept (`replicas: 0`);
2. Go's reflect metadata of the API structs (runtime structField arrays in .rodata: each field's
   name blob carries its struct tag): the `json:"..."` tag gives the JSON name, `omitempty`
   (a non-pointer zero is dropped from JSON only with omitempty) and `,inline` (the embedded
   struct's fields join the parent: Volume.volumeSource, Probe.handler, key selectors'
   localObjectReference). A struct is matched to its message by its set of protobuf tags
   the same package path and name.

Messages that have no Go struct are Go named types with their own JSON form (Time, Quantity,
IntOrString, RawExtension, FieldsV1, the `items` wrappers of named slices, ...); the codec knows
those by name (minikube_py/api/kinds/proto_specials.py).
"""

from __future__ import annotations

import array
import gzip
import json
import re
import struct
import sys
import zlib
from pathlib import Path

from google.protobuf import descriptor_pb2

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from minikube_py.api.protobuf_tables import varint_bytes  # noqa: E402  (the one varint writer)

DEFAULT_BINARY = "/usr/lib/google-cloud-sdk/bin/kubectl.1.33"
OUT = Path(__file__).resolve().parent.parent / "minikube_py" / "api" / "kinds" / "protobuf.json"
_NULLABLE = 65001  # gogoproto.nullable (a bool extension of FieldOptions)
_GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"
_SCALARS = {
    descriptor_pb2.FieldDescriptorProto.TYPE_STRING: "string",
    descriptor_pb2.FieldDescriptorProto.TYPE_BYTES: "bytes",
    descriptor_pb2.FieldDescriptorProto.TYPE_BOOL: "bool",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT32: "int32",
    descriptor_pb2.FieldDescriptorProto.TYPE_INT64: "int64",
    descriptor_pb2.FieldDescriptorProto.TYPE_DOUBLE: "double",
}


# -- 1. file descriptors -----------------------------------------------------------------------

def file_descriptors(data: bytes) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    """Every gzipped FileDescriptorProto of a k8s.io package in the binary, by file name."""
    found: dict[str, descriptor_pb2.FileDescriptorProto] = {}
    for match in re.finditer(re.escape(_GZIP), data):
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            raw = inflater.decompress(data[match.start():match.start() + 4_000_000])
        except zlib.error:
            continue
        fd = descriptor_pb2.FileDescriptorProto()
        try:
            fd.ParseFromString(raw)
        except Exception:  # noqa: BLE001 - most gzip streams in a binary are not descriptors
            continue
        if fd.name.startswith("k8s.io/") and fd.package.startswith("k8s.io."):
            found[fd.name] = fd
    return found


def _nullable(field: descriptor_pb2.FieldDescriptorProto) -> bool:
    """gogoproto.nullable, read from the option's raw bytes (the extension is not registered)."""
    raw = field.options.SerializeToString()
    key = varint_bytes(_NULLABLE << 3)
    at = raw.find(key)
    return at < 0 or raw[at + len(key)] != 0


# -- 2. Go struct tags -------------------------------------------------------------------------

def _sections(data: bytes) -> dict[str, tuple[int, int, int]]:
    """ELF64 section name -> (address, file offset, size)."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * entsize) for i in range(count)]
    names_off = headers[names_index][4]

    def name(n: int) -> str:
        return data[names_off + n:data.index(b"\0", names_off + n)].decode()

    return {name(h[0]): (h[3], h[4], h[5]) for h in headers}


def _uvarint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, pos


def go_structs(data: bytes) -> dict[str, list[tuple[str, str, bool]]]:
    """Go struct with protobuf tags, by its proto-style full name (`k8s.io.api.core.v1.Pod`)
    -> its fields (Go name, struct tag, embedded).

    Go's runtime name blob is `flags, uvarint len, name[, uvarint len, tag]` (flag 2: has a tag,
    flag 8: embedded); a structType's fields are 24-byte {name *byte, typ *_type, offset} entries
    with increasing offsets starting at 0, referenced by the structType's slice header; the
    type's name and its uncommonType's package path are name blobs at offsets from .rodata."""
    addr, off, size = _sections(data)[".rodata"]
    blobs: set[int] = set()
    for match in re.finditer(rb'json:"', data[off:off + size]):
        p = off + match.start()
        if data[p - 1] < 0x80:
            tag_len, q = data[p - 1], p - 1
        elif data[p - 2] >= 0x80:
            tag_len, q = (data[p - 2] & 0x7F) | (data[p - 1] << 7), p - 2
        else:
            continue
        if b'protobuf:"' not in data[p:p + tag_len]:
            continue
        for n in range(1, 80):  # the field name before the tag, behind its own length byte
            s = q - n
            if data[s - 1] == n and data[s - 2] & 2 and re.fullmatch(
                    rb"[A-Za-z_][A-Za-z0-9_]*", data[s:q]):
                blobs.add(addr + s - 2 - off)
                break
    words = array.array("Q")
    words.frombytes(data[off:off + size - size % 8])

    def in_rodata(v: int) -> bool:
        return addr <= v < addr + size

    starts: set[int] = set()
    for i, word in enumerate(words):
        if word not in blobs:
            continue
        while words[i + 2] != 0 and i >= 3 and in_rodata(words[i - 3]) \
                and words[i - 1] < words[i + 2]:
            i -= 3
        if words[i + 2] == 0:
            starts.add(addr + i * 8)
    structs: dict[str, list[tuple[str, str, bool]]] = {}
    for h, word in enumerate(words):  # a structType: rtype (6 words), pkgPath, fields slice
        if word not in starts or words[h + 1] != words[h + 2] or h < 7:
            continue
        count = words[h + 1]
        i = (word - addr) // 8
        fields = [_name_blob(data, off + words[i + 3 * k] - addr) for k in range(count)]
        type_at = off + (h - 7) * 8
        tflag = data[type_at + 20]
        name_off = struct.unpack_from("<i", data, type_at + 40)[0]
        name = _name_blob(data, off + name_off)[0]
        if tflag & 2:  # tflagExtraStar: the name is stored as "*T"
            name = name[1:]
        if not tflag & 1:  # no uncommonType: not a named type
            continue
        pkg_off = struct.unpack_from("<i", data, type_at + 80)[0]
        pkg = _name_blob(data, off + pkg_off)[0]
        structs[f"{pkg.replace('/', '.')}.{name.rpartition('.')[2]}"] = fields
    return structs


def _name_blob(data: bytes, pos: int) -> tuple[str, str, bool]:
    flags = data[pos]
    n, pos = _uvarint(data, pos + 1)
    name = data[pos:pos + n].decode()
    tag = ""
    if flags & 2:
        t, pos = _uvarint(data, pos + n)
        tag = data[pos:pos + t].decode()
    return name, tag, bool(flags & 8)


_TAG = re.compile(r'(\w+):"([^"]*)"')


def _json_facts(tag: str) -> tuple[tuple[str, int] | None, tuple[str, bool, bool] | None]:
    """((proto name, number) or None, (json name, omitempty, inline) or None) of one tag."""
    tags = dict(_TAG.findall(tag))
    proto = None
    if "protobuf" in tags:
        parts = tags["protobuf"].split(",")
        names = [p[5:] for p in parts if p.startswith("name=")]
        if len(parts) > 1 and parts[1].isdigit() and names:
            proto = (names[0], int(parts[1]))
    facts = None
    if "json" in tags:
        jname, *opts = tags["json"].split(",")
        facts = (jname, "omitempty" in opts, "inline" in opts)
    return proto, facts


# -- putting them together ---------------------------------------------------------------------

def build(binary: str) -> dict:
    data = Path(binary).read_bytes()
    files = file_descriptors(data)
    structs = go_structs(data)
    messages: dict[str, list] = {}
    kinds: dict[str, list[str]] = {}
    unmatched: list[str] = []
    for fd in sorted(files.values(), key=lambda f: f.package):
        for msg in fd.message_type:
            full = f"{fd.package}.{msg.name}"
            maps = {f"{full}.{n.name}": n for n in msg.nested_type if n.options.map_entry}
            fields = structs.get(full)
            facts: dict[tuple[str, int], tuple[str, bool, bool]] = {}
            if fields is None:
                unmatched.append(full)
            else:
                for go_name, tag, embedded in fields:
                    proto, json_facts = _json_facts(tag)
                    if proto and json_facts:
                        facts[proto] = json_facts
                    if embedded and go_name == "TypeMeta":
                        kinds.setdefault(fd.package, []).append(msg.name)
            messages[full] = [_field(f, facts, maps) for f in msg.field]
    return {
        "source": f"{Path(binary).name}: the FileDescriptorProtos of k8s.io/api and "
                  f"k8s.io/apimachinery generated.proto, and the Go struct tags of their types",
        "license": "Apache-2.0 (Copyright The Kubernetes Authors); see "
                   "https://github.com/kubernetes/kubernetes/blob/master/LICENSE",
        "generator": "hack/gen_protobuf_kinds.py",
        "format": "messages: full name -> [[number, json name, type, flags]]; type is a scalar "
                  "(string int32 int64 bool double bytes) or a message's full name; flags: "
                  "r repeated, m map (type is the value's), p Go pointer (a zero on the wire is "
                  "kept), k no omitempty (JSON writes the zero, null for an empty list or map), "
                  "i json inline. "
                  "kinds: package -> the messages that are API kinds (embed TypeMeta). "
                  "no_go_struct: messages the codec converts by name (proto_specials.py).",
        "kinds": kinds,
        "no_go_struct": sorted(unmatched),
        "messages": messages,
    }


def _field(f: descriptor_pb2.FieldDescriptorProto, facts: dict, maps: dict) -> list:
    flags = ""
    type_ = _SCALARS.get(f.type) or f.type_name.lstrip(".")
    if f.type_name.lstrip(".") in maps:
        entry = maps[f.type_name.lstrip(".")]
        value = entry.field[1]
        type_ = _SCALARS.get(value.type) or value.type_name.lstrip(".")
        flags += "m"
    elif f.label == descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED:
        flags += "r"
    elif _nullable(f):
        flags += "p"
    json_name, omitempty, inline = facts.get((f.name, f.number), (f.name, True, False))
    if not omitempty and not inline:  # a nil slice or map without omitempty is JSON null
        flags += "k"
    if inline:
        flags += "i"
        json_name = ""
    return [f.number, json_name, type_, flags]


def main() -> None:
    binary = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BINARY
    doc = build(binary)
    text = json.dumps(doc, separators=(",", ":"), sort_keys=False)
    OUT.write_text(text + "\n")
    print(f"{OUT}: {len(doc['messages'])} messages, {sum(map(len, doc['kinds'].values()))} kinds, "
          f"{len(text)} bytes ({len(gzip.compress(text.encode()))} gzipped); "
          f"no Go struct: {doc['no_go_struct']}")


if __name__ == "__main__":
    main()
