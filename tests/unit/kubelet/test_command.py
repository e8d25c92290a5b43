"""What a simulated container runs: the exit annotations, and which commands the shell runs."""

from __future__ import annotations

import pytest

from minikube_py.kubelet.command import FOREVER, Behaviour, annotation_behaviour, parse_seconds
from minikube_py.kubelet.process import SERVER, Plan, plan, understood


@pytest.mark.parametrize(("container", "expected"), [
    ({"image": "nginx"}, SERVER),
    ({"command": ["nginx", "-g", "daemon off;"]}, SERVER),
    ({"command": ["python", "app.py"]}, SERVER),
    ({"command": ["sh", "-c", "python app.py"]},
     Plan(Behaviour(None, 0), ("sh", "-c", "python app.py"))),  # python: a server in it
    ({"command": ["sh", "/scripts/run.sh"]}, SERVER),
    ({"command": ["sleep", "5"]}, Plan(Behaviour(None, 0), ("sleep", "5"))),
    ({"command": ["/bin/sleep"], "args": ["1.5"]}, Plan(Behaviour(None, 0), ("/bin/sleep", "1.5"))),
    ({"args": ["echo", "hi"]}, Plan(Behaviour(None, 0), ("echo", "hi"))),
    ({"command": ["cat", "/etc/config/key"]}, Plan(Behaviour(None, 0), ("cat", "/etc/config/key"))),
    ({"command": ["env"]}, Plan(Behaviour(None, 0), ("env",))),
    ({"command": ["sh", "-c"], "args": ["X=1 echo $X; exit 3"]},
     Plan(Behaviour(None, 0), ("sh", "-c", "X=1 echo $X; exit 3"))),
])
def test_plan(container: dict, expected: Plan) -> None:
    assert plan(container) == expected


def test_annotations_win_for_app_containers_only() -> None:
    annotations = {"minikube-py.io/exit-after": "5s", "minikube-py.io/exit-code": "1"}
    assert plan({"command": ["sleep", "100"]}, annotations) == Plan(Behaviour(5.0, 1))
    assert plan({}, {"minikube-py.io/exit-code": "2"}) == Plan(Behaviour(0.0, 2))
    assert plan({}, {"minikube-py.io/exit-after": "250ms"}) == Plan(Behaviour(0.25, 0))
    assert plan({"command": ["sleep", "3"]}, annotations, init=True).argv == ("sleep", "3")
    assert annotation_behaviour({"minikube-py.io/exit-after": "infinity"}) == FOREVER
    # a malformed annotation is ignored, like an unknown one
    assert plan({"command": ["true"]}, {"minikube-py.io/exit-after": "soon"}).argv == ("true",)


def test_init_containers_that_are_not_understood_complete_at_once() -> None:
    assert plan({"image": "busybox"}, init=True) == Plan(Behaviour(0.0, 0))
    assert plan({"command": ["myapp", "migrate"]}, init=True) == Plan(Behaviour(0.0, 0))


@pytest.mark.parametrize(("argv", "known"), [
    ([], False), (["nginx"], False), (["sh"], True), (["sh", "-c", "echo hi"], True),
    (["bash", "-ec", "sleep 1 && echo done"], True), (["sh", "-c"], False),
    (["sh", "/scripts/run.sh"], False), (["python", "-c", "print(1)"], False),
])
def test_understood(argv: list[str], known: bool) -> None:
    assert understood(argv) is known


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
