"""YAML request bodies converted to JSON values, the way sigs.k8s.io/yaml does it — bounded.

Kubernetes piece: sigs.k8s.io/yaml's YAMLToJSON over go-yaml v2 (what the API server's YAML
serializer runs): YAML 1.1 scalars (`yes`/`on` are booleans, `0x1F` an integer), timestamps
left as strings, map keys that are integers, floats or booleans turned into strings (`1: b` is
`{"1": "b"}`; a null or collection key is an error), `!!binary` decoded to the string of its
bytes, `<<` merge keys, and every alias expanded into an independent copy.

The bounds (api/bounds.py) are enforced on the composed node graph *before* anything is
expanded: an alias that contains itself is refused as go-yaml refuses it ("anchor value
contains itself"), and the expanded size is computed from the graph with one memoised pass, so
a 400-byte "billion laughs" is refused in microseconds instead of being expanded. The limit
on expansion is upstream's own alias-ratio rule plus our MAX_NODES, and the depth bound is
MAX_DEPTH. Documents are composed by libyaml (PyYAML's C parser) and built here, not by
PyYAML's constructor, which shares aliased objects (a later in-place edit of one place would
change the other) and would happily walk a cycle.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from typing import Any

import orjson
import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .bounds import MAX_DEPTH, MAX_NODES, check_json_body
from .errors import StatusError

_TAG = "tag:yaml.org,2002:"
_MERGE = _TAG + "merge"
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1

# go-yaml v2's alias limits (decode.go allowedAliasRatio)
_ALIAS_RATIO_LOW = 400_000
_ALIAS_RATIO_HIGH = 4_000_000


class _Loader(yaml.CSafeLoader if hasattr(yaml, "CSafeLoader") else yaml.SafeLoader):  # type: ignore[misc]
    """libyaml's parser and composer with YAML 1.1 resolution, timestamps left as strings (as
    Kubernetes' YAML-to-JSON leaves them)."""


