"""Chameleon under the game contract (its types named through :mod:`pbmserv.games.base`), built
on the modules beside it; and who wins when a move completes a chain."""

from __future__ import annotations

import random
from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from pbmserv.games import base
from pbmserv.games.base import IllegalMoveError, InvalidMoveError, OptionError, StateError
from pbmserv.games.chameleon.geometry import LEFT_RIGHT, TOP_BOTTOM, hex_geometry
from pbmserv.games.chameleon.links import _link, _links_of
from pbmserv.games.chameleon.notation import (
    _COLUMNS,
    _MOVE_RE,
    _SYNTAX,
    _cell_name,
    _quote,
    _row_index,
)
from pbmserv.games.chameleon.picture import chameleon_svg, render_diagram
from pbmserv.games.chameleon.state import (
    _CELL_CHARS,
    _CHARS_TO_CODES,
    _CODES_TO_CHARS,
    _PIECE_CODES,
    DEFAULT_SIZE,
    EMPTY,
    HORZ,
    MAX_SIZE,
    MIN_SIZE,
    SWAP,
    VERT,
    ChameleonMove,
    ChameleonState,
    Place,
    _Links,
)


class Chameleon(base.Game[ChameleonState, ChameleonMove]):
    """Chameleon on an N x N hex board; seat 0 starts as Vert, seat 1 as Horz."""

    SPEC = base.GameSpec(
        name="chameleon",
        title="Chameleon",
        seat_names=(VERT, HORZ),
        has_swap=True,
        options=(
            base.OptionSpec(
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

    def to_move(self, state: ChameleonState) -> base.Turn:
        """The seat to move is ``ply % 2`` (a swap changes roles, not the order)."""
        if state.result is not None:
            return base.Turn(seats=frozenset())
        seat = state.ply % 2
        example = self._example(state.size)
        prompt = f"as {state.role(seat)}, place an x or an o on an empty cell, e.g. {example}"
        if state.ply == 1:
            prompt += ", or swap"
        return base.Turn(seats=frozenset({seat}), prompts={seat: prompt})

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

    def outcome(self, state: ChameleonState) -> base.Outcome | None:
        """Set by the move that completed a chain; None while the game goes on."""
        return state.result

    # --- the diagram ------------------------------------------------------------------------

    def seat_name(self, state: ChameleonState, seat: int) -> str:
        """Vert or Horz: the roles change hands with a swap."""
        return state.role(seat)

    def render(
        self, state: ChameleonState, viewer: base.Viewer, players: Sequence[str] = ()
    ) -> str:
        """The rhombus with coordinates on all sides; every viewer sees the same."""
        del viewer, players  # nothing hidden; the side names say who is who
        return render_diagram(state)

    def svg(self, state: ChameleonState, viewer: base.Viewer) -> str:
        """The rhombus of hexagons, x red and o blue, the last piece placed highlighted; the top
        and bottom sides dark for Vert, the left and right light for Horz, and a legend saying
        which player has which."""
        del viewer  # no hidden information
        return chameleon_svg(state)

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
    def _stored_result(stored: object, placed_last: bool) -> base.Outcome | None:
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
        return base.Outcome(frozenset(winners), reason, termination=base.Termination.GOAL)

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


def _result(swapped: bool, mover: int, touched: int, piece: str) -> base.Outcome | None:
    """The outcome after ``mover`` placed ``piece`` into a chain touching ``touched`` edges."""
    vert_done = touched & TOP_BOTTOM == TOP_BOTTOM
    horz_done = touched & LEFT_RIGHT == LEFT_RIGHT
    if not (vert_done or horz_done):
        return None
    vert_seat = 1 if swapped else 0
    horz_seat = 1 - vert_seat
    if vert_done and horz_done:
        role = VERT if mover == vert_seat else HORZ
        return base.Outcome(
            winners=frozenset({mover}),
            reason=(
                f"{role} wins: the {piece} chain joins top and bottom and "
                "left and right at once, and the mover wins"
            ),
            termination=base.Termination.GOAL,
        )
    if vert_done:
        winner, role, what = vert_seat, VERT, "top and bottom"
    else:
        winner, role, what = horz_seat, HORZ, "left and right"
    reason = f"{role} wins: an {piece} chain joins {what}"
    if mover != winner:
        reason += f", completed by {HORZ if role == VERT else VERT}'s move"
    return base.Outcome(
        winners=frozenset({winner}), reason=reason, termination=base.Termination.GOAL
    )


GAME = Chameleon()
