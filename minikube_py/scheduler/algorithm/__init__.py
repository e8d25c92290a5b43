"""Scheduling algorithm pieces (v1.0 plugin/pkg/scheduler/algorithm): predicates and priorities
as pure functions over a pod and NodeInfo aggregates, registered by name."""
