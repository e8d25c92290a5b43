"""The simulated shell (kubelet/shell.py) and the container picture it runs over
(kubelet/sandbox.py): commands, scripts, exit codes, stdin, files of volumes, env vars."""

from __future__ import annotations

import base64

import pytest

from minikube_py.kubelet import sandbox as sandboxes
from minikube_py.kubelet.shell import (
    PATH,
    LineDiscipline,
    Read,
    Sandbox,
    Shell,
    ShellSyntaxError,
    Write,
    parse,
    run_sync,
)
from minikube_py.kubelet.shell_io import CHUNK


def box(**files: bytes) -> Sandbox:
    return Sandbox("web", {"PATH": PATH, "HOSTNAME": "web", "FOO": "bar", "HOME": "/root"},
                   {"/etc/config/greeting": b"hello\n", "/etc/config/mode": b"prod",
                    **files})


def run(argv: list[str], stdin: str = "", sandbox: Sandbox | None = None):
    return run_sync(Shell(sandbox or box()).exec(argv), stdin)


def sh(script: str, stdin: str = "", sandbox: Sandbox | None = None):
    return run(["sh", "-c", script], stdin, sandbox)


@pytest.mark.parametrize(("argv", "stdout"), [
    (["echo", "hi"], "hi\n"),
    (["echo", "-n", "a", "b"], "a b"),
    (["/bin/echo", "x"], "x\n"),
    (["hostname"], "web\n"),
    (["pwd"], "/\n"),
    (["whoami"], "root\n"),
    (["printenv", "FOO"], "bar\n"),
    (["cat", "/etc/config/greeting"], "hello\n"),
    (["ls", "/etc/config"], "greeting\nmode\n"),
    (["ls", "-a", "/etc/config"], ".\n..\ngreeting\nmode\n"),
])
def test_commands(argv: list[str], stdout: str) -> None:
    result = run(argv)
    assert (result.stdout, result.stderr, result.code) == (stdout, "", 0)


def test_env_prints_every_variable_in_order() -> None:
    assert run(["env"]).stdout.splitlines() == [
        f"PATH={PATH}", "HOSTNAME=web", "FOO=bar", "HOME=/root"]


def test_exit_codes_propagate() -> None:
    assert sh("exit 3").code == 3
    assert sh("exit 300").code == 44
    assert run(["false"]).code == 1
    assert run(["true"]).code == 0
    assert sh("false; true").code == 0
    assert sh("echo a; exit 7; echo never") == ("a\n", "", 7, 0.0)


def test_and_or_and_status_variable() -> None:
    assert sh("true && echo yes || echo no").stdout == "yes\n"
    assert sh("false && echo yes || echo no").stdout == "no\n"
    assert sh("false; echo $?").stdout == "1\n"


def test_unknown_command_in_a_shell_is_127_with_busybox_message() -> None:
    result = sh("foo --bar")
    assert (result.stdout, result.stderr, result.code) == ("", "sh: foo: not found\n", 127)


def test_unknown_binary_run_directly_is_the_runtime_error() -> None:
    result = run(["nginx-debug"])
    assert result.code == 126
    assert 'exec: "nginx-debug": executable file not found in $PATH' in result.stdout


def test_missing_file_and_directory_errors() -> None:
    result = run(["cat", "/nope"])
    assert (result.stderr, result.code) == (
        "cat: can't open '/nope': No such file or directory\n", 1)
    assert run(["ls", "/nope"]).stderr == "ls: /nope: No such file or directory\n"
    assert run(["cat", "/etc/config"]).code == 1


def test_sleep_is_an_action_not_a_block() -> None:
    assert sh("sleep 2; sleep 0.5").slept == pytest.approx(2.5)
    assert sh("sleep 500ms").code == 1  # busybox: s, m, h, d suffixes only
    assert run(["sleep", "x"]).code == 1


def test_quotes_variables_and_substitution() -> None:
    result = sh("""X=1; echo "a  $X" '$X' ${NOPE:-dflt} $(hostname)-$FOO \\$HOME""")
    assert result.stdout == "a  1 $X dflt web-bar $HOME\n"


