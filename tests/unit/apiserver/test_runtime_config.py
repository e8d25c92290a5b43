"""--runtime-config parsing (apiserver/runtime_config.py), pure: upstream's rules and messages."""

from __future__ import annotations

import pytest

from minikube_py.apiserver.runtime_config import parse, parse_bool, parse_pairs

SERVED = [("", "v1", "pods"), ("", "v1", "services"), ("", "v1", "namespaces"),
          ("apps", "v1", "deployments"), ("apps", "v1", "replicasets"),
          ("batch", "v1beta1", "cronjobs")]


def served(text: str) -> set[tuple[str, str, str]]:
    return set(parse(text, SERVED).enabled)


def test_empty_serves_everything():
    assert served("") == set(SERVED)


def test_group_version_off_hides_all_its_resources():
    assert served("apps/v1=false") == set(SERVED) - {("apps", "v1", "deployments"),
                                                     ("apps", "v1", "replicasets")}


def test_api_all_false_then_api_v1_true_keeps_only_core():
    assert served("api/all=false,api/v1=true") == {gvr for gvr in SERVED if gvr[0] == ""}


def test_resource_keys_win_over_version_keys():
    config = parse("apps/v1=false,apps/v1/deployments=true", SERVED)
    assert config.serves("apps", "v1", "deployments")
    assert not config.serves("apps", "v1", "replicasets")
    assert config.serves_version("apps", "v1")


def test_matchers_ga_beta():
    assert ("batch", "v1beta1", "cronjobs") not in served("api/beta=false")
    assert served("api/ga=false") == {("batch", "v1beta1", "cronjobs")}


def test_bare_key_means_true_and_go_bool_spellings():
    assert served("api/all=false,apps/v1") == {("apps", "v1", "deployments"),
                                               ("apps", "v1", "replicasets")}
    assert ("apps", "v1", "deployments") not in served("apps/v1=F")
    assert parse_bool("k", "1") and not parse_bool("k", "0")


@pytest.mark.parametrize("text, message", [
    ("foo/v1=false", "unknown api groups foo"),
    ("foo/v1=false,bar.example.com/v2=true", "unknown api groups bar.example.com,foo"),
    ("apps/v2=false", "group version apps/v2 that has not been registered"),
    ("apps/v1=maybe", "invalid value of apps/v1: maybe"),
    ("api/all=false", "invalid key with only api/all=false"),
    ("apps=false", "runtime-config invalid key apps"),
    ("apps/v1/Deployments=false", "resource is always lowercase plural"),
    ("apps/v1/widgets=false", "has no resource 'widgets'"),
    ("api/all=nope,apps/v1=true", "invalid value api/all=nope"),
])
def test_bad_config_names_the_key(text, message):
    with pytest.raises(ValueError, match=message.replace(".", r"\.").replace("(", r"\(")):
        parse(text, SERVED)


def test_pairs_last_wins_and_spaces_are_trimmed():
    assert parse_pairs(" apps/v1=false , apps/v1=true,,api/all") == {"apps/v1": "true",
                                                                      "api/all": ""}
