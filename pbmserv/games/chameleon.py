"""Chameleon: Hex where either player may place either colour (Bill Taylor, 2003).

The board is an N x N rhombus of hexagons, columns ``a..`` left to right and rows ``1..`` top to
bottom, each row drawn half a cell right of the row above. Vert joins the top and bottom rows,
Horz the left and right columns, with a chain that is all ``x`` or all ``o``. Whoever's chain a
move completes wins; if it completes both at once, the mover wins.

Win detection is incremental: a union-find over same-coloured neighbours whose roots carry a
bitmask of the board edges their chain touches. A state holds the board and the union-find, two
compact arrays that ``apply`` copies (memcpy-cheap) and then changes, so the old state is never
touched and the cost of a move hardly depends on the board size. A loaded state has no
union-find until its first ``apply`` builds it from the board: building it is work in proportion
to the pieces, which a load that only shows the board or asks whose turn it is never needs.
"""

from __future__ import annotations

import random
import re
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Final, Literal, NamedTuple

from pbmserv.games.base import (
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    OptionError,
    OptionSpec,
    Outcome,
    StateError,
    Termination,
    Turn,
    Viewer,
)
from pbmserv.games.drawing import Edges, Grid, Mark, cells_named, hex_svg

MIN_SIZE: Final = 3
MAX_SIZE: Final = 26
DEFAULT_SIZE: Final = 11

VERT: Final = "Vert"
HORZ: Final = "Horz"

# Cell codes in the board array.
EMPTY: Final = 0
_PIECE_CODES: Final = {"x": 1, "o": 2}
_CELL_CHARS: Final = ".xo"
# bytes.translate tables between cell codes and the characters of dumps and diagrams.
_CODES_TO_CHARS: Final = bytes.maketrans(b"\x00\x01\x02", _CELL_CHARS.encode())
_CHARS_TO_CODES: Final = bytes.maketrans(_CELL_CHARS.encode(), b"\x00\x01\x02")

# Edge bits kept per union-find root (low nibble); the high nibble holds the root's rank.
#: The edge bits of Geometry.edges.
TOP, BOTTOM, LEFT, RIGHT = 1, 2, 4, 8
_VERT_EDGES: Final = TOP | BOTTOM
_HORZ_EDGES: Final = LEFT | RIGHT
_EDGE_MASK: Final = 0x0F
_RANK_STEP: Final = 0x10

_COLUMNS: Final = "abcdefghijklmnopqrstuvwxyz"
# The picture's sides of the board: dark for Vert, light for Horz; neither red nor blue, the
# colours of the pieces, as either player places both.
_VERT_EDGE: Final = "#2b2b2b"
_HORZ_EDGE: Final = "#a8a8a8"
_PLAYERS: Final = ("first player", "second player")
_SYNTAX: Final = 'write a cell and a piece, like f4x or f4o, or "swap" on the second move'


class Place(NamedTuple):
    """Put ``piece`` ("x" or "o") on the cell at 0-based ``col`` and ``row``."""

    col: int
    row: int
    piece: str


SWAP: Final = "swap"
"""The swap move: the second player takes over the first piece and the role of Vert."""

ChameleonMove = Place | Literal["swap"]


