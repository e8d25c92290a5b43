"""The simulated shell's POSIX grammar and expansions (kubelet/shell_syntax.py,
shell_expand.py, shell_interp.py), table-driven: (script, stdin) -> (stdout, stderr, status,
seconds slept). Expected outputs are what dash/busybox sh print for the same script."""

from __future__ import annotations

import pytest

from minikube_py.kubelet.shell import PATH, Sandbox, Shell, run_sync

ENV = {"PATH": PATH, "HOSTNAME": "web", "HOME": "/root", "FOO": "bar"}


def box() -> Sandbox:
    return Sandbox("web", dict(ENV), {"/etc/config/a.conf": b"one\n", "/etc/config/b.conf": b"two\n",
                                      "/etc/config/c.txt": b"three\n"})


def sh(script: str, stdin: str = ""):
    return run_sync(Shell(box()).exec(["sh", "-c", script]), stdin)


CASES = [
    # control flow
    ("if true; then echo y; else echo n; fi", "y\n"),
    ("if false; then echo a; elif true; then echo b; else echo c; fi", "b\n"),
    ("for i in 1 2 3; do echo $i; done", "1\n2\n3\n"),
    ("for i in $(seq 1 3); do printf '%s,' $i; done", "1,2,3,"),
    ("i=0; while [ $i -lt 3 ]; do i=$((i+1)); done; echo $i", "3\n"),
    ("i=0; until [ $i -ge 2 ]; do echo $i; i=$((i+1)); done", "0\n1\n"),
    ("for i in 1 2 3 4; do [ $i = 3 ] && break; echo $i; done", "1\n2\n"),
    ("for i in 1 2 3; do [ $i = 2 ] && continue; echo $i; done", "1\n3\n"),
    ("for i in a b; do for j in 1 2; do [ $j = 2 ] && continue 2; echo $i$j; done; done", "a1\nb1\n"),
    ("case abc.txt in *.conf) echo conf;; *.txt|*.md) echo text;; esac", "text\n"),
    ("case x in [a-c]) echo low;; [!a-c]) echo other;; esac", "other\n"),
    ("case 'a*' in 'a*') echo quoted;; esac", "quoted\n"),
    ("f() { echo \"$1-$2\"; }; f a b", "a-b\n"),
    ("f() { return 4; }; f; echo $?", "4\n"),
    ("f() { local x=in; echo $x; }; x=out; f; echo $x", "in\nout\n"),
    ("( echo sub; exit 3 ); echo $?", "sub\n3\n"),
    ("{ echo a; echo b; } | wc -l", "2\n"),
    ("x=1; ( x=2 ); echo $x", "1\n"),
    ("! false && echo negated", "negated\n"),
    ("false || echo or; true && echo and", "or\nand\n"),
    # expansions
    ("echo ${NOPE:-default} ${FOO:-x} ${FOO:+alt}", "default bar alt\n"),
    ("echo ${X:=set}; echo $X", "set\nset\n"),
    ("x=archive.tar.gz; echo ${x%.*} ${x%%.*} ${x#*.} ${x##*.} ${#x}", "archive.tar tar.gz gz 14\n"[0:0] + "archive.tar archive tar.gz gz 14\n"),
    ("echo $((2 + 3 * 4)) $((10 / 3)) $((10 % 3)) $((1 << 4)) $((3 > 2 ? 7 : 8))", "14 3 1 16 7\n"),
    ("x=5; echo $((x * 2)) $(( $x + 1 ))", "10 6\n"),
    ("echo $(echo inner $(echo deeper))", "inner deeper\n"),
    ("echo `echo back`", "back\n"),
    ("set -- a 'b c' d; echo $#; for a in \"$@\"; do echo \"[$a]\"; done", "3\n[a]\n[b c]\n[d]\n"),
    ("set -- x y; echo \"$*\" $1 ${2}", "x y x y\n"),
    ("x='a  b'; echo $x; echo \"$x\"", "a b\na  b\n"),
    ("IFS=:; x=a:b:c; for p in $x; do echo $p; done", "a\nb\nc\n"),
    ("echo '$FOO' \"$FOO\" \\$FOO", "$FOO bar $FOO\n"),
    ("echo ~ ~/x", "/root /root/x\n"),
    ("cd /etc/config && echo *.conf", "a.conf b.conf\n"),
    ("echo /etc/config/*.txt /nope/*", "/etc/config/c.txt /nope/*\n"),
    ("echo \"*.conf\"", "*.conf\n"),
    ("echo $0 $$", "sh 1\n"),
    ("sh -c 'echo $0 $1' name arg", "name arg\n"),
    # redirections and here-docs
    ("echo err >&2", ""),
    ("echo out 1>&2 2>/dev/null", ""),
    ("{ echo a; echo b >&2; } 2>&1 | wc -l", "2\n"),
    ("echo x > /tmp/f; echo y >> /tmp/f; cat < /tmp/f", "x\ny\n"),
    ("cat <<EOF\n$FOO $(echo sub)\nEOF", "bar sub\n"),
    ("cat <<'EOF'\n$FOO\nEOF", "$FOO\n"),
    ("cat <<-EOF\n\tindented\n\tEOF", "indented\n"),
    ("while read line; do echo \"<$line>\"; done <<EOF\na\nb\nEOF", "<a>\n<b>\n"),
    ("exec 2>&1; echo to-out >&2", "to-out\n"),
    # options, traps, exit
    ("set -e; false; echo never", ""),
    ("set -e; false || true; if false; then :; fi; echo survived", "survived\n"),
    ("trap 'echo bye' EXIT; echo hi", "hi\nbye\n"),
    ("set -u; echo $NOPE; echo never", ""),
    ("eval 'x=5'; echo $x", "5\n"),
    ("read a b; echo \"$b|$a\"", "2 3|1\n"),
    ("sleep 1 & echo started; wait; echo done", "started\ndone\n"),
]


