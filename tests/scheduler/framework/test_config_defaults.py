"""KubeSchedulerConfiguration v1: upstream 1.31's defaults, mergePlugins, MultiPoint expansion,
profiles, the adaptive percentageOfNodesToScore and the extenders' conversion (pure)."""

from __future__ import annotations

import pytest

from minikube_py.scheduler.factory import ExtenderConfig
from minikube_py.scheduler.framework.config.default_plugins import IN_TREE_POINTS
from minikube_py.scheduler.framework.config.expand import in_tree_points, points_of
from minikube_py.scheduler.framework.config.extenders import (
    extender_configs,
    unsupported_fields,
)
from minikube_py.scheduler.framework.config.feasible import num_feasible_nodes_to_find
from minikube_py.scheduler.framework.config.load import (
    ConfigError,
    default_configuration,
    parse,
)

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"

#: upstream's ExpandedPluginsV1 (pkg/scheduler/apis/config/testing/defaults) for 1.31, where
#: EBSLimits, GCEPDLimits and AzureDiskLimits left the default set
EXPANDED_DEFAULT = {
    "preEnqueue": ["SchedulingGates"],
    "queueSort": ["PrioritySort"],
    "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
                  "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                  "InterPodAffinity"],
    "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
               "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
               "VolumeZone", "PodTopologySpread", "InterPodAffinity"],
    "postFilter": ["DefaultPreemption"],
    "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding",
                 "PodTopologySpread", "InterPodAffinity", "NodeResourcesBalancedAllocation"],
    "score": [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
              ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
              ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)],
    "reserve": ["VolumeBinding"],
    "permit": [],
    "preBind": ["VolumeBinding"],
    "bind": ["DefaultBinder"],
    "postBind": [],
}

#: upstream's PluginConfigsV1 in versioned form (what --write-config-to prints)
DEFAULT_PLUGIN_CONFIG = [
    {"name": "DefaultPreemption", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs",
        "minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}},
    {"name": "InterPodAffinity", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs",
        "hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": False}},
    {"name": "NodeAffinity", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeAffinityArgs"}},
    {"name": "NodeResourcesBalancedAllocation", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "NodeResourcesBalancedAllocationArgs",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}},
    {"name": "NodeResourcesFit", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs",
        "scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}}},
    {"name": "PodTopologySpread", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "PodTopologySpreadArgs",
        "defaultingType": "System"}},
    {"name": "VolumeBinding", "args": {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "VolumeBindingArgs",
        "bindTimeoutSeconds": 600}},
]


def names(profile, point):
    refs = profile.enabled(point)
    if point == "score":
        return [(r.name, r.weight) for r in refs]
    return [r.name for r in refs]


