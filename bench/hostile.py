"""Hostile request bodies: the amplification and decoder-abuse inputs of issue 14, built from a few
parameters so the fuzz test (tests/robustness/test_fuzz_pipeline.py) and the hostile phase of
bench/robustness.py send exactly the same bytes.

Kubernetes piece: none by itself -- these are the inputs kube-apiserver's request decoding is hardened
against: sigs.k8s.io/yaml (go-yaml's alias-expansion budget, "document contains excessive aliasing";
integer map keys become strings; `!!binary` is decoded), the JSON patch library's
AccumulatedCopySizeLimit, the JSON decoder's depth limit, the 3 MiB request body limit
(MaxRequestBodyBytes), and the request media types (`text/plain` is not one of them: 415).

Everything here is pure: a function of its arguments returning bytes (or a `Case` holding bytes),
no I/O, so a case that failed can be rebuilt from its parameters. YAML payloads are *flow*
fragments (`[&a0 [...], &a1 [*a0, ...]]`), which splice into a JSON-shaped document: YAML is a
superset of that, so one template serves both media types.
"""

from __future__ import annotations

import functools
import gzip
import json
import zlib
from dataclasses import dataclass
from typing import Any

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
TEXT = "text/plain"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"

MAX_BODY_BYTES = 3 * 1024 * 1024  # upstream's MaxRequestBodyBytes ("limit is 3145728")
PLACEHOLDER = '"__PAYLOAD__"'


# ------------------------------------------------------------------------------ YAML payloads


def yaml_self_alias(kind: str = "list") -> str:
    """An anchor whose node refers to itself: a cycle no finite document can hold. `&a [*a]` is
    the 7-byte body of issue 14 (go-yaml answers "anchor 'a' value contains itself")."""
    return "&a [*a]" if kind == "list" else "&a {x: *a}"


def yaml_alias_fanout(width: int, depth: int, leaf: str = '"lol"') -> str:
    """`depth` levels of `width` aliases to the level below ("billion laughs"): a few hundred
    bytes that expand to width**depth leaves. width=9, depth=9 is the classic 387,420,489."""
    levels = [f"&a0 [{', '.join([leaf] * width)}]"]
    for level in range(1, depth):
        levels.append(f"&a{level} [{', '.join([f'*a{level - 1}'] * width)}]")
    return "[" + ", ".join(levels) + "]"


def expanded_leaves(width: int, depth: int) -> int:
    """How many scalars `yaml_alias_fanout(width, depth)` stands for once every alias is expanded."""
    return sum(width ** (level + 1) for level in range(depth))


def billion_laughs() -> str:
    return yaml_alias_fanout(9, 9)


def yaml_non_string_keys() -> str:
    """Mapping keys YAML 1.1 reads as int, float, bool, null and a date; sigs.k8s.io/yaml turns
    such keys into their string forms."""
    return "{1: a, 2.5: b, true: c, null: d, 2001-12-14: e, 0x10: f}"


YAML_TAGS: dict[str, str] = {
    "binary": "!!binary aGVsbG8=",
    "set": "!!set {a, b}",
    "omap": "!!omap [a: 1, b: 2]",
    "pairs": "!!pairs [a: 1, a: 2]",
    "timestamp": "!!timestamp 2001-12-14t21:59:43.10-05:00",
    "float": "!!float 1e400",
    "int": "!!int 99999999999999999999999",
    "str": "!!str 1",
    "null": "!!null ''",
    "python-apply": "!!python/object/apply:os.system ['true']",
    "python-name": "!!python/name:os.system",
    "python-tuple": "!!python/tuple [1, 2]",
    "local": "!local x",
    "uri": "!<tag:example.com,2000:x> y",
    "complex-key": "{[a, b]: c}",
    "merge-key": "{<<: {a: 1}, b: 2}",
    "merge-self": "&m {<<: *m}",
}


# ------------------------------------------------------------------------------ JSON payloads


def json_nested(depth: int, kind: str = "object") -> str:
    """A value nested `depth` levels deep (`{"a": {"a": ... 1}}` or `[[[...]]]`)."""
    if kind == "object":
        return '{"a": ' * depth + "1" + "}" * depth
    return "[" * depth + "1" + "]" * depth


