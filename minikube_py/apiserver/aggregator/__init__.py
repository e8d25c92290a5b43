"""API aggregation (upstream kube-aggregator): APIServices, their proxy and availability."""

from .aggregator import Aggregator

__all__ = ["Aggregator"]
