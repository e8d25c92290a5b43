"""Query parameters as the API server decodes them.

Kubernetes piece: k8s.io/apimachinery/pkg/runtime's parameter codec and its conversions
(`Convert_Slice_string_To_bool`): a boolean query parameter is false when it is absent, `0` or
`false` in any letter case, and true for anything else — `?watch=true`, `?watch=1`, but also
`?watch=True` (kubernetes_asyncio), `?stdout=True` and even `?watch=`. Clients nobody here
wrote send all of these; one function reads them all the same way.
"""

from __future__ import annotations


def parse_bool(value: str | None) -> bool:
    """A boolean query parameter's value (None when absent), as upstream converts it."""
    if value is None:
        return False
    return value != "0" and value.lower() != "false"
