"""HMDG's fixed facts (sides, stages, how moves are written) and its board: points as bits of
an 81-bit integer, rows and columns, and the windows of five that make lines."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, NamedTuple

SIZE: Final = 9
ROWS: Final = "ABCDEFGHJ"
FULL: Final = (1 << SIZE * SIZE) - 1

# Sides, the index of per-side pairs such as HmdgState.pieces.
X_SIDE: Final = 0
O_SIDE: Final = 1
SIDES: Final = ("X", "O")

ROW: Final = "row"
COL: Final = "col"

# Stages (Turn.stage); "reveal" is also the command verb of the opponent's answer.
OPENING: Final = "opening"
CHOOSE: Final = "choose"
MOVE: Final = "move"
REVEAL: Final = "reveal"
OVER: Final = "over"

_WIDTH: Final = 76  # of the lines of the log in the diagram

FIRST_PLAYER: Final = "first player"
SECOND_PLAYER: Final = "second player"

#: How to write a move and an answer, in prompts and errors. The example points are fixed
#: text, never chosen from the position: examples picked to avoid the opponent's hidden pieces
#: would give them away, so they may well name one of them.
HOW_TO_MOVE: Final = "name a point and the line to announce, like C5 row or C5 col"
NO_POINT_LEFT: Final = "neither player has a point left to play on"
HOW_TO_REVEAL: Final = "write reveal and the points, like reveal C3 C7, or reveal none"


# --- geometry --------------------------------------------------------------------------------


def point_name(point: int) -> str:
    """``C5`` for the point at row C, column 5 (points are 0..80, row by row)."""
    row, col = divmod(point, SIZE)
    return f"{ROWS[row]}{col + 1}"


def mask_of(points: Iterable[int]) -> int:
    """The bit mask of some points."""
    mask = 0
    for point in points:
        mask |= 1 << point
    return mask


def points_of(mask: int) -> list[int]:
    """The points of a bit mask, in order."""
    points = []
    while mask:
        low = mask & -mask
        points.append(low.bit_length() - 1)
        mask ^= low
    return points


#: Every point's name, by point (cheaper than point_name where many are written).
_NAMES: Final = tuple(point_name(p) for p in range(SIZE * SIZE))


def _names(points: Iterable[int]) -> str:
    return ", ".join(point_name(p) for p in points)


_ROW_MASKS: Final = tuple(mask_of(range(r * SIZE, (r + 1) * SIZE)) for r in range(SIZE))
_COL_MASKS: Final = tuple(mask_of(range(c, SIZE * SIZE, SIZE)) for c in range(SIZE))


def line_mask(point: int, line: str) -> int:
    """The points of the row or column (``line``) through ``point``."""
    row, col = divmod(point, SIZE)
    return _ROW_MASKS[row] if line == ROW else _COL_MASKS[col]


def line_name(point: int, line: str) -> str:
    """``row C`` or ``column 5``: the line through ``point`` as it is announced."""
    row, col = divmod(point, SIZE)
    return f"row {ROWS[row]}" if line == ROW else f"column {col + 1}"


class Window(NamedTuple):
    """Five points in a row (orthogonal or diagonal), from ``first`` to ``last``."""

    mask: int
    first: int
    last: int

    def __str__(self) -> str:
        return f"{point_name(self.first)}-{point_name(self.last)}"


def _all_windows() -> tuple[Window, ...]:
    windows = []
    for row in range(SIZE):
        for col in range(SIZE):
            for d_row, d_col in ((0, 1), (1, 0), (1, 1), (1, -1)):
                end_row, end_col = row + 4 * d_row, col + 4 * d_col
                if 0 <= end_row < SIZE and 0 <= end_col < SIZE:
                    cells = ((row + k * d_row) * SIZE + col + k * d_col for k in range(5))
                    windows.append(
                        Window(mask_of(cells), row * SIZE + col, end_row * SIZE + end_col)
                    )
    return tuple(windows)


#: Every line of five points on the board (140 of them).
WINDOWS: Final = _all_windows()
_THROUGH: Final = tuple(tuple(w for w in WINDOWS if w.mask >> p & 1) for p in range(SIZE * SIZE))


def fives(mask: int) -> list[Window]:
    """Every line of five held entirely by the pieces in ``mask``."""
    return [w for w in WINDOWS if mask & w.mask == w.mask]


def double_five(mask: int, through: int | None = None) -> tuple[Window, Window] | None:
    """Two fives of ``mask`` that share at most one point (a win), or None.

    With ``through``, only pairs where one five passes through that point count: after a
    placement only those can be new. Six in a row is two fives sharing four points, so it is
    not a win; nine in a row holds two fives sharing one point, so it is.
    """
    candidates = fives(mask) if through is None else _fives_through(mask, through)
    if not candidates:
        return None
    every = fives(mask)
    for one in candidates:
        for other in every:
            if (one.mask & other.mask).bit_count() <= 1:
                return (one, other) if one.first <= other.first else (other, one)
    return None


def _fives_through(mask: int, point: int) -> list[Window]:
    return [w for w in _THROUGH[point] if mask & w.mask == w.mask]


#: Per direction of a line of five: the step from one of its points to the next, and the mask
#: of the points where such a line may start (so that it stays on the board).
_FIVE_STARTS: Final = tuple(
    (step, mask_of(w.first for w in WINDOWS if w.last - w.first == 4 * step))
    for step in (1, SIZE, SIZE + 1, SIZE - 1)
)
#: Per step, the mask of a whole line of five starting at point 0: times the bit of a line's
#: first point, the mask of that line.
_FIVE_FROM_FIRST: Final = {step: mask_of(k * step for k in range(5)) for step, _ in _FIVE_STARTS}


def _five_masks(mask: int) -> list[int]:
    """The masks of the lines of five that ``mask`` holds (those of :func:`fives`, in another
    order), found by shifting the whole board a few times rather than by trying 140 lines."""
    found = []
    for step, starts in _FIVE_STARTS:
        run = mask & mask >> step  # the points that start a run of two
        run &= run >> 2 * step  # ... of four
        run &= mask >> 4 * step & starts  # ... of five, on the board
        while run:
            low = run & -run
            run ^= low
            found.append(low * _FIVE_FROM_FIRST[step])
    return found


def _double_five_among(lines: list[int]) -> bool:
    """Whether two of these lines of five (masks) share at most one point: a win."""
    return any((one & other).bit_count() <= 1 for i, one in enumerate(lines) for other in lines[:i])


def _free(pieces: int, revealed: int) -> int:
    """The points a side with these pieces may play on: not its own and not revealed."""
    return FULL & ~pieces & ~revealed
