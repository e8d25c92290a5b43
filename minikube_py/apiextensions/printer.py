"""Server-side Table columns of a custom resource, from its CRD's additionalPrinterColumns.

Kubernetes piece: apiextensions-apiserver pkg/registry/customresource/tableconvertor
(New + ConvertToTable + cellForJSONValue) and crdHandler's serveDefaultColumnsIfEmpty: the
first column is always `Name`; a version that declares no columns gets one `Age` column
(`.metadata.creationTimestamp`, type date). A `string` column prints the value as Go's
jsonpath does (`fmt.Fprint`), other types keep the JSON value when it has the declared type
and are null otherwise; a `date` is shown as an age (`5m`), `<invalid>` when it is not a
timestamp.

This is why `kubectl get widgets` shows the CRD's columns: kubectl has no printer of its own
for custom resources and prints whatever Table the server answers.
"""

from __future__ import annotations

import time
from typing import Any

from ..api.duration import human_duration, parse_timestamp
from ..api.patch import go_value
from ..api.tables import AGE_DOC, NAME_DOC
from .jsonpath import JSONPath, JSONPathError, _Step, parse

_NOTHING = _Step("index", index=2 ** 31)  # selects nothing: an unusable column stays empty
_DEFAULT_COLUMNS = ({"name": "Age", "type": "date", "description": AGE_DOC,
                     "jsonPath": ".metadata.creationTimestamp"},)


class CustomResourceTable:
    """One CRD version's table convertor (built once per CRD change, shared by every request)."""

    def __init__(self, columns: list[dict[str, Any]] | None) -> None:
        declared = [c for c in columns or () if isinstance(c, dict)] or list(_DEFAULT_COLUMNS)
        self.paths: list[JSONPath] = []
        self.types: list[str] = []
        self.columns: list[dict[str, Any]] = [
            {"name": "Name", "type": "string", "format": "name", "description": NAME_DOC,
             "priority": 0}]
        for column in declared:
            json_path = str(column.get("jsonPath", ""))
            try:
                self.paths.append(parse(json_path))
            except JSONPathError:  # refused when the CRD was written; never fail a list
                self.paths.append(JSONPath(json_path, (_NOTHING,)))
            self.types.append(str(column.get("type", "string")))
            self.columns.append({
                "name": str(column.get("name", "")), "type": str(column.get("type", "")),
                "format": str(column.get("format", "")),
                "description": column.get("description") or
                f"Custom resource definition column (in JSONPath format): {json_path}",
                "priority": int(column.get("priority") or 0)})

    def column_definitions(self) -> list[dict[str, Any]]:
        return self.columns

    def row_cells(self, obj: dict[str, Any], now: float | None = None) -> list[Any]:
        now = time.time() if now is None else now
        md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        cells: list[Any] = [md.get("name", "")]
        for path, type_ in zip(self.paths, self.types):
            results = path.find(obj)
            if not results:
                cells.append(None)
            elif type_ == "string":
                value = results[0]
                cells.append(value if isinstance(value, str) else go_value(value))
            else:
                cells.append(cell_for_json_value(type_, results[0], now))
        return cells


def cell_for_json_value(type_: str, value: Any, now: float) -> Any:
    """Upstream cellForJSONValue: the value when it fits the column's type, else null."""
    if value is None or isinstance(value, bool) and type_ != "boolean":
        return None
    if type_ == "integer" and isinstance(value, (int, float)):
        return int(value)
    if type_ == "number" and isinstance(value, (int, float)):
        return float(value)
    if type_ == "boolean" and isinstance(value, bool):
        return value
    if type_ == "date" and isinstance(value, str):
        epoch = parse_timestamp(value)
        return "<invalid>" if epoch is None else human_duration(now - epoch)
    return None
