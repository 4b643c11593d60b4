"""Entropy's board as a picture: each counter in its colour, row N at the top."""

from __future__ import annotations

from pbmserv.games.drawing import Grid, Mark, cells_named, square_svg
from pbmserv.games.entropy.state import _COLUMNS, _LETTERS, EntropyState

#: The colour each counter is drawn in (R G B Y P W K), and the ink of its letter.
_FILLS = ("#d62728", "#2ca02c", "#1f5fbf", "#f2d43c", "#f49ac1", "#ffffff", "#222222")
_INKS = ("#ffffff", "#ffffff", "#ffffff", "#000000", "#000000", "#000000", "#ffffff")


def entropy_svg(state: EntropyState) -> str:
    """The board being played (at the end, round 2's), the last move's squares highlighted."""
    size = state.size
    marks = {}
    for index, code in enumerate(state.cells):
        if code:
            row, col = divmod(index, size)
            marks[(size - 1 - row, col)] = Mark(
                _FILLS[code - 1], _LETTERS[code - 1], _INKS[code - 1]
            )

    def cell_of(name: str) -> tuple[int, int] | None:
        col, row = _COLUMNS.find(name[0]), int(name[1]) - 1
        return (size - 1 - row, col) if 0 <= col < size and 0 <= row < size else None

    grid = Grid(
        rows=size,
        cols=size,
        marks=marks,
        row_labels=[str(r) for r in range(size, 0, -1)],
        col_labels=list(_COLUMNS[:size]),
        highlight=cells_named(state.last_move, r"\b[a-g][1-7]\b", cell_of),
    )
    return square_svg(grid)
