"""Who the control plane's own components are: the users upstream's components authenticate as.

Kubernetes pieces: the kubeconfigs kubeadm writes for the components (scheduler.conf with a
client certificate for `system:kube-scheduler`, controller-manager.conf for
`system:kube-controller-manager`, kubelet.conf for `system:node:<name>` in `system:nodes`);
kube-controller-manager's `--use-service-account-credentials`, which runs each controller as
the service account `kube-system/<controller>-...` whose bootstrap ClusterRole
`system:controller:<...>` (bootstrappolicy/controller_policy.go) is all it may do; and
k8s.io/apiserver's serviceaccount.MakeUsername / MakeGroupNames.

In the all-in-one the components reach the API server in-process (client/inprocess.py), where
there is no certificate to present: the transport asserts the identity instead, and the API
server authorizes the request as that user — what it would do had the same user authenticated
with a certificate. Only code in this process can assert an identity; nothing arriving on a
socket can.
"""

from __future__ import annotations

from . import ALL_AUTHENTICATED, UserInfo

#: user.NodesGroup and the node user's prefix (system:node:<nodeName>)
NODES_GROUP = "system:nodes"
NODE_USER_PREFIX = "system:node:"
#: serviceaccount.ServiceAccountUsernamePrefix and AllServiceAccountsGroup
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS = "system:serviceaccounts"

KUBE_SCHEDULER = UserInfo("system:kube-scheduler", groups=(ALL_AUTHENTICATED,))
KUBE_CONTROLLER_MANAGER = UserInfo("system:kube-controller-manager",
                                   groups=(ALL_AUTHENTICATED,))


def service_account_username(namespace: str, name: str) -> str:
    """serviceaccount.MakeUsername: `system:serviceaccount:<ns>:<name>`."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """serviceaccount.MakeGroupNames: every account's group and its namespace's group."""
    return (ALL_SERVICE_ACCOUNTS, f"{ALL_SERVICE_ACCOUNTS}:{namespace}")


def service_account_user(namespace: str, name: str) -> UserInfo:
    """The user a service account's token authenticates as (without the token's uid and
    bound-object extras)."""
    return UserInfo(service_account_username(namespace, name),
                    groups=(*service_account_groups(namespace), ALL_AUTHENTICATED))


def node_user(node_name: str) -> UserInfo:
    """A kubelet's user: `system:node:<nodeName>` in `system:nodes`, which the Node
    authorizer (authz/node.py) recognises."""
    return UserInfo(f"{NODE_USER_PREFIX}{node_name}", groups=(NODES_GROUP, ALL_AUTHENTICATED))


def node_name_of(user: UserInfo) -> str | None:
    """nodeidentifier.NodeIdentity: the node a user is, or None (the name must carry the
    prefix and the user must be in system:nodes)."""
    if not user.name.startswith(NODE_USER_PREFIX) or NODES_GROUP not in user.groups:
        return None
    return user.name[len(NODE_USER_PREFIX):] or None
