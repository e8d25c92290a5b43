"""The API server's outbound webhook client against a real HTTPS server.

Pure endpoint choice first, then real calls: a `url` config, a `service` config resolved
through a Service and its Endpoints with the certificate checked for `<name>.<ns>.svc`, a
wrong CA, a slow server cut off by the deadline, a server that is down.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from minikube_py.apiserver.webhook_client import (ClientConfig, WebhookCallError,
                                                  choose_endpoint, validate_url)
from tests.apiserver_thread import ServerThread
from tests.webhook_server import WebhookServer


def test_choose_endpoint_follows_the_service_port_name():
    service = {"metadata": {"name": "hook", "namespace": "ns"},
               "spec": {"ports": [{"name": "a", "port": 80}, {"name": "b", "port": 443}]}}
    endpoints = {"subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"name": "a", "port": 8080}]},
                             {"addresses": [{"ip": "10.0.0.2"}], "ports": [{"name": "b", "port": 8443}]}]}
    assert choose_endpoint(service, endpoints, 443) == ("10.0.0.2", 8443)
    with pytest.raises(WebhookCallError, match="no service port 444 found for service 'hook'"):
        choose_endpoint(service, endpoints, 444)
    with pytest.raises(WebhookCallError, match='no endpoints available for service "ns/hook"'):
        choose_endpoint(service, {"subsets": []}, 443)
    external = {"metadata": {"name": "x"}, "spec": {"type": "ExternalName",
                                                   "externalName": "hooks.example.com",
                                                   "ports": [{"port": 443}]}}
    assert choose_endpoint(external, None, 443) == ("hooks.example.com", 443)


def test_validate_url_as_upstream():
    assert validate_url("https://a.example.com:8443/hook") == []
    messages = [e.detail for e in validate_url("http://u:p@/x?q=1#f")]
    assert "'https' is the only allowed URL scheme" in messages
    assert "query parameters are not permitted in the URL" in messages
    assert "fragments are not permitted in the URL" in messages


def test_client_config_from_api_decodes_the_bundle():
    config = ClientConfig.from_api({"service": {"namespace": "n", "name": "s", "path": "/v"},
                                    "caBundle": base64.b64encode(b"PEM").decode()})
    assert config.service is not None and config.service.port == 443
    assert config.ca_bundle == b"PEM"


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("webhook-client")
    api = ServerThread(tmp / "data").start()
    hook = WebhookServer(tmp / "hook-certs", name="hook").start()
    hook.json("/echo", lambda body: {"echo": body})
    hook.service_port = hook.publish(api.url)
    try:
        yield api, hook
    finally:
        hook.stop()
        api.stop()


def _call(api: ServerThread, config: dict, body: dict, timeout: float = 5.0) -> dict:
    return api.call(api.server.webhook_client.post_json(ClientConfig.from_api(config), body,
                                                        timeout))


def test_url_and_service_configs_reach_the_server(servers):
    api, hook = servers
    assert _call(api, {"url": hook.url + "/echo", "caBundle": hook.ca_bundle},
                 {"n": 1}) == {"echo": {"n": 1}}
    # the service name is what the certificate is checked against, not 127.0.0.1
    assert _call(api, {"service": {"namespace": "default", "name": "hook", "path": "/echo",
                                   "port": hook.service_port},
                       "caBundle": hook.ca_bundle}, {"n": 2}) == {"echo": {"n": 2}}


def test_failures_read_like_gos_client_errors(servers, tmp_path: Path):
    api, hook = servers
    other = WebhookServer(tmp_path / "other-ca", name="other")  # never started: another CA
    with pytest.raises(WebhookCallError, match="certificate verify failed"):
        _call(api, {"url": hook.url + "/echo", "caBundle": other.ca_bundle}, {})
    with pytest.raises(WebhookCallError, match='service "missing" not found'):
        _call(api, {"service": {"namespace": "default", "name": "missing"},
                    "caBundle": hook.ca_bundle}, {})
    hook.delay = 2.0
    try:
        with pytest.raises(WebhookCallError, match="context deadline exceeded"):
            _call(api, {"url": hook.url + "/echo", "caBundle": hook.ca_bundle}, {}, timeout=0.3)
    finally:
        hook.delay = 0.0
    with pytest.raises(WebhookCallError, match='^Post "https://127.0.0.1:1/x": dial tcp '
                                               '127.0.0.1:1: connect: connection refused$'):
        _call(api, {"url": "https://127.0.0.1:1/x", "caBundle": hook.ca_bundle}, {})
    with pytest.raises(WebhookCallError, match="status code 404"):
        _call(api, {"url": hook.url + "/nothing", "caBundle": hook.ca_bundle}, {})
