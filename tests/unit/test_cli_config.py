"""`start --config`: file settings, flag precedence, node pools, and errors that name the
file, the key and the problem (exit code 2)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from minikube_py.cli.config import parse_duration
from minikube_py.cli.main import build_parser, main
from minikube_py.cli.node_pools import NodePool
from minikube_py.cli.start_options import StartOptions
from minikube_py.cli.storage_target import CommandError, ConfigError
from minikube_py.controllers.manager import parse_controllers
from minikube_py.controllers.options import ALL_CONTROLLERS

REPO = Path(__file__).resolve().parents[2]


def options(*argv: str) -> StartOptions:
    return StartOptions.from_args(build_parser().parse_args(["start", *argv]))


def test_shipped_config_equals_the_defaults_except_its_node_pools():
    shipped = options("--config", str(REPO / "configs/cluster.yaml"))
    assert [(p.name, p.count) for p in shipped.node_pools] == [("node", 3), ("gpu", 1)]
    assert shipped.node_pools[1].taint_dicts() == ({"effect": "NoSchedule", "key": "dedicated",
                                                   "value": "gpu"},)
    assert dataclasses.replace(shipped, node_pools=()) == dataclasses.replace(options(), node_pools=())
    assert options().node_pools == (NodePool("node", 1),)


def test_the_1000_node_config_has_1000_nodes():
    big = options("--config", str(REPO / "configs/cluster-1000.yaml"))
    assert sum(p.count for p in big.node_pools) == 1000
    assert options("--config", str(REPO / "configs/cluster-1000.yaml"), "--nodes", "7").node_pools \
        == (NodePool("node", 7),)


def test_flags_win_over_the_file(tmp_path: Path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("port: 9999\nfsync: never\nsnapshot-count: 5\netcd-compaction-interval: 1m30s\n"
                   "node-monitor-grace-period: 2s\npod-eviction-timeout: 500ms\n")
    opts = options("--config", str(cfg), "--port", "1234", "--node-monitor-grace-period", "3s")
    assert (opts.port, opts.fsync, opts.snapshot_count, opts.compaction_interval) == (1234, False, 5, 90.0)
    assert opts.controllers.node_monitor_grace_period == 3.0
    assert opts.controllers.pod_eviction_timeout == 0.5


def test_every_component_flag_reaches_its_options():
    opts = options("--controllers", "*,-garbagecollector", "--scheduler-port", "0",
                   "--kubelet-port", "0", "--nodes", "0", "--disable", "scheduler",
                   "--node-status-update-frequency", "1s", "--image-pull-duration", "0",
                   "--algorithm-provider", "ClusterAutoscalerProvider", "--insecure-port", "8123")
    assert "garbagecollector" not in opts.controllers.controllers
    assert (opts.scheduler_port, opts.kubelet_port, opts.node_pools) == (0, 0, ())
    assert not opts.runs("scheduler") and opts.runs("kubelet")
    assert (opts.node_status_update_frequency, opts.image_pull_duration) == (1.0, 0.0)
    assert opts.algorithm_provider == "ClusterAutoscalerProvider"
    assert opts.apiserver.advertise_address == "127.0.0.1:8123"


@pytest.mark.parametrize(
    "body, message",
    [
        ("prot: 1\n", "unknown setting 'prot'"),
        ("- a\n- b\n", "must be a mapping"),
        ("port: [\n", "not valid YAML"),
        ("fsync: sometimes\n", "fsync: 'sometimes' is not one of always, never"),
        ("etcd-compaction-interval: soon\n", "etcd-compaction-interval: invalid duration 'soon'"),
        ("scheduler-port: 70000\n", "scheduler-port: port 70000 is out of range"),
        ("nodes: many\n", "nodes: invalid literal"),
        ("controllers: '*,-bogus'\n", "unknown controller 'bogus'"),
        ("disable: etcd\n", "unknown component 'etcd'"),
        ("node-pools: {a: 1}\n", "node-pools: must be a list"),
        ("node-pools: [{name: a, count: -1}]\n", "node-pools[0].count: must be a whole number"),
        ("node-pools: [{name: a, cpu: lots}]\n", "node-pools[0].cpu: 'lots' is not a quantity"),
        ("node-pools: [{name: a, colour: red}]\n", "node-pools[0]: unknown key 'colour'"),
        ("node-pools: [{name: a, taints: [{key: k, effect: Never}]}]\n",
         "node-pools[0].taints[0].effect: 'Never' is not one of"),
        ("node-pools: [{name: a}, {name: a}]\n", "node-pools[1].name: pool 'a' appears twice"),
        ("admission-control: NamespaceLifecycle,Bogus\n", 'unknown admission plugin "Bogus"'),
        ("insecure-port: 0\nsecure-port: 0\n", "would have no listener"),
        ("tls-cert-file: a.crt\n", "--tls-cert-file and --tls-private-key-file go together"),
    ],
)
def test_bad_config_is_a_clear_usage_error(tmp_path: Path, body: str, message: str):
    cfg = tmp_path / "c.yaml"
    cfg.write_text(body)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")
                       .replace("*", r"\*")) as info:
        options("--config", str(cfg))
    assert info.value.exit_code == 2
    if not any(s in message for s in ("unknown setting", "YAML", "mapping", "no listener", "go together")):
        assert str(cfg) in str(info.value)  # names the file


def test_bad_config_exits_2_with_one_line(tmp_path: Path, capsys):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("node-monitor-grace-period: forever\n")
    assert main(["start", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert f"config {cfg}: node-monitor-grace-period: invalid duration" in err
    assert "Traceback" not in err


def test_bad_flag_names_the_flag():
    with pytest.raises(ConfigError, match="--pod-eviction-timeout: invalid duration"):
        options("--pod-eviction-timeout", "soon")


def test_missing_config_file():
    with pytest.raises(CommandError, match="cannot read config"):
        options("--config", "/nonexistent/cluster.yaml")


@pytest.mark.parametrize("text, seconds", [("5m0s", 300), ("30s", 30), ("1h", 3600), ("0", 0),
                                           ("1.5s", 1.5), (7, 7), ("200ms", 0.2), ("1m30s", 90)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text, expected", [
    ("*", ALL_CONTROLLERS),
    ("*,-garbagecollector", tuple(c for c in ALL_CONTROLLERS if c != "garbagecollector")),
    ("endpoint,namespace", ("endpoint", "namespace")),
    ("", ()),
])
def test_controllers_flag(text, expected):
    assert parse_controllers(text) == expected


def test_start_authorizes_like_kubeadm_and_apiserver_like_kube_apiserver() -> None:
    """`start` defaults to Node,RBAC (a 1.31 cluster built by kubeadm); `minikube-py apiserver`
    keeps kube-apiserver's own default, AlwaysAllow; a flag or config value wins in both."""
    from minikube_py.cli.apiserver import options_of

    parser = build_parser()
    assert StartOptions.from_args(parser.parse_args(["start"])).apiserver.authorization_mode \
        == "Node,RBAC"
    assert options_of(parser.parse_args(["apiserver"])).apiserver.authorization_mode \
        == "AlwaysAllow"
    chosen = parser.parse_args(["start", "--authorization-mode", "AlwaysAllow"])
    assert StartOptions.from_args(chosen).apiserver.authorization_mode == "AlwaysAllow"
