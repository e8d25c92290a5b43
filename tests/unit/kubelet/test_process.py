"""The container process driver: a shell program run on timers, its log, its exit and SIGTERM."""

from __future__ import annotations

import asyncio
import time

from minikube_py.kubelet import process as proc
from minikube_py.kubelet.logs import ContainerLog
from minikube_py.kubelet.process import Process
from minikube_py.kubelet.shell import Sandbox
from minikube_py.kubelet.timers import Timers


def box(**files: bytes) -> Sandbox:
    return Sandbox("web", {"PATH": "/bin", "GREETING": "hello"},
                   {"/" + k.replace("_", "/"): v for k, v in files.items()})


async def run(argv: list[str], *, wait: float = 1.0, sandbox: Sandbox | None = None,
              stdin_open: bool = False) -> tuple[Process, ContainerLog, list[int]]:
    timers, out, codes = Timers(), ContainerLog(), []
    p = Process(argv, sandbox or box(), timers, out, codes.append, stdin_open=stdin_open)
    p.start()
    deadline = time.monotonic() + wait
    while not codes and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    return p, out, codes


def text(log: ContainerLog) -> str:
    return log.render(log.first, False).decode()


async def test_finite_commands_log_their_output_and_exit() -> None:
    _, out, codes = await run(["echo", "hi"])
    assert (text(out), codes) == ("hi\n", [0])
    _, out, codes = await run(["sh", "-c", "echo $GREETING; false || exit 3"])
    assert (text(out), codes) == ("hello\n", [3])
    _, out, codes = await run(["cat", "/etc/config/key"], sandbox=box(etc_config_key=b"v\n"))
    assert (text(out), codes) == ("v\n", [0])
    _, out, codes = await run(["printenv", "GREETING"])
    assert (text(out), codes) == ("hello\n", [0])


async def test_time_passes_through_timers_only() -> None:
    started = time.monotonic()
    _, out, codes = await run(["sh", "-c", "echo a; sleep 0.2; echo b"])
    assert codes == [0] and time.monotonic() - started >= 0.2
    assert text(out) == "a\nb\n"
    stamps = [when for when, _, _ in out.entries]
    assert stamps[1] - stamps[0] >= 0.19  # each line stamped when written
    assert out.render(out.first, True).decode().split(" ", 1)[0].endswith("Z")


async def test_stdin_is_closed_unless_the_container_keeps_it_open() -> None:
    _, _, codes = await run(["sh"])
    assert codes == [0]  # `kubectl run box --image=busybox -- sh` exits at once
    p, _, codes = await run(["sh"], stdin_open=True, wait=0.1)
    assert codes == [] and not p.done
    _, _, codes = await run(["cat"])  # a raw read(2) of stdin gets EOF the same way
    assert codes == [0]
    p, _, codes = await run(["cat"], stdin_open=True, wait=0.1)
    assert codes == [] and not p.done


async def test_sigterm() -> None:
    p, _, codes = await run(["sleep", "3600"], wait=0.05)
    assert p.terminate() is False and codes == []  # PID 1 sleep ignores TERM
    p.stop()
    p, _, codes = await run(["sh", "-c", "while true; do sleep 1; done"], wait=0.05)
    assert p.terminate() is False and codes == []  # a shell without a trap ignores it too
    p.stop()
    p, out, codes = await run(["sh", "-c", "trap 'echo bye; exit 0' TERM; sleep 3600 & wait"],
                              wait=0.05)
    p.terminate()
    await asyncio.sleep(0.05)
    assert codes == [0] and text(out).endswith("bye\n")
    p, _, codes = await run(["sh", "-c", "echo start; exec nginx -g 'daemon off;'"], wait=0.05)
    assert codes == [] and p.terminate() is True and codes == [143]  # a server in a script


async def test_a_busy_program_is_sliced(monkeypatch) -> None:
    monkeypatch.setattr(proc, "SLICE_ACTIONS", 10)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.get_running_loop().create_task(ticker())
    script = "; ".join(["echo x"] * 100)
    _, out, codes = await run(["sh", "-c", script])
    task.cancel()
    assert codes == [0] and len(out.entries) == 100
    assert ticks >= 5  # the loop ran between slices


def test_the_log_is_bounded_and_tails() -> None:
    log = ContainerLog()
    for i in range(100):
        log.write(float(i), 1, f"line {i}\n".encode())
    assert log.render(log.select(2, None), False) == b"line 98\nline 99\n"
    assert log.render(log.select(None, 97.5), False) == b"line 98\nline 99\n"
    assert log.tail_text(lines=3, limit=10) == "8\nline 99\n"  # 80 lines, then the end bytes
    big = ContainerLog()
    chunk = b"x" * 1023 + b"\n"
    for _ in range(1100):
        big.write(0.0, 1, chunk)
    assert big.size <= 1 << 20 and big.first > 0 and big.end == 1100