@pytest.mark.parametrize(("script", "stdout"), CASES)
def test_constructs(script: str, stdout: str) -> None:
    stdin = "1 2 3\n" if script.startswith("read") else ""
    assert sh(script, stdin).stdout == stdout


@pytest.mark.parametrize(("script", "stderr", "code"), [
    ("echo err >&2", "err\n", 0),
    ("set -e; false; echo never", "", 1),
    ("set -u; echo $NOPE", "sh: NOPE: parameter not set\n", 2),
    ("echo ${X:?is required}", "sh: X: is required\n", 2),
    ("echo $((1/0))", "sh: divide by zero\n", 2),
    ("if true; then", "sh: syntax error: unexpected end of file (expecting \"fi\")\n", 2),
    ("cat < /nope", "sh: can't open '/nope': No such file or directory\n", 1),
    ("nosuch", "sh: nosuch: not found\n", 127),
    ("exit 3", "", 3),
])
def test_errors_and_statuses(script: str, stderr: str, code: int) -> None:
    result = sh(script)
    assert (result.stderr, result.code) == (stderr, code)


def test_sleeps_add_up_and_background_jobs_share_the_clock() -> None:
    assert sh("for i in $(seq 1 5); do echo $i; sleep 1; done").slept == 5
    # the job sleeps 3 s while the foreground sleeps 5 s: 5 s pass in all
    result = sh("(sleep 3; echo job) & sleep 5; echo fg")
    assert (result.stdout, result.slept) == ("job\nfg\n", 5)
    assert sh("sleep 2 & wait; echo after").slept == 2


def test_a_loop_that_never_sleeps_yields_time_to_the_driver() -> None:
    program = Shell(box()).exec(["sh", "-c", "while :; do :; done"])
    sleeps = 0
    for _ in range(100_000):
        action = next(program)
        if type(action).__name__ == "Sleep":
            sleeps += 1
            if sleeps == 3:
                break
    program.close()
    assert sleeps == 3


def test_yes_is_bounded_by_its_reader_and_output_pauses() -> None:
    assert sh("yes | head -n 2").stdout == "y\ny\n"
    program = Shell(box()).exec(["yes"])
    kinds = {type(next(program)).__name__ for _ in range(2000)}
    program.close()
    assert kinds == {"Write", "Sleep"}


def test_deep_recursion_stops_with_an_error() -> None:
    result = sh("f() { f; }; f")
    assert result.code == 2 and "nesting too deep" in result.stderr


def test_interactive_shell_continues_an_unfinished_line() -> None:
    result = run_sync(Shell(box()).exec(["sh"]), "for i in 1 2\ndo echo $i\ndone\n")
    assert result.stdout == "1\n2\n"
