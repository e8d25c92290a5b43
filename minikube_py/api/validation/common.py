"""Checks shared by every kind: names, labels, selectors, ports, IPs, immutability.

Kubernetes pieces: k8s.io/apimachinery/pkg/util/validation (IsValidPortNum, IsValidPortName,
IsEnvVarName, IsConfigMapKey, IsValidPercent, IsValidIP, InclusiveRangeError, RegexError),
apimachinery/pkg/api/validation (NameIsDNSSubdomain & co., ValidateNonnegativeField,
ValidateImmutableField), apimachinery/pkg/apis/meta/v1/validation (ValidateLabels,
ValidateLabelSelector) and apiserver path.IsValidPathSegmentName. The DNS and qualified-name
syntax itself lives in `minikube_py.api.naming`; this module turns those messages into
FieldErrors at upstream's field paths.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable
from typing import Any

from minikube_py.api import naming
from minikube_py.api.errors import (
    FieldError,
    FieldErrorType,
    forbidden,
    invalid,
    not_supported,
    required,
)
from minikube_py.api.validation.typed import (
    Errs,
    child,
    get_int,
    get_str,
    get_str_list,
    get_str_map,
    index,
    iter_dicts,
)

NameFn = Callable[[str, bool], list[str]]

IMMUTABLE = "field is immutable"
PROTOCOLS = ("SCTP", "TCP", "UDP")
NEGATIVE = "must be greater than or equal to 0"


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Upstream RegexError, including its `',  or '` spacing."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def inclusive_range_error(lo: int, hi: int) -> str:
    return f"must be between {lo} and {hi}, inclusive"


def not_found(path: str, value: Any) -> FieldError:
    """`Not found: "data"` (upstream field.NotFound)."""
    return FieldError(FieldErrorType.NOT_FOUND, path, "", value)


# ---------------------------------------------------------------------------------------------
# Object names (apimachinery ValidateNameFunc): `prefix` means a generateName, whose trailing
# dash is allowed because random characters will follow.


def _mask_trailing_dash(name: str) -> str:
    return name[:-1] + "a" if len(name) > 1 and name.endswith("-") else name


def name_is_dns_subdomain(name: str, prefix: bool) -> list[str]:
    return naming.is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool) -> list[str]:
    return naming.is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool) -> list[str]:
    return naming.is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def path_segment_name(name: str, prefix: bool) -> list[str]:
    """apiserver path.ValidatePathSegmentName: what every name must be to fit in a URL."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in name]


def validate_name(value: str, path: str, errs: Errs, fn: NameFn = name_is_dns_subdomain) -> None:
    for msg in fn(value, False):
        errs.append(invalid(path, value, msg))


def validate_dns_label(value: str, path: str, errs: Errs) -> None:
    for msg in naming.is_dns1123_label(value):
        errs.append(invalid(path, value, msg))


def validate_dns_subdomain(value: str, path: str, errs: Errs) -> None:
    for msg in naming.is_dns1123_subdomain(value):
        errs.append(invalid(path, value, msg))


def validate_qualified_name(value: str, path: str, errs: Errs) -> None:
    for msg in naming.is_qualified_name(value):
        errs.append(invalid(path, value, msg))


# ---------------------------------------------------------------------------------------------
# Labels and selectors


class ValidMemo:
    """Inputs already found valid (a bounded set of hashable keys).

    Validation is a pure function of its input, and the hot writes re-validate the same
    unchanged maps over and over (5000 kubelets' heartbeats re-check every node's labels,
    annotations and capacities 500 times a second). Only the valid outcome is remembered, so
    errors are always produced by the real checks, with their paths."""

    def __init__(self, limit: int = 16_384) -> None:
        self.limit = limit
        self._seen: set[Any] = set()

    def __contains__(self, key: Any) -> bool:
        return key is not None and key in self._seen

    def add(self, key: Any) -> None:
        if key is None:
            return
        if len(self._seen) >= self.limit:
            self._seen.clear()
        self._seen.add(key)


def items_key(mapping: Any) -> tuple | None:
    """A hashable key for a flat map of strings (None if it is not one)."""
    if not isinstance(mapping, dict):
        return None
    for k, v in mapping.items():
        if type(k) is not str or type(v) is not str:
            return None
    return tuple(mapping.items())


_VALID_LABELS = ValidMemo()


def validate_labels(labels: dict[str, str], path: str, errs: Errs) -> None:
    """Keys are qualified names, values label values; errors sit at the map's path itself."""
    key = items_key(labels)
    if key in _VALID_LABELS:
        return
    before = len(errs)
    for k, v in labels.items():
        validate_qualified_name(k, path, errs)
        for msg in naming.is_label_value(v):
            errs.append(invalid(path, v, msg))
    if len(errs) == before:
        _VALID_LABELS.add(key)


