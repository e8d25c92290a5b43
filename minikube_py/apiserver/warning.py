"""Warning headers, as the API server records and writes them.

Kubernetes piece: k8s.io/apiserver/pkg/endpoints/filters/warning.go (the per-request recorder)
and k8s.io/apimachinery/pkg/util/net's NewWarningHeader. Each warning is its own `Warning:
299 - "text"` header line, in the order added; a repeated text is written once; `\\` and `"` are
escaped; a text with a control character (or that is not valid UTF-8) is not written at all, so
a field name chosen by a client cannot break the header. At most 4096 runes of text are written:
the warning that would pass that limit switches to truncation, every warning so far is written
again cut to 256 runes, and later ones are cut too until the limit is reached, after which they
are dropped.

Pure: `WarningRecorder.add()` per warning, `headers` for the response.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

TRUNCATE_AT_TOTAL_RUNES = 4 * 1024
TRUNCATE_ITEM_RUNES = 256


def warning_header(text: str, agent: str = "-", code: int = 299) -> str | None:
    """NewWarningHeader: the header value, or None where upstream returns an error."""
    if not _valid_text(text):
        return None
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'{code:03d} {agent} "{escaped}"'


def _valid_text(text: str) -> bool:
    """Valid UTF-8 (no lone surrogates) and no control character (Go's unicode.IsControl:
    C0, DEL and C1)."""
    return not any(unicodedata.category(c) in ("Cc", "Cs") for c in text)


@dataclass
class WarningRecorder:
    """One request's warnings (upstream's `recorder`)."""

    limit: int = TRUNCATE_AT_TOTAL_RUNES
    item_limit: int = TRUNCATE_ITEM_RUNES
    headers: list[str] = field(default_factory=list)
    _ordered: list[str] = field(default_factory=list)
    _recorded: set[str] = field(default_factory=set)
    _written: int = 0
    _truncating: bool = False

    def add(self, text: str) -> None:
        if not text or (self._written >= self.limit and self._truncating) or text in self._recorded:
            return
        self._recorded.add(text)
        self._ordered.append(text)
        if self._truncating:
            text = text[:self.item_limit]
        header = warning_header(text)
        if header is None:
            return
        if self._written + len(text) <= self.limit or self._truncating:
            self._written += len(text)
            self.headers.append(header)
            return
        self._truncating, self._written = True, 0
        self.headers = []
        for previous in self._ordered:
            cut = previous[:self.item_limit]
            header = warning_header(cut)
            if header is not None:
                self._written += len(cut)
                self.headers.append(header)


def warning_headers(texts: list[str]) -> list[str]:
    """The header values for a request's warnings, in order."""
    recorder = WarningRecorder()
    for text in texts:
        recorder.add(text)
    return recorder.headers