@dataclass(frozen=True, eq=False)
class ChameleonState:
    """One position. Treat it as immutable: ``apply`` builds a new one.

    ``cells`` holds one byte per cell, row by row (0 empty, 1 x, 2 o). ``_links`` is the
    union-find over same-coloured neighbours (see :class:`_Links`), derived from ``cells``:
    None until first needed in a loaded state (:func:`_links_of`), never changed once built.
    """

    size: int
    cells: bytes
    swapped: bool = False
    ply: int = 0
    last_move: str | None = None
    result: Outcome | None = None
    _links: _Links | None = field(default=None, repr=False)

    def piece_at(self, col: int, row: int) -> str | None:
        """The piece ("x" or "o") on a 0-based cell, or None if it is empty."""
        code = self.cells[row * self.size + col]
        return _CELL_CHARS[code] if code else None

    @property
    def vert_seat(self) -> int:
        """The seat playing Vert (top-bottom): seat 0, or seat 1 after a swap."""
        return 1 if self.swapped else 0

    def role(self, seat: int) -> str:
        """The role ("Vert" or "Horz") of ``seat`` in this position."""
        return VERT if seat == self.vert_seat else HORZ

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ChameleonState):
            return NotImplemented
        return (self.size, self.cells, self.swapped, self.ply, self.last_move, self.result) == (
            other.size,
            other.cells,
            other.swapped,
            other.ply,
            other.last_move,
            other.result,
        )

    def __hash__(self) -> int:
        return hash((self.size, self.cells, self.swapped, self.ply, self.last_move))


class _Links(NamedTuple):
    """The union-find over same-coloured neighbours: each cell's ``parent``, and per cell the
    ``edges`` byte (touched-edge bits in the low nibble of a root, its rank in the high nibble)."""

    parent: array
    edges: bytes


class Geometry(NamedTuple):
    """A board size's cells (row by row): each one's neighbours and the edges it touches."""

    neighbours: tuple[tuple[int, ...], ...]
    edges: bytes  # the edge bits of each cell, the starting value of the union-find
    #: The neighbours with a lower index (left, above, above right): a scan in index order
    #: that links each piece to these meets every adjacent pair once.
    earlier: tuple[tuple[int, ...], ...]


@cache
def hex_geometry(size: int) -> Geometry:
    """Neighbour lists and edge bits for one board size (computed once per size)."""
    neighbours = []
    edges = bytearray()
    for row in range(size):
        for col in range(size):
            near = []
            for dc, dr in ((-1, 0), (1, 0), (0, -1), (1, -1), (0, 1), (-1, 1)):
                c, r = col + dc, row + dr
                if 0 <= c < size and 0 <= r < size:
                    near.append(r * size + c)
            neighbours.append(tuple(near))
            bits = 0
            if row == 0:
                bits |= TOP
            if row == size - 1:
                bits |= BOTTOM
            if col == 0:
                bits |= LEFT
            if col == size - 1:
                bits |= RIGHT
            edges.append(bits)
    earlier = tuple(tuple(n for n in near if n < i) for i, near in enumerate(neighbours))
    return Geometry(tuple(neighbours), bytes(edges), earlier)


def _links_of(state: ChameleonState) -> _Links:
    """The state's union-find, built from its board the first time a loaded state needs it."""
    links = state._links
    if links is None:
        links = _build_links(state.size, state.cells)
        # Derived from the board alone, so keeping it changes nothing the state says.
        object.__setattr__(state, "_links", links)
    return links


def _build_links(size: int, cells: bytes) -> _Links:
    """The union-find of a board, in one scan: each piece linked to its earlier neighbours only
    (half the work of all six), which meets every adjacent pair once."""
    geometry = hex_geometry(size)
    parent = array("h", range(size * size))
    edges = bytearray(geometry.edges)
    earlier = geometry.earlier
    for i in [i for i, code in enumerate(cells) if code]:
        _link(cells, parent, edges, earlier[i], i)
    return _Links(parent, bytes(edges))


def _find(parent: array, i: int) -> int:
    # Path halving: only ever called on a state's private copy under construction.
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def _link(
    cells: bytes | bytearray, parent: array, edges: bytearray, neighbours: tuple[int, ...], i: int
) -> int:
    """Join the piece on cell ``i`` to its same-coloured neighbours; return the chain's edges."""
    colour = cells[i]
    root = _find(parent, i)
    for n in neighbours:
        if cells[n] != colour:
            continue
        other = _find(parent, n)
        if other == root:
            continue
        # Union by rank (kept in the high nibble of the edges byte), merging the edge bits.
        mine, theirs = edges[root], edges[other]
        if mine & ~_EDGE_MASK < theirs & ~_EDGE_MASK:
            root, other, mine, theirs = other, root, theirs, mine
        elif mine & ~_EDGE_MASK == theirs & ~_EDGE_MASK and mine < 0xF0:
            mine += _RANK_STEP
        parent[other] = root
        edges[root] = mine | (theirs & _EDGE_MASK)
    return edges[root] & _EDGE_MASK


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


