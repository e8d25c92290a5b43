"""KubeSchedulerConfiguration v1: strict decoding and validation errors, word for word as
upstream's decoder, ValidateKubeSchedulerConfiguration, the plugin args validators and
NewFramework print them (pure)."""

from __future__ import annotations

import pytest

from minikube_py.scheduler.framework.config.load import ConfigError, load_file, parse

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
FRAMEWORK = "initializing profiles: creating profile for scheduler name "


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as exc:
        parse(text)
    return str(exc.value)


def args(plugin: str, body: str) -> str:
    return HEAD + f"profiles:\n- pluginConfig:\n  - name: {plugin}\n    args: {body}\n"


DECODING = [
    ("kind: KubeSchedulerConfiguration\n",
     ('no kind "KubeSchedulerConfiguration" is registered for version "" in scheme '
     '"pkg/scheduler/apis/config/scheme/scheme.go:30"')),
    ("apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
     ('no kind "KubeSchedulerConfiguration" is registered for version '
     '"kubescheduler.config.k8s.io/v1beta3" in scheme '
     '"pkg/scheduler/apis/config/scheme/scheme.go:30"')),
    ("apiVersion: kubescheduler.config.k8s.io/v1\n",
     "Object 'Kind' is missing in '{\"apiVersion\":\"kubescheduler.config.k8s.io/v1\"}'"),
    (HEAD + "foo: 1\nprofiles:\n- schedulerName: x\n  bar: true\n",
     'strict decoding error: unknown field "foo", unknown field "profiles[0].bar"'),
    (HEAD + "parallelism: many\n",
     ("json: cannot unmarshal string into Go struct field KubeSchedulerConfiguration.parallelism "
     "of type int32")),
    (HEAD + "profiles:\n- plugins:\n    score:\n      enabled: [{name: X, weight: high}]\n",
     ("json: cannot unmarshal string into Go struct field Plugin.profiles.plugins.score.enabled"
     ".weight of type int32")),
    (HEAD + "extenders:\n- urlPrefix: http://x\n  httpTimeout: soon\n",
     'time: invalid duration "soon"'),
    (HEAD + "foo: 1\nprofiles:\n- pluginConfig:\n  - {name: NodeResourcesFit, args: {bar: 1}}\n"
     "  - {name: VolumeBinding, args: {baz: 2}}\n",
     ('strict decoding error: unknown field "foo", decoding .profiles[0].pluginConfig[0]: strict '
      "decoding error: decoding args for plugin NodeResourcesFit: strict decoding error: unknown "
      'field "bar", decoding .profiles[0].pluginConfig[1]: strict decoding error: decoding args '
      'for plugin VolumeBinding: strict decoding error: unknown field "baz"')),
    (args("InterPodAffinity", "{hardPodAffinityWeight: 1.5}"),
     ("decoding .profiles[0].pluginConfig[0]: decoding args for plugin InterPodAffinity: json: "
      "cannot unmarshal number 1.5 into Go struct field InterPodAffinityArgs."
      "hardPodAffinityWeight of type int32")),
    (args("InterPodAffinity", "{kind: NoSuchArgs}"),
     ('decoding .profiles[0].pluginConfig[0]: decoding args for plugin InterPodAffinity: no '
      'kind "NoSuchArgs" is registered for version "kubescheduler.config.k8s.io/v1" in scheme '
      '"pkg/scheduler/apis/config/scheme/scheme.go:30"')),
    (args("NodeResourcesFit", "{kind: InterPodAffinityArgs}"),
     ("decoding .profiles[0].pluginConfig[0]: args for plugin NodeResourcesFit were not of type "
     "NodeResourcesFitArgs.kubescheduler.config.k8s.io, got "
     "InterPodAffinityArgs.kubescheduler.config.k8s.io")),
    ("a: [1, 2\n", None),  # a YAML syntax error: the bounded loader's message
]


@pytest.mark.parametrize("text, message", DECODING)
def test_decoding_errors(text, message):
    got = error_of(text)
    if message is None:
        assert got.startswith("error converting YAML to JSON: ")
    else:
        assert got == message


