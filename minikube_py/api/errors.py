"""Status errors: one exception type carrying a Kubernetes `Status`, rendered in one place.

Kubernetes v1.0 piece: pkg/api/errors (StatusError, NewNotFound, NewAlreadyExists,
NewConflict, NewInvalid, NewBadRequest, ...) and pkg/util/fielderrors (ValidationError with
its ErrorType strings). Every failure the API server answers is one of these, so the reason,
the code and the message a person reads are decided here and nowhere else. The messages
follow upstream word for word because kubectl prints them verbatim (`Error from server
(NotFound): pods "nope" not found`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson


class FieldErrorType:
    """The `reason` of a validation cause (upstream field.ErrorType strings)."""

    NOT_FOUND = "FieldValueNotFound"
    REQUIRED = "FieldValueRequired"
    DUPLICATE = "FieldValueDuplicate"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    TYPE_INVALID = "FieldValueTypeInvalid"


_TYPE_TEXT = {
    FieldErrorType.NOT_FOUND: "Not found",
    FieldErrorType.REQUIRED: "Required value",
    FieldErrorType.DUPLICATE: "Duplicate value",
    FieldErrorType.INVALID: "Invalid value",
    FieldErrorType.NOT_SUPPORTED: "Unsupported value",
    FieldErrorType.FORBIDDEN: "Forbidden",
    FieldErrorType.TOO_LONG: "Too long",
    FieldErrorType.TOO_MANY: "Too many",
    FieldErrorType.TYPE_INVALID: "Invalid value",
}

_OMIT = object()


@dataclass(frozen=True)
class FieldError:
    """One validation failure at a field path (upstream field.Error).

    `value` is shown for Invalid/NotSupported/Duplicate ("Invalid value: \"Foo\": detail");
    leave it unset for Required/Forbidden, which upstream prints without a value."""

    type: str
    field: str
    detail: str = ""
    value: Any = _OMIT

    def message(self) -> str:
        """`spec.containers[0].image: Required value` — upstream field.Error.Error()."""
        return f"{self.field}: {self.body()}"

    def body(self) -> str:
        text = _TYPE_TEXT.get(self.type, self.type)
        if self.value is not _OMIT and self.type not in (
            FieldErrorType.REQUIRED,
            FieldErrorType.FORBIDDEN,
            FieldErrorType.TOO_LONG,
            FieldErrorType.TOO_MANY,
        ):
            text += ": " + _value_text(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


class GoValue(str):
    """A bad value already written as Go's `%#v` prints it (`[]string{"x"}`): field errors
    show it as is."""


def go_string_slice(values: Iterable[str]) -> GoValue:
    """`[]string{"a", "b"}`, as Go's `%#v` prints a []string."""
    from .params import go_quote
    return GoValue("[]string{" + ", ".join(go_quote(v) for v in values) + "}")


