"""Entropy's board as a picture: each counter in its colour, row N at the top, each row's score
at its end, each column's below it and Order's total under the board; beside it the round, who
plays which role and what comes next (the counter drawn for Chaos to place, or Chaos's reserve
in Entropy II); at the end both rounds' boards side by side, with their scores and who won.

While a round is played the picture is in layers (drawing.layered): the board's cells, its
coordinates and the words "row" and "col" stay the same, and all that changes (the counters,
the scores, the words beside the board) is sprites, each drawn once and pasted. Nothing here is
secret: the drawn counter and the reserve are in the text diagram too, and the bag's next draws
are not in the state at all (each is drawn when the move before it is played).
"""

from __future__ import annotations

from pbmserv.games.drawing import (
    CELL,
    MARGIN,
    Drawn,
    Grid,
    Mark,
    cells_named,
    label,
    label_sprite,
    layered,
    picture,
    piece,
    placed,
    square_centre,
    square_layers,
    text_width,
)
from pbmserv.games.entropy.diagram import _names
from pbmserv.games.entropy.score import board_score
from pbmserv.games.entropy.state import (
    _COLUMNS,
    _LETTERS,
    CHAOS,
    COLOURS,
    ENTROPY2,
    ORDER,
    OVER,
    PLACE,
    STOCK,
    EntropyState,
)

#: The colour each counter is drawn in (R G B Y P W K), and the ink of its letter.
_FILLS = ("#d62728", "#2ca02c", "#1f5fbf", "#f2d43c", "#f49ac1", "#ffffff", "#222222")
_INKS = ("#ffffff", "#ffffff", "#ffffff", "#000000", "#000000", "#000000", "#ffffff")

_SCORE = "#222222"  # a score above 0
_NIL = "#b0b0b0"  # a score of 0, grey so that the lines that score stand out
_NOTE = "#666666"  # the small words "row" and "col"
_GAP = 16  # between the board and what is written beside it
_STEP = 32  # from one counter to the next in a row of counters


def entropy_svg(state: EntropyState) -> str:
    """The round in play with the scores and what comes next; at the end both rounds."""
    return _final(state) if state.stage == OVER else _in_play(state)


def _mark(colour: int) -> Mark:
    return Mark(_FILLS[colour - 1], _LETTERS[colour - 1], _INKS[colour - 1])


def _scored_board(cells: bytes, size: int, last_move: str | None, total: str) -> tuple[Drawn, str]:
    """The board (``last_move``'s squares highlighted) with the score of each row at its right
    end, of each column below it, and under them ``total`` and the score's two parts; in two
    layers: what stays the same (cells, coordinates, the words "row" and "col"), and the rest
    as sprites."""
    marks = {}
    for index, code in enumerate(cells):
        if code:
            row, col = divmod(index, size)
            marks[(size - 1 - row, col)] = _mark(code)

    def cell_of(name: str) -> tuple[int, int] | None:
        col, row = _COLUMNS.find(name[0]), int(name[1]) - 1
        return (size - 1 - row, col) if 0 <= col < size and 0 <= row < size else None

    grid = Grid(
        rows=size,
        cols=size,
        marks=marks,
        row_labels=[str(r) for r in range(size, 0, -1)],
        col_labels=list(_COLUMNS[:size]),
        highlight=cells_named(last_move, r"\b[a-g][1-7]\b", cell_of),
        far_labels=False,  # the right and bottom margins hold the scores
    )
    board, pieces = square_layers(grid)
    score = board_score(cells, size)
    right = MARGIN * 1.5 + size * CELL + 2  # the middle of the row scores
    bottom = MARGIN + size * CELL + 18  # the baseline of the column scores
    notes = label(right, MARGIN * 0.62, "row", _NOTE, size=11)
    notes += label(MARGIN * 0.5, bottom, "col", _NOTE, size=11)
    rows = []
    for row, value in reversed(list(enumerate(score.rows))):  # row N first, at the top
        _x, y = square_centre(grid, size - 1 - row, 0)
        rows.append(_score(right, y + 5, value))
    columns = []
    for col, value in enumerate(score.columns):
        x, _y = square_centre(grid, 0, col)
        columns.append(_score(x, bottom, value))
    parts = f"{sum(score.rows)} in rows + {sum(score.columns)} in columns"
    text = [
        label_sprite(MARGIN * 0.5, board.height + 12, total, bold=True, anchor="start"),
        label_sprite(MARGIN * 0.5, board.height + 29, parts, ink=_NOTE, size=12, anchor="start"),
    ]
    pieces += _group("row-scores", rows) + _group("column-scores", columns)
    pieces += _group("total", text)
    width = max(board.width + 4, MARGIN * 0.5 + text_width(total), text_width(parts, 12))
    return Drawn(board.body + notes, width, board.height + 36), pieces


def _score(x: float, y: float, value: int) -> str:
    colour = _SCORE if value else _NIL
    return label_sprite(x, y, str(value), ink=colour, size=13, bold=bool(value))


