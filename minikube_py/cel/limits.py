"""CEL's cost limits (upstream k8s.io/apiserver/pkg/apis/cel/config.go), importable without
loading the evaluator (minikube_py/cel/__init__.py loads it on first use)."""

#: upstream celconfig.PerCallLimit: the most one evaluation may cost
PER_CALL_LIMIT = 1_000_000
#: all rules of one object together. Upstream's RuntimeCELCostBudget is 10,000,000; here a
#: unit is 0.1-0.5 µs of evaluation that holds the GIL (so the event loop), and 10M units
#: would be 1-5 s of a frozen cluster: ours allows two full-size calls, ~0.2-1 s at worst
RUNTIME_BUDGET = 2_000_000
UPSTREAM_RUNTIME_BUDGET = 10_000_000
