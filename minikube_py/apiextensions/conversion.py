"""Converting custom resources between the versions of their CRD.

Kubernetes piece: apiextensions-apiserver's pkg/apiserver/conversion (converter.go's
crConverter over the nop converter, webhook_converter.go's webhookConverter). A multi-version
CRD stores every object in its storage version, under one key space; each served version's
registry converts at its edges (registry/generic.py): a write in another version is converted
to the storage version before it is stored and back for the response, a read (get, list,
watch) is converted to the version asked for.

Two strategies, as upstream:
- `None`: only `apiVersion` changes (pure, synchronous, nothing else is touched);
- `Webhook`: a `ConversionReview` (v1, or v1beta1 when that is all the CRD accepts) is POSTed
  to `spec.conversion.webhook.clientConfig` with every object that is not yet in the desired
  version -- all the items of a list in ONE review, as upstream batches them. The answer is
  checked as upstream checks it (review kind, uid, `result.status`, object count, apiVersion
  and kind of each converted object, name/namespace/uid unchanged) and the metadata of each
  original is restored, keeping only the webhook's labels and annotations
  (`restoreObjectMeta`). Any failure is upstream's plain error, a 500 Status without reason:
  `conversion webhook for <group>/<version>, Kind=<Kind> failed: <why>`.

The pure half (building a review, checking an answer, restoring metadata) is separate from the
one I/O call (`post`, the API server's webhook client with the upstream 30 s deadline), so it
is tested alone.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from .. import offload
from ..api import errors, meta
from ..api.validation.common import validate_labels
from ..api.validation.meta import validate_annotations
from .cache import schema_for
from .schema import Node, prune_and_default

Obj = dict[str, Any]
#: POSTs a ConversionReview within the timeout, answers the decoded response; a call that
#: produced no usable answer (connection, TLS, deadline, not JSON) raises ConversionFailed
Post = Callable[[Obj, float], Awaitable[Obj]]

#: upstream's conversion webhook client timeout (`?timeout=30s` on every call)
WEBHOOK_TIMEOUT = 30.0
REVIEW_VERSIONS = ("v1", "v1beta1")


class ConversionFailed(Exception):
    """Why a conversion did not produce objects (the part after `failed: `)."""


class InvalidConverted(Exception):
    """A converted object the webhook must not have produced (wrong version, kind, identity)."""


class InvalidMetadata(Exception):
    """Metadata of a converted object that cannot be restored (labels, annotations)."""


def webhook_failure(source_api_version: str, kind: str, why: str) -> errors.StatusError:
    """Upstream's error, rendered as ErrorToAPIStatus renders a non-Status error: 500, no
    reason, the text as the message."""
    return errors.StatusError(
        500, "", f"conversion webhook for {source_api_version}, Kind={kind} failed: {why}")


def set_api_version(obj: Obj, api_version: str) -> Obj:
    """The nop converter: a copy of `obj` with `apiVersion` changed, nothing else."""
    if obj.get("apiVersion") == api_version:
        return obj
    out = dict(obj)
    out["apiVersion"] = api_version
    return out


def review_request(objects: Sequence[Obj], desired: str, uid: str, review_version: str) -> Obj:
    """The ConversionReview upstream sends (createConversionReviewObjects)."""
    return {"apiVersion": f"apiextensions.k8s.io/{review_version}", "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": list(objects)}}


def converted_objects(answer: Obj, uid: str, review_version: str) -> list[Any]:
    """The `convertedObjects` of a review answer (getConvertedObjectsFromResponse); v1beta1
    answers are not checked for kind and uid, as upstream keeps them compatible."""
    if review_version == "v1" and (answer.get("apiVersion"), answer.get("kind")) != (
            "apiextensions.k8s.io/v1", "ConversionReview"):
        raise ConversionFailed(
            "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got "
            f"{answer.get('apiVersion') or ''}, Kind={answer.get('kind') or ''}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ConversionFailed("no response provided")
    if review_version == "v1" and response.get("uid") != uid:
        raise ConversionFailed(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    result = response.get("result") if isinstance(response.get("result"), dict) else {}
    if result.get("status") != "Success":
        if result.get("message"):
            raise ConversionFailed(str(result["message"]))
        raise ConversionFailed(
            f"response.result.status was '{result.get('status') or ''}', not 'Success'")
    objects = response.get("convertedObjects")
    return list(objects) if isinstance(objects, list) else []


def check_converted(original: Obj, converted: Any, desired: str) -> Obj:
    """One converted object, checked (validateConvertedObject: InvalidConverted) and with the
    original's metadata restored except labels and annotations, which are validated when the
    webhook changed them (restoreObjectMeta: InvalidMetadata)."""
    if not isinstance(converted, dict):
        raise InvalidConverted("not a JSON object")
    if converted.get("apiVersion") != desired:
        raise InvalidConverted(f"invalid groupVersion (expected {desired}, received "
                               f"{converted.get('apiVersion') or ''})")
    if converted.get("kind") != original.get("kind"):
        raise InvalidConverted(f"invalid kind (expected {original.get('kind')}, received "
                               f"{converted.get('kind') or ''})")
    before, after = original.get("metadata") or {}, converted.get("metadata")
    for field, label in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        theirs = after.get(field, "") if isinstance(after, dict) else ""
        if (before.get(field) or "") != (theirs or ""):
            raise InvalidConverted(f"must have the same {label}: {before.get(field) or ''} != "
                                   f"{theirs or ''}")
    if not isinstance(after, dict):
        raise InvalidMetadata("missing metadata in converted object")
    restored = orjson.loads(orjson.dumps(before))  # ~7x cheaper than copy.deepcopy
    for field in ("labels", "annotations"):
        value = after.get(field)
        if value is None:
            restored.pop(field, None)
            continue
        if not isinstance(value, dict):
            raise InvalidMetadata(f"invalid metadata.{field} of type {type(value).__name__} in "
                                  "converted object")
        for key, item in value.items():
            if not isinstance(item, str):
                raise InvalidMetadata(f"metadata.{field}[{key}] must be a string, but is "
                                      f"{type(item).__name__} in converted object")
        if value != before.get(field):
            errs: list[errors.FieldError] = []
            if field == "labels":
                validate_labels(value, "metadata.labels", errs)
            else:  # upstream's path, singular
                validate_annotations(value, "metadata.annotation", errs)
            if errs:
                texts = [e.message() for e in errs]
                raise InvalidMetadata(texts[0] if len(texts) == 1 else f"[{', '.join(texts)}]")
        restored[field] = value
    out = dict(converted)
    out["metadata"] = restored
    return out


@dataclass(frozen=True, eq=False)
class Converter:
    """The conversion of one CRD (`spec.conversion`), shared by all its versions' registries.

    `post` is None for strategy None; `storage_api_version` is the form objects are written
    in; `schemas` (apiVersion -> structural schema) when the versions' schemas differ: a
    converted object is then pruned to its new version's schema, as upstream's
    schemaCoercingConverter does (None: every version has the same schema, pruning would
    change nothing). `convert` never mutates its inputs."""

    group: str
    kind: str
    storage_version: str
    post: Post | None = None
    review_version: str = "v1"
    timeout: float = WEBHOOK_TIMEOUT
    schemas: Mapping[str, Node] | None = None

    @property
    def storage_api_version(self) -> str:
        return f"{self.group}/{self.storage_version}"

    @property
    def api_version_only(self) -> bool:
        """Whether converting changes nothing but `apiVersion` (None, one schema for all): the
        registry then swaps it in the stored bytes without decoding them."""
        return self.post is None and self.schemas is None

    async def convert(self, objects: Sequence[Obj], api_version: str) -> list[Obj]:
        """`objects` in `api_version`; those already in it are returned as they are."""
        todo = [i for i, obj in enumerate(objects) if obj.get("apiVersion") != api_version]
        out = list(objects)
        if not todo:
            return out
        if self.post is None:
            for i in todo:
                out[i] = set_api_version(objects[i], api_version)
        else:
            await self._call_webhook(objects, out, todo, api_version)
        node = self.schemas.get(api_version) if self.schemas is not None else None
        if node is not None:  # the request is weighed already: a big one prunes on the worker
            pruned = await offload.run(_pruned, [out[i] for i in todo], node)
            for i, obj in zip(todo, pruned):
                out[i] = obj
        return out

    async def _call_webhook(self, objects: Sequence[Obj], out: list[Obj], todo: list[int],
                            api_version: str) -> None:
        """One ConversionReview for the objects at `todo`; its answer is checked on the worker
        for a heavy request (a list of thousands of objects), results into `out`."""
        source = str(objects[todo[0]].get("apiVersion") or "")
        uid = meta.new_uid()
        originals = [objects[i] for i in todo]
        review = review_request(originals, api_version, uid, self.review_version)
        assert self.post is not None
        try:
            answer = await self.post(review, self.timeout)
        except ConversionFailed as exc:
            raise webhook_failure(source, self.kind, str(exc)) from None
        checked = await offload.run(self._checked, answer, uid, originals, api_version, source)
        for i, obj in zip(todo, checked):
            out[i] = obj

    def _checked(self, answer: Obj, uid: str, originals: list[Obj], api_version: str,
                 source: str) -> list[Obj]:
        """The converted objects of `answer`, checked one by one against `originals`; any
        problem is upstream's 500."""
        prefix = f"conversion webhook for {source}, Kind={self.kind}"
        try:
            converted = converted_objects(answer, uid, self.review_version)
        except ConversionFailed as exc:
            raise errors.StatusError(500, "", f"{prefix} failed: {exc}") from None
        if len(converted) != len(originals):
            raise errors.StatusError(500, "", f"{prefix} returned {len(converted)} objects, "
                                              f"expected {len(originals)}")
        out = []
        for k, (original, item) in enumerate(zip(originals, converted)):
            try:
                out.append(check_converted(original, item, api_version))
            except (InvalidConverted, InvalidMetadata) as exc:
                what = _invalid_what(exc, k if len(originals) > 1 else None)
                raise errors.StatusError(500, "", f"{prefix} returned {what}: {exc}") from None
        return out


