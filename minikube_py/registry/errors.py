"""Storage failures as Kubernetes Status errors.

Kubernetes v1.0 piece: pkg/api/errors/etcd (InterpretGetError, InterpretCreateError,
InterpretUpdateError, InterpretDeleteError): the registry speaks Status, never storage errors,
so the API server has one error type to render.
"""

from __future__ import annotations

from ..api import errors
from ..storage import (
    CompactedError,
    ConflictError,
    FutureRevisionError,
    InvalidContinueError,
    KeyExistsError,
    KeyNotFoundError,
    StorageError,
    UnavailableError,
    ValueTooLargeError,
)
from .strategy import Strategy


def interpret(exc: StorageError, strategy: Strategy, name: str = "") -> errors.StatusError:
    res, group = strategy.resource, strategy.group
    if isinstance(exc, KeyNotFoundError):
        return errors.not_found(res, name, group)
    if isinstance(exc, KeyExistsError):
        return errors.already_exists(res, name, group)
    if isinstance(exc, ConflictError):
        return errors.conflict(res, name, errors.OBJECT_MODIFIED, group)
    if isinstance(exc, CompactedError):
        return errors.too_old_resource_version(exc.requested_revision, exc.compact_revision)
    if isinstance(exc, FutureRevisionError):
        return errors.StatusError(
            504, "Timeout", f"Too large resource version: {exc}",
            {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
             "retryAfterSeconds": 1},
        )
    if isinstance(exc, InvalidContinueError):
        return errors.bad_request(f"invalid continue token: {exc}")
    if isinstance(exc, ValueTooLargeError):
        return errors.StatusError(413, "RequestEntityTooLarge", f"etcdserver: request is too large: {exc}")
    if isinstance(exc, UnavailableError):
        return errors.service_unavailable(f"storage is unavailable: {exc}")
    return errors.internal_error(str(exc))
