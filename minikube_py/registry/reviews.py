"""The access-review kinds: create-only, never stored.

Kubernetes pieces: pkg/registry/authorization (subjectaccessreview, localsubjectaccessreview,
selfsubjectaccessreview, selfsubjectrulesreview) and pkg/registry/authentication
(tokenreview, selfsubjectreview). Upstream registers each as a REST storage with only a
Create: the request body is a question, the answer is the same object with `status` filled,
and nothing reaches etcd. Here they are Strategies with `verbs=("create",)` and no key root,
listed in resources.VIRTUAL; apiserver/reviews answers them.
"""

from __future__ import annotations

from .strategy import Strategy

AUTHORIZATION = "authorization.k8s.io"
AUTHENTICATION = "authentication.k8s.io"


def _review(group: str, version: str, resource: str, kind: str,
            namespaced: bool = False) -> Strategy:
    return Strategy(group=group, version=version, resource=resource, kind=kind,
                    namespaced=namespaced, key_root="", verbs=("create",), spec_fields=())


SUBJECT_ACCESS_REVIEWS = _review(AUTHORIZATION, "v1", "subjectaccessreviews",
                                 "SubjectAccessReview")
LOCAL_SUBJECT_ACCESS_REVIEWS = _review(AUTHORIZATION, "v1", "localsubjectaccessreviews",
                                       "LocalSubjectAccessReview", namespaced=True)
SELF_SUBJECT_ACCESS_REVIEWS = _review(AUTHORIZATION, "v1", "selfsubjectaccessreviews",
                                      "SelfSubjectAccessReview")
SELF_SUBJECT_RULES_REVIEWS = _review(AUTHORIZATION, "v1", "selfsubjectrulesreviews",
                                     "SelfSubjectRulesReview")
TOKEN_REVIEWS = _review(AUTHENTICATION, "v1", "tokenreviews", "TokenReview")
#: SelfSubjectReview: GA in 1.28 (v1); kubectl 1.27's `auth whoami` asks v1beta1 (seen with
#: -v=6), which 1.31 still serves. v1alpha1 (kubectl 1.26's `alpha auth whoami`) is an alpha
#: API upstream leaves off by default, so it is not served.
SELF_SUBJECT_REVIEWS = tuple(
    _review(AUTHENTICATION, version, "selfsubjectreviews", "SelfSubjectReview")
    for version in ("v1", "v1beta1"))

STRATEGIES: tuple[Strategy, ...] = (
    LOCAL_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS,
    SUBJECT_ACCESS_REVIEWS, *SELF_SUBJECT_REVIEWS[:1], TOKEN_REVIEWS, *SELF_SUBJECT_REVIEWS[1:],
)
RESOURCES = frozenset(s.resource for s in STRATEGIES)
