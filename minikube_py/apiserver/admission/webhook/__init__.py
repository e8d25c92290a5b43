"""Admission webhooks: MutatingAdmissionWebhook and ValidatingAdmissionWebhook.

Kubernetes piece: k8s.io/apiserver/pkg/admission/plugin/webhook (mutating, validating, generic,
predicates, request, errors). Modules: rules.py (which webhooks apply, pure), conditions.py
(matchConditions, pure), attributes.py (one request as the webhooks see it), review.py
(AdmissionReview out and its response in, pure), source.py (the configurations, from a
watch), dispatch.py (the two plugins).
"""

from .dispatch import MutatingAdmissionWebhook, ValidatingAdmissionWebhook
from .source import ConfigurationSource

__all__ = ["ConfigurationSource", "MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"]