def test_pipes_redirections_and_a_writable_layer() -> None:
    layer: dict[str, bytes] = {}
    sandbox = Sandbox("web", {"FOO": "bar"}, {}, layer=layer)
    assert sh("env | grep FOO", sandbox=sandbox).stdout == "FOO=bar\n"
    assert sh("echo one > /tmp/f; echo two >> /tmp/f; cat /tmp/f | wc -l",
              sandbox=sandbox).stdout == "2\n"
    assert layer == {"/tmp/f": b"one\ntwo\n"}
    assert sh("foo 2>/dev/null; echo $?", sandbox=sandbox).stdout == "127\n"
    assert sh("foo 2>&1 | grep -c found", sandbox=sandbox).stdout == "1\n"
    assert sh("cd /tmp && ls && pwd", sandbox=sandbox).stdout == "f\n/tmp\n"


def test_stdin_for_cat_read_and_an_interactive_shell() -> None:
    assert run(["cat"], "a\nb").stdout == "a\nb"
    assert sh("read A B; echo $B-$A", "x y\n").stdout == "y-x\n"
    result = run(["sh"], "echo one\nFOO=baz\necho $FOO\nexit 4\necho never\n")
    assert (result.stdout, result.code) == ("one\nbaz\n", 4)
    assert run(["sh"], "false\n").code == 1  # EOF: the last status


def test_interactive_shell_with_a_tty_prompts() -> None:
    program = Shell(box(), tty=True).exec(["sh"])
    assert next(program) == Write(1, b"/ # ")
    assert program.send(None) == Read()
    assert program.send("cd /tmp\n") == Write(1, b"/tmp # ")


def test_program_protocol_asks_for_stdin() -> None:
    """cat asks for what read(2) returns and writes it at once, newline or not; `read`
    asks for a line."""
    program = Shell(box()).exec(["cat"])
    assert next(program) == Read(CHUNK)
    assert program.send("x") == Write(1, b"x")
    assert program.send(None) == Read(CHUNK)
    assert program.send("y\n") == Write(1, b"y\n")
    assert program.send(None) == Read(CHUNK)
    with pytest.raises(StopIteration) as stop:
        program.send(None)
    assert stop.value.value == 0


def test_the_read_builtin_asks_for_a_line() -> None:
    assert next(Shell(box()).exec(["sh", "-c", "read X"])) == Read()


def test_syntax_errors() -> None:
    with pytest.raises(ShellSyntaxError):
        parse("echo 'open")
    with pytest.raises(ShellSyntaxError):
        parse("&& echo")
    assert sh("echo 'x").code == 2


def test_line_discipline_echoes_edits_and_ends_lines() -> None:
    tty = LineDiscipline()
    echo, lines = tty.feed(b"ecx\x7fho hi\r")
    assert echo == b"ecx\b \bho hi\r\n" and lines == ["echo hi\n"]
    assert tty.feed(b"\x04") == (b"", []) and tty.eof
    assert LineDiscipline.output(b"a\nb\r\n") == b"a\r\nb\r\n"


