"""The CSV user files shared by --token-auth-file and --basic-auth-file.

Kubernetes piece: plugin/pkg/auth/authenticator/token/tokenfile and
plugin/pkg/auth/authenticator/password/passwordfile (v1.0), both `secret,user,uid` rows read
with encoding/csv; the optional fourth column `"group1,group2"` came in v1.1. Pure parsing:
text in, {secret: UserInfo} out; a bad row raises ValueError naming file and line.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from . import UserInfo


def parse_user_csv(text: str, source: str) -> dict[str, UserInfo]:
    """{secret: UserInfo} from `secret,user,uid[,"group1,group2"]` rows (blank lines and
    `#` comments skipped; a later duplicate secret wins, as upstream's map assignment)."""
    users: dict[str, UserInfo] = {}
    reader = csv.reader(io.StringIO(text), skipinitialspace=True, strict=True)
    try:
        for row in reader:
            line = reader.line_num
            if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                continue
            if len(row) < 3:
                raise ValueError(f"{source} line {line}: expected at least 3 columns "
                                 f"(secret,user,uid), found {len(row)}")
            secret, name, uid = (cell.strip() for cell in row[:3])
            if not secret:
                raise ValueError(f"{source} line {line}: empty secret in the first column")
            if not name:
                raise ValueError(f"{source} line {line}: empty user name in the second column")
            groups: tuple[str, ...] = ()
            if len(row) >= 4:
                groups = tuple(g.strip() for g in row[3].split(",") if g.strip())
            users[secret] = UserInfo(name, uid, groups)
    except csv.Error as exc:
        raise ValueError(f"{source} line {reader.line_num}: {exc}") from None
    return users


def load_user_csv(path: str | Path) -> dict[str, UserInfo]:
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_user_csv(text, str(path))