def validate_label_map(obj: Any, name: str, path: str, errs: Errs) -> dict[str, str]:
    """Read obj[name] as a label map, validate it, return it."""
    labels = get_str_map(obj, name, path, errs)
    validate_labels(labels, child(path, name), errs)
    return labels


_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


def validate_label_selector(selector: dict[str, Any], path: str, errs: Errs) -> None:
    """metav1 ValidateLabelSelector (invalid label values rejected)."""
    validate_label_map(selector, "matchLabels", path, errs)
    for _, expr, expr_path in iter_dicts(selector, "matchExpressions", path, errs):
        operator = get_str(expr, "operator", expr_path, errs)
        values = get_str_list(expr, "values", expr_path, errs)
        if operator in ("In", "NotIn"):
            if not values:
                errs.append(required(child(expr_path, "values"),
                                     "must be specified when `operator` is 'In' or 'NotIn'"))
        elif operator in ("Exists", "DoesNotExist"):
            if values:
                errs.append(forbidden(child(expr_path, "values"),
                                      "may not be specified when `operator` is 'Exists' or "
                                      "'DoesNotExist'"))
        else:
            errs.append(invalid(child(expr_path, "operator"), operator,
                                "not a valid selector operator"))
        validate_qualified_name(get_str(expr, "key", expr_path, errs), child(expr_path, "key"),
                                errs)
        values_path = child(expr_path, "values")
        for i, value in enumerate(values):
            for msg in naming.is_label_value(value):
                errs.append(invalid(index(values_path, i), value, msg))


# ---------------------------------------------------------------------------------------------
# Numbers and ports


def validate_nonnegative(value: int | None, path: str, errs: Errs) -> None:
    if value is not None and value < 0:
        errs.append(invalid(path, value, NEGATIVE))


def is_valid_port_num(port: int) -> list[str]:
    return [] if 1 <= port <= 65535 else [inclusive_range_error(1, 65535)]


_PORT_NAME_CHARSET = re.compile(r"[-a-z0-9]+\Z")
_ONE_LETTER = re.compile(r"[a-z]")


