"""Settings declared once, readable as flags and as config-file keys.

Kubernetes v1.0 piece: each component's options struct with its `AddFlags(fs)` (APIServer,
SchedulerServer, CMServer, KubeletServer). Here a setting is one `Setting` row: its flag name
(also its key in a YAML config), default, parser and help. `start` stacks every component's
rows, so one command configures the whole cluster, and each component's own command uses the
same rows — one definition, no drift between them.

Precedence: a flag on the command line, else the config file, else the default. A bad value
names where it came from (`--node-monitor-grace-period` or `config FILE: key`) and is a usage
error (exit code 2).
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Iterable, TypeVar

from .config import parse_duration
from .storage_target import CommandError, ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class Setting:
    name: str                                   # flag name without dashes = config key
    default: Any
    help: str
    parse: Callable[[Any], Any] = str
    aliases: tuple[str, ...] = ()               # other flag spellings (v1.0 names)
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    flag: bool = True                           # False: config file only (structured values)
    switch: bool = False                        # a store_true flag

    @property
    def dest(self) -> str:
        return self.name.replace("-", "_")


def as_is(value: Any) -> Any:
    """Structured config values (lists, mappings), validated by their own parser later."""
    return value


def integer(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not an integer")
    return int(value)


def port(value: Any) -> int:
    number = integer(value)
    if not 0 <= number <= 65535:
        raise ValueError(f"port {number} is out of range 0-65535 (0 disables the listener)")
    return number


def number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a number")
    return float(value)


def duration(value: Any) -> float:
    """A Go duration ("40s", "5m0s", "200ms") or a plain number of seconds."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return parse_duration(value)


def boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ValueError(f"{value!r} is not true or false")


def add_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
              settings: Iterable[Setting]) -> None:
    """One flag per setting, defaulting to None so a config file can fill it in."""
    for s in settings:
        if not s.flag:
            continue
        names = [f"--{s.name}", *(f"--{a}" for a in s.aliases)]
        shown = s.default if not isinstance(s.default, float) or s.parse is not duration \
            else f"{s.default:g}s"
        text = f"{s.help} (default {shown})" if s.default not in (None, "", ()) else s.help
        if s.switch:
            parser.add_argument(*names, dest=s.dest, action="store_true", default=None, help=text)
        else:
            parser.add_argument(*names, dest=s.dest, metavar=s.metavar, choices=s.choices,
                                default=None, help=text)


def options_from(cls: type[T], values: dict[str, Any], **overrides: Any) -> T:
    """An options dataclass whose fields are named like settings: every field with a
    resolved setting of its name takes that value; `overrides` set the rest (derived or
    parsed further). One mapping, instead of a field-by-field copy per component."""
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**{**{k: v for k, v in values.items() if k in names}, **overrides})


class Resolved(dict):
    """Settings by dest, plus where each came from (for errors found after parsing)."""

    def __init__(self) -> None:
        super().__init__()
        self.origin: dict[str, str] = {}

    def where(self, dest: str) -> str:
        return self.origin.get(dest, f"--{dest.replace('_', '-')}")


def config_keys(settings: Iterable[Setting]) -> list[str]:
    """Every dest a config file may use: names and aliases."""
    return [d for s in settings for d in (s.dest, *(a.replace("-", "_") for a in s.aliases))]


def resolve(args: argparse.Namespace, settings: Iterable[Setting], from_file: dict[str, Any],
            source: str = "") -> Resolved:
    """Every setting's parsed value, by dest: flag, else file, else default."""
    values = Resolved()
    for s in settings:
        flag_value = getattr(args, s.dest, None) if s.flag else None
        in_file = [d for d in (s.dest, *(a.replace("-", "_") for a in s.aliases)) if d in from_file]
        if flag_value is not None:
            raw, where = flag_value, f"--{s.name}"
        elif in_file:
            key = in_file[0]
            raw, where = from_file[key], f"config {source}: {key.replace('_', '-')}"
        else:
            values[s.dest] = s.default
            continue
        values.origin[s.dest] = where
        if raw is None:
            values[s.dest] = None
            continue
        try:
            value = s.parse(raw)
        except CommandError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if s.choices and value not in s.choices:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(s.choices)}")
        values[s.dest] = value
    return values
