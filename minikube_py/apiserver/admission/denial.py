"""The Forbidden error every admission plugin returns (upstream admission.NewForbidden).

Kubernetes piece: k8s.io/apiserver/pkg/admission/errors.go. Upstream wraps a plugin's reason
as `<resource> "<name>" is forbidden: <reason>` with a 403 Forbidden Status naming the object;
all plugins here share this one helper so the message and details never drift apart.
"""

from __future__ import annotations

from ...api import errors
from .chain import Attributes


def forbidden(attrs: Attributes, reason: str) -> errors.StatusError:
    """403 Forbidden `<resource> "<name>" is forbidden: <reason>` for the request in `attrs`."""
    strategy = attrs.strategy
    resource = f"{strategy.resource}.{strategy.group}" if strategy.group else strategy.resource
    return errors.forbidden_request(f'{resource} "{attrs.name}" is forbidden: {reason}',
                                    strategy.resource, attrs.name, strategy.group)


def aggregate(messages: list[str]) -> str:
    """Upstream utilerrors.NewAggregate's text: one message alone, several as `[a, b]`."""
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
