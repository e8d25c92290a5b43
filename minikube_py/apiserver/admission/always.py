"""AlwaysAdmit and AlwaysDeny: the two trivial admission plugins.

Kubernetes v1.0 piece: plugin/pkg/admission/admit and plugin/pkg/admission/deny. AlwaysAdmit
lets everything through; AlwaysDeny refuses every write with 403 Forbidden and upstream's
message "admission control is denying all modifications" (useful in tests and lockdowns).
"""

from __future__ import annotations

from .chain import Attributes
from .denial import forbidden

DENY_MESSAGE = "admission control is denying all modifications"


class AlwaysAdmit:
    name = "AlwaysAdmit"

    async def admit(self, attrs: Attributes) -> None:
        return None


class AlwaysDeny:
    name = "AlwaysDeny"

    async def admit(self, attrs: Attributes) -> None:
        raise forbidden(attrs, DENY_MESSAGE)