def json_wide(total_bytes: int, value_bytes: int = 64) -> str:
    """A string map of about `total_bytes` (keys k0, k1, ...; values of `value_bytes`)."""
    value = "v" * value_bytes
    entry = len(f'"k0000000": "{value}", ')
    count = max(1, total_bytes // entry)
    return "{" + ", ".join(f'"k{i:07d}": "{value}"' for i in range(count)) + "}"


BIG_NUMBERS = ["18446744073709551617", "-9223372036854775809", "1e400", "-1e400",
               "123456789012345678901234567890", "0.1e-400", "9" * 400]


def json_patch_copy_chain(copies: int, path: str = "/x") -> bytes:
    """A JSON patch that adds a one-element list at `path`, then copies the list into itself
    `copies` times: each copy doubles it, so 24 copies ask for 2**24 elements in ~1 KiB."""
    ops: list[dict[str, Any]] = [{"op": "add", "path": path, "value": ["lol"]}]
    ops += [{"op": "copy", "from": path, "path": f"{path}/-"} for _ in range(copies)]
    return json.dumps(ops).encode()


def json_patch_many_ops(count: int, path: str = "/metadata/labels/fz") -> bytes:
    """`count` cheap operations (upstream refuses more than 10,000 with 413)."""
    return json.dumps([{"op": "add", "path": path, "value": str(i % 10)} for i in range(count)]).encode()


def json_many_finalizers(count: int, name: str = "fz-finalizers") -> bytes:
    """A ConfigMap whose metadata.finalizers repeats an invalid name `count` times: one field
    error per element (600,000 fit in 3 MiB), so the cost -- and the Status -- grow with it."""
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "finalizers": ["f"] * count}}).encode()


# ------------------------------------------------------------------------------ documents


