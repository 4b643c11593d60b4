"""Printing the shell's answers: aligned tables for people, JSON for scripts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return " ".join(str(value).splitlines())  # one line per row, whatever the text


def print_rows(rows: Sequence[Mapping[str, Any]], as_json: bool, empty: str = "none") -> None:
    """A list of records: one line each under a header, or a JSON array."""
    if as_json:
        print(json.dumps(list(rows), indent=2, default=str))
        return
    if not rows:
        print(f"({empty})")
        return
    columns = list(rows[0])
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(line[i]) for line in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for line in cells:
        print("  ".join(v.ljust(w) for v, w in zip(line, widths, strict=True)).rstrip())


def print_record(record: Mapping[str, Any], as_json: bool) -> None:
    """One record: ``name: value`` lines, or a JSON object."""
    if as_json:
        print(json.dumps(dict(record), indent=2, default=str))
        return
    width = max(len(k) for k in record)
    for key, value in record.items():
        print(f"{key.ljust(width)}  {_cell(value)}")


def print_message(message: str, as_json: bool, **facts: Any) -> None:
    """The outcome of an action: a sentence, or a JSON object with the facts."""
    if as_json:
        print(json.dumps({"ok": True, "message": message, **facts}, default=str))
    else:
        print(message)