VALIDATION = [
    (HEAD + "parallelism: 0\n",
     "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    (HEAD + "percentageOfNodesToScore: 101\n",
     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    (HEAD + "profiles:\n- schedulerName: a\n  percentageOfNodesToScore: -1\n",
     "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    (HEAD + "podInitialBackoffSeconds: 0\n",
     "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    (HEAD + "podInitialBackoffSeconds: 20\n",
     ("podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to "
     "PodInitialBackoffSeconds")),
    (HEAD + "leaderElection: {resourceLock: endpoints}\n",
     ('leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be '
     '"leases"')),
    (HEAD + "profiles:\n- schedulerName: a\n- schedulerName: a\n",
     'profiles[1].schedulerName: Duplicate value: "profiles[0].schedulerName"'),
    (HEAD + "profiles:\n- schedulerName: a\n- {}\n",
     "profiles[1].schedulerName: Required value"),
    (HEAD + "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n"
     "      enabled: [{name: PrioritySort}]\n      disabled: [{name: '*'}]\n",
     ('profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin'
     '{config.Plugin{Name:"PrioritySort", Weight:0}}, Disabled:[]config.Plugin'
     '{config.Plugin{Name:"*", Weight:0}}}: must be the same for all profiles')),
    (HEAD + "profiles:\n- pluginConfig:\n  - name: Foo\n  - name: Foo\n",
     'profiles[0].pluginConfig[1]: Duplicate value: "Foo"'),
    (HEAD + "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: p\n",
     "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it"),
    (HEAD + "extenders:\n- {urlPrefix: http://a, bindVerb: b}\n- {urlPrefix: http://b, "
     "bindVerb: b}\n",
     ('extenders: Invalid value: "found 2 extenders implementing bind": only one extender can '
     'implement bind')),
    (HEAD + "extenders:\n- urlPrefix: http://a\n  managedResources: [{name: example.com/gpu}, "
     "{name: example.com/gpu}, {name: cpu}]\n",
     ('[extenders[0].managedResources[1].name: Invalid value: "example.com/gpu": duplicate '
     'extender managed resource name, extenders[0].managedResources[2].name: Invalid value: '
     '"cpu": is an invalid extended resource name]')),
]


@pytest.mark.parametrize("text, message", VALIDATION)
def test_configuration_validation(text, message):
    assert error_of(text) == message


ARGS = [
    ("DefaultPreemption", "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
     ("[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot "
     "be zero at the same time as minCandidateNodesAbsolute, profiles[0].pluginConfig[0].args."
     "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
     "minCandidateNodesPercentage]")),
    ("DefaultPreemption", "{minCandidateNodesPercentage: 101, minCandidateNodesAbsolute: -1}",
     ("[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in "
     "valid range [0, 100], profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid "
     "value: -1: not in valid range [0, inf)]")),
    ("InterPodAffinity", "{hardPodAffinityWeight: 101}",
     ("profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid "
     "range [0, 100]")),
    ("PodTopologySpread", "{defaultingType: Other}",
     ('profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: "Other": supported '
     'values: "System", "List"')),
    ("PodTopologySpread",
     "{defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]}",
     ('profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when '
     '.defaultConstraints are not empty')),
    ("PodTopologySpread",
     ("{defaultingType: List, defaultConstraints: [{maxSkew: 0, topologyKey: zone, "
     "whenUnsatisfiable: Never, labelSelector: {}}, {maxSkew: 1, topologyKey: zone, "
     "whenUnsatisfiable: Never}]}"),
     ("[profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: Invalid value: 0: not in "
     "valid range (0, inf), profiles[0].pluginConfig[0].args.defaultConstraints[0]."
     'whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", '
     '"ScheduleAnyway", profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: '
     "Forbidden: constraint must not define a selector, as they deduced for each pod, "
     "profiles[0].pluginConfig[0].args.defaultConstraints[1].whenUnsatisfiable: Unsupported "
     'value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway", '
     'profiles[0].pluginConfig[0].args.defaultConstraints[1]: Duplicate value: "{zone, Never}"]')),
    ("NodeResourcesBalancedAllocation", "{resources: [{name: cpu, weight: 2}, {name: cpu}]}",
     ("[profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1, "
     'profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"]')),
    ("VolumeBinding", "{bindTimeoutSeconds: -1}",
     ("profiles[0].pluginConfig[0].args.bindTimeoutSeconds: Invalid value: -1: invalid "
     "BindTimeoutSeconds, should not be a negative value")),
    ("VolumeBinding", "{shape: [{utilization: 0, score: 0}]}",
     ('profiles[0].pluginConfig[0].args.shape: Invalid value: [{"utilization":0,"score":0}]: '
     "unexpected field `shape`, remove it or turn on the feature gate VolumeCapacityPriority")),
    ("NodeResourcesFit", ("{scoringStrategy: {type: Balanced, resources: [{name: cpu, weight: "
     "101}]}}"),
     ('[profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "Balanced": '
     'supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", '
     "profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: "
     "101: resource weight of cpu not in valid range (0, 100]]")),
    ("NodeResourcesFit", "{scoringStrategy: {type: RequestedToCapacityRatio}}",
     ("profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required "
     "value: must be specified when type is RequestedToCapacityRatio")),
    ("NodeResourcesFit", ("{scoringStrategy: {type: RequestedToCapacityRatio, "
     "requestedToCapacityRatio: {shape: [{utilization: 50, score: 11}, {utilization: 40, "
     "score: 1}]}}}"),
     ("[profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1]."
     "utilization: Invalid value: 40: values must be sorted in increasing order, "
     "profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].score: "
     "Invalid value: 11: not in valid range [0, 10]]")),
    ("NodeResourcesFit", ("{scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: "
     "{shape: []}}}"),
     ("profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Forbidden: "
     "must be nil when type is not RequestedToCapacityRatio")),
    ("NodeResourcesFit", "{ignoredResourceGroups: [example.com/x]}",
     ('profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: Invalid value: '
     '"example.com/x": resource group name can\'t contain \'/\'')),
    ("NodeAffinity", ("{addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
     "{nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: Near}]}]}}}"),
     ("profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuring"
     "Execution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: \"Near\": "
     "not a valid selector operator")),
]


@pytest.mark.parametrize("plugin, body, message", ARGS)
def test_plugin_args_validation(plugin, body, message):
    assert error_of(args(plugin, body)) == message


FRAMEWORK_ERRORS = [
    ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: Nope}]\n",
     'FilterPlugin "Nope" does not exist'),
    ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: ImageLocality}]\n",
     'plugin "ImageLocality" does not extend FilterPlugin plugin'),
    ("profiles:\n- plugins:\n    filter:\n      enabled: [{name: NodeName}, {name: NodeName}]\n",
     'plugin "NodeName" already registered as "FilterPlugin"'),
    ("profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: NodeName}, {name: NodeName}]\n",
     'plugin "NodeName" already registered as "FilterPlugin"'),
    ("profiles:\n- plugins:\n    queueSort:\n      disabled: [{name: '*'}]\n",
     ('only one queue sort plugin required for profile with scheduler name "default-scheduler", '
     "but got 0")),
    ("profiles:\n- plugins:\n    bind:\n      disabled: [{name: DefaultBinder}]\n",
     'at least one bind plugin is needed for profile with scheduler name "default-scheduler"'),
    (("profiles:\n- plugins:\n    score:\n      enabled: [{name: ImageLocality, weight: "
     "2147483647}, {name: NodeAffinity, weight: 2147483647}]\n"), None),
]


