"""--authorization-mode=Node: what a kubelet may do, from the pods bound to its node.

Kubernetes piece: plugin/pkg/auth/authorizer/node/node_authorizer.go (NodeAuthorizer) with
pkg/auth/nodeidentifier (a node is a user named `system:node:<nodeName>` in group
`system:nodes`). For a node user:
- secrets and configmaps: get/list/watch of one named object reachable from a pod bound to the
  node; persistentvolumeclaims, persistentvolumes, resourceclaims, volumeattachments: get
  only (a PVC's status: update/patch); serviceaccounts: create of the `token` subresource of
  a pod's service account — all through the graph (node_graph.py), fed by informers over pods,
  persistentvolumes and volumeattachments (a VolumeAttachment is reachable from the node it
  names; resourceclaims are not served here: their requests are judged against an empty
  graph);
- leases in kube-node-lease and csinodes: the ones named after the node;
- everything else: what upstream's NodeRules allow — the rules of the bootstrap
  `system:node` ClusterRole (rbac/bootstrap.py's data), so patching its Node's status or
  creating events needs no RBAC binding.
A request none of these allows gets "no opinion" — a denial whose reason (upstream's text) is
appended to the 403 when nothing later in the union allows it; a non-node user gets no opinion
and no reason, so RBAC decides. As in 1.31 (feature gate AuthorizeNodeWithSelectors off),
nodes and pods are not subdivided: NodeRules decide them. What a node may *write* to its
own objects is NodeRestriction admission's job, which is not built here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..admission.informer import StoreInformer
from ..authn import UserInfo
from ..authn.identities import NODE_USER_PREFIX, NODES_GROUP
from . import Attributes
from .node_graph import (
    CONFIGMAP,
    PV,
    PVC,
    RESOURCECLAIM,
    SECRET,
    SERVICEACCOUNT,
    VOLUME_ATTACHMENT,
    NodeGraph,
)
from .rbac.rules import Rule, rule_allows
from .rules import Rules

NODE_LEASE_NAMESPACE = "kube-node-lease"
#: the resources whose informers feed the graph
RESOURCES = ("pods", "persistentvolumes", "volumeattachments")
#: the API group of each of RESOURCES (the server looks their registries up by it)
RESOURCE_GROUPS = {"pods": "", "persistentvolumes": "", "volumeattachments": "storage.k8s.io"}

Decision = tuple[bool, str]
_NO_OPINION: Decision = (False, "")
_ALLOW: Decision = (True, "")


def node_identity(user: UserInfo) -> tuple[str, bool]:
    """nodeidentifier.NodeIdentity: (node name, is a node). A `system:node:` user outside
    group system:nodes is not a node; one inside with nothing after the prefix is a node
    nobody can identify (authn.identities.node_name_of answers None for both; the authorizer
    gives the second its own reason, as upstream)."""
    if not user.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
        return "", False
    return user.name[len(NODE_USER_PREFIX):], True


class NodeAuthorizer:
    """`sources` maps each of RESOURCES to (store, key prefix); `start` syncs the informers
    and compiles NodeRules from the bootstrap policy (unless `rules` were given)."""

    def __init__(self, sources: Mapping[str, tuple[Any, str]] | None = None,
                 rules: list[dict[str, Any]] | None = None) -> None:
        self.graph = NodeGraph()
        self.informers = {name: StoreInformer(store, prefix, f"node-authorizer:{name}",
                                             keep_objects=False)
                          for name, (store, prefix) in (sources or {}).items()
                          if name in RESOURCES}
        feeds = {"pods": self.graph.set_pod, "persistentvolumes": self.graph.set_pv,
                 "volumeattachments": self.graph.set_volume_attachment}
        for name, informer in self.informers.items():
            informer.key_listeners.append(feeds[name])
        self.node_rules: tuple[Rule, ...] = tuple(Rule.compile(r) for r in rules or ())
        self._rules_given = rules is not None

    async def start(self) -> None:
        if not self._rules_given:
            from .rbac.bootstrap import cluster_role_rules, load_policy

            await load_policy()  # parsed off the loop the first time
            self.node_rules = tuple(Rule.compile(r) for r in cluster_role_rules("system:node"))
        for informer in self.informers.values():
            await informer.start()

    async def stop(self) -> None:
        for informer in self.informers.values():
            await informer.stop()

    def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """RulesFor: a node's permissions cannot be listed (they depend on the graph)."""
        if node_identity(user)[1]:
            return Rules(incomplete=True,
                         errors=["node authorizer does not support user rule resolution"])
        return Rules()

    def authorize(self, attrs: Attributes) -> Decision:
        node, is_node = node_identity(attrs.user)
        if not is_node:
            return _NO_OPINION
        if not node:
            return False, f'unknown node for user "{attrs.user.name}"'
        if attrs.is_resource:
            check = _SUBDIVIDED.get((attrs.api_group, attrs.resource))
            if check is not None:
                return check(self, node, attrs)
        if any(rule_allows(attrs, rule) for rule in self.node_rules):
            return _ALLOW
        return _NO_OPINION

    # -- the subdivided resources (node_authorizer.go's authorize* functions) ---------------
    def _related(self, node: str, kind: str, attrs: Attributes) -> Decision:
        """authorize(): a named object with a path to the node."""
        if not attrs.name:
            return False, "No Object name found"
        if self.graph.reachable(node, kind, attrs.namespace, attrs.name):
            return _ALLOW
        return False, f"no relationship found between node '{node}' and this object"

    def _read_namespaced(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if attrs.verb not in ("get", "list", "watch"):
            return False, "can only read resources of this type"
        if attrs.subresource:
            return False, "cannot read subresource"
        if not attrs.namespace:
            return False, "can only read namespaced object of this type"
        return self._related(node, kind, attrs)

    def _get(self, node: str, kind: str, attrs: Attributes) -> Decision:
        if attrs.verb != "get":
            return False, "can only get individual resources of this type"
        if attrs.subresource:
            return False, "cannot get subresource"
        return self._related(node, kind, attrs)

    def _pvc(self, node: str, attrs: Attributes) -> Decision:
        if attrs.subresource != "status":
            return self._get(node, PVC, attrs)
        if attrs.verb not in ("update", "patch"):
            return False, "can only get/update/patch this type"
        return self._related(node, PVC, attrs)

    def _token(self, node: str, attrs: Attributes) -> Decision:
        """authorizeCreateToken: the pod-binding of the TokenRequest is NodeRestriction's."""
        if attrs.verb != "create" or not attrs.name:
            return False, "can only create tokens for individual service accounts"
        if attrs.subresource != "token":
            return False, "can only create token subresource of serviceaccount"
        if self.graph.reachable(node, SERVICEACCOUNT, attrs.namespace, attrs.name):
            return _ALLOW
        return False, f"no relationship found between node '{node}' and this object"

    @staticmethod
    def _own(node: str, attrs: Attributes, what: str) -> Decision | None:
        """The name check leases and CSINodes share (skipped on create: no name yet)."""
        if attrs.verb not in ("get", "create", "update", "patch", "delete"):
            return False, f"can only get, create, update, patch, or delete a {what}"
        return None

    def _lease(self, node: str, attrs: Attributes) -> Decision:
        denied = self._own(node, attrs, "node lease")
        if denied is not None:
            return denied
        if attrs.namespace != NODE_LEASE_NAMESPACE:
            return False, f'can only access leases in the "{NODE_LEASE_NAMESPACE}" system namespace'
        if attrs.verb != "create" and attrs.name != node:
            return False, "can only access node lease with the same name as the requesting node"
        return _ALLOW

    def _csinode(self, node: str, attrs: Attributes) -> Decision:
        denied = self._own(node, attrs, "CSINode")
        if denied is not None:
            return denied
        if attrs.subresource:
            return False, "cannot authorize CSINode subresources"
        if attrs.verb != "create" and attrs.name != node:
            return False, "can only access CSINode with the same name as the requesting node"
        return _ALLOW


#: (group, resource) -> how a node's request for it is judged
_SUBDIVIDED = {
    ("", "secrets"): lambda a, n, at: a._read_namespaced(n, SECRET, at),
    ("", "configmaps"): lambda a, n, at: a._read_namespaced(n, CONFIGMAP, at),
    ("", "persistentvolumeclaims"): lambda a, n, at: a._pvc(n, at),
    ("", "persistentvolumes"): lambda a, n, at: a._get(n, PV, at),
    ("resource.k8s.io", "resourceclaims"): lambda a, n, at: a._get(n, RESOURCECLAIM, at),
    ("storage.k8s.io", "volumeattachments"): lambda a, n, at: a._get(n, VOLUME_ATTACHMENT, at),
    ("", "serviceaccounts"): lambda a, n, at: a._token(n, at),
    ("coordination.k8s.io", "leases"): lambda a, n, at: a._lease(n, at),
    ("storage.k8s.io", "csinodes"): lambda a, n, at: a._csinode(n, at),
}