def is_valid_port_name(port: str) -> list[str]:
    """IANA_SVC_NAME: at most 15 of [-a-z0-9], a letter, no `--`, no dash at either end."""
    errs = []
    if len(port) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARSET.match(port):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _ONE_LETTER.search(port):
        errs.append("must contain at least one letter (a-z)")
    if "--" in port:
        errs.append("must not contain consecutive hyphens")
    if port and (port[0] == "-" or port[-1] == "-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def validate_port_num_or_name(value: Any, path: str, errs: Errs) -> None:
    """An IntOrString port: a number 1-65535 or an IANA service name."""
    if isinstance(value, bool) or value is None:
        errs.append(invalid(path, value, "must be an integer or a string"))
    elif isinstance(value, int):
        for msg in is_valid_port_num(value):
            errs.append(invalid(path, value, msg))
    elif isinstance(value, str):
        for msg in is_valid_port_name(value):
            errs.append(invalid(path, value, msg))
    else:
        errs.append(invalid(path, value, "must be an integer or a string"))


# ---------------------------------------------------------------------------------------------
# String formats


_ENV_VAR_NAME_FMT = "[-._a-zA-Z][-._a-zA-Z0-9]*"
_ENV_VAR_NAME = re.compile(_ENV_VAR_NAME_FMT + r"\Z")
_CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
_CONFIG_KEY = re.compile(_CONFIG_KEY_FMT + r"\Z")
_PERCENT_FMT = "[0-9]+%"
_PERCENT = re.compile(_PERCENT_FMT + r"\Z")
_HEADER_NAME_FMT = "[-A-Za-z0-9]+"
_HEADER_NAME = re.compile(_HEADER_NAME_FMT + r"\Z")


def _chdir_prefix(value: str) -> list[str]:
    if value == ".":
        return ["must not be '.'"]
    if value == "..":
        return ["must not be '..'"]
    if value.startswith(".."):
        return ["must not start with '..'"]
    return []


def is_env_var_name(value: str) -> list[str]:
    errs = []
    if not _ENV_VAR_NAME.match(value):
        errs.append(regex_error(
            "a valid environment variable name must consist of alphabetic characters, digits, "
            "'_', '-', or '.', and must not start with a digit",
            _ENV_VAR_NAME_FMT, "my.env-name", "MY_ENV.NAME", "MyEnvName1"))
    return errs + _chdir_prefix(value)


def is_config_map_key(value: str) -> list[str]:
    errs = []
    if len(value) > 253:
        errs.append("must be no more than 253 characters")
    if not _CONFIG_KEY.match(value):
        errs.append(regex_error(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
            _CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    return errs + _chdir_prefix(value)


def is_valid_percent(value: str) -> list[str]:
    if _PERCENT.match(value):
        return []
    return [regex_error("a valid percent string must be a numeric string followed by an "
                        "ending '%'", _PERCENT_FMT, "1%", "93%")]


def is_http_header_name(value: str) -> list[str]:
    if _HEADER_NAME.match(value):
        return []
    return [regex_error("a valid HTTP header must consist of alphanumeric characters or '-'",
                        _HEADER_NAME_FMT, "X-Header-Name")]


# ---------------------------------------------------------------------------------------------
# IP addresses (Go's net.ParseIP is "sloppy": IPv4 octets may have leading zeros)

_SLOPPY_V4 = re.compile(r"(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\Z")
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip(value: str) -> IPAddress | None:
    if not value or "%" in value:
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        pass
    match = _SLOPPY_V4.match(value)
    if match and all(int(octet) <= 255 for octet in match.groups()):
        return ipaddress.IPv4Address(".".join(str(int(octet)) for octet in match.groups()))
    return None


def validate_ip(value: str, path: str, errs: Errs) -> bool:
    if parse_ip(value) is None:
        errs.append(invalid(path, value, "must be a valid IP address, (e.g. 10.9.8.7 or "
                                         "2001:db8::ffff)"))
        return False
    return True


def validate_non_special_ip(value: str, path: str, errs: Errs) -> None:
    """Endpoints and external IPs may not be unspecified, loopback or link-local."""
    ip = parse_ip(value)
    if ip is None:
        errs.append(invalid(path, value, "must be a valid IP address"))
        return
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_unspecified:
        errs.append(invalid(path, value, f"may not be unspecified ({value})"))
    if ip.is_loopback:
        errs.append(invalid(path, value, "may not be in the loopback range (127.0.0.0/8, ::1/128)"))
    if ip.is_link_local:
        errs.append(invalid(path, value, "may not be in the link-local range (169.254.0.0/16, "
                                         "fe80::/10)"))
    if _link_local_multicast(ip):
        errs.append(invalid(path, value, "may not be in the link-local multicast range "
                                         "(224.0.0.0/24, ff02::/10)"))


def _link_local_multicast(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv4Address):
        return ip.packed[:3] == b"\xe0\x00\x00"
    return ip.packed[0] == 0xFF and ip.packed[1] & 0x0F == 0x02


def validate_cidr(value: str, path: str, errs: Errs) -> None:
    try:
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        errs.append(invalid(path, value, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or "
                                         "2001:db8::/64)"))


# ---------------------------------------------------------------------------------------------
# Equality and immutability


def semantic(value: Any) -> Any:
    """Upstream compares typed structs, where an omitted field, null, "", 0, false, {} and []
    are all the zero value. Normalise decoded JSON the same way before comparing."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            norm = semantic(v)
            if norm is not None:
                out[k] = norm
        return out or None
    if isinstance(value, list):
        return [semantic(v) for v in value] or None
    if value == "" or value is False or (isinstance(value, (int, float)) and value == 0):
        return None
    return value


def semantic_equal(a: Any, b: Any) -> bool:
    return a == b or semantic(a) == semantic(b)


def validate_immutable(new: Any, old: Any, path: str, errs: Errs) -> None:
    """`Invalid value: <new>: field is immutable` unless new and old are semantically equal."""
    if not semantic_equal(new, old):
        errs.append(invalid(path, new, IMMUTABLE))


def sub(obj: Any, *names: str) -> Any:
    """obj[n1][n2]... or None, without reporting anything (for reading old objects)."""
    for name in names:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(name)
    return obj



def validate_port_and_protocol(port: dict[str, Any], path: str, errs: Errs) -> None:
    """`port` (1-65535) and `protocol` (TCP, UDP, SCTP; required once defaulted) of a service
    or endpoints port entry."""
    number = get_int(port, "port", path, errs) or 0
    for msg in is_valid_port_num(number):
        errs.append(invalid(child(path, "port"), number, msg))
    protocol = get_str(port, "protocol", path, errs, required_=True)
    if protocol and protocol not in PROTOCOLS:
        errs.append(not_supported(child(path, "protocol"), protocol, PROTOCOLS))
