"""Chameleon's cells and moves as players write them (``f4x``, ``x f4``, ``swap``)."""

from __future__ import annotations

import re
from typing import Final

from pbmserv.games.chameleon.state import MAX_SIZE

_COLUMNS: Final = "abcdefghijklmnopqrstuvwxyz"
_SYNTAX: Final = 'write a cell and a piece, like f4x or f4o, or "swap" on the second move'


def _cell_name(col: int, row: int) -> str:
    return f"{_COLUMNS[col]}{row + 1}"


def _row_index(digits: str) -> int:
    """The 0-based row of a written row number; huge numbers (beyond Python's int parsing
    limit too) simply land off the board."""
    significant = digits.lstrip("0")
    return int(significant or "0") - 1 if len(significant) <= 3 else MAX_SIZE


def _quote(text: str) -> str:
    return f'"{text}"'


# A cell (one letter, digits) with the piece before or after it; spaces, "-", ":" or "="
# may separate them. Matched against the lower-cased text.
_MOVE_RE = re.compile(r"(?:([xo])[\s:=-]*)?([a-z])\s*(\d+)(?:[\s:=-]*([xo]))?", re.ASCII)
