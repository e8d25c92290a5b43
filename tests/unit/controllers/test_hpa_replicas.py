"""The HPA's arithmetic (controllers/hpa_replicas.py), as upstream's replica_calculator_test
and horizontal_test cases state it."""

from __future__ import annotations

import pytest

from minikube_py.api import hpa as hpa_api
from minikube_py.controllers import hpa_replicas as calc

P = calc.PodSample


def test_utilization_above_target_scales_by_the_ratio():
    pods = [P("a", 200, 250), P("b", 200, 250)]  # 125 % of request, target 50 %
    got = calc.resource_replicas(2, pods, target_utilization=50, target_average=None)
    assert got.replicas == 5 and got.utilization == 125


def test_within_the_tolerance_nothing_changes():
    pods = [P("a", 200, 105), P("b", 200, 105)]  # 52 % (truncated) against 50 %: ratio 1.04
    assert calc.resource_replicas(2, pods, target_utilization=50,
                                  target_average=None).replicas == 2
    # a tighter tolerance acts on it
    assert calc.resource_replicas(2, pods, target_utilization=50, target_average=None,
                                  tolerance=0.01).replicas == 3


def test_below_target_scales_down():
    pods = [P(n, 200, 20) for n in "abcd"]  # 10 % against 50 %
    assert calc.resource_replicas(4, pods, target_utilization=50,
                                  target_average=None).replicas == 1


def test_average_value_targets_divide_the_total_usage():
    pods = [P("a", 0, 300), P("b", 0, 500)]  # average 400m against 200m
    got = calc.resource_replicas(2, pods, target_utilization=None, target_average=200)
    assert got.replicas == 4 and got.utilization is None and got.average == 400


def test_a_missing_request_is_an_error_for_utilization():
    with pytest.raises(calc.MetricError, match="missing request for cpu"):
        calc.resource_replicas(1, [P("a", 0, 100)], target_utilization=50, target_average=None)


def test_no_metrics_at_all_is_an_error():
    with pytest.raises(calc.MetricError, match="did not receive metrics"):
        calc.resource_replicas(1, [P("a", 200, None)], target_utilization=50,
                               target_average=None)


def test_missing_pods_count_as_at_target_when_scaling_down():
    # one pod idle, one without metrics: assumed at 100 % of its request
    pods = [P("a", 200, 20), P("b", 200, None)]
    got = calc.resource_replicas(2, pods, target_utilization=50, target_average=None)
    # (20 + 200) / 400 = 55 % -> ratio 1.1, within the tolerance: no shrink at all
    assert got.replicas == 2
    # a very idle one with a high target: missing counted at the target (200 %)
    pods = [P("a", 200, 20), P("b", 200, None), P("c", 200, 20)]
    got = calc.resource_replicas(3, pods, target_utilization=200, target_average=None)
    # (20 + 400 + 20) / 600 = 73 % -> ratio 0.365 -> ceil(1.1) = 2
    assert got.replicas == 2


def test_missing_and_unready_pods_count_as_idle_when_scaling_up():
    pods = [P("a", 200, 300), P("b", 200, None), P("c", 200, 300, ready=False)]
    got = calc.resource_replicas(3, pods, target_utilization=50, target_average=None)
    # a alone: 150 % -> ratio 3; with b and c at 0: 300 / 600 = 50 % -> ratio 1.0 -> stays
    assert got.replicas == 3 and got.utilization == 150


def test_stabilization_keeps_the_highest_recent_recommendation_on_the_way_down():
    history = [(100.0, 8), (150.0, 6)]
    assert calc.stabilize(200.0, 8, 2, history, 0, 300) == (8, "ScaleDownStabilized")
    # once the window has passed, the low recommendation wins
    assert calc.stabilize(500.0, 8, 2, history, 0, 300) == (2, "")


def test_stabilization_of_the_way_up_uses_the_lowest_recent_recommendation():
    assert calc.stabilize(100.0, 2, 9, [(95.0, 4)], 30, 300) == (4, "ScaleUpStabilized")


def test_the_default_policies_limit_a_scale_up_to_four_pods_or_double():
    behavior = hpa_api.effective_behavior({})
    got = calc.apply_rate(behavior, 1, 10, 1, 10, 0.0, [], [])
    assert (got.replicas, got.reason) == (5, "ScaleUpLimit")  # max(1+4, 1*2)
    got = calc.apply_rate(behavior, 6, 20, 1, 20, 0.0, [], [])
    assert got.replicas == 12  # max(6+4, 6*2)


def test_recent_scale_events_count_against_the_period():
    behavior = hpa_api.effective_behavior({})
    # 4 pods were added 10 s ago: the period started at 1 replica
    got = calc.apply_rate(behavior, 5, 10, 1, 10, 100.0, [(90.0, 4)], [])
    assert got.replicas == 5 and got.reason == "ScaleUpLimit"
    # after the 15 s period the next step is allowed: max(5 + 4, 5 * 2)
    assert calc.apply_rate(behavior, 5, 20, 1, 20, 106.0, [(90.0, 4)], []).replicas == 10


def test_the_bounds_give_upstreams_reasons():
    behavior = hpa_api.effective_behavior({})
    got = calc.apply_rate(behavior, 3, 30, 1, 4, 0.0, [], [])
    assert (got.replicas, got.reason) == (4, "TooManyReplicas")
    got = calc.apply_rate(behavior, 3, 0, 2, 10, 0.0, [], [])
    assert (got.replicas, got.reason) == (2, "TooFewReplicas")
    assert calc.apply_rate(behavior, 3, 3, 1, 10, 0.0, [], []).reason == ""


def test_a_disabled_direction_does_not_move():
    behavior = hpa_api.effective_behavior({"behavior": {"scaleDown": {"selectPolicy": "Disabled"}}})
    got = calc.apply_rate(behavior, 5, 1, 1, 10, 0.0, [], [])
    assert got.replicas == 5 and got.reason == "ScaleDownLimit"


def test_a_pods_policy_limits_scale_down_per_period():
    behavior = hpa_api.effective_behavior({"behavior": {"scaleDown": {"policies": [
        {"type": "Pods", "value": 1, "periodSeconds": 60}]}}})
    assert calc.apply_rate(behavior, 5, 1, 1, 10, 0.0, [], []).replicas == 4
