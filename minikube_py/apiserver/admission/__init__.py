"""Admission control: plugins that see every write after authorization, before storage.

Kubernetes v1.0 piece: pkg/admission (Interface, chain) and plugin/pkg/admission/*. A plugin
gets the operation's attributes and may reject (raise a StatusError) or mutate the object.
The chain runs in order, like `--admission-control=NamespaceLifecycle,...`.
"""

from .chain import AdmissionChain, Attributes, Plugin
from .namespace_lifecycle import NamespaceLifecycle
from .registry import PLUGINS, build_chain, check_names, registry_lookup

__all__ = ["PLUGINS", "AdmissionChain", "Attributes", "NamespaceLifecycle", "Plugin",
           "build_chain", "check_names", "registry_lookup"]
