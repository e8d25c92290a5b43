"""ValidatingAdmissionPolicy: CEL policies bound to requests, as an admission plugin.

Kubernetes piece: k8s.io/apiserver/pkg/admission/plugin/policy (generic + validating). Modules:
`matching` (which requests a policy or binding is about; pure), `compile` (a policy's CEL, once
per resourceVersion), `evaluate` (one policy on one activation; pure), `request` (the request
as policies see it), `informer` (policies, bindings, namespaces and params kept by a watch),
`plugin` (the admission plugin that ties them together).
"""

from .plugin import ValidatingAdmissionPolicy

__all__ = ["ValidatingAdmissionPolicy"]
