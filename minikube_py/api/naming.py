"""Name and label syntax checks shared by validation and selectors.

Kubernetes v1.0 piece: pkg/util/validation.go (IsDNS1123Label, IsDNS1123Subdomain,
IsDNS952Label, IsQualifiedName, IsValidLabelValue). Each check returns a list of
human-readable problems (empty = valid), in upstream's words, so the same text appears in
`Invalid` Status causes and in selector parse errors. Results are memoised: the same label
keys, values and names recur on every object, and validation runs on every write.
"""

from __future__ import annotations

import re
from functools import lru_cache

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
DNS1035_LABEL_MAX = 63
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)
_DNS1035_LABEL = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")
_LABEL_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


def is_dns1123_label(value: str) -> list[str]:
    return list(_is_dns1123_label(value))


@lru_cache(maxsize=8192)
def _is_dns1123_label(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > DNS1123_LABEL_MAX:
        errs.append(f"must be no more than {DNS1123_LABEL_MAX} characters")
    if not _DNS1123_LABEL.match(value):
        errs.append(
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or "
            "'-', and must start and end with an alphanumeric character (e.g. 'my-name',  or "
            "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        )
    return tuple(errs)


def is_dns1123_subdomain(value: str) -> list[str]:
    return list(_is_dns1123_subdomain(value))


@lru_cache(maxsize=8192)
def _is_dns1123_subdomain(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errs.append(f"must be no more than {DNS1123_SUBDOMAIN_MAX} characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        errs.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character (e.g. "
            "'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        )
    return tuple(errs)


def is_dns1035_label(value: str) -> list[str]:
    return list(_is_dns1035_label(value))


@lru_cache(maxsize=8192)
def _is_dns1035_label(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > DNS1035_LABEL_MAX:
        errs.append(f"must be no more than {DNS1035_LABEL_MAX} characters")
    if not _DNS1035_LABEL.match(value):
        errs.append(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
            "with an alphabetic character, and end with an alphanumeric character (e.g. "
            "'my-name',  or 'abc-123', regex used for validation is "
            "'[a-z]([-a-z0-9]*[a-z0-9])?')"
        )
    return tuple(errs)


def is_qualified_name(value: str) -> list[str]:
    return list(_is_qualified_name(value))


@lru_cache(maxsize=8192)
def _is_qualified_name(value: str) -> tuple[str, ...]:
    """A label or annotation key: optional DNS-subdomain prefix and '/', then a name of at most
    63 characters of alphanumerics, '-', '_' and '.'."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + e for e in is_dns1123_subdomain(prefix))
    else:
        return (
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is "
            "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix "
            "and '/' (e.g. 'example.com/MyName')",
        )
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        errs.append(f"name part must be no more than {QUALIFIED_NAME_MAX} characters")
    if name and not _QUALIFIED_NAME.match(name):
        errs.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
            "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        )
    return tuple(errs)


def is_label_value(value: str) -> list[str]:
    return list(_is_label_value(value))


@lru_cache(maxsize=8192)
def _is_label_value(value: str) -> tuple[str, ...]:
    errs = []
    if len(value) > LABEL_VALUE_MAX:
        errs.append(f"must be no more than {LABEL_VALUE_MAX} characters")
    if not _LABEL_VALUE.match(value):
        errs.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', "
            "'_' or '.', and must start and end with an alphanumeric character (e.g. "
            "'MyValue',  or 'my_value',  or '12345', regex used for validation is "
            "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        )
    return tuple(errs)