_Loader.yaml_implicit_resolvers = {
    k: [r for r in v if r[0] != _TAG + "timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SCALARS = SafeConstructor()


def _json_error(message: str) -> StatusError:
    """sigs.k8s.io/yaml converted the document but JSON cannot hold a value (±Inf, NaN)."""
    return StatusError(400, "BadRequest", f"error converting YAML to JSON: {message}")


def _error(message: str) -> StatusError:
    return StatusError(400, "BadRequest", f"error converting YAML to JSON: yaml: {message}")


def allowed_alias_ratio(decodes: int) -> float:
    """go-yaml v2: up to 99% of a small document may come from aliases, 10% of a huge one."""
    if decodes <= _ALIAS_RATIO_LOW:
        return 0.99
    if decodes >= _ALIAS_RATIO_HIGH:
        return 0.10
    span = _ALIAS_RATIO_HIGH - _ALIAS_RATIO_LOW
    return 0.99 - 0.89 * (decodes - _ALIAS_RATIO_LOW) / span


def is_json(data: bytes) -> bool:
    """Whether a YAML body is JSON text (upstream's hasJSONPrefix: `{` after blanks), looking
    only as far as the first non-blank byte (no copy of a 3 MiB body)."""
    head = data[:64].lstrip()
    if not head and len(data) > 64:
        head = data.lstrip()
    return head[:1] == b"{"


def load(data: bytes | str) -> Any:
    """The single YAML document in `data` as a JSON value (dicts, lists, str, int, float,
    bool, None). Errors are 400 Statuses; nothing unbounded happens before the bounds pass.

    A document that is already JSON (it starts with `{`, as kubectl's server-side apply bodies
    do) is read as JSON, as upstream's yaml.ToJSON passes a JSON-prefixed buffer through: orjson
    reads it some thirty times faster than libyaml composes it. One that only looks like JSON
    (`{a: 1}`, a YAML flow mapping) falls back to YAML."""
    raw = data.encode() if isinstance(data, str) else data
    if is_json(raw):
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            check_json_body(raw, doc)
            return doc
    loader = _Loader(data)
    try:
        node = loader.get_single_node()
    except yaml.YAMLError as exc:
        raise StatusError(400, "BadRequest", f"error converting YAML to JSON: {exc}") from None
    finally:
        loader.dispose()
    if node is None:
        return None
    _check(node)
    return _build(node)


def _check(root: Node) -> None:
    """Cycle, depth and expansion checks on the node graph, in one iterative pass over its
    distinct nodes (so the check costs what the text cost to compose, whatever it expands to).

    The first place a node appears (in document order) is its definition; every other place
    is an alias, which brings the node's whole expanded size again. `total` counts values after
    expansion (go-yaml's decodeCount), `via` those decoded inside an alias (its aliasCount),
    `height` the nesting depth after expansion."""
    VISITING, DONE = 1, 2
    state: dict[int, int] = {id(root): VISITING}
    definition: dict[int, tuple[int, int]] = {}  # child id -> (parent id, position)
    total: dict[int, int] = {}
    via: dict[int, int] = {}
    height: dict[int, int] = {}
    stack: list[tuple[Node, list[Node], int]] = [(root, _children(root), 0)]
    while stack:
        node, children, position = stack[-1]
        if position < len(children):
            stack[-1] = (node, children, position + 1)
            child = children[position]
            child_state = state.get(id(child))
            if child_state == VISITING:
                raise _error("anchor value contains itself")
            if child_state is None:
                state[id(child)] = VISITING
                definition[id(child)] = (id(node), position)
                if len(stack) >= MAX_DEPTH:
                    raise _too_deep()
                stack.append((child, _children(child), 0))
            continue
        stack.pop()
        key = id(node)
        state[key] = DONE
        count, inside, deepest = 1, 0, 0
        for index, child in enumerate(children):
            child_key = id(child)
            count += total[child_key]
            inside += via[child_key] if definition.get(child_key) == (key, index) else total[child_key]
            deepest = max(deepest, height[child_key])
        total[key], via[key], height[key] = count, inside, deepest + 1
    count, inside = total[id(root)], via[id(root)]
    if height[id(root)] > MAX_DEPTH:
        raise _too_deep()
    if count > MAX_NODES or (
            inside > 100 and count > 1000 and inside / count > allowed_alias_ratio(count)):
        raise _error(f"document contains excessive aliasing (it expands to {count} values, "
                     f"{inside} of them through aliases; the limits are {MAX_NODES} values and "
                     "go-yaml's alias ratio)")


def _too_deep() -> StatusError:
    return StatusError(400, "BadRequest",
                       f"error converting YAML to JSON: exceeded max depth of {MAX_DEPTH} (the "
                       "nesting limit for request documents)")


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        out: list[Node] = []
        for key, value in node.value:
            out.append(key)
            out.append(value)
        return out
    if isinstance(node, SequenceNode):
        return node.value
    return []


def _build(node: Node) -> Any:
    """A JSON value from a checked node graph: a fresh object at every place (aliases are
    copies), keys converted as sigs.k8s.io/yaml converts them. Recursive: _check bounded the
    depth."""
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if isinstance(node, SequenceNode):
        return [_build(item) for item in node.value]
    return _mapping(node)


def _mapping(node: MappingNode) -> dict[str, Any]:
    result: dict[str, Any] = {}
    merged: dict[str, Any] = {}
    for key_node, value_node in node.value:
        if key_node.tag == _MERGE:
            for source in _merge_sources(value_node):
                for key, value in _mapping(source).items():
                    merged.setdefault(key, value)
            continue
        result[_map_key(key_node, value_node)] = _build(value_node)
    for key, value in merged.items():
        result.setdefault(key, value)
    return result


def _merge_sources(node: Node) -> list[MappingNode]:
    if isinstance(node, MappingNode):
        return [node]
    if isinstance(node, SequenceNode) and all(isinstance(n, MappingNode) for n in node.value):
        return list(node.value)
    raise _error("map merge requires map or sequence of maps as the value")


def _map_key(key_node: Node, value_node: Node) -> str:
    if not isinstance(key_node, ScalarNode):
        raise _error(f"unsupported map key of type: {_go_kind(key_node)} (a YAML object key "
                     "must be a string, number or boolean)")
    key = _scalar(key_node, as_key=True)
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float_key(key)
    raise _error("unsupported map key of type: <nil> (a YAML object key must be a string, "
                 "number or boolean)")


def _go_kind(node: Node) -> str:
    return "map[interface {}]interface {}" if isinstance(node, MappingNode) else "[]interface {}"


def _go_float_key(value: float) -> str:
    """strconv.FormatFloat(v, 'g', -1, 32) — the shortest float32 digits, exponent form when
    the exponent is below -4 or at least 6 — with go-yaml's spellings of NaN and infinity."""
    try:
        single = struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        single = math.copysign(math.inf, value)
    if math.isnan(single):
        return ".nan"
    if math.isinf(single):
        return ".inf" if single > 0 else "-.inf"
    for precision in range(0, 9):
        text = f"{single:.{precision}e}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            break
    mantissa, _, exp_text = text.partition("e")
    exponent = int(exp_text)
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    if exponent < -4 or exponent >= 6:
        return f"{mantissa}e{'+' if exponent >= 0 else '-'}{abs(exponent):02d}"
    decimals = max(0, len(mantissa.lstrip("-").replace(".", "")) - 1 - exponent)
    return f"{float(text):.{decimals}f}"


def _scalar(node: ScalarNode, as_key: bool = False) -> Any:
    tag = node.tag
    if not tag.startswith(_TAG):
        return node.value  # a tag go-yaml does not know: the plain string
    kind = tag[len(_TAG):]
    try:
        if kind == "str":
            return node.value
        if kind == "int":
            value = _SCALARS.construct_yaml_int(node)
            if not _INT_MIN <= value <= _INT_MAX:
                try:
                    return float(value)  # as the JSON decoder reads integers beyond 64 bits
                except OverflowError:
                    return node.value  # beyond a double too: go-yaml leaves it a string
            return value
        if kind == "float":
            value = _SCALARS.construct_yaml_float(node)
            if math.isinf(value) or math.isnan(value):
                if node.value.lstrip("+-").lower() in (".inf", ".nan"):
                    if as_key:
                        return value  # a key: FormatFloat's ".inf" spelling (_go_float_key)
                    raise _json_error(f"json: unsupported value: {node.value}")
                return node.value  # 1e400: ParseFloat's range error, go-yaml keeps the string
            return value
        if kind == "bool":
            return _SCALARS.construct_yaml_bool(node)
        if kind == "null":
            return None
        if kind == "binary":
            return _binary(node.value)
    except (ValueError, yaml.YAMLError) as exc:
        raise _error(f"cannot decode !!{kind} `{node.value[:40]}`: {exc}") from None
    return node.value


def _binary(text: str) -> str:
    """go-yaml decodes `!!binary` to a string holding the bytes; JSON then writes invalid
    UTF-8 as U+FFFD, as Go's encoder does."""
    try:
        raw = base64.b64decode("".join(text.split()), validate=True)
    except (binascii.Error, ValueError):
        raise _error("!!binary value contains invalid base64 data") from None
    return raw.decode("utf-8", "replace")
