"""Resource quantities: upstream's parser, canonical spelling and rounding (table-driven)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from minikube_py.api import quantity
from minikube_py.api.quantity import (
    FORMAT_ERROR,
    NUMERIC_ERROR,
    SUFFIX_ERROR,
    canonical,
    milli_value,
    parse,
    parse_quantity,
    round_up_milli,
    value,
)

GI = 2**30


@pytest.mark.parametrize(("text", "expected"), [
    ("100m", Fraction(1, 10)),
    ("1.5Gi", Fraction(3 * GI, 2)),
    ("2e3", Fraction(2000)),
    ("128974848", Fraction(128974848)),
    ("129M", Fraction(129_000_000)),
    ("123Mi", Fraction(123 * 2**20)),
    ("0", Fraction(0)),
    ("-1", Fraction(-1)),
    ("+5", Fraction(5)),
    ("1E", Fraction(10**18)),
    ("1E3", Fraction(1000)),
    ("1e-3", Fraction(1, 1000)),
    ("1E+3", Fraction(1000)),
    ("5n", Fraction(5, 10**9)),
    ("0.1n", Fraction(1, 10**9)),  # non-zero values round up to 1n
    ("-0.1n", Fraction(-1, 10**9)),
    ("1.", Fraction(1)),
    (".5", Fraction(1, 2)),
    ("007", Fraction(7)),
    ("1e-99999", Fraction(1, 10**9)),
    ("9Ei", Fraction(2**63 - 1)),  # BinarySI is capped at int64
    (0.5, Fraction(1, 2)),
    (128974848, Fraction(128974848)),
])
def test_parse_values(text: str | int | float, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("", FORMAT_ERROR),
    ("abc", FORMAT_ERROR),
    ("1.2.3", FORMAT_ERROR),
    (" 1", FORMAT_ERROR),
    ("1 ", FORMAT_ERROR),
    ("1e3e", FORMAT_ERROR),
    ("1e", SUFFIX_ERROR),
    ("1K", SUFFIX_ERROR),
    ("1Mb", FORMAT_ERROR),
    ("1Mn", SUFFIX_ERROR),
    ("1ki", SUFFIX_ERROR),
    ("1e+", SUFFIX_ERROR),
    ("1e99999", NUMERIC_ERROR),
    ("9" * 1001, NUMERIC_ERROR),
    (True, FORMAT_ERROR),
    (None, FORMAT_ERROR),
    (float("nan"), FORMAT_ERROR),
])
def test_parse_errors_use_upstream_messages(text: object, message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_quantity(text)  # type: ignore[arg-type]
    assert str(err.value) == message


def test_format_error_is_upstreams_text() -> None:
    assert FORMAT_ERROR == ("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


@pytest.mark.parametrize(("text", "expected"), [
    ("0.5", "500m"),
    ("1000m", "1"),
    ("100m", "100m"),
    ("1024Mi", "1Gi"),
    ("1.5Gi", "1536Mi"),
    ("0.5Gi", "512Mi"),
    ("512Ki", "512Ki"),
    ("1.5Ki", "1536"),
    ("0.1Ki", "102400m"),
    ("1Ki", "1Ki"),
    ("1e3", "1e3"),
    ("12e2", "1200"),
    ("1500", "1500"),
    ("1000000k", "1G"),
    ("129M", "129M"),
    ("128974848", "128974848"),
    ("1E", "1E"),
    ("0", "0"),
    ("0Ki", "0"),
    ("-0.5", "-500m"),
    ("0.000001", "1u"),
    (0.25, "250m"),
    (2, "2"),
])
def test_canonical_spelling(text: str | int | float, expected: str) -> None:
    assert canonical(text) == expected


@pytest.mark.parametrize(("text", "milli", "whole"), [
    ("100m", 100, 1),
    ("1.5Gi", 1536 * 2**20 * 1000, 1536 * 2**20),
    ("0.5", 500, 1),
    ("1n", 1, 1),
    ("2", 2000, 2),
    ("-1.5", -1500, -2),
    ("0", 0, 0),
])
def test_milli_value_and_value_round_away_from_zero(text: str, milli: int, whole: int) -> None:
    assert milli_value(text) == milli
    assert value(text) == whole
    assert milli_value(parse_quantity(text)) == milli


@pytest.mark.parametrize(("text", "expected"), [
    ("0.5m", "1m"),
    ("1.0001", "1001m"),
    ("100m", "100m"),
    ("1.5Gi", "1536Mi"),
    ("-0.5m", "-1m"),
])
def test_round_up_milli(text: str, expected: str) -> None:
    assert round_up_milli(text) == expected


def test_format_reports_the_parsed_format() -> None:
    assert parse("1Gi").format == quantity.BINARY_SI
    assert parse("500Ki").format == quantity.BINARY_SI
    assert parse("0.5Ki").format == quantity.DECIMAL_SI  # below 1024
    assert parse("1e3").format == quantity.DECIMAL_EXPONENT
    assert parse("1k").format == quantity.DECIMAL_SI


def test_sums_of_quantities_print_canonically() -> None:
    total = parse_quantity("100m") + parse_quantity("0.4")
    assert quantity.format_quantity(total) == "500m"
    assert quantity.format_quantity(parse_quantity("1Gi") * 2, quantity.BINARY_SI) == "2Gi"
