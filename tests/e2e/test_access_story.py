"""The access story end to end, with every real kubectl on the machine (1.27+): a user from a
CertificateSigningRequest to a Role, and a service account from a token to a pod.

One `minikube-py start` subprocess for the module, with start's defaults: `Node,RBAC`, one
generated cluster CA that signs CSRs and authenticates client certificates, and the generated
admin token (in `system:masters`). Each kubectl version then plays the story in its own
namespace with its own kubeconfig (admin + jane contexts), every step through kubectl only
(docs/security.md, "Walkthrough: a user from a CSR to a Role", is the same story):

a. jane's key and CSR (`cryptography`), `kubectl create -f` the CertificateSigningRequest,
   `kubectl certificate approve`, the issued certificate into jane's kubeconfig user;
b. jane is Forbidden, with upstream's message;
c. the admin grants a Role + RoleBinding;
d. `kubectl auth can-i` (with --as, as jane, --list) and `kubectl auth whoami`;
e. jane lists pods but may not create a deployment;
f. RBAC escalation prevention: allowed to create roles, jane may still not grant what she lacks;
g. a ServiceAccount's `kubectl create token` authenticates, is Forbidden until bound;
h. a pod of that account: the kubelet's projected token, read with `kubectl exec`, works from
   the host. (The simulated shell has no wget/curl: nothing reaches the API from inside a pod.)
"""

from __future__ import annotations

import base64
import glob
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.e2e.cluster_process import ClusterProcesses

KUBECTLS = sorted(glob.glob("/usr/lib/google-cloud-sdk/bin/kubectl.1.*"),
                  key=lambda p: [int(x) for x in p.rsplit("kubectl.", 1)[1].split(".")])
pytestmark = pytest.mark.skipif(
    not KUBECTLS, reason="no kubectl 1.27+ on this machine (/usr/lib/google-cloud-sdk/bin/"
    "kubectl.1.*, from the google-cloud-cli kubectl packages)")

SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
#: seconds one kubectl version may take for the whole story
BUDGET = 30.0


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterProcesses]:
    procs = ClusterProcesses(tmp_path_factory.mktemp("story"), nodes=1).start()
    try:
        yield procs
    finally:
        procs.stop()


class Story:
    """One kubectl binary's run: its HOME, its kubeconfig (contexts `admin` and `jane`), its
    namespace; `admin()`, `jane()` and `with_token()` run that kubectl as each party."""

    def __init__(self, binary: str, cluster: ClusterProcesses, home: Path, ns: str) -> None:
        self.binary, self.cluster, self.home, self.ns = binary, cluster, home, ns
        self.server = f"https://127.0.0.1:{cluster.secure_port}"
        self.ca = cluster.tmp / "certs" / "ca.crt"
        self.kubeconfig = home / "kubeconfig"
        (home / "empty-kubeconfig").write_text("")

    def run(self, *args: str, kubeconfig: Path | None = None, stdin: str | None = None
            ) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, *args], input=stdin, text=True, capture_output=True, timeout=60,
            check=False, env={"HOME": str(self.home), "PATH": os.environ.get("PATH", ""),
                              "KUBECONFIG": str(kubeconfig or self.kubeconfig)})

    def ok(self, *args: str, **kw) -> str:
        done = self.run(*args, **kw)
        assert done.returncode == 0, (args, done.stdout, done.stderr)
        return done.stdout

    def admin(self, *args: str, **kw) -> subprocess.CompletedProcess:
        return self.run("--context", "admin", *args, **kw)

    def jane(self, *args: str) -> subprocess.CompletedProcess:
        return self.run("--context", "jane", *args)

    def with_token(self, token: str, *args: str) -> subprocess.CompletedProcess:
        """kubectl with no kubeconfig at all: the secure port, its CA and a bearer token."""
        return self.run("--server", self.server, "--certificate-authority", str(self.ca),
                        "--token", token, *args, kubeconfig=self.home / "empty-kubeconfig")

    def admin_config(self) -> None:
        """The admin's kubeconfig, as an admin writes one by hand."""
        self.ok("config", "set-cluster", "story", f"--server={self.server}",
                f"--certificate-authority={self.ca}", "--embed-certs")
        self.ok("config", "set-credentials", "admin", f"--token={admin_token(self.cluster)}")
        self.ok("config", "set-context", "admin", "--cluster=story", "--user=admin",
                f"--namespace={self.ns}")
        self.ok("config", "use-context", "admin")


def admin_token(cluster: ClusterProcesses) -> str:
    """The admin token `start` generated into its cert dir (user admin, system:masters)."""
    line = (cluster.tmp / "certs" / "tokens.csv").read_text().splitlines()[0]
    return line.split(",")[0]


