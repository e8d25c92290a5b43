"""`perl`, as far as the Kubernetes documentation's Job needs it.

Kubernetes piece: none — the `perl` image of the docs' "Running an example Job" (`perl
-Mbignum=bpi -wle 'print bpi(2000)'`), which prints π to 2000 digits and exits 0, so the Job
completes. That one program is computed for real (Machin's formula on Python integers, rounded
half-to-even as Math::BigFloat rounds); any other perl program behaves as the kubelet treats
every program it does not understand: it runs until it is stopped, like a server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .shell_io import Program, Sleep, Write, text

if TYPE_CHECKING:
    from .shell_applets_sys import Applet
    from .shell_interp import Shell

#: `print bpi(N)` (with or without a trailing `;`), the docs' one-liner
_BPI = re.compile(r"\s*print\s+bpi\(\s*(\d{1,5})\s*\)\s*;?\s*")
MAX_DIGITS = 20000


def _arctan_inv(x: int, unity: int) -> int:
    """arctan(1/x) * unity, by its Taylor series on integers."""
    total = term = unity // x
    x2, n, sign = x * x, 1, -1
    while term:
        term //= x2
        n += 2
        total += sign * (term // n)
        sign = -sign
    return total


def pi_digits(digits: int) -> str:
    """π with `digits` significant digits (`3.14...`), rounded half to even."""
    guard = 10
    unity = 10 ** (digits - 1 + guard)
    pi = 4 * (4 * _arctan_inv(5, unity) - _arctan_inv(239, unity))
    scaled, rest = divmod(pi, 10 ** guard)
    half = 10 ** guard // 2
    if rest > half or (rest == half and scaled % 2):
        scaled += 1
    body = str(scaled)
    return body[0] + ("." + body[1:] if digits > 1 else "")


def _one_liner(argv: list[str]) -> str | None:
    """The program text of `perl [-Mbignum=bpi] -wle PROGRAM` (`-e` in any bundle of -w/-l)."""
    args = argv[1:]
    modules: list[str] = []
    while args:
        arg = args.pop(0)
        if arg.startswith("-M"):
            modules.append(arg[2:])
        elif re.fullmatch(r"-[wl]*e", arg) and args:
            return args[0] if "bignum=bpi" in modules else None
        elif not re.fullmatch(r"-[wl]+", arg):
            return None
    return None


def _perl(sh: Shell, argv: list[str]) -> Program:
    program = _one_liner(argv)
    match = _BPI.fullmatch(program) if program is not None else None
    if match is None or not 0 < int(match.group(1)) <= MAX_DIGITS:
        yield Sleep(math.inf)  # a program we do not know: a server, until stopped
        return 0
    yield Write(1, text(pi_digits(int(match.group(1))) + "\n"))
    return 0


APPLETS: Mapping[str, Applet] = {"perl": _perl}
