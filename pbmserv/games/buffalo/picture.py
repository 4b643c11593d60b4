"""Buffalo's text diagram and SVG picture: row 7 at the top, the rivers drawn."""

from __future__ import annotations

from pbmserv.games.buffalo.rules import (
    BUFFALO,
    CHIEF,
    COLS,
    DOG,
    LETTERS,
    REBEL,
    ROWS,
    BuffaloState,
    _col_row,
    square,
)
from pbmserv.games.drawing import Grid, Mark, cells_named, square_svg


def render_diagram(state: BuffaloState) -> str:
    """Row 7 at the top, the rivers as lines of ``~``."""
    letters = "      " + " ".join(LETTERS)
    river = "     " + "~" * (2 * COLS + 1) + "  river"
    lines = [letters]
    for row in range(ROWS, 0, -1):
        cells = " ".join(state.cells[square(c, row)] for c in range(COLS))
        lines.append(f"   {row}  {cells}  {row}")
        if row in (7, 2):
            lines.append(river)
    lines += [letters, "", "B buffalo (Black)   C Indian chief, D dog (White)   . empty"]
    buffalo = state.cells.count(BUFFALO)
    lines.append(f"Black's buffalo run towards row 1; {buffalo} of 11 are left.")
    if state.variant == REBEL:
        lines.append("Rebel Buffalo: a dog between two buffalo goes back to row 2.")
    return "\n".join(lines)


def buffalo_svg(state: BuffaloState) -> str:
    """Row 7 at the top, the rivers in blue, buffalo black, the chief red, the dogs white;
    the last move's squares highlighted."""
    pieces = {
        BUFFALO: Mark("#222222", "B", "#ffffff"),
        CHIEF: Mark("#c0392b", "C", "#ffffff"),
        DOG: Mark("#ffffff", "D"),
    }
    marks = {}
    for index, cell in enumerate(state.cells):
        col, row = _col_row(index)
        if cell in pieces:
            marks[(ROWS - row, col)] = pieces[cell]

    def cell_of(name: str) -> tuple[int, int] | None:
        return (ROWS - int(name[1:]), LETTERS.index(name[0]))

    grid = Grid(
        rows=ROWS,
        cols=COLS,
        marks=marks,
        row_labels=[str(r) for r in range(ROWS, 0, -1)],
        col_labels=list(LETTERS),
        highlight=cells_named(state.last_move, r"[a-k][1-7]", cell_of),
        rivers_below=frozenset({0, ROWS - 2}),  # below row 7 and below row 2
    )
    return square_svg(grid)