def _group(kind: str, parts: list[str]) -> str:
    return f'<g class="{kind}">{"".join(parts)}</g>'


class _Column:
    """Lines of text and rows of counters written one under another from (x, y)."""

    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y
        self.parts: list[str] = []
        self.width = 0.0

    def line(self, text: str, *, bold: bool = False, size: int = 13, gap: float = 0) -> None:
        self.y += gap + size + 5
        self.parts.append(label_sprite(self.x, self.y, text, size=size, bold=bold, anchor="start"))
        self.width = max(self.width, text_width(text, size))

    def counters(self, kind: str, colours: list[int], name: str = "") -> None:
        """A row of counters, and after them ``name`` (a lone counter's colour)."""
        radius = CELL * 0.36
        middle = self.y + 8 + radius
        drawn = [
            piece(self.x + radius + 2 + i * _STEP, middle, _mark(c)) for i, c in enumerate(colours)
        ]
        after = self.x + 2 * radius + 12 + (len(colours) - 1) * _STEP
        if name:
            drawn.append(label_sprite(after, middle + 5, name, anchor="start"))
        self.parts.append(_group(kind, drawn))
        self.width = max(self.width, after - self.x + (text_width(name) if name else 0))
        self.y = middle + radius


def _in_play(state: EntropyState) -> str:
    names = _names(())
    chaos, order = names[state.chaos_seat], names[state.order_seat]
    # At the start of round 2 the last move (round 1's last) is on the other board.
    last = state.last_move if any(state.cells) else None
    board, pieces = _scored_board(
        state.cells, state.size, last, f"{ORDER}'s score so far: {_total(state.cells, state.size)}"
    )
    side = _Column(board.width + _GAP, MARGIN * 0.62 - 18)
    side.line(f"Round {state.round} of 2", bold=True, size=14)
    side.line(f"{CHAOS}: {chaos}")
    side.line(f"{ORDER}: {order}")
    if state.round == 2 and state.first is not None:
        side.line(f"Score to beat: {_total(state.first, state.size)}", bold=True, gap=8)
        side.line(f"({CHAOS}'s, as {ORDER} in round 1)", size=12)
    if state.stage == PLACE:
        side.line(f"{CHAOS} to place", bold=True, gap=12)
        if state.drawn:
            side.line("the counter drawn:", size=12)
            side.counters("next-counter", [state.drawn], COLOURS[state.drawn - 1][1])
    elif state.stage == STOCK:
        side.line(f"{ORDER} to stock", bold=True, gap=12)
        side.line(f"{CHAOS}'s reserve", size=12)
    else:
        side.line(f"{ORDER} to slide or pass", bold=True, gap=12)
        if state.variant == ENTROPY2:
            side.line(f"and give {CHAOS} a counter", size=12)
    if state.variant == ENTROPY2:
        side.line(f"{CHAOS}'s reserve:", size=12, gap=10)
        held = [c + 1 for c, n in enumerate(state.reserve) for _ in range(n)]
        if held:
            side.counters("reserve", held)
        else:
            side.line("empty", size=12)
    width = side.x + side.width + MARGIN * 0.5
    height = max(board.height, side.y + 12)
    return layered(board.body, pieces + "".join(side.parts), width, height)


def _total(cells: bytes, size: int) -> int:
    return board_score(cells, size).total


def _final(state: EntropyState) -> str:
    """Both rounds' boards side by side, who played which role in each, and who won."""
    assert state.first is not None
    names = _names(())
    # The roles of round 2 are in the state; round 1's were the other way round.
    order2, chaos2 = names[state.order_seat], names[state.chaos_seat]
    first, second = _total(state.first, state.size), _total(state.cells, state.size)
    x = 0.0
    body = []
    top = 0.0
    for number, cells, order, chaos, last, total in (
        (1, state.first, chaos2, order2, None, first),
        (2, state.cells, order2, chaos2, state.last_move, second),
    ):
        board, pieces = _scored_board(cells, state.size, last, f"{ORDER} scored {total}")
        heading = _Column(x + MARGIN * 0.5, 0)
        heading.line(f"Round {number}", bold=True, size=14)
        heading.line(f"{ORDER}: {order}")
        heading.line(f"{CHAOS}: {chaos}")
        top = heading.y + 8
        body += heading.parts
        whole = Drawn(board.body + pieces, board.width, board.height)
        body.append(placed(whole, x, top, f"round-{number}"))
        x += max(board.width, heading.width + MARGIN * 0.5) + 2 * _GAP
    if first == second:
        result = f"A draw: both scored {first} as {ORDER}."
    else:
        won = order2 if second > first else chaos2
        result = f"{won[0].upper()}{won[1:]} won, {max(first, second)} to {min(first, second)}."
    bottom = top + board.height + 20
    body.append(label(MARGIN * 0.5, bottom, result, bold=True, size=15, anchor="start"))
    width = max(x - 2 * _GAP + MARGIN * 0.5, MARGIN + text_width(result, 15))
    return picture(Drawn("".join(body), width, bottom + 14))