def _invalid_what(exc: Exception, index: int | None) -> str:
    """Upstream's wording for a bad converted object, alone or at `index` of a list."""
    if isinstance(exc, InvalidMetadata):
        return "invalid metadata" if index is None else f"invalid metadata in object at index {index}"
    return "invalid object" if index is None else f"invalid converted object at index {index}"


def _pruned(objects: list[Obj], node: Node) -> list[Obj]:
    """Copies of `objects` pruned to `node` (they may share nested values with the input)."""
    out = []
    for obj in objects:
        obj = orjson.loads(orjson.dumps(obj))
        prune_and_default(obj, node, defaults=False)
        out.append(obj)
    return out


def storage_version(spec: Obj) -> str:
    """The name of the version marked `storage: true` ("" when the spec has none)."""
    for version in spec.get("versions") or ():
        if isinstance(version, dict) and version.get("storage") is True:
            return str(version.get("name") or "")
    return ""


def converter_for(crd: Obj, post_for: Callable[[Obj], Post] | None) -> Converter:
    """The Converter of a (validated) CRD; `post_for(clientConfig)` makes the webhook call
    (the API server's webhook client), absent where nothing may call out."""
    spec = crd["spec"]
    names = spec.get("names") or {}
    conversion = spec.get("conversion") or {}
    group, kind, storage = spec["group"], names.get("kind", ""), storage_version(spec)
    schemas = _schemas_if_different(crd)
    if conversion.get("strategy") != "Webhook" or post_for is None:
        return Converter(group, kind, storage, schemas=schemas)
    webhook = conversion.get("webhook") or {}
    accepted = [v for v in webhook.get("conversionReviewVersions") or () if v in REVIEW_VERSIONS]
    return Converter(group, kind, storage, post=post_for(webhook.get("clientConfig") or {}),
                     review_version=accepted[0] if accepted else "v1", schemas=schemas)


def _schemas_if_different(crd: Obj) -> dict[str, Node] | None:
    """Each version's compiled schema by apiVersion, or None when they are all the same."""
    versions = [v for v in crd["spec"].get("versions") or () if isinstance(v, dict)]
    raw = [(v.get("schema") or {}).get("openAPIV3Schema") for v in versions]
    if all(schema == raw[0] for schema in raw):
        return None
    group = crd["spec"]["group"]
    return {f"{group}/{v['name']}": schema_for(crd, v) for v in versions}


def deprecation_warning(group: str, kind: str, version: Obj) -> str:
    """The Warning a request to a deprecated version gets: `deprecationWarning`, or upstream's
    default `<group>/<version> <Kind> is deprecated`; "" when the version is not deprecated."""
    if not version.get("deprecated"):
        return ""
    text = version.get("deprecationWarning")
    if isinstance(text, str) and text:
        return text
    return f"{group}/{version.get('name')} {kind} is deprecated"
