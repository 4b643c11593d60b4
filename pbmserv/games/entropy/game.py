"""Entropy under the game contract, built on the state, rules, prompts, notation, diagram and
storage modules."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pbmserv.games.base import (
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    MoveKind,
    OptionError,
    OptionSpec,
    Outcome,
    StateError,
    Turn,
    Viewer,
)
from pbmserv.games.entropy.diagram import (
    _rows,
    render_diagram,
)
from pbmserv.games.entropy.notation import (
    _ORDER_RE,
    _PLACE_RE,
    _STOCK_RE,
    _quote,
    _read_order,
    _read_place,
    _read_stock,
    _Reader,
)
from pbmserv.games.entropy.picture import entropy_svg
from pbmserv.games.entropy.prompts import (
    _task,
)
from pbmserv.games.entropy.rules import (
    _after_order,
    _after_place,
    _present,
    _problem,
    _round_start,
    _stockings,
)
from pbmserv.games.entropy.state import (
    CHAOS,
    DEFAULT_SIZE,
    ENTROPY2,
    ORDER,
    OVER,
    PLACE,
    RESERVE_SIZE,
    SIZES,
    STANDARD,
    STOCK,
    EntropyMove,
    EntropyState,
    Pass,
    Place,
    Slide,
    Stock,
    _letter,
    _letters,
    _placements_of,
    _slide_moves,
    square_name,
)
from pbmserv.games.entropy.storage import (
    _Loader,
)


def _option_size(raw: object) -> int:
    """The board size option: an int, or its digits as boards made before it was an int
    option have it stored."""
    if isinstance(raw, str) and raw.isdigit():
        raw = int(raw)
    if isinstance(raw, bool) or raw not in SIZES:
        raise OptionError(f"-size={raw}: choose one of 5, 7")
    return int(raw)


#: The seats to move, one seat alone (frozensets never change, so one each will do).
_ALONE = (frozenset({0}), frozenset({1}))
#: Standard Entropy's pass, the first of Order's moves every time.
_PASS = Pass()

# --- the game --------------------------------------------------------------------------------


class Entropy(Game[EntropyState, EntropyMove]):
    """Entropy and Entropy II on 5x5 or 7x7; see the module docstring for the seats."""

    SPEC = GameSpec(
        name="entropy",
        title="Entropy",
        draw_by_agreement=True,
        seat_names=(CHAOS, ORDER),
        uses_chance=True,
        options=(
            OptionSpec(
                name="size",
                type=int,
                default=DEFAULT_SIZE,
                help="7: 7x7 board, 7 colours x 7 counters; 5: 5x5 (Hyle), 5 colours x 5",
                choices=tuple(SIZES),
            ),
            OptionSpec(
                name="variant",
                type=str,
                default=STANDARD,
                help="standard: counters drawn from a bag; entropy2: Order hands them to Chaos",
                choices=(STANDARD, ENTROPY2),
            ),
        ),
        move_kinds=(
            MoveKind(
                name=STOCK,
                takes="COLOURS",
                summary="Entropy II: as Order, stock Chaos's reserve with 5 counters, like RRGBY",
            ),
        ),
        one_picture_for_all=True,
    )

    # --- setting up -------------------------------------------------------------------------

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> EntropyState:
        """An empty board; standard Entropy draws Chaos's first counter from ``rng``."""
        size = _option_size(options.get("size", DEFAULT_SIZE))
        variant = options.get("variant", STANDARD)
        if variant not in (STANDARD, ENTROPY2):
            raise OptionError(f"-variant={variant}: choose one of {STANDARD}, {ENTROPY2}")
        return _round_start(size, variant, 1, rng, None)

    # --- whose turn -------------------------------------------------------------------------

    def to_move(self, state: EntropyState) -> Turn:
        """One seat acts at a time; the stage says what it does (place, slide or stock)."""
        seat = state.mover
        if seat is None:
            return Turn(seats=frozenset(), stage=OVER)
        return Turn(seats=_ALONE[seat], stage=state.stage, prompts={seat: _task(state)})

    def seat_name(self, state: EntropyState, seat: int) -> str:
        """The seat's role in the round in play; after the game both, in order ("Order, then
        Chaos"): its round-2 role alone would label a winner as Order in round 1 "Chaos"."""
        if state.stage == OVER:
            second = state.role(seat)
            return f"{ORDER if second == CHAOS else CHAOS}, then {second}"
        return state.role(seat)

    # --- moves ------------------------------------------------------------------------------

    def parse_move(self, state: EntropyState, seat: int, text: str) -> EntropyMove:
        """Read ``c3``, ``c3 R``, ``c3-c6``, ``pass``, ``c3-c6 give R``, ``stock RRGBY`` and
        their variants; raise a MoveError that quotes ``text``."""
        raw = text.strip()
        shown = _quote(raw)
        if state.result is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.result.reason})")
        if seat != state.mover:
            raise IllegalMoveError(
                f"{shown}: it is not your turn; {state.role(1 - seat)} is to move"
            )
        words = " ".join(raw.lower().split())
        reader = _Reader(state, shown)
        stock = _STOCK_RE.fullmatch(words)
        if stock and (stock.group(1) or state.stage == STOCK):
            return _read_stock(state, reader, stock)
        place = _PLACE_RE.fullmatch(words)
        if place:
            return _read_place(state, reader, place)
        order = _ORDER_RE.fullmatch(words)
        if order:
            return _read_order(state, reader, order)
        raise InvalidMoveError(f"{shown} is not an Entropy move: {_task(state)}")

    def format_move(self, state: EntropyState, move: EntropyMove) -> str:
        """``c3 R``, ``c3-c6``, ``pass``, ``c3-c6 give R``, ``pass give R``, ``stock RRGBY``."""
        size = state.size
        if isinstance(move, Place):
            return f"{square_name(move.cell, size)} {_letter(move.colour)}"
        if isinstance(move, Stock):
            return f"stock {_letters(move.counts)}"
        if isinstance(move, Slide):
            text = f"{square_name(move.src, size)}-{square_name(move.dst, size)}"
        else:
            text = "pass"
        return f"{text} give {_letter(move.give)}" if move.give else text

    def legal_moves(self, state: EntropyState, seat: int) -> list[EntropyMove]:
        """Every move of ``seat`` now: placements, slides and passes (each with every colour it
        may hand over), or every choice of 5 counters for the reserve."""
        if seat != state.mover:
            return []
        # The moves are taken from tables made once (and a board's slides from a cache): a
        # robot's search asks for them at every step of every iteration.
        if state.stage == PLACE:
            if state.variant == STANDARD:
                return _placements_of(state.cells, state.size, state.drawn)
            colours = _present(state.reserve)
            empty = [i for i, c in enumerate(state.cells) if not c]
            return [Place(cell, colour) for cell in empty for colour in colours]
        if state.stage == STOCK:
            return [Stock(counts) for counts in _stockings(state.supply(), RESERVE_SIZE)]
        slides = _slide_moves(state.cells, state.size)
        gives = _present(state.supply()) if state.variant == ENTROPY2 else []
        if not gives:
            return [_PASS, *slides]
        moves: list[EntropyMove] = [Pass(give) for give in gives]
        for slide in slides:
            moves.extend(Slide(slide.src, slide.dst, give) for give in gives)
        return moves

    def apply(self, state: EntropyState, move: EntropyMove, rng: random.Random) -> EntropyState:
        """The position after ``move``; standard Entropy draws the next counter from ``rng``."""
        if state.result is not None:
            raise IllegalMoveError("the game is over")
        problem = _problem(state, move)
        if problem:
            raise IllegalMoveError(f"{_quote(self.format_move(state, move))}: {problem}")
        text = self.format_move(state, move)
        if isinstance(move, Place):
            return _after_place(state, move, rng, text)
        if isinstance(move, Stock):
            return replace(
                state, stage=PLACE, reserve=move.counts, ply=state.ply + 1, last_move=text
            )
        return _after_order(state, move, rng, text)

    def chance_outcome(self, state: EntropyState) -> dict[str, Any] | None:
        """The counter drawn from the bag for Chaos (standard Entropy); the board shows it to
        everyone, so it is no secret."""
        return {"drawn": _letter(state.drawn)} if state.drawn else None

    def outcome(self, state: EntropyState) -> Outcome | None:
        """Set when round 2's board is full; scores are each seat's total as Order."""
        return state.result

    # --- the diagram ------------------------------------------------------------------------

    def render(self, state: EntropyState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """The board with the score of every row and column, the colours left and who plays
        which role; at the end both rounds' boards and who won by how much. Every viewer sees
        the same (nothing is hidden)."""
        del viewer
        return render_diagram(state, players)

    def svg(self, state: EntropyState, viewer: Viewer) -> str:
        """Every counter in its colour, the row and column scores, the counter Chaos must place,
        and both rounds' boards once the game is over; every viewer sees the same."""
        del viewer
        return entropy_svg(state)

    # --- storage ----------------------------------------------------------------------------

    def dump(self, state: EntropyState) -> dict[str, Any]:
        """Versioned JSON; boards as rows of colour letters and ``.``, row 1 first."""
        result = None
        if state.result is not None:
            scores = state.result.scores or {}
            result = {
                "winners": sorted(state.result.winners),
                "reason": state.result.reason,
                "scores": [scores[0], scores[1]],
            }
        return {
            "version": self.STATE_VERSION,
            "size": state.size,
            "variant": state.variant,
            "round": state.round,
            "stage": state.stage,
            "board": _rows(state.cells, state.size),
            "first_board": None if state.first is None else _rows(state.first, state.size),
            "drawn": _letter(state.drawn) if state.drawn else None,
            "reserve": _letters(state.reserve),
            "ply": state.ply,
            "last_move": state.last_move,
            "result": result,
        }

    def load(self, data: Mapping[str, Any]) -> EntropyState:
        """Rebuild a state, checking every field against the rules; StateError if it is bad."""
        if not isinstance(data, Mapping):
            raise StateError("entropy: the state is not a JSON object")
        self._check_version(data)
        return _Loader(data).state()


GAME = Entropy()
