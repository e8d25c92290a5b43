"""The busybox applets of the simulated shell (kubelet/shell_applets*.py) and the container
process contract (kubelet/shell_process.py), table-driven against busybox's output."""

from __future__ import annotations

import math

import pytest

from minikube_py.kubelet.shell import PATH, ContainerProcess, Sandbox, Shell, Sleep, run_sync

FILES = {"/data/words": b"pear\napple\nfig\napple\n", "/data/nums": b"10\n9\n100\n"}


def box() -> Sandbox:
    return Sandbox("web", {"PATH": PATH, "HOME": "/root", "FOO": "bar"}, dict(FILES))


def sh(script: str, stdin: str = ""):
    shell = Shell(box())
    shell.session.now = lambda: 946688523.5  # 2000-01-01T01:02:03.5Z
    return run_sync(shell.exec(["sh", "-c", script]), stdin)


@pytest.mark.parametrize(("script", "stdout"), [
    ("seq 3", "1\n2\n3\n"), ("seq 2 2 6", "2\n4\n6\n"), ("seq -s, 1 3", "1,2,3\n"),
    ("seq -w 8 10", "08\n09\n10\n"),
    ("date -u +%Y-%m-%dT%H:%M:%S", "2000-01-01T01:02:03\n"), ("date +%s", "946688523\n"),
    ("printf '%s=%d\\n' a 1 b 2", "a=1\nb=2\n"), ("printf '%5.1f|%-3s|%x\\n' 3.14159 ab 255", "  3.1|ab |ff\n"),
    ("echo -e 'a\\tb'", "a\tb\n"), ("echo -n x", "x"),
    ("grep -c apple /data/words", "2\n"), ("grep -n fig /data/words", "3:fig\n"),
    ("grep -v -i APPLE /data/words", "pear\nfig\n"), ("grep -E 'pe|fi' /data/words", "pear\nfig\n"),
    ("head -n 2 /data/words", "pear\napple\n"), ("head -1 /data/words", "pear\n"),
    ("tail -n 1 /data/words", "apple\n"), ("tail -n +3 /data/words", "fig\napple\n"),
    ("wc -l /data/words", "4 /data/words\n"), ("cat /data/words | wc -l", "4\n"),
    ("echo 'a b c' | wc -w", "3\n"), ("printf abc | wc -c", "3\n"),
    ("sort /data/words", "apple\napple\nfig\npear\n"), ("sort -u /data/words", "apple\nfig\npear\n"),
    ("sort -n /data/nums", "9\n10\n100\n"), ("sort -rn /data/nums", "100\n10\n9\n"),
    ("sort /data/words | uniq -c", "      2 apple\n      1 fig\n      1 pear\n"),
    ("echo a:b:c | cut -d: -f2", "b\n"), ("echo hello | cut -c1-3", "hel\n"),
    ("echo hello | tr a-z A-Z", "HELLO\n"), ("echo hello | tr -d l", "heo\n"),
    ("echo hello world | sed 's/o/0/g'", "hell0 w0rld\n"), ("echo a-b | sed 's/\\(a\\)-\\(b\\)/\\2\\1/'", "ba\n"),
    ("sed -n '2p' /data/words", "apple\n"), ("sed '/apple/d' /data/words", "pear\nfig\n"),
    ("echo 'a b c' | awk '{print $2}'", "b\n"), ("echo a:b | awk -F: '{print $2, $1}'", "b a\n"),
    ("echo hi | base64", "aGkK\n"), ("echo aGkK | base64 -d", "hi\n"),
    ("echo hi | md5sum", "764efa883dda1e11db47671c4a3bbd9e  -\n"),
    ("echo hi | sha256sum", "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4  -\n"),
    ("echo hi | gzip -c | gunzip -c", "hi\n"), ("echo x | tee /tmp/t; cat /tmp/t", "x\nx\n"),
    ("echo a b c | xargs -n 1 echo", "a\nb\nc\n"),
    ("basename /a/b/c.txt .txt; dirname /a/b/c.txt", "c\n/a/b\n"),
    ("expr 2 + 3 \\* 4", "14\n"), ("expr length hello", "5\n"), ("expr abc123 : '[a-z]*'", "3\n"),
    ("[ -f /data/words ] && [ -d /data ] && [ ! -e /nope ] && echo ok", "ok\n"),
    ("test 3 -gt 2 -a x = x && echo yes", "yes\n"), ("[ -z '' ] && [ -n a ] && echo yes", "yes\n"),
    ("env | grep FOO", "FOO=bar\n"), ("X=1 env | grep X=", "X=1\n"), ("printenv FOO", "bar\n"),
    ("hostname; whoami; id -u; uname", "web\nroot\n0\nLinux\n"),
    ("mkdir -p /a/b && touch /a/b/f && ls /a/b && rm -r /a; [ -e /a ] || echo gone", "f\ngone\n"),
    ("cp /data/words /tmp/w && mv /tmp/w /tmp/v && cat /tmp/v | head -1; ls /tmp", "pear\nv\n"),
    ("tar cf - /data | tar -tf -", "data/\ndata/nums\ndata/words\n"),
    ("tar cf - /data 2>/dev/null | tar -xmf - -C /tmp && cat /tmp/data/nums | head -1", "10\n"),
    ("cd /data && tar czf /tmp/a.tgz words && tar -tzf /tmp/a.tgz", "words\n"),
    ("find /data -name 'n*'", "/data/nums\n"),
    ("uptime | cut -c1-13", " 01:02:03 up \n"),
])
def test_applets(script: str, stdout: str) -> None:
    result = sh(script)
    assert (result.stdout, result.code) == (stdout, 0), result.stderr