def _value_text(value: Any) -> str:
    if isinstance(value, GoValue):
        return str(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return repr(value)


# Convenience constructors, so validators read like upstream's field.Required(path, detail).
def required(path: str, detail: str = "") -> FieldError:
    return FieldError(FieldErrorType.REQUIRED, path, detail)


def invalid(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(FieldErrorType.INVALID, path, detail, value)


def not_supported(path: str, value: Any, valid: Iterable[str]) -> FieldError:
    quoted = ", ".join(orjson.dumps(v).decode() for v in valid)
    return FieldError(FieldErrorType.NOT_SUPPORTED, path, f"supported values: {quoted}", value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FieldErrorType.FORBIDDEN, path, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(FieldErrorType.DUPLICATE, path, "", value)


def too_long(path: str, max_length: int) -> FieldError:
    return FieldError(FieldErrorType.TOO_LONG, path, f"may not be more than {max_length} bytes")


@dataclass
class StatusError(Exception):
    """A failed request as Kubernetes reports it: HTTP `code`, `reason`, `message`, `details`.

    Raised anywhere below the HTTP layer; the API server renders `status()` as the body with
    `code` as the HTTP status (apiserver/status.go). `headers` carries e.g. Retry-After."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        """metav1.Status in its Go struct's field order (kind, apiVersion, metadata, status,
        message, reason, details, code): clients and tests compare the bytes."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:  # omitempty: an error that is not a Status has none (ErrorToAPIStatus)
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = ordered_details(self.details)
        body["code"] = self.code
        return body


#: metav1.StatusDetails' fields in its Go struct's order, each `omitempty`
_DETAIL_FIELDS = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")


def ordered_details(details: dict[str, Any]) -> dict[str, Any]:
    """StatusDetails as Go encodes it: upstream's field order, empty fields left out (a
    details object with nothing in it is still `{}`: kubectl debug dereferences it)."""
    ordered = {k: details[k] for k in _DETAIL_FIELDS if details.get(k) not in (None, "", 0, [])}
    ordered.update((k, v) for k, v in details.items() if k not in _DETAIL_FIELDS)
    return ordered


def _qualified(resource: str, group: str) -> str:
    return f"{resource}.{group}" if group else resource


def _details(name: str, resource: str, group: str, kind: str | None = None) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name, "kind": kind or resource}
    if group:
        details["group"] = group
    return details


def not_found(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(
        404, "NotFound", f'{_qualified(resource, group)} "{name}" not found',
        _details(name, resource, group),
    )


def already_exists(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(
        409, "AlreadyExists", f'{_qualified(resource, group)} "{name}" already exists',
        _details(name, resource, group),
    )


def conflict(resource: str, name: str, reason: str, group: str = "") -> StatusError:
    return StatusError(
        409, "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {reason}',
        _details(name, resource, group),
    )


OBJECT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


#: field errors a 422 reports (upstream reports all: a 3 MiB body of 600,000 bad finalizers made a
#: 174 MB Status here, and formatting it held the event loop for seconds)
MAX_REPORTED_ERRORS = 100


def invalid_object(kind: str, name: str, errors: list[FieldError], group: str = "") -> StatusError:
    """422 Invalid: `Pod "x" is invalid: spec.containers[0].image: Required value` (upstream
    NewInvalid aggregates several causes as `[a, b]`). Past MAX_REPORTED_ERRORS, the rest are
    counted: `[..., and 599900 more errors]`."""
    reported = errors[:MAX_REPORTED_ERRORS]
    messages = [e.message() for e in reported]
    if len(errors) > len(reported):
        messages.append(f"and {len(errors) - len(reported)} more errors")
    joined = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    details = _details(name, kind, group, kind)
    details["causes"] = [e.cause() for e in reported]
    return StatusError(422, "Invalid", f'{kind}.{group} "{name}" is invalid: {joined}'
                       if group else f'{kind} "{name}" is invalid: {joined}', details)


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden_request(message: str, resource: str = "", name: str = "", group: str = "") -> StatusError:
    details = _details(name, resource, group) if resource else None
    return StatusError(403, "Forbidden", message, details)


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return StatusError(401, "Unauthorized", message)


def method_not_allowed() -> StatusError:
    """The 405 of a path with no route for the method (go-restful's, through upstream's
    NewGenericServerResponse): a fixed message and empty details, whatever the resource."""
    return StatusError(405, "MethodNotAllowed",
                       "the server does not allow this method on the requested resource", {})


def gone_expired(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def too_old_resource_version(requested: int, oldest: int) -> StatusError:
    return gone_expired(f"too old resource version: {requested} ({oldest})")


def request_entity_too_large(limit: int) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}")


def too_many_requests(retry_after: int = 1) -> StatusError:
    return StatusError(
        429, "TooManyRequests", "Too many requests, please try again later.",
        {"retryAfterSeconds": retry_after}, {"Retry-After": str(retry_after)},
    )


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(415, "UnsupportedMediaType", f'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf (got "{content_type}")')


def not_acceptable(accept: str) -> StatusError:
    return StatusError(406, "NotAcceptable", f'only the following media types are accepted: application/json, application/yaml, application/json;as=Table;v=v1;g=meta.k8s.io (got "{accept}")')


def not_found_path() -> StatusError:
    """The 404 of upstream's NotFoundHandler, `details` included but empty (`"details":{}`):
    kubectl debug dereferences it and panicked on our Status without one."""
    return StatusError(404, "NotFound", "the server could not find the requested resource", {})


def internal_error(message: str) -> StatusError:
    return StatusError(500, "InternalError", f"Internal error occurred: {message}")


def timeout(message: str) -> StatusError:
    return StatusError(504, "Timeout", message)


def service_unavailable(message: str) -> StatusError:
    return StatusError(503, "ServiceUnavailable", message)