def object_template(kind: str, *, name: str | None = None, generate_name: str = "fz-",
                    where: str = "unknown") -> str:
    """A valid object of `kind` as JSON text with `PLACEHOLDER` where the payload goes: an
    unknown top-level field ("unknown"), an annotation value ("annotation"), a ConfigMap data
    value ("data"), or inside the spec ("spec")."""
    meta: dict[str, Any] = {"name": name} if name else {"generateName": generate_name}
    obj: dict[str, Any] = {"apiVersion": "v1", "kind": kind, "metadata": meta}
    if kind == "ConfigMap":
        obj["data"] = {"k": "v"}
    elif kind == "Pod":
        obj["spec"] = {"containers": [{"name": "c", "image": "nginx"}]}
    elif kind == "Deployment":
        obj["apiVersion"] = "apps/v1"
        obj["spec"] = {"replicas": 1, "selector": {"matchLabels": {"app": "fz"}},
                       "template": {"metadata": {"labels": {"app": "fz"}},
                                    "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}
    marker = "__PAYLOAD__"
    if where == "annotation":
        meta["annotations"] = {"fz": marker}
    elif where == "data" and kind == "ConfigMap":
        obj["data"]["fz"] = marker
    elif where == "spec" and "spec" in obj:
        obj["spec"]["fz"] = marker
    else:
        obj["fz"] = marker
    return json.dumps(obj)


def splice(template: str, payload: str) -> bytes:
    """The template with its placeholder replaced by the payload's text."""
    return template.replace(PLACEHOLDER, payload, 1).encode()


def gzipped(body: bytes) -> bytes:
    return gzip.compress(body, compresslevel=6, mtime=0)


@functools.lru_cache(maxsize=4)
def gzip_bomb(expanded_bytes: int) -> bytes:
    """A gzip stream about a thousandth of `expanded_bytes` long that inflates to that many
    spaces (compressed chunk by chunk: the expanded bytes are never held at once)."""
    chunk = b" " * (1 << 20)
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 16+15: a gzip header and trailer
    parts = [packer.compress(chunk) for _ in range(expanded_bytes // len(chunk))]
    return b"".join(parts) + packer.flush()


# ------------------------------------------------------------------------------ protobuf


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def protobuf_configmap(name: str, data: dict[str, str], *, finalizers: int = 0) -> bytes:
    """A ConfigMap in kubectl's protobuf envelope (`k8s\\x00` + runtime.Unknown{typeMeta, raw});
    `finalizers` repeats a one-byte finalizer that many times (a wide repeated field)."""
    meta = _field(1, name.encode()) + _field(14, b"f") * finalizers
    entries = b"".join(_field(2, _field(1, k.encode()) + _field(2, v.encode())) for k, v in data.items())
    raw = _field(1, meta) + entries
    type_meta = _field(1, b"v1") + _field(2, b"ConfigMap")
    return b"k8s\x00" + _field(1, type_meta) + _field(2, raw)


def protobuf_lying_length(claimed: int) -> bytes:
    """An envelope whose raw field claims `claimed` bytes but holds three."""
    return b"k8s\x00" + _field(1, _field(1, b"v1") + _field(2, b"ConfigMap")) + \
        _varint(2 << 3 | 2) + _varint(claimed) + b"abc"


def protobuf_nested_unknown(depth: int) -> bytes:
    """A ConfigMap whose metadata carries an unknown field nested `depth` messages deep."""
    inner = b""
    for _ in range(depth):
        inner = _field(99, inner)
    raw = _field(1, _field(1, b"pb-nested") + inner)
    return b"k8s\x00" + _field(1, _field(1, b"v1") + _field(2, b"ConfigMap")) + _field(2, raw)


# ------------------------------------------------------------------------------ named cases


@dataclass(frozen=True)
class Case:
    """One hostile request and the answer upstream gives it. `path` is relative to the namespace
    (`configmaps`, `configmaps/<name>?fieldManager=x`); `expect` is the HTTP status, or None
    where any 4xx Status is right (which limit trips first is the server's business)."""

    name: str
    method: str
    path: str
    content_type: str
    body: bytes
    expect: int | None
    headers: tuple[tuple[str, str], ...] = ()


def issue_cases(target: str) -> list[Case]:
    """The defects issue 14 reported, one request each. `target` is an existing ConfigMap that
    patches aim at (it must be left unchanged)."""
    cm = object_template("ConfigMap")
    apply_doc = object_template("ConfigMap", name=target)
    manager = "?fieldManager=fz"
    return [
        Case("yaml self-alias &a [*a]", "POST", "configmaps", YAML, yaml_self_alias().encode(), 400),
        Case("yaml self-alias in a mapping", "POST", "configmaps", YAML, splice(cm, yaml_self_alias("map")), 400),
        Case("yaml billion laughs", "POST", "configmaps", YAML, splice(cm, billion_laughs()), 400),
        Case("apply billion laughs", "PATCH", f"configmaps/{target}{manager}", APPLY,
             splice(apply_doc, billion_laughs()), 400),
        Case("json patch 24 self-copies", "PATCH", f"configmaps/{target}", JSON_PATCH, json_patch_copy_chain(24), 422),
        Case("merge patch 800 deep", "PATCH", f"configmaps/{target}", MERGE,
             ('{"metadata": {"annotations": ' + json_nested(800) + "}}").encode(), 400),
        Case("strategic patch 800 deep", "PATCH", f"configmaps/{target}", STRATEGIC,
             ('{"metadata": {"annotations": ' + json_nested(800) + "}}").encode(), 400),
        Case("yaml int key data: {1: b}", "POST", "configmaps", YAML,
             b"apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: fz-}\ndata: {1: b}\n", 201),
        Case("yaml !!binary value", "POST", "configmaps", YAML,
             b"apiVersion: v1\nkind: ConfigMap\nmetadata: {generateName: fz-}\ndata: {k: !!binary aGVsbG8=}\n", 201),
        Case("gzip header, plain body", "POST", "configmaps", JSON, splice(cm, '"x"'), 400,
             (("Content-Encoding", "gzip"),)),
        Case("text/plain JSON body (CSRF)", "POST", "configmaps", TEXT, splice(cm, '"x"'), 415),
    ]


def heavy_cases(target: str) -> list[Case]:
    """The fuzzer's worst shapes, at the sizes that hurt: near the body limit, deep, wide alias
    fan-out, long copy chains, a gzip bomb, wide protobuf. Each is answered fast: refused, or
    (a 3 MiB body whose bulk is an unknown field, dropped) accepted as upstream accepts it."""
    cm = object_template("ConfigMap")
    near_limit = MAX_BODY_BYTES - 64 * 1024
    manager = "?fieldManager=fz"
    return [
        Case("json 3 MiB data value", "POST", "configmaps", JSON,
             splice(object_template("ConfigMap", where="data"), '"' + "x" * near_limit + '"'), None),
        # an unknown field is dropped (with a Warning): the body is within the limit, so 201
        Case("json 3 MiB many keys", "POST", "configmaps", JSON, splice(cm, json_wide(near_limit)), 201),
        Case("yaml 3 MiB many keys", "POST", "configmaps", YAML, splice(cm, json_wide(near_limit)), 201),
        Case("json 3.5 MiB body", "POST", "configmaps", JSON, splice(cm, json_wide(MAX_BODY_BYTES + (512 << 10))), 413),
        Case("json 5000 deep", "POST", "configmaps", JSON, splice(cm, json_nested(5000)), None),
        Case("yaml 5000 deep", "POST", "configmaps", YAML, splice(cm, json_nested(5000, "list")), None),
        Case("yaml fan-out 40x6", "POST", "configmaps", YAML, splice(cm, yaml_alias_fanout(40, 6)), 400),
        Case("apply fan-out 64x5", "PATCH", f"configmaps/{target}{manager}", APPLY,
             splice(object_template("ConfigMap", name=target), yaml_alias_fanout(64, 5)), 400),
        Case("json patch 40 self-copies", "PATCH", f"configmaps/{target}", JSON_PATCH, json_patch_copy_chain(40), 422),
        Case("json patch 20000 ops", "PATCH", f"configmaps/{target}", JSON_PATCH, json_patch_many_ops(20000), 413),
        Case("gzip bomb 64 MiB", "POST", "configmaps", JSON, gzip_bomb(64 << 20), 413, (("Content-Encoding", "gzip"),)),
        Case("json 600k invalid finalizers", "POST", "configmaps", JSON, json_many_finalizers(600_000), None),
        Case("protobuf 1M finalizers", "POST", "configmaps", PROTOBUF,
             protobuf_configmap("pb-wide", {}, finalizers=near_limit // 3), None),
        Case("protobuf lying length", "POST", "configmaps", PROTOBUF, protobuf_lying_length(1 << 60), 400),
    ]