class Chameleon(Game[ChameleonState, ChameleonMove]):
    """Chameleon on an N x N hex board; seat 0 starts as Vert, seat 1 as Horz."""

    SPEC = GameSpec(
        name="chameleon",
        title="Chameleon",
        seat_names=(VERT, HORZ),
        has_swap=True,
        options=(
            OptionSpec(
                name="size",
                type=int,
                default=DEFAULT_SIZE,
                help="the board is size x size cells",
                minimum=MIN_SIZE,
                maximum=MAX_SIZE,
            ),
        ),
        one_picture_for_all=True,
    )

    # --- setting up -------------------------------------------------------------------------

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> ChameleonState:
        """An empty board of ``options["size"]`` (Chameleon uses no randomness)."""
        size = options.get("size", DEFAULT_SIZE)
        if isinstance(size, bool) or not isinstance(size, int) or not MIN_SIZE <= size <= MAX_SIZE:
            raise OptionError(f"-size={size}: the value must be between {MIN_SIZE} and {MAX_SIZE}")
        return ChameleonState(
            size=size,
            cells=bytes(size * size),
            _links=_Links(array("h", range(size * size)), hex_geometry(size).edges),
        )

    # --- whose turn -------------------------------------------------------------------------

    def to_move(self, state: ChameleonState) -> Turn:
        """The seat to move is ``ply % 2`` (a swap changes roles, not the order)."""
        if state.result is not None:
            return Turn(seats=frozenset())
        seat = state.ply % 2
        example = self._example(state.size)
        prompt = f"as {state.role(seat)}, place an x or an o on an empty cell, e.g. {example}"
        if state.ply == 1:
            prompt += ", or swap"
        return Turn(seats=frozenset({seat}), prompts={seat: prompt})

    @staticmethod
    def _example(size: int) -> str:
        # f4x on boards big enough to have f4, else a cell that exists.
        return f"{_cell_name(min(5, size - 1), min(3, size - 1))}x"

    # --- moves ------------------------------------------------------------------------------

    def parse_move(self, state: ChameleonState, seat: int, text: str) -> ChameleonMove:
        """Read ``f4x``, ``F4 O``, ``x f4`` or ``swap``; raise a MoveError that quotes ``text``."""
        raw = text.strip()
        shown = _quote(raw)
        if state.result is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.result.reason})")
        to_move = state.ply % 2
        if seat != to_move:
            raise IllegalMoveError(
                f"{shown}: it is not your turn; {state.role(to_move)} is to move"
            )
        lowered = raw.lower()
        if lowered == SWAP:
            if state.ply != 1:
                raise IllegalMoveError(
                    f"{shown}: you may swap only on the second move of the game, by the second "
                    f"player; place an x or an o instead, like {self._example(state.size)}"
                )
            return SWAP
        match = _MOVE_RE.fullmatch(lowered)
        if match is None:
            raise InvalidMoveError(f"{shown} is not a Chameleon move: {_SYNTAX}")
        before, letter, digits, after = match.groups()
        col, row = _COLUMNS.index(letter), _row_index(digits)
        size = state.size
        if not (col < size and 0 <= row < size):
            raise IllegalMoveError(
                f"{shown}: there is no cell {letter}{digits} on a {size}x{size} board "
                f"(columns a-{_COLUMNS[size - 1]}, rows 1-{size})"
            )
        cell = _cell_name(col, row)
        if before and after:
            raise InvalidMoveError(f"{shown} names two pieces: write one, like {cell}x or {cell}o")
        piece = before or after
        if piece is None:
            raise InvalidMoveError(
                f"{shown} does not say which piece to place: add x or o, like {cell}x or {cell}o"
            )
        taken = state.piece_at(col, row)
        if taken is not None:
            raise IllegalMoveError(f"{shown}: {cell} is already taken by an {taken}")
        return Place(col, row, piece)

    def format_move(self, state: ChameleonState, move: ChameleonMove) -> str:
        """``f4x`` style, or ``swap``."""
        if move == SWAP:
            return SWAP
        return f"{_cell_name(move.col, move.row)}{move.piece}"

    def swap_move(self, state: ChameleonState, seat: int) -> ChameleonMove:
        """The swap, with the same reasons as ``swap`` written as a move when it may not."""
        return self.parse_move(state, seat, SWAP)

    def legal_moves(self, state: ChameleonState, seat: int) -> list[ChameleonMove]:
        """Both pieces on every empty cell, and ``swap`` on the second move."""
        if state.result is not None or seat != state.ply % 2:
            return []
        size = state.size
        moves: list[ChameleonMove] = [SWAP] if state.ply == 1 else []
        for i, code in enumerate(state.cells):
            if code == EMPTY:
                row, col = divmod(i, size)
                moves.append(Place(col, row, "x"))
                moves.append(Place(col, row, "o"))
        return moves

    def apply(
        self, state: ChameleonState, move: ChameleonMove, rng: random.Random
    ) -> ChameleonState:
        """The position after ``move``; copies the arrays, so ``state`` is left as it was."""
        if state.result is not None:
            raise IllegalMoveError("the game is over")
        if move == SWAP:
            if state.ply != 1:
                raise IllegalMoveError('"swap": only on the second move of the game')
            # Nothing on the board changes, so the arrays are shared, never copied (a union-find
            # not built yet is built for the new state when it needs one).
            return ChameleonState(
                size=state.size,
                cells=state.cells,
                swapped=True,
                ply=state.ply + 1,
                last_move=SWAP,
                _links=state._links,
            )
        size = state.size
        i = move.row * size + move.col
        if state.cells[i] != EMPTY:
            raise IllegalMoveError(f"{_cell_name(move.col, move.row)} is already taken")
        links = _links_of(state)
        cells = bytearray(state.cells)
        parent = links.parent[:]
        edges = bytearray(links.edges)
        cells[i] = _PIECE_CODES[move.piece]
        touched = _link(cells, parent, edges, hex_geometry(size).neighbours[i], i)
        mover = state.ply % 2
        return ChameleonState(
            size=size,
            cells=bytes(cells),
            swapped=state.swapped,
            ply=state.ply + 1,
            last_move=self.format_move(state, move),
            result=_result(state.swapped, mover, touched, move.piece),
            _links=_Links(parent, bytes(edges)),
        )

    def outcome(self, state: ChameleonState) -> Outcome | None:
        """Set by the move that completed a chain; None while the game goes on."""
        return state.result

    # --- the diagram ------------------------------------------------------------------------

    def seat_name(self, state: ChameleonState, seat: int) -> str:
        """Vert or Horz: the roles change hands with a swap."""
        return state.role(seat)

    def render(self, state: ChameleonState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """The rhombus with coordinates on all sides; every viewer sees the same."""
        del viewer, players  # nothing hidden; the side names say who is who
        size = state.size
        width = len(str(size))
        letters = " ".join(_COLUMNS[:size])
        lines = [" " * (width + 3) + letters]
        for row in range(size):
            cells = state.cells[row * size : (row + 1) * size]
            drawn = " ".join(cells.translate(_CODES_TO_CHARS).decode())
            lines.append(f"{' ' * row} {row + 1:>{width}}  {drawn}  {row + 1}")
        lines.append(" " * (size + width + 3) + letters)
        lines.append("")
        how = "took the first piece by swap" if state.swapped else "moved first"
        lines.append(f"Vert joins top and bottom ({how}); Horz joins left and right.")
        return "\n".join(lines)

    def svg(self, state: ChameleonState, viewer: Viewer) -> str:
        """The rhombus of hexagons, x red and o blue, the last piece placed highlighted; the top
        and bottom sides dark for Vert, the left and right light for Horz, and a legend saying
        which player has which."""
        del viewer  # no hidden information
        size = state.size
        text = state.cells.translate(_CODES_TO_CHARS).decode()
        pieces = {"x": Mark("#d62728", "x", "#ffffff"), "o": Mark("#1f5fbf", "o", "#ffffff")}
        marks = {
            divmod(index, size): pieces[char] for index, char in enumerate(text) if char != "."
        }

        def cell_of(name: str) -> tuple[int, int] | None:
            col, row = _COLUMNS.find(name[0]), int(name[1:]) - 1
            return (row, col) if 0 <= col < size and 0 <= row < size else None

        vert, horz = _PLAYERS[state.vert_seat], _PLAYERS[1 - state.vert_seat]
        if state.swapped:
            vert += ", by the swap"
        grid = Grid(
            rows=size,
            cols=size,
            marks=marks,
            row_labels=[str(r + 1) for r in range(size)],
            col_labels=list(_COLUMNS[:size]),
            highlight=cells_named(state.last_move, r"[a-z]\d+", cell_of),
            edges=Edges(
                top_bottom=_VERT_EDGE,
                left_right=_HORZ_EDGE,
                top_bottom_legend=f"{VERT} ({vert}): joins top and bottom",
                left_right_legend=f"{HORZ} ({horz}): joins left and right",
            ),
        )
        return hex_svg(grid)

    # --- storage ----------------------------------------------------------------------------

    def dump(self, state: ChameleonState) -> dict[str, Any]:
        """Versioned JSON: the board as rows of ``.``, ``x`` and ``o``, top row first."""
        size = state.size
        text = state.cells.translate(_CODES_TO_CHARS).decode()
        rows = [text[r * size : (r + 1) * size] for r in range(size)]
        result = None
        if state.result is not None:
            result = {"winners": sorted(state.result.winners), "reason": state.result.reason}
        return {
            "version": self.STATE_VERSION,
            "size": size,
            "board": rows,
            "swapped": state.swapped,
            "ply": state.ply,
            "last_move": state.last_move,
            "result": result,
        }

    def load(self, data: Mapping[str, Any]) -> ChameleonState:
        """Check every field against the others and the board, at a cost that does not grow
        with the moves played: the union-find is left for the first ``apply`` to build.

        The stored result is taken as it stands (one winner, after a move that placed a
        piece): checking it against the chains, and that no chain was complete before the last
        move, is a search of the board in proportion to the pieces (issue 16). Only ``dump`` of
        a state that ``apply`` made writes a state, and ``apply`` ends the game with the move
        that completes a chain, so both hold for every stored state; nothing is hidden in
        Chameleon, so a board edited by hand would be there for both players to see.
        """
        if not isinstance(data, Mapping):
            raise StateError("chameleon: the state is not a JSON object")
        self._check_version(data)
        size = data.get("size")
        if type(size) is not int or not MIN_SIZE <= size <= MAX_SIZE:
            raise StateError(f"chameleon: bad board size {size!r}")
        rows = data.get("board")
        if (
            not isinstance(rows, list)
            or len(rows) != size
            or not all(isinstance(r, str) and len(r) == size for r in rows)
        ):
            raise StateError(f"chameleon: the board must be {size} rows of {size} characters")
        text = "".join(rows)
        if set(text) - set(_CELL_CHARS):
            raise StateError("chameleon: the board may hold only '.', 'x' and 'o'")
        swapped, ply, last = data.get("swapped"), data.get("ply"), data.get("last_move")
        if type(swapped) is not bool or type(ply) is not int:
            raise StateError("chameleon: 'swapped' must be true/false and 'ply' a number")
        pieces = size * size - text.count(".")
        if ply != pieces + swapped or (swapped and ply < 2):
            raise StateError(f"chameleon: ply {ply} does not match the board and swap flag")
        cells = text.encode().translate(_CHARS_TO_CODES)
        last_cell = self._check_last_move(size, cells, swapped, ply, last)
        return ChameleonState(
            size=size,
            cells=cells,
            swapped=swapped,
            ply=ply,
            last_move=last,
            result=self._stored_result(data.get("result"), last_cell is not None),
        )

    @staticmethod
    def _stored_result(stored: object, placed_last: bool) -> Outcome | None:
        """The stored result: none, or (only after a move that placed a piece) one winner and
        a reason, as ``dump`` writes them."""
        if stored is None:
            return None
        if not placed_last:
            raise StateError("chameleon: a result is stored but the last move placed no piece")
        winners = stored.get("winners") if isinstance(stored, Mapping) else None
        reason = stored.get("reason") if isinstance(stored, Mapping) else None
        # One seat, as the move that completes a chain gives (type(): True == 1 in Python).
        if (
            not isinstance(winners, list)
            or len(winners) != 1
            or type(winners[0]) is not int
            or winners[0] not in (0, 1)
            or not isinstance(reason, str)
        ):
            raise StateError(f"chameleon: bad stored result {stored!r}")
        return Outcome(frozenset(winners), reason, termination=Termination.GOAL)

    @staticmethod
    def _check_last_move(
        size: int, cells: bytes, swapped: bool, ply: int, last: object
    ) -> int | None:
        """Validate ``last_move``; return the index of the cell it filled, if it placed a piece."""
        if ply == 0:
            if last is not None:
                raise StateError("chameleon: no move made, yet a last move is stored")
            return None
        if swapped and ply == 2:
            if last != SWAP:
                raise StateError("chameleon: the swap must be the last move at ply 2")
            return None
        match = _MOVE_RE.fullmatch(last) if isinstance(last, str) else None
        if match is None or match.group(1) is not None:
            raise StateError(f"chameleon: bad last move {last!r}")
        _, letter, digits, piece = match.groups()
        col, row = _COLUMNS.index(letter), _row_index(digits)
        if (
            piece is None
            or not (col < size and 0 <= row < size)
            or last != f"{_cell_name(col, row)}{piece}"
        ):
            raise StateError(f"chameleon: bad last move {last!r}")
        index = row * size + col
        if cells[index] != _PIECE_CODES[piece]:
            raise StateError(f"chameleon: the last move {last} is not on the board")
        return index


def _result(swapped: bool, mover: int, touched: int, piece: str) -> Outcome | None:
    """The outcome after ``mover`` placed ``piece`` into a chain touching ``touched`` edges."""
    vert_done = touched & _VERT_EDGES == _VERT_EDGES
    horz_done = touched & _HORZ_EDGES == _HORZ_EDGES
    if not (vert_done or horz_done):
        return None
    vert_seat = 1 if swapped else 0
    horz_seat = 1 - vert_seat
    if vert_done and horz_done:
        role = VERT if mover == vert_seat else HORZ
        return Outcome(
            winners=frozenset({mover}),
            reason=(
                f"{role} wins: the {piece} chain joins top and bottom and "
                "left and right at once, and the mover wins"
            ),
            termination=Termination.GOAL,
        )
    if vert_done:
        winner, role, what = vert_seat, VERT, "top and bottom"
    else:
        winner, role, what = horz_seat, HORZ, "left and right"
    reason = f"{role} wins: an {piece} chain joins {what}"
    if mover != winner:
        reason += f", completed by {HORZ if role == VERT else VERT}'s move"
    return Outcome(winners=frozenset({winner}), reason=reason, termination=Termination.GOAL)


GAME = Chameleon()
