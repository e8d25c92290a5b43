"""openapi_v2_proto.encode_document(reuse=...): a rebuild re-encodes only what changed."""

from __future__ import annotations

import copy

from minikube_py.apiserver.openapi_v2_proto import encode_document


def _document() -> dict:
    return {"swagger": "2.0", "info": {"title": "Kubernetes", "version": "v"},
            "paths": {"/apis/x/v1/ws": {"get": {"operationId": "listW", "responses": {
                "200": {"description": "OK"}}}}},
            "definitions": {"a.v1.W": {"type": "object", "properties": {
                "spec": {"type": "object"}}}, "a.v1.V": {"type": "string"}}}


def test_reuse_gives_the_same_bytes_and_keeps_only_this_documents_entries() -> None:
    document = _document()
    memo: dict = {}
    plain = encode_document(copy.deepcopy(document))
    assert encode_document(document, memo) == plain
    assert {key for _, key, _ in memo.values()} == {"/apis/x/v1/ws", "a.v1.W", "a.v1.V"}
    assert encode_document(document, memo) == plain  # from the memo this time

    changed = dict(document, definitions={**document["definitions"],
                                          "a.v1.V": {"type": "integer"}})
    del changed["definitions"]["a.v1.W"]
    again = encode_document(changed, memo)
    assert again == encode_document(copy.deepcopy(changed))
    assert {key for _, key, _ in memo.values()} == {"/apis/x/v1/ws", "a.v1.V"}


def test_a_value_under_another_name_is_not_taken_from_the_memo() -> None:
    document = _document()
    memo: dict = {}
    encode_document(document, memo)
    schema = document["definitions"].pop("a.v1.V")
    document["definitions"]["a.v1.Renamed"] = schema  # same object, new key
    assert encode_document(document, memo) == encode_document(copy.deepcopy(document))
