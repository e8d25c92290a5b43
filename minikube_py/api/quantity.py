"""Resource quantities: parse, compare and print `100m`, `1.5Gi`, `2e3` exactly as Kubernetes does.

Kubernetes piece: k8s.io/apimachinery/pkg/api/resource (Quantity, ParseQuantity,
parseQuantityString, the suffixer, CanonicalizeBytes, MilliValue/Value). Validation checks every
`resources.requests`/`limits`, quota and node capacity with it, defaulting rewrites them to
upstream's canonical spelling (`0.5` -> `500m`, `1024Mi` -> `1Gi`), and the scheduler adds up cpu
and memory with it, so parsing must be exact (a Fraction, never a float) and fast (results are
memoised: the same few strings arrive on every pod).

Upstream rules kept here: the scanner accepts `[+-]?[0-9.]+` then `[eEinumkKMGTP]*[-+]?[0-9]*`;
the suffix decides the base and the format (DecimalSI `k M G ... m u n`, BinarySI `Ki Mi ...`,
DecimalExponent `e3`/`E-3`); non-zero values are rounded up (away from zero) to 1n; BinarySI
values are capped at 2^63-1 and shown as DecimalSI below 1024 or when not whole numbers.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "BINARY_SI", "DECIMAL_EXPONENT", "DECIMAL_SI", "FORMAT_ERROR", "NUMERIC_ERROR", "SUFFIX_ERROR",
    "Quantity", "canonical", "format_quantity", "milli_value", "parse", "parse_quantity",
    "round_up_milli", "value",
]

FORMAT_ERROR = (
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
NUMERIC_ERROR = "unable to parse numeric part of quantity"
SUFFIX_ERROR = "unable to parse quantity's suffix"

DECIMAL_SI = "DecimalSI"
BINARY_SI = "BinarySI"
DECIMAL_EXPONENT = "DecimalExponent"

_DECIMAL_SUFFIXES = {
    "": 0, "n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}
_DECIMAL_NAMES = {exp: name for name, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_BINARY_NAMES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_NANOS = 10**9
_MAX_BINARY = Fraction(2**63 - 1)
# Exponents beyond this would make exact arithmetic explode (10**10**9); upstream's inf.Dec keeps
# them symbolically. Large positive ones are refused, large negative ones round up to 1n. Digit
# strings are capped too, which keeps every value printable (Python refuses int->str beyond 4300
# digits).
_MAX_EXPONENT = 1000
_MAX_DIGITS = 1000


class Quantity(NamedTuple):
    """A parsed quantity: its exact value and the format it prints in (upstream Quantity)."""

    value: Fraction
    format: str


def parse_quantity(text: str | int | float) -> Fraction:
    """The exact value of `text`; ValueError with upstream's message when it is not a quantity."""
    return parse(text).value


def parse(text: str | int | float) -> Quantity:
    """Value and format of `text`. JSON numbers are read from their literal text, as upstream's
    UnmarshalJSON does; booleans and other types are not quantities."""
    if isinstance(text, str):
        return _parse_cached(text)
    if isinstance(text, bool) or not isinstance(text, (int, float)):
        raise ValueError(FORMAT_ERROR)
    if isinstance(text, float) and not math.isfinite(text):
        raise ValueError(FORMAT_ERROR)
    return _parse_cached(repr(text) if isinstance(text, float) else str(text))


@lru_cache(maxsize=4096)
def _parse_cached(text: str) -> Quantity:
    """ParseQuantity. Memoised because `100m`, `128Mi`, `1` repeat across every pod."""
    if not text:
        raise ValueError(FORMAT_ERROR)
    if text == "0":
        return Quantity(Fraction(0), DECIMAL_SI)
    positive, num, denom, suffix = _scan(text)
    base, exponent, fmt = _interpret(suffix)
    if len(num) + len(denom) > _MAX_DIGITS:
        raise ValueError(NUMERIC_ERROR)
    amount = Fraction(int(num + denom), 10 ** len(denom))
    amount = _scale(amount, base, exponent)
    if amount:
        scaled = amount * _NANOS
        if scaled.denominator != 1:  # round non-zero values up to the smallest unit, 1n
            amount = Fraction(math.ceil(scaled), _NANOS)
    if fmt == BINARY_SI and amount > _MAX_BINARY:
        amount = _MAX_BINARY
    if fmt == BINARY_SI and amount < 1024:
        fmt = DECIMAL_SI
    return Quantity(amount if positive else -amount, fmt)