def test_applet_errors_are_busybox_messages() -> None:
    assert sh("cat /nope").stderr == "cat: can't open '/nope': No such file or directory\n"
    assert sh("grep x /nope").code == 2
    assert sh("seq x").stderr == "seq: invalid number 'x'\n"
    assert sh("sort -Q").stderr == "sort: invalid option -- 'Q'\n"
    assert sh("expr 1 / 0").code == 2
    assert sh("echo @@ | base64 -d").code == 1


def test_tar_round_trip_is_binary_safe() -> None:
    data = bytes(range(256))
    sandbox = Sandbox("web", {}, {"/bin.dat": data})
    archive = run_sync(Shell(sandbox).exec(["tar", "cf", "-", "/bin.dat"]))
    assert archive.code == 0
    out = Sandbox("web", {}, {})
    raw = Shell(sandbox).exec(["tar", "cf", "-", "/bin.dat"])
    chunks = []
    try:
        action = next(raw)
        while True:
            if action.fd == 1:
                chunks.append(action.data)
            action = raw.send(None)
    except StopIteration:
        pass
    result = run_sync(Shell(out).exec(["tar", "-xmf", "-", "-C", "/tmp"]), b"".join(chunks))
    assert result.code == 0 and out.files["/tmp/bin.dat"] == data


# -- the container process ------------------------------------------------------------------
def drive(process: ContainerProcess, limit: float = math.inf):
    """Run until the process ends or `limit` seconds pass: (stdout, status or None, slept)."""
    out, slept = [], 0.0
    program = process.program
    try:
        action = next(program)
        while True:
            if isinstance(action, Sleep):
                if slept + action.seconds > limit:
                    return "".join(out), None, slept
                slept += action.seconds
            elif action.fd == 1:
                out.append(action.data.decode())
            action = program.send(None)
    except StopIteration as stop:
        return "".join(out), stop.value, slept


