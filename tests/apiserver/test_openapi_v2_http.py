"""GET /openapi/v2 and /version over HTTP, as kube-openapi's handler and a 1.31 build answer."""

from __future__ import annotations

import re

from tests.apiserver.conftest import API

PROTOBUF_ASKED = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
PROTOBUF_SENT = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"


async def _get(api: API, accept: str | None = None, etag: str | None = None):
    headers = {}
    if accept is not None:
        headers["Accept"] = accept
    if etag is not None:
        headers["If-None-Match"] = etag
    async with api.session.get(api.url + "/openapi/v2", headers=headers) as resp:
        return resp.status, resp.headers, await resp.read()


async def test_json_document_with_etag_and_304(api: API) -> None:
    status, headers, body = await _get(api, "application/json")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert headers["Vary"] == "Accept" and re.fullmatch(r'"[0-9A-F]{128}"', headers["ETag"])
    assert body.startswith(b'{"swagger":"2.0"') and b'"dryRun"' in body
    status, again, body = await _get(api, "application/json", headers["ETag"])
    assert status == 304 and body == b"" and again["ETag"] == headers["ETag"]
    status, _, body = await _get(api, "application/json", '"stale"')
    assert status == 200 and body


async def test_protobuf_for_what_old_kubectl_asks(api: API) -> None:
    status, headers, body = await _get(api, PROTOBUF_ASKED)
    assert status == 200 and headers["Content-Type"] == PROTOBUF_SENT
    assert body[:1] == b"\x0a" and body[2:5] == b"2.0"  # field 1 (swagger) = "2.0"
    _, json_headers, _ = await _get(api)
    assert json_headers["ETag"] != headers["ETag"]
    status, _, body = await _get(api, PROTOBUF_SENT, headers["ETag"])
    assert status == 304 and body == b""


async def test_an_unserved_media_type_is_406_with_a_status(api: API) -> None:
    status, headers, body = await _get(api, "text/html")
    assert status == 406 and b'"reason":"NotAcceptable"' in body


async def test_version_reports_a_commit_and_a_build_date(api: API) -> None:
    status, version = await api.get("/version")
    assert status == 200
    assert re.fullmatch(r"[0-9a-f]{40}", version["gitCommit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", version["buildDate"])
    assert version["gitTreeState"] in ("", "clean", "dirty", "archive")
    assert (version["major"], version["minor"]) == ("1", "31")
    assert version["gitVersion"].startswith("v1.31.")
    assert re.fullmatch(r"[a-z]+/[a-z0-9]+", version["platform"])


async def test_gzip_when_accepted_and_if_modified_since(api: API) -> None:
    import gzip

    import aiohttp

    async with aiohttp.ClientSession(auto_decompress=False) as raw:
        async with raw.get(api.url + "/openapi/v2", headers={
                "Accept": PROTOBUF_ASKED, "Accept-Encoding": "gzip"}) as resp:
            zipped, headers = await resp.read(), resp.headers
        async with raw.get(api.url + "/openapi/v2", headers={
                "Accept": PROTOBUF_ASKED, "Accept-Encoding": "identity"}) as resp:
            plain = await resp.read()
            assert "Content-Encoding" not in resp.headers
        async with raw.get(api.url + "/openapi/v2", headers={
                "If-Modified-Since": headers["Last-Modified"]}) as resp:
            assert resp.status == 304
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(zipped) == plain
    assert len(zipped) < len(plain) / 3