def _scale(amount: Fraction, base: int, exponent: int) -> Fraction:
    """amount * base**exponent, refusing exponents that cannot be computed exactly."""
    if not amount:
        return amount
    if exponent > _MAX_EXPONENT:
        raise ValueError(NUMERIC_ERROR)
    if exponent < -_MAX_EXPONENT:
        return Fraction(1, _NANOS)  # rounds up to 1n anyway
    if exponent >= 0:
        return amount * base**exponent
    return amount / base ** (-exponent)


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Upstream parseQuantityString: sign, integer digits, fraction digits, suffix."""
    end = len(text)
    pos = 0
    positive = True
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos].lstrip("0") or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise ValueError(FORMAT_ERROR)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """Upstream suffixHandler.interpret: (base, exponent, format) of a suffix."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, DECIMAL_SI
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and all(c in _DIGITS for c in body):
            return 10, int(digits), DECIMAL_EXPONENT
    raise ValueError(SUFFIX_ERROR)


def format_quantity(amount: Fraction | int, fmt: str = DECIMAL_SI) -> str:
    """Upstream's canonical spelling (Quantity.String / CanonicalizeBytes).

    Decimal formats print the smallest integer mantissa with an exponent that is a multiple
    of three (`1500`, `129M`, `500m`); BinarySI prints powers of 1024 (`1536Mi`) when the value
    is a whole number of at least 1024, else falls back to DecimalSI."""
    amount = Fraction(amount)
    if not amount:
        return "0"
    sign = "-" if amount < 0 else ""
    mag = -amount if amount < 0 else amount
    if fmt == BINARY_SI and (mag < 1024 or mag.denominator != 1):
        fmt = DECIMAL_SI
    if fmt == BINARY_SI:
        mantissa, power = mag.numerator, 0
        while power < 6 and mantissa % 1024 == 0:
            mantissa //= 1024
            power += 1
        return f"{sign}{mantissa}{_BINARY_NAMES[power]}"
    mantissa, exponent = _decimal_parts(mag)
    if fmt == DECIMAL_SI and exponent in _DECIMAL_NAMES:
        return f"{sign}{mantissa}{_DECIMAL_NAMES[exponent]}"
    return f"{sign}{mantissa}e{exponent}" if exponent else f"{sign}{mantissa}"


def _decimal_parts(mag: Fraction) -> tuple[int, int]:
    """(mantissa, exponent) with exponent a multiple of 3 and no trailing zeros beyond that."""
    scaled = mag * _NANOS
    mantissa = math.ceil(scaled)  # exact for parsed values; sums of them stay on the nano grid
    exponent = -9
    while mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    while exponent % 3:
        mantissa *= 10
        exponent -= 1
    return mantissa, exponent


def canonical(text: str | int | float) -> str:
    """`text` respelled canonically (`0.5` -> `500m`); ValueError when it is not a quantity."""
    quantity = parse(text)
    return format_quantity(quantity.value, quantity.format)


def round_up_milli(text: str | int | float) -> str:
    """Upstream SetDefaults_ResourceList: round up to a whole milli-unit, then print canonically."""
    if isinstance(text, str):
        return _round_up_milli_cached(text)
    return _round_up_milli(text)


@lru_cache(maxsize=4096)
def _round_up_milli_cached(text: str) -> str:
    return _round_up_milli(text)


def _round_up_milli(text: str | int | float) -> str:
    quantity = parse(text)
    scaled = quantity.value * 1000
    if scaled.denominator == 1:
        return format_quantity(quantity.value, quantity.format)
    return format_quantity(Fraction(_away_from_zero(scaled), 1000), quantity.format)


def _away_from_zero(x: Fraction) -> int:
    return math.ceil(x) if x >= 0 else -math.ceil(-x)


def _as_fraction(q: Fraction | str | int | float) -> Fraction:
    return q if isinstance(q, Fraction) else parse_quantity(q)


def milli_value(q: Fraction | str | int | float) -> int:
    """Value in thousandths, rounded away from zero (upstream MilliValue): `100m` -> 100."""
    return _away_from_zero(_as_fraction(q) * 1000)


def value(q: Fraction | str | int | float) -> int:
    """Whole units, rounded away from zero (upstream Value): `1.5Gi` -> 1610612736."""
    return _away_from_zero(_as_fraction(q))