@pytest.mark.parametrize(("argv", "stdout", "status", "slept"), [
    (["echo", "hi"], "hi\n", 0, 0),
    (["sh", "-c", "for i in $(seq 1 3); do echo $i; sleep 1; done"], "1\n2\n3\n", 0, 3),
    (["sh", "-c", "echo start; exit 3"], "start\n", 3, 0),
    (["printenv", "FOO"], "bar\n", 0, 0),
    (["cat", "/data/nums"], "10\n9\n100\n", 0, 0),
    (["env"], "PATH=" + PATH + "\nHOME=/root\nFOO=bar\n", 0, 0),
    (["sleep", "5"], "", 0, 5),
])
def test_container_commands_run_to_completion(argv, stdout, status, slept) -> None:
    assert drive(ContainerProcess(argv, box())) == (stdout, status, slept)


def test_a_forever_loop_runs_until_stopped() -> None:
    process = ContainerProcess(["sh", "-c", "while true; do date +%s >/dev/null; echo tick; sleep 5; done"], box())
    out, status, slept = drive(process, limit=12)
    assert (out, status, slept) == ("tick\ntick\ntick\n", None, 10)


def test_an_unknown_program_is_a_start_error() -> None:
    process = ContainerProcess(["nginx"], box())
    assert "executable file not found in $PATH" in process.error
    assert drive(process)[1] == 128


def test_an_external_server_exits_on_term() -> None:
    def server(shell, argv):
        if argv[0] != "nginx":
            return None
        return iter_forever()

    def iter_forever():
        yield Sleep(math.inf)
        return 0

    process = ContainerProcess(["sh", "-c", "echo starting; nginx -g 'daemon off;'"], box(),
                               external=server)
    assert drive(process, limit=10) == ("starting\n", None, 0)
    assert process.signal("TERM") == (True, 0, False)  # the last command replaced the shell


@pytest.mark.parametrize(("argv", "delivery"), [
    (["sleep", "3600"], (False, None, False)),  # PID 1 without a handler ignores TERM
    (["sh", "-c", "while true; do sleep 1; done"], (False, None, False)),
    (["sh", "-c", "trap '' TERM; sleep 100"], (False, None, False)),
])
def test_term_is_ignored_by_pid1_without_a_handler(argv, delivery) -> None:
    process = ContainerProcess(argv, box())
    drive(process, limit=0.5)
    assert process.signal("TERM") == delivery
    assert process.signal("KILL") == (True, 137, False)


def test_a_trap_runs_after_the_foreground_command() -> None:
    process = ContainerProcess(["sh", "-c", "trap 'echo bye; exit 0' TERM; "
                                "while true; do sleep 1; done"], box())
    program = process.program
    assert next(program) == Sleep(1)
    assert process.signal("TERM") == (False, None, False)
    out = []
    try:
        action = program.send(None)
        while True:
            out.append(action)
            action = program.send(None)
    except StopIteration as stop:
        assert stop.value == 0
    assert [a.data for a in out if not isinstance(a, Sleep)] == [b"bye\n"]


def test_a_trap_wakes_a_wait() -> None:
    process = ContainerProcess(["sh", "-c", "trap 'exit 5' TERM; sleep 1000 & wait"], box())
    program = process.program
    action = next(program)
    assert isinstance(action, Sleep)
    assert process.signal("TERM").wake
    with pytest.raises(StopIteration) as stop:
        program.send(2.0)  # the driver cut the sleep short after 2 s
    assert stop.value.value == 5


def test_user_patterns_match_in_linear_time() -> None:
    """grep, sed and expr compile a user's pattern with RE2: `(a+)+$` against a long line that
    does not match would backtrack for ever under Python's re, holding the event loop."""
    import time

    line = "a" * 30_000 + "b"
    started = time.perf_counter()
    for script in (f"echo {line} | grep -E '^(a+)+$'", f"echo {line} | sed -E 's/^(a+)+$/x/'",
                   f"expr {line} : '\\(a*\\)*c'"):
        sh(script)
    assert time.perf_counter() - started < 5
