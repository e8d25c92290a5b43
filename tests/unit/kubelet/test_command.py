"""The completion grammar: what a simulated container does, from its command and annotations."""

from __future__ import annotations

import pytest

from minikube_py.kubelet.command import FOREVER, Behaviour, behaviour, parse_seconds


@pytest.mark.parametrize(("container", "expected"), [
    ({"image": "nginx"}, FOREVER),
    ({"command": ["nginx", "-g", "daemon off;"]}, FOREVER),
    ({"command": ["sleep", "5"]}, Behaviour(5.0, 0)),
    ({"command": ["/bin/sleep"], "args": ["1.5"]}, Behaviour(1.5, 0)),
    ({"args": ["sleep", "2m"]}, Behaviour(120.0, 0)),
    ({"command": ["sleep", "infinity"]}, FOREVER),
    ({"command": ["true"]}, Behaviour(0.0, 0)),
    ({"command": ["false"]}, Behaviour(0.0, 1)),
    ({"command": ["exit", "1"]}, Behaviour(0.0, 1)),
    ({"command": ["echo", "hello"]}, Behaviour(0.0, 0)),
    ({"command": ["sh", "-c", "exit 1"]}, Behaviour(0.0, 1)),
    ({"command": ["/bin/sh", "-c"], "args": ["sleep 2; exit 3"]}, Behaviour(2.0, 3)),
    ({"command": ["bash", "-c", "echo hi && sleep 1 && sleep 0.5"]}, Behaviour(1.5, 0)),
    ({"command": ["sh", "-c", "sleep 1; false"]}, Behaviour(1.0, 1)),
    ({"command": ["sh", "-c", "exit 0; sleep 10"]}, Behaviour(0.0, 0)),
    ({"command": ["sh", "-c", "sleep 1; sleep infinity"]}, FOREVER),
    ({"command": ["sh", "-c", "while true; do sleep 1; done"]}, FOREVER),
    ({"command": ["sh", "-c", "python app.py"]}, FOREVER),
    ({"command": ["sleep", "soon"]}, FOREVER),
])
def test_command_grammar(container: dict, expected: Behaviour) -> None:
    assert behaviour(container) == expected


def test_annotations_win_for_app_containers_only() -> None:
    annotations = {"minikube-py.io/exit-after": "5s", "minikube-py.io/exit-code": "1"}
    assert behaviour({"command": ["sleep", "100"]}, annotations) == Behaviour(5.0, 1)
    assert behaviour({}, {"minikube-py.io/exit-code": "2"}) == Behaviour(0.0, 2)
    assert behaviour({}, {"minikube-py.io/exit-after": "250ms"}) == Behaviour(0.25, 0)
    assert behaviour({"command": ["sleep", "3"]}, annotations, init=True) == Behaviour(3.0, 0)
    # a malformed annotation is ignored, like an unknown one
    assert behaviour({"command": ["true"]}, {"minikube-py.io/exit-after": "soon"}) == \
        Behaviour(0.0, 0)


def test_init_containers_that_are_not_understood_complete_at_once() -> None:
    assert behaviour({"image": "busybox"}, init=True) == Behaviour(0.0, 0)
    assert behaviour({"command": ["false"]}, init=True) == Behaviour(0.0, 1)


@pytest.mark.parametrize(("text", "seconds"), [
    ("5", 5.0), ("0.5", 0.5), ("5s", 5.0), ("500ms", 0.5), ("1m30s", 90.0), ("2h", 7200.0),
    ("1d", 86400.0), ("infinity", None),
])
def test_parse_seconds(text: str, seconds: float | None) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize("text", ["", "-1", "5x", "s5", "1m 2s"])
def test_parse_seconds_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_seconds(text)
