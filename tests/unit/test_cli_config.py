"""`start --config`: file settings, flag precedence, and errors that name the problem."""

from __future__ import annotations

from pathlib import Path

import pytest

from minikube_py.cli.config import parse_duration
from minikube_py.cli.main import build_parser
from minikube_py.cli.start import StartOptions
from minikube_py.cli.storage_target import CommandError

REPO = Path(__file__).resolve().parents[2]


def options(*argv: str) -> StartOptions:
    return StartOptions.from_args(build_parser().parse_args(["start", *argv]))


def test_shipped_config_loads_and_equals_the_defaults():
    assert options("--config", str(REPO / "configs/cluster.yaml")) == options()


def test_flags_win_over_the_file(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("port: 9999\nfsync: never\nsnapshot-count: 5\netcd-compaction-interval: 1m30s\n")
    opts = options("--config", str(cfg), "--port", "1234")
    assert (opts.port, opts.fsync, opts.snapshot_count, opts.compaction_interval) == (1234, False, 5, 90.0)


@pytest.mark.parametrize(
    "body, message",
    [
        ("prot: 1\n", "unknown setting 'prot'"),
        ("- a\n- b\n", "must be a mapping"),
        ("port: [\n", "not valid YAML"),
        ("fsync: sometimes\n", "fsync must be always or never"),
        ("etcd-compaction-interval: soon\n", "invalid duration"),
    ],
)
def test_bad_config_is_a_clear_error(tmp_path: Path, body: str, message: str):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(body)
    with pytest.raises(CommandError, match=message):
        options("--config", str(cfg))


def test_missing_config_file():
    with pytest.raises(CommandError, match="cannot read config"):
        options("--config", "/nonexistent/cluster.yaml")


@pytest.mark.parametrize("text, seconds", [("5m0s", 300), ("30s", 30), ("1h", 3600), ("0", 0), ("1.5s", 1.5), (7, 7)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds
