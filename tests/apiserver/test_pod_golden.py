"""A created pod has the fields a real 1.31 server gives it.

The golden is `kubectl get pod nginx -o yaml` after `kubectl run nginx --image=nginx` on a 1.31
cluster (its spec and initial status; nodeName, status conditions and timestamps come later
from the scheduler and kubelet), which is what upstream's defaults (pkg/apis/core/v1
defaults.go) and 1.31's default admission chain (ServiceAccount's projected token volume,
Priority, DefaultTolerationSeconds) produce. Only the volume's random suffix differs per pod.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from minikube_py.apiserver.admission import PLUGINS
from minikube_py.apiserver.admission.order import enabled
from tests.apiserver.conftest import start_api

GOLDEN = yaml.safe_load("""
apiVersion: v1
kind: Pod
metadata:
  labels:
    run: nginx
  name: nginx
  namespace: default
spec:
  containers:
  - image: nginx
    imagePullPolicy: Always
    name: nginx
    resources: {}
    terminationMessagePath: /dev/termination-log
    terminationMessagePolicy: File
    volumeMounts:
    - mountPath: /var/run/secrets/kubernetes.io/serviceaccount
      name: kube-api-access-xxxxx
      readOnly: true
  dnsPolicy: ClusterFirst
  enableServiceLinks: true
  preemptionPolicy: PreemptLowerPriority
  priority: 0
  restartPolicy: Always
  schedulerName: default-scheduler
  securityContext: {}
  serviceAccount: default
  serviceAccountName: default
  terminationGracePeriodSeconds: 30
  tolerations:
  - effect: NoExecute
    key: node.kubernetes.io/not-ready
    operator: Exists
    tolerationSeconds: 300
  - effect: NoExecute
    key: node.kubernetes.io/unreachable
    operator: Exists
    tolerationSeconds: 300
  volumes:
  - name: kube-api-access-xxxxx
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken:
          expirationSeconds: 3607
          path: token
      - configMap:
          items:
          - key: ca.crt
            path: ca.crt
          name: kube-root-ca.crt
      - downwardAPI:
          items:
          - fieldRef:
              apiVersion: v1
              fieldPath: metadata.namespace
            path: namespace
status:
  phase: Pending
  qosClass: BestEffort
""")

#: what `kubectl run nginx --image=nginx` POSTs
KUBECTL_RUN = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"labels": {"run": "nginx"}, "name": "nginx"},
               "spec": {"containers": [{"image": "nginx", "name": "nginx", "resources": {}}],
                        "dnsPolicy": "ClusterFirst", "restartPolicy": "Always"},
               "status": {}}
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation")


def comparable(pod: dict) -> dict:
    for key in SERVER_SET:
        pod["metadata"].pop(key, None)
    text = yaml.safe_dump(pod)
    return yaml.safe_load(re.sub(r"kube-api-access-[a-z0-9]{5}", "kube-api-access-xxxxx", text))


async def test_kubectl_run_pod_matches_a_1_31_server(tmp_path: Path) -> None:
    api, runner, store, session = await start_api(tmp_path, admission_control=enabled(PLUGINS))
    try:
        status, _ = await api.post("/api/v1/namespaces/default/serviceaccounts", {
            "apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}})
        assert status == 201  # the serviceaccount controller's job in a running cluster
        status, created = await api.post("/api/v1/namespaces/default/pods", KUBECTL_RUN)
        assert status == 201, created
        assert comparable(created) == GOLDEN
        volume = created["spec"]["volumes"][0]["name"]
        assert re.fullmatch(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}", volume)
        assert created["spec"]["containers"][0]["volumeMounts"][0]["name"] == volume

        opted_out = {**KUBECTL_RUN, "metadata": {"name": "quiet"},
                     "spec": {**KUBECTL_RUN["spec"], "automountServiceAccountToken": False}}
        status, created = await api.post("/api/v1/namespaces/default/pods", opted_out)
        assert status == 201
        assert "volumes" not in created["spec"]
        assert "volumeMounts" not in created["spec"]["containers"][0]
    finally:
        await session.close()
        await runner.cleanup()
        await store.close()