def test_empty_config_gets_upstreams_default_profile():
    config = parse(HEAD)
    assert config.parallelism == 16
    assert config.percentage_of_nodes_to_score == 0
    assert (config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (1, 10)
    [profile] = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert {point: names(profile, point) for point in EXPANDED_DEFAULT} == EXPANDED_DEFAULT
    assert profile.args("NodeResourcesFit")["scoringStrategy"]["type"] == "LeastAllocated"
    assert profile.args("DefaultPreemption") == {"minCandidateNodesPercentage": 10,
                                                 "minCandidateNodesAbsolute": 100}
    assert default_configuration().versioned == config.versioned


def test_versioned_output_is_upstreams_write_config_to():
    versioned = parse(HEAD).versioned
    assert versioned["apiVersion"] == "kubescheduler.config.k8s.io/v1"
    assert versioned["kind"] == "KubeSchedulerConfiguration"
    assert versioned["leaderElection"] == {
        "leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s",
        "retryPeriod": "2s", "resourceLock": "leases", "resourceName": "kube-scheduler",
        "resourceNamespace": "kube-system"}
    assert versioned["clientConnection"] == {
        "kubeconfig": "", "acceptContentTypes": "",
        "contentType": "application/vnd.kubernetes.protobuf", "qps": 50, "burst": 100}
    assert (versioned["enableProfiling"], versioned["enableContentionProfiling"]) == (True, True)
    [profile] = versioned["profiles"]
    assert profile["pluginConfig"] == DEFAULT_PLUGIN_CONFIG
    plugins = profile["plugins"]
    assert plugins["multiPoint"]["enabled"][:5] == [
        {"name": "SchedulingGates", "weight": 0}, {"name": "PrioritySort", "weight": 0},
        {"name": "NodeUnschedulable", "weight": 0}, {"name": "NodeName", "weight": 0},
        {"name": "TaintToleration", "weight": 3}]
    assert len(plugins["multiPoint"]["enabled"]) == 18
    assert all(plugins[p] == {} for p in plugins if p != "multiPoint")


def test_a_json_file_reads_the_same():
    assert parse('{"apiVersion": "kubescheduler.config.k8s.io/v1", '
                 '"kind": "KubeSchedulerConfiguration"}').versioned == parse(HEAD).versioned


def test_reconfiguring_a_default_plugin_keeps_its_place_and_changes_its_weight():
    config = parse(HEAD + """profiles:
- plugins:
    multiPoint:
      enabled:
      - {name: ImageLocality, weight: 5}
    score:
      enabled:
      - {name: NodeAffinity, weight: 7}
""")
    [profile] = config.profiles
    score = dict(names(profile, "score"))
    assert score["ImageLocality"] == 5 and score["NodeAffinity"] == 7
    # the explicit Score entry goes first (upstream's "override" part), then multiPoint's
    assert names(profile, "score")[0] == ("NodeAffinity", 7)
    multi = config.versioned["profiles"][0]["plugins"]["multiPoint"]["enabled"]
    assert [p["name"] for p in multi].index("ImageLocality") == 16  # replaced in place


def test_disabling_a_plugin_at_one_point_keeps_it_elsewhere():
    [profile] = parse(HEAD + """profiles:
- plugins:
    score:
      disabled: [{name: NodeResourcesFit}]
""").profiles
    assert "NodeResourcesFit" not in dict(names(profile, "score"))
    assert "NodeResourcesFit" in names(profile, "filter")
    assert "NodeResourcesFit" in names(profile, "preScore")


def test_disabling_star_at_a_point_leaves_only_the_explicit_plugins():
    [profile] = parse(HEAD + """profiles:
- plugins:
    score:
      disabled: [{name: "*"}]
      enabled: [{name: ImageLocality, weight: 4}]
    filter:
      disabled: [{name: "*"}]
""").profiles
    assert names(profile, "score") == [("ImageLocality", 4)]
    assert names(profile, "filter") == []
    assert names(profile, "preFilter") == EXPANDED_DEFAULT["preFilter"]


def test_disabling_star_in_multipoint_drops_the_defaults():
    [profile] = parse(HEAD + """profiles:
- plugins:
    multiPoint:
      disabled: [{name: "*"}]
      enabled:
      - {name: PrioritySort}
      - {name: NodeName}
      - {name: DefaultBinder}
""").profiles
    assert names(profile, "filter") == ["NodeName"]
    assert names(profile, "score") == []
    assert names(profile, "queueSort") == ["PrioritySort"]
    assert names(profile, "bind") == ["DefaultBinder"]
    assert profile.plugin_config == {}  # no enabled plugin has an args kind


def test_two_profiles_with_their_own_plugins_and_args():
    config = parse(HEAD + """percentageOfNodesToScore: 30
profiles:
- schedulerName: default-scheduler
- schedulerName: no-scoring-scheduler
  percentageOfNodesToScore: 70
  plugins:
    preScore:
      disabled: [{name: "*"}]
    score:
      disabled: [{name: "*"}]
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu}]
""")
    default, custom = config.profiles
    assert config.profile("no-scoring-scheduler") is custom
    assert custom.percentage_of_nodes_to_score == 70 and config.percentage_of_nodes_to_score == 30
    assert names(default, "score") == EXPANDED_DEFAULT["score"]
    assert names(custom, "score") == [] and names(custom, "preScore") == []
    assert custom.args("NodeResourcesFit")["scoringStrategy"] == {
        "type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1}]}
    assert default.args("NodeResourcesFit")["scoringStrategy"]["type"] == "LeastAllocated"


def test_an_out_of_tree_plugin_needs_a_resolver():
    text = HEAD + "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: MyPlugin}]\n"
    with pytest.raises(ConfigError) as exc:
        parse(text)
    assert str(exc.value) == ("initializing profiles: creating profile for scheduler name "
                              'default-scheduler: PreFilterPlugin "MyPlugin" does not exist')

    class MyPlugin:
        name = "MyPlugin"

        def filter(self, state, pod, nodes, candidates):
            return []

        def score(self, state, pod, nodes, rows):
            raise NotImplementedError

        def score_extensions(self):
            return None

    points = points_of(MyPlugin())
    assert points == {"filter", "score"}
    [profile] = parse(text, in_tree_points({"MyPlugin": points})).profiles
    assert names(profile, "filter")[-1] == "MyPlugin"
    assert ("MyPlugin", 1) in names(profile, "score")  # an unset weight counts 1
    assert "MyPlugin" not in names(profile, "preFilter")


@pytest.mark.parametrize("nodes, percentage, profile, expected", [
    (50, None, None, 50),          # under minFeasibleNodesToFind: all
    (1000, None, None, 420),       # 50 - 1000/125 = 42 %
    (5000, 0, None, 500),          # 50 - 40 = 10 %
    (10000, None, None, 500),      # floor 5 %
    (1000, 50, None, 500),
    (1000, 50, 20, 200),           # the profile's own percentage wins
    (150, 10, None, 100),          # never under 100
    (1000, 100, None, 1000),
])
def test_num_feasible_nodes_to_find(nodes, percentage, profile, expected):
    assert num_feasible_nodes_to_find(nodes, percentage, profile) == expected


def test_extenders_become_the_http_extender_config():
    config = parse(HEAD + """extenders:
- urlPrefix: http://127.0.0.1:8888/scheduler
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 3
  enableHTTPS: false
  httpTimeout: 2s
  ignorable: true
- urlPrefix: https://gpu.example/ext
  filterVerb: filter
""")
    assert extender_configs(config.extenders) == [
        ExtenderConfig("http://127.0.0.1:8888/scheduler", "filter", "prioritize", 3, False, 2.0),
        ExtenderConfig("https://gpu.example/ext", "filter", "", 0, False, 5.0)]
    assert unsupported_fields(config.extenders[0]) == ["ignorable"]
    assert config.versioned["extenders"][0]["httpTimeout"] == "2s"


def test_in_tree_points_cover_the_default_set():
    from minikube_py.scheduler.framework.config.default_plugins import (
        DEFAULT_MULTIPOINT,
    )

    assert {name for name, _ in DEFAULT_MULTIPOINT} <= set(IN_TREE_POINTS)


def test_the_example_file_in_configs_loads():
    from pathlib import Path

    from minikube_py.scheduler.framework.config.load import load_file

    config = load_file(Path(__file__).resolve().parents[3] / "configs" / "scheduler-config.yaml")
    bin_packing = config.profile("bin-packing")
    assert names(bin_packing, "score")[0] == ("NodeResourcesFit", 5)
    assert "NodeResourcesBalancedAllocation" not in dict(names(bin_packing, "score"))
    assert bin_packing.args("NodeResourcesFit")["scoringStrategy"]["type"] == "MostAllocated"
    assert extender_configs(config.extenders)[0].url_prefix == "http://127.0.0.1:8888/scheduler"


def test_points_of_follows_the_protocols():
    from minikube_py.scheduler.framework.config.expand import PROTOCOL_METHODS

    for point, (protocol, method) in PROTOCOL_METHODS.items():
        assert callable(getattr(protocol, method)), (point, method)


def test_in_tree_points_match_the_registered_plugin_classes():
    """Once plugin modules register in plugins/registry.IN_TREE, their classes must implement
    exactly the points the configuration expands them into."""
    import importlib

    from minikube_py.scheduler.framework.plugins.registry import IN_TREE

    for name, (module, attribute) in IN_TREE.items():
        target = getattr(importlib.import_module(
            f"minikube_py.scheduler.framework.plugins.{module}"), attribute)
        if isinstance(target, type) and name in IN_TREE_POINTS:
            assert points_of(target) == IN_TREE_POINTS[name], name