def eventually(run, expect, timeout: float = 10.0) -> subprocess.CompletedProcess:
    """`run()` until `expect(result)`: RBAC objects reach the authorizer through a watch."""
    deadline = time.monotonic() + timeout
    while not expect(done := run()):
        assert time.monotonic() < deadline, (done.returncode, done.stdout, done.stderr)
        time.sleep(0.05)
    return done


def key_and_csr(cn: str, org: str) -> tuple[bytes, bytes]:
    """(PEM private key, PEM certificate request) for CN=`cn`, O=`org`."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn),
                         x509.NameAttribute(NameOID.ORGANIZATION_NAME, org)])
    csr = x509.CertificateSigningRequestBuilder().subject_name(subject).sign(key, hashes.SHA256())
    return (key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()),
            csr.public_bytes(serialization.Encoding.PEM))


CSR = """apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: {name}
spec:
  request: {request}
  signerName: kubernetes.io/kube-apiserver-client
  usages: [client auth]
"""


def forbidden(user: str, verb: str, resource: str, group: str, ns: str) -> str:
    """Upstream's Forbidden message (apiserver's forbidden(): `<resource>[.group] is forbidden:
    User "<user>" cannot <verb> resource "<resource>" in API group "<group>" in the namespace`)."""
    qualified = f"{resource}.{group}" if group else resource
    return (f'{qualified} is forbidden: User "{user}" cannot {verb} resource "{resource}" '
            f'in API group "{group}" in the namespace "{ns}"')


def version(binary: str) -> str:
    return binary.rsplit("kubectl.", 1)[1]


@pytest.mark.parametrize("binary", KUBECTLS, ids=version)
def test_access_story(cluster: ClusterProcesses, binary: str, tmp_path: Path) -> None:
    started = time.monotonic()
    ns = "story-" + version(binary).replace(".", "-")
    story = Story(binary, cluster, tmp_path, ns)
    story.admin_config()
    story.ok("create", "namespace", ns)
    user_certificate(story)
    jane_is_refused(story)
    story.ok("create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods", "-n", ns)
    story.ok("create", "rolebinding", "jane-reads", "--role=pod-reader", "--user=jane", "-n", ns)
    can_i(story)
    jane_reads(story)
    escalation(story)
    token = service_account_token(story)
    pod_token(story, token)
    took = time.monotonic() - started
    print(f"kubectl {version(binary)}: the story took {took:.1f} s")
    assert took < BUDGET, f"the story took {took:.1f} s with kubectl {version(binary)}"


def user_certificate(story: Story) -> None:
    """a. CSR → approve → issued certificate → jane's kubeconfig user and context."""
    name = f"jane-{story.ns}"
    key_pem, csr_pem = key_and_csr("jane", "dev")
    request = base64.b64encode(csr_pem).decode()
    created = story.ok("create", "-f", "-", stdin=CSR.format(name=name, request=request))
    assert created == f"certificatesigningrequest.certificates.k8s.io/{name} created\n"
    assert story.ok("certificate", "approve", name) \
        == f"certificatesigningrequest.certificates.k8s.io/{name} approved\n"
    issued = eventually(
        lambda: story.admin("get", "csr", name, "-o", "jsonpath={.status.certificate}"),
        lambda done: done.returncode == 0 and done.stdout)
    cert = x509.load_pem_x509_certificate(base64.b64decode(issued.stdout))
    assert cert.subject.rfc4514_string() == "O=dev,CN=jane"
    (story.home / "jane.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (story.home / "jane.key").write_bytes(key_pem)
    story.ok("config", "set-credentials", "jane", f"--client-certificate={story.home / 'jane.crt'}",
             f"--client-key={story.home / 'jane.key'}", "--embed-certs")
    story.ok("config", "set-context", "jane", "--cluster=story", "--user=jane",
             f"--namespace={story.ns}")


def jane_is_refused(story: Story) -> None:
    """b. authenticated by her certificate, authorized for nothing in the namespace."""
    denied = story.jane("get", "pods", "-n", story.ns)
    assert denied.returncode == 1, denied.stdout
    assert (f"Error from server (Forbidden): {forbidden('jane', 'list', 'pods', '', story.ns)}"
            in denied.stderr), denied.stderr


def can_i(story: Story) -> None:
    """d. can-i from the admin (--as, impersonation), from jane herself, --list, whoami."""
    ns = story.ns
    yes = eventually(lambda: story.admin("auth", "can-i", "list", "pods", "-n", ns, "--as", "jane"),
                     lambda done: done.returncode == 0)
    assert yes.stdout == "yes\n"
    no = story.admin("auth", "can-i", "create", "pods", "-n", ns, "--as", "jane")
    assert (no.returncode, no.stdout) == (1, "no\n"), no.stderr
    mine = story.jane("auth", "can-i", "list", "pods", "-n", ns)
    assert (mine.returncode, mine.stdout) == (0, "yes\n"), mine.stderr
    listed = story.jane("auth", "can-i", "--list", "-n", ns)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split() for line in listed.stdout.splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["pods", "[]", "[]", "[get", "list", "watch]"] in rows
    assert not any(row[0] == "deployments.apps" for row in rows)
    whoami = story.jane("auth", "whoami")
    assert whoami.returncode == 0, whoami.stderr
    table = [line.split(None, 1) for line in whoami.stdout.splitlines()]
    assert table == [["ATTRIBUTE", "VALUE"], ["Username", "jane"],
                     ["Groups", "[dev system:authenticated]"]]


def jane_reads(story: Story) -> None:
    """e. what the Role grants, and nothing more."""
    listed = story.jane("get", "pods", "-n", story.ns)
    assert listed.returncode == 0, listed.stderr
    assert listed.stderr == f"No resources found in {story.ns} namespace.\n"
    refused = story.jane("create", "deployment", "web", "--image=nginx", "-n", story.ns)
    assert refused.returncode == 1, refused.stdout
    assert (f"error: failed to create deployment: "
            f"{forbidden('jane', 'create', 'deployments', 'apps', story.ns)}") in refused.stderr


def escalation(story: Story) -> None:
    """f. allowed to create Roles, jane still cannot grant a permission she does not hold."""
    ns = story.ns
    story.ok("create", "role", "role-maker", "--verb=create",
             "--resource=roles.rbac.authorization.k8s.io", "-n", ns)
    story.ok("create", "rolebinding", "jane-makes-roles", "--role=role-maker", "--user=jane",
             "-n", ns)
    eventually(lambda: story.jane("auth", "can-i", "create", "roles", "-n", ns),
               lambda done: done.returncode == 0)
    refused = story.jane("create", "role", "too-much", "--verb=delete", "--resource=secrets",
                         "-n", ns)
    assert refused.returncode == 1, refused.stdout
    assert refused.stderr == (
        'Error from server (Forbidden): roles.rbac.authorization.k8s.io "too-much" is '
        'forbidden: user "jane" (groups=["dev" "system:authenticated"]) is attempting to grant '
        'RBAC permissions not currently held:\n'
        '{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}\n')
    # what she holds she may grant: a Role for reading pods is no escalation
    allowed = story.jane("create", "role", "just-reading", "--verb=get", "--resource=pods",
                         "-n", ns)
    assert allowed.returncode == 0, allowed.stderr


def whoami_user(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr
    rows = dict(line.split(None, 1) for line in done.stdout.splitlines()[1:])
    return rows["Username"]


def service_account_token(story: Story) -> str:
    """g. `kubectl create token`: the account authenticates; reads only once bound."""
    ns = story.ns
    story.ok("create", "serviceaccount", "robot", "-n", ns)
    token = story.ok("create", "token", "robot", "-n", ns).strip()
    assert whoami_user(story.with_token(token, "auth", "whoami")) \
        == f"system:serviceaccount:{ns}:robot"
    user = f"system:serviceaccount:{ns}:robot"
    denied = story.with_token(token, "get", "pods", "-n", ns)
    assert denied.returncode == 1
    assert forbidden(user, "list", "pods", "", ns) in denied.stderr, denied.stderr
    story.ok("create", "rolebinding", "robot-reads", "--role=pod-reader",
             f"--serviceaccount={ns}:robot", "-n", ns)
    eventually(lambda: story.with_token(token, "get", "pods", "-n", ns),
               lambda done: done.returncode == 0)
    return token


def pod_token(story: Story, token: str) -> None:
    """h. the kubelet's projected kube-api-access volume: token, ca.crt, namespace."""
    ns = story.ns
    story.ok("run", "robot-pod", "-n", ns, "--image=busybox", "--restart=Never",
             '--overrides={"apiVersion": "v1", "spec": {"serviceAccountName": "robot"}}',
             "--", "sleep", "3600")
    story.ok("wait", "--for=condition=Ready", "pod/robot-pod", "-n", ns, "--timeout=30s")
    files = story.ok("exec", "robot-pod", "-n", ns, "--", "ls", SA_DIR).split()
    assert files == ["ca.crt", "namespace", "token"]
    assert story.ok("exec", "robot-pod", "-n", ns, "--", "cat", f"{SA_DIR}/namespace") == ns
    ca = story.ok("exec", "robot-pod", "-n", ns, "--", "cat", f"{SA_DIR}/ca.crt")
    assert ca == story.ca.read_text()  # kube-root-ca.crt: the serving CA, not the user CA
    pod_token = story.ok("exec", "robot-pod", "-n", ns, "--", "cat", f"{SA_DIR}/token")
    assert pod_token != token
    assert whoami_user(story.with_token(pod_token, "auth", "whoami")) \
        == f"system:serviceaccount:{ns}:robot"
    listed = story.with_token(pod_token, "get", "pods", "-n", ns, "-o", "name")
    assert (listed.returncode, listed.stdout) == (0, "pod/robot-pod\n"), listed.stderr

