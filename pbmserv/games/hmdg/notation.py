"""Reading HMDG points and lines as players write them."""

from __future__ import annotations

import re
from typing import Final

from pbmserv.games.base import (
    IllegalMoveError,
)
from pbmserv.games.hmdg.geometry import (
    ROW,
    ROWS,
    SIZE,
)

# --- notation --------------------------------------------------------------------------------

_ALLOWED: Final = re.compile(r"[A-Za-z0-9 \t,;:/=()+&.-]*")
_SEPARATORS: Final = re.compile(r"[ \t,;:/=()+&.-]+")
_POINT: Final = r"([a-z]) ?([0-9]+)"
_LINE: Final = r"(rows?|cols?|columns?)"
_ANNOUNCE_AFTER: Final = re.compile(rf"{_POINT} ?{_LINE}(?: ([a-z]|[0-9]+))?")
_ANNOUNCE_BEFORE: Final = re.compile(rf"{_LINE} {_POINT}")
_OPENING_RE: Final = re.compile(rf"(?:x ?)?{_POINT}(?: ?x)?")
_CHOICE_RE: Final = re.compile(r"(?:(?:choose|take|play|be|side) )?([xo])")
_POINT_RE: Final = re.compile(_POINT)
_POINT_LIST: Final = re.compile(r"[a-z] ?[0-9]+(?: (?:and )?[a-z] ?[0-9]+)*")
_NONE_WORDS: Final = frozenset({"none", "nothing"})


def _normal(text: str) -> str | None:
    """Lower case with separators turned into single spaces; None for foreign characters."""
    if not _ALLOWED.fullmatch(text):
        return None
    return _SEPARATORS.sub(" ", text.lower()).strip()


def _quote(text: str) -> str:
    raw = text.strip()
    return f'"{raw}"' if len(raw) <= 40 else f'"{raw[:30]}..."'


def _point(letter: str, digits: str, shown: str) -> int:
    """The point a player wrote as a row letter and column number, or IllegalMoveError."""
    if letter == "i":
        raise IllegalMoveError(f"{shown}: there is no row I (the rows are A-H and J; I is skipped)")
    row = ROWS.lower().find(letter)
    if row < 0:
        raise IllegalMoveError(
            f"{shown}: there is no row {letter.upper()} (the rows are A-H and J)"
        )
    col = int(digits) if len(digits) <= 2 else 0
    if not 1 <= col <= SIZE:
        raise IllegalMoveError(f"{shown}: there is no column {digits} (the columns are 1-9)")
    return row * SIZE + col - 1


def _line_value_matches(point: int, line: str, value: str | None) -> bool:
    if value is None:
        return True
    row, col = divmod(point, SIZE)
    return value == ROWS[row].lower() if line == ROW else value.lstrip("0") == str(col + 1)
