"""`minikube-py kubelet` flags: v1.0 names, label and taint syntax, user errors."""

from __future__ import annotations

import argparse

import pytest

from minikube_py.cli import kubelet
from minikube_py.cli.storage_target import CommandError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    kubelet.register(parser.add_subparsers(), [])
    return parser.parse_args(["kubelet", *argv])


def test_defaults_are_upstreams() -> None:
    args = parse()
    assert (args.master, args.port, args.address) == ("http://127.0.0.1:8080", 10250, "127.0.0.1")
    config = kubelet._config(args)
    assert config.node_status_update_frequency == 10.0
    assert (config.cpu, config.memory, config.pods) == ("4", "8Gi", 110)
    assert (config.image_pull_seconds, config.container_start_seconds) == (0.2, 0.1)


def test_flags_make_the_config() -> None:
    config = kubelet._config(parse(
        "--node-status-update-frequency", "1m30s", "--node-labels", "zone=a, disk=ssd",
        "--register-with-taints", "dedicated=gpu:NoSchedule,spot:PreferNoSchedule",
        "--cpu", "2", "--memory", "1Gi", "--max-pods", "7", "--image-pull-duration", "1s",
        "--container-start-duration", "0"))
    assert config.node_status_update_frequency == 90.0
    assert config.labels == {"zone": "a", "disk": "ssd"}
    assert config.taints == ({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"},
                             {"key": "spot", "effect": "PreferNoSchedule"})
    assert (config.cpu, config.memory, config.pods) == ("2", "1Gi", 7)
    assert (config.image_pull_seconds, config.container_start_seconds) == (1.0, 0.0)


@pytest.mark.parametrize("argv", [
    ("--node-labels", "novalue"),
    ("--register-with-taints", "k=v"),
    ("--register-with-taints", "k=v:Sometimes"),
    ("--register-with-taints", "=v:NoSchedule"),
    ("--node-status-update-frequency", "often"),
    ("--max-pods", "-1"),
])
def test_user_errors(argv: tuple[str, ...]) -> None:
    with pytest.raises(CommandError):
        kubelet._config(parse(*argv))
