"""Config files for `minikube-py start --config FILE`.

Kubernetes v1.0 piece: the flag files the v1.0 systemd units read (/etc/kubernetes/config,
/etc/kubernetes/apiserver: KUBE_ETCD_SERVERS=--etcd-servers=...). Here a YAML mapping whose
keys are the long flag names without dashes (`data-dir: /var/lib/minikube-py`); a flag given
on the command line wins over the file, and the file wins over the built-in default. Unknown
keys fail at start with the file name and the list of known keys, so a typo never silently
falls back to a default.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

import yaml

from .storage_target import ConfigError

_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?"
                       r"(?:(\d+(?:\.\d+)?)ms)?$")


def load_config(path: str | Path, known: Iterable[str]) -> dict[str, Any]:
    """The file's settings, keyed by argparse destination (data-dir -> data_dir)."""
    path = Path(path).expanduser()
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise ConfigError(f"cannot read config {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"config {path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config {path} must be a mapping of flag names to values")
    known = set(known)
    settings = {}
    for key, value in data.items():
        dest = str(key).replace("-", "_")
        if dest not in known:
            names = ", ".join(sorted(k.replace("_", "-") for k in known))
            raise ConfigError(f"config {path}: unknown setting {key!r} (known: {names})")
        settings[dest] = value
    return settings


def parse_duration(text: str | int | float) -> float:
    """Seconds in a Go-style duration ("5m0s", "30s", "1h", "0"), as Kubernetes flags take them."""
    if isinstance(text, (int, float)):
        return float(text)
    text = text.strip()
    if text == "0":
        return 0.0
    match = _DURATION.match(text)
    if not text or not match or not any(match.groups()):
        raise ConfigError(f"invalid duration {text!r}: use e.g. 5m0s, 30s, 200ms or 0")
    hours, minutes, seconds, millis = (float(g) if g else 0.0 for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds + millis / 1000