# -- the container picture ------------------------------------------------------------------
POD = {
    "metadata": {"name": "web", "namespace": "default", "uid": "u1",
                 "labels": {"app": "web"}},
    "spec": {
        "nodeName": "node-0",
        "containers": [{
            "name": "web", "image": "nginx",
            "env": [
                {"name": "A", "value": "1"},
                {"name": "B", "value": "$(A)-2 $$(A) $(MISSING)"},
                {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "APP", "valueFrom": {"fieldRef": {
                    "fieldPath": "metadata.labels['app']"}}},
                {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "MODE", "valueFrom": {"configMapKeyRef": {"name": "cfg",
                                                                   "key": "mode"}}},
                {"name": "PASS", "valueFrom": {"secretKeyRef": {"name": "sec",
                                                                "key": "password"}}},
                {"name": "GONE", "valueFrom": {"configMapKeyRef": {
                    "name": "cfg", "key": "nope", "optional": True}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                {"name": "MEM", "valueFrom": {"resourceFieldRef": {
                    "resource": "requests.memory", "divisor": "1Mi"}}},
            ],
            "envFrom": [{"configMapRef": {"name": "cfg"}, "prefix": "CFG_"}],
            "resources": {"requests": {"memory": "64Mi"}},
            "volumeMounts": [{"name": "c", "mountPath": "/etc/config"},
                             {"name": "s", "mountPath": "/etc/secret"},
                             {"name": "c", "mountPath": "/app/mode.txt", "subPath": "mode"},
                             {"name": "d", "mountPath": "/etc/podinfo"},
                             {"name": "e", "mountPath": "/scratch"}],
        }],
        "volumes": [
            {"name": "c", "configMap": {"name": "cfg"}},
            {"name": "s", "secret": {"secretName": "sec", "items": [
                {"key": "password", "path": "pw"}]}},
            {"name": "d", "downwardAPI": {"items": [
                {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"name": "e", "emptyDir": {}},
        ],
    },
}
CONFIGMAPS = {"cfg": {"data": {"mode": "prod", "greeting": "hello\n"}}}
SECRETS = {"sec": {"data": {"password": base64.b64encode(b"s3cret").decode()}}}
SERVICES = [{"metadata": {"name": "kubernetes"},
             "spec": {"clusterIP": "10.0.0.1",
                      "ports": [{"name": "https", "port": 443, "protocol": "TCP"}]}},
            {"metadata": {"name": "headless"}, "spec": {"clusterIP": "None"}}]


def test_references_name_what_the_kubelet_must_read() -> None:
    assert sandboxes.references(POD, POD["spec"]["containers"][0]) == ({"cfg"}, {"sec"})


def test_container_env_resolves_value_from_and_service_links() -> None:
    env = sandboxes.container_env(POD, POD["spec"]["containers"][0], configmaps=CONFIGMAPS,
                                  secrets=SECRETS, services=SERVICES, pod_ip="10.244.0.5",
                                  allocatable={"cpu": "4", "memory": "8Gi"})
    assert list(env)[:2] == ["PATH", "HOSTNAME"] and env["HOSTNAME"] == "web"
    assert env["KUBERNETES_SERVICE_HOST"] == "10.0.0.1"
    assert env["KUBERNETES_SERVICE_PORT"] == "443"
    assert env["KUBERNETES_PORT_443_TCP"] == "tcp://10.0.0.1:443"
    assert "HEADLESS_SERVICE_HOST" not in env
    assert env["B"] == "1-2 $(A) $(MISSING)"
    assert (env["POD"], env["APP"], env["IP"]) == ("web", "web", "10.244.0.5")
    assert (env["MODE"], env["PASS"], env["CFG_mode"]) == ("prod", "s3cret", "prod")
    assert "GONE" not in env
    assert (env["CPU"], env["MEM"]) == ("4", "64")  # no limit: the node's allocatable
    assert env["HOME"] == "/root"


def test_volumes_become_files_at_their_mount_paths() -> None:
    sandbox = sandboxes.build(POD, POD["spec"]["containers"][0], configmaps=CONFIGMAPS,
                              secrets=SECRETS, services=[], pod_ip="10.244.0.5")
    files = sandbox.files
    assert files["/etc/config/greeting"] == b"hello\n"
    assert files["/etc/secret/pw"] == b"s3cret"
    assert files["/app/mode.txt"] == b"prod"
    assert files["/etc/podinfo/name"] == b"web"
    assert files["/etc/hostname"] == b"web\n"
    assert "/scratch" in sandbox.dirs
    assert run(["ls", "/etc/secret"], sandbox=sandbox).stdout == "pw\n"
    assert run(["ls", "/scratch"], sandbox=sandbox) == ("", "", 0, 0.0)
    assert "10.244.0.5\tweb" in run(["cat", "/etc/hosts"], sandbox=sandbox).stdout