@pytest.mark.parametrize("body, message", FRAMEWORK_ERRORS)
def test_framework_errors(body, message):
    if message is None:  # int32 weights times 100 cannot overflow int64: accepted
        parse(HEAD + body)
        return
    assert error_of(HEAD + body) == FRAMEWORK + "default-scheduler: " + message


def test_a_missing_file(tmp_path):
    with pytest.raises(ConfigError) as exc:
        load_file(tmp_path / "nope.yaml")
    assert str(exc.value) == f"open {tmp_path / 'nope.yaml'}: no such file or directory"


def test_aliases_are_bounded(tmp_path):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n"
        for p, c in zip("abcdefgh", "bcdefghi"))
    assert "error converting YAML to JSON" in error_of(bomb)


@pytest.mark.parametrize("body", [
    "profiles:\n- plugins: {score: {enabled: [null, {}]}}\n",
    "profiles:\n- pluginConfig: [null, {}]\n",
    ("profiles:\n- pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {resources: "
    "[null]}}}]\n"),
    "extenders: [{managedResources: [null, {}]}]\n",
    ("profiles:\n- pluginConfig: [{name: PodTopologySpread, args: {defaultingType: List, "
    "defaultConstraints: [null, {}]}}]\n"),
])
def test_null_elements_decode_as_empty_objects_and_fail_validation_not_the_loader(body):
    """Go decodes a null list element into the zero struct; validation then names it."""
    message = error_of(HEAD + body)
    assert message and "Traceback" not in message


def test_an_empty_file():
    assert error_of("") == "Object 'Kind' is missing in ''"


def test_embedded_core_types_are_strict_too():
    assert error_of(args("NodeAffinity", "{addedAffinity: {requiredDuringSchedulingIgnoredDuring"
                                         "Execution: {nodeSelectorTerms: [{matchExpression: []}]}}}")) == (
        "strict decoding error: decoding .profiles[0].pluginConfig[0]: strict decoding error: "
        "decoding args for plugin NodeAffinity: strict decoding error: unknown field "
        '"addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].'
        'matchExpression"')
    assert error_of(args("PodTopologySpread", "{defaultingType: List, defaultConstraints: "
                                              "[{labelSelector: {matchLabels: {a: 1}}}]}")) == (
        "decoding .profiles[0].pluginConfig[0]: decoding args for plugin PodTopologySpread: "
        "json: cannot unmarshal number 1 into Go struct field LabelSelector.defaultConstraints."
        "labelSelector.matchLabels of type string")
