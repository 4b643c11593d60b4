"""Buffalo under the game contract (its types named through :mod:`pbmserv.games.base`),
built on the rules, notation and picture modules beside it; with the checks that say why a
move written is illegal."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pbmserv.games import base
from pbmserv.games.base import IllegalMoveError, InvalidMoveError, OptionError, StateError
from pbmserv.games.buffalo.notation import _LAST_RE, _MAIN_RE, _SYNTAX, _split, _square_of
from pbmserv.games.buffalo.picture import buffalo_svg, render_diagram
from pbmserv.games.buffalo.rules import (
    _PIECE_NAMES,
    BLACK,
    BUFFALO,
    CHIEF,
    COLS,
    DOG,
    EMPTY,
    REBEL,
    ROLES,
    ROWS,
    STANDARD,
    WHITE,
    BuffaloMove,
    BuffaloState,
    _all_placements,
    _buffalo_moves,
    _col_row,
    _example,
    _judge,
    _lifted,
    _moved,
    _placed_cells,
    _row_two_free,
    _white_moves,
    _white_targets,
    enclosed_dogs,
    name,
    room_for,
    send_home,
    square,
)


class Buffalo(base.Game[BuffaloState, BuffaloMove]):
    """Buffalo and Rebel Buffalo; seat 0 Black (the buffalo), seat 1 White."""

    SPEC = base.GameSpec(
        name="buffalo",
        title="Buffalo",
        seat_names=ROLES,
        options=(
            base.OptionSpec(
                name="variant",
                type=str,
                default=STANDARD,
                help="rebel plays Rebel Buffalo (enclosed dogs go home)",
                choices=(STANDARD, REBEL),
            ),
        ),
        one_picture_for_all=True,
    )

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> BuffaloState:
        """The starting position (Buffalo uses no randomness)."""
        variant = options.get("variant", STANDARD)
        if variant not in (STANDARD, REBEL):
            raise OptionError(f"-variant={variant}: choose one of {STANDARD}, {REBEL}")
        return BuffaloState(variant=variant)

    def to_move(self, state: BuffaloState) -> base.Turn:
        """Black on even plies, White on odd ones; nobody once the game is over."""
        if state.winner is not None:
            return base.Turn(frozenset())
        seat = state.to_move
        # The examples are moves of this very position, so a newcomer can copy one as it is.
        if seat == BLACK:
            src, dst = _example(_buffalo_moves(state.cells))
            prompt = (
                "as Black, move a buffalo one square towards row 1, "
                f"e.g. {name(src)}-{name(dst)} or just {name(dst)}"
            )
            free = _row_two_free(state.cells)
            if state.variant == REBEL and free and self._can_enclose(state.cells):
                spot = name(free[0])
                prompt += f"; if your move encloses a dog, add dog:{spot} to send it to {spot}"
        else:
            src, dst = _example(_white_moves(state.cells))
            example = f"{name(src)}-{name(dst)}"
            prompt = f"as White, move a dog like a queen or the chief like a king, e.g. {example}"
        return base.Turn(frozenset({seat}), "move", {seat: prompt})

    @staticmethod
    def _can_enclose(cells: str) -> bool:
        """Whether some buffalo move would send a dog home (worth a word in the prompt)."""
        return any(enclosed_dogs(_moved(cells, src, dst)) for src, dst in _buffalo_moves(cells))

    def parse_move(self, state: BuffaloState, seat: int, text: str) -> BuffaloMove:
        """Read ``e7-e6``, ``e7e6``, ``E7 e6``, ``e6``, ``f2xf3``, with ``dog:b2`` or
        ``dog:d5>b2`` parts in Rebel Buffalo; raise a MoveError that quotes ``text``."""
        shown = f'"{text}"'
        lowered = text.lower().replace("\u2013", "-").replace("\u2014", "-")
        split = _split(lowered)
        if split is None:
            raise InvalidMoveError(
                f"{shown}: write where an enclosed dog goes as dog:b2 (or dog:d5>b2 naming "
                "the dog), after the move"
            )
        main, dog_parts = split
        match = _MAIN_RE.fullmatch(main)
        if match is None:
            raise InvalidMoveError(f"{shown} is not a Buffalo move: {_SYNTAX}")
        if state.winner is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.reason})")
        if seat != state.to_move:
            raise IllegalMoveError(
                f"{shown}: it is not your turn; {ROLES[state.to_move]} is to move"
            )
        first = _square_of(match[1], match[2], shown)
        if match[3] is not None:
            src, dst = first, _square_of(match[3], match[4], shown)
        else:
            src, dst = self._source_of(state, seat, first, shown)
        if seat == BLACK:
            self._check_buffalo(state.cells, src, dst, shown)
        else:
            self._check_white(state.cells, src, dst, shown)
        return self._with_dogs(state, src, dst, dog_parts, shown)

    @staticmethod
    def _source_of(state: BuffaloState, seat: int, target: int, shown: str) -> tuple[int, int]:
        """The buffalo that can step to ``target`` (a target alone names a buffalo move)."""
        if seat != BLACK:
            raise IllegalMoveError(f"{shown}: name both squares of a dog or chief move, like d2-d5")
        src = target + COLS
        if src >= COLS * ROWS or state.cells[src] != BUFFALO:
            raise IllegalMoveError(
                f"{shown}: no buffalo can step to {name(target)} (a buffalo moves one square "
                "straight towards row 1)"
            )
        return src, target

    @staticmethod
    def _check_buffalo(cells: str, src: int, dst: int, shown: str) -> None:
        if cells[src] != BUFFALO:
            what = f"{_PIECE_NAMES[cells[src]]} of White's" if cells[src] != EMPTY else "nothing"
            raise IllegalMoveError(
                f"{shown}: there is {what} on {name(src)}; Black moves the buffalo"
            )
        if dst != src - COLS:
            raise IllegalMoveError(
                f"{shown}: a buffalo moves only one square straight forward, towards row 1 "
                f"(from {name(src)} to {name(src - COLS)})"
                if src >= COLS
                else f"{shown}: a buffalo moves only one square straight towards row 1"
            )
        if cells[dst] != EMPTY:
            raise IllegalMoveError(
                f"{shown}: {name(dst)} is taken by {_PIECE_NAMES[cells[dst]]}, and a buffalo "
                "never captures"
            )

    @staticmethod
    def _check_white(cells: str, src: int, dst: int, shown: str) -> None:
        piece = cells[src]
        if piece not in (DOG, CHIEF):
            what = "a buffalo of Black's" if piece == BUFFALO else "nothing"
            raise IllegalMoveError(
                f"{shown}: there is {what} on {name(src)}; White moves the dogs and the chief"
            )
        if dst not in _white_targets(cells, src):
            raise IllegalMoveError(f"{shown}: {_why_not(cells, src, dst)}")

    def _with_dogs(
        self, state: BuffaloState, src: int, dst: int, parts: list[re.Match[str]], shown: str
    ) -> BuffaloMove:
        """The move with its Rebel placements resolved (named squares, then the defaults)."""
        rebel_move = state.variant == REBEL and state.cells[src] == BUFFALO
        if not rebel_move:
            if parts:
                where = "by a buffalo move" if state.variant == REBEL else "in Rebel Buffalo"
                raise IllegalMoveError(f"{shown}: dog: may be written only {where}")
            return BuffaloMove(src, dst)
        after = _moved(state.cells, src, dst)
        dogs = enclosed_dogs(after)
        if not parts:
            return BuffaloMove(src, dst, send_home(after, dogs, {}))
        if not dogs:
            raise IllegalMoveError(
                f"{shown}: this move encloses no dog, so there is no dog to place with dog:"
            )
        named = self._named(after, dogs, parts, shown)
        placements = send_home(after, dogs, named)
        if room_for(after, dogs):
            if len(placements) < len(dogs):
                raise IllegalMoveError(
                    f"{shown}: with those squares taken, the dog on "
                    f"{name(next(d for d in dogs if d not in dict(placements)))} has no other "
                    "empty square of row 2; name other squares or leave out dog:"
                )
        elif placements != send_home(after, dogs, {}):
            # With too little room only the default placement is allowed (its canonical text
            # names the squares it used, so that text must still read back).
            raise IllegalMoveError(
                f"{shown}: row 2 has no room for every enclosed dog; leave out dog: and they "
                "go to the nearest free squares"
            )
        return BuffaloMove(src, dst, placements)

    @staticmethod
    def _named(
        after: str, dogs: list[int], parts: list[re.Match[str]], shown: str
    ) -> dict[int, int]:
        """The dog -> square choices of the ``dog:`` parts, checked."""
        free = set(_row_two_free(_lifted(after, dogs)))
        named: dict[int, int] = {}
        plain: list[int] = []
        for part in parts:
            target = _square_of(part[3], part[4], shown)
            if target // COLS != 1:
                raise IllegalMoveError(
                    f"{shown}: an enclosed dog goes back to row 2, not to {name(target)}"
                )
            if part[1] is not None and target == _square_of(part[1], part[2], shown):
                raise IllegalMoveError(
                    f"{shown}: an enclosed dog leaves its square: name another empty square "
                    f"of row 2 than {name(target)}"
                )
            if target not in free or target in named.values() or target in plain:
                raise IllegalMoveError(
                    f"{shown}: {name(target)} is not free for a dog (each dog: needs its own "
                    "empty square of row 2)"
                )
            if part[1] is None:
                plain.append(target)
                continue
            dog = _square_of(part[1], part[2], shown)
            if dog not in dogs:
                raise IllegalMoveError(f"{shown}: the dog on {name(dog)} is not enclosed")
            if dog in named:
                raise IllegalMoveError(f"{shown}: the dog on {name(dog)} is named twice")
            named[dog] = target
        unnamed = [dog for dog in dogs if dog not in named]
        if len(plain) > len(unnamed):
            count = "one dog" if len(dogs) == 1 else f"{len(dogs)} dogs"
            raise IllegalMoveError(f"{shown}: this move encloses {count}, but names more squares")
        for dog, target in zip(unnamed, plain, strict=False):
            if dog == target:
                raise IllegalMoveError(
                    f"{shown}: the dog on {name(dog)} is enclosed there and must leave: name "
                    "another empty square of row 2"
                )
            named[dog] = target
        return named

    def format_move(self, state: BuffaloState, move: BuffaloMove) -> str:
        """``e7-e6``, ``f2xf3``; Rebel placements as ``dog:d2`` (one enclosed dog) or
        ``dog:d5>d2`` for each dog when several are enclosed."""
        capture = state.cells[move.dst] == BUFFALO
        text = f"{name(move.src)}{'x' if capture else '-'}{name(move.dst)}"
        if not move.placements:
            return text
        if len(move.placements) == 1 and len(enclosed_dogs(_moved(state.cells, *move[:2]))) == 1:
            return f"{text} dog:{name(move.placements[0][1])}"
        return " ".join([text, *(f"dog:{name(d)}>{name(t)}" for d, t in move.placements)])

    # --- moves and results ---------------------------------------------------------------------

    def legal_moves(self, state: BuffaloState, seat: int) -> list[BuffaloMove]:
        """Every move of ``seat``; in Rebel Buffalo one per choice of row-2 squares for the
        enclosed dogs."""
        if state.winner is not None or seat != state.to_move:
            return []
        if seat == WHITE:
            return [BuffaloMove(s, d) for s, d in _white_moves(state.cells)]
        moves = []
        for src, dst in _buffalo_moves(state.cells):
            if state.variant != REBEL:
                moves.append(BuffaloMove(src, dst))
                continue
            after = _moved(state.cells, src, dst)
            for placements in _all_placements(after, enclosed_dogs(after)):
                moves.append(BuffaloMove(src, dst, placements))
        return moves

    def apply(self, state: BuffaloState, move: BuffaloMove, rng: random.Random) -> BuffaloState:
        """The position after ``move`` (a new state; ``state`` is left as it was)."""
        if state.winner is not None:
            raise IllegalMoveError("the game is over")
        text = self.format_move(state, move)
        cells = _placed_cells(_moved(state.cells, move.src, move.dst), move.placements)
        return _judge(replace(state, cells=cells, ply=state.ply + 1, last_move=text))

    def outcome(self, state: BuffaloState) -> base.Outcome | None:
        """Set by the move that ended the game; None while it goes on."""
        if state.winner is None:
            return None
        assert state.termination is not None  # set with the winner
        return base.Outcome(frozenset({state.winner}), state.reason, termination=state.termination)

    # --- the diagram ---------------------------------------------------------------------------

    def render(self, state: BuffaloState, viewer: base.Viewer, players: Sequence[str] = ()) -> str:
        """Row 7 at the top, the rivers as lines of ``~``; every viewer sees the same."""
        del viewer, players  # nothing hidden; the side names say who is who
        return render_diagram(state)

    def svg(self, state: BuffaloState, viewer: base.Viewer) -> str:
        """Row 7 at the top, the rivers in blue, buffalo black, the chief red, the dogs
        white; the last move's squares highlighted."""
        del viewer  # no hidden information
        return buffalo_svg(state)

    # --- storage -------------------------------------------------------------------------------

    def dump(self, state: BuffaloState) -> dict[str, Any]:
        """Versioned JSON: the board as 7 rows of 11 characters, row 1 first."""
        rows = [state.cells[r * COLS : (r + 1) * COLS] for r in range(ROWS)]
        return {
            "version": self.STATE_VERSION,
            "board": rows,
            "variant": state.variant,
            "ply": state.ply,
            "last_move": state.last_move,
            "winner": state.winner,
            "reason": state.reason,
        }

    def load(self, data: Mapping[str, Any]) -> BuffaloState:
        """Check every field; the result must be the one the board and turn give."""
        if not isinstance(data, Mapping):
            raise StateError("buffalo: the state is not a JSON object")
        self._check_version(data)
        rows = data.get("board")
        if (
            not isinstance(rows, list)
            or len(rows) != ROWS
            or not all(isinstance(r, str) and len(r) == COLS for r in rows)
        ):
            raise StateError("buffalo: the board must be 7 rows of 11 characters")
        cells = "".join(rows)
        if set(cells) - {BUFFALO, DOG, CHIEF, EMPTY}:
            raise StateError("buffalo: the board may hold only B, D, C and .")
        if cells.count(CHIEF) != 1 or cells.count(DOG) != 4 or cells.count(BUFFALO) > 11:
            raise StateError("buffalo: there must be one chief, four dogs and at most 11 buffalo")
        if any(p in (DOG, CHIEF) and not 2 <= _col_row(i)[1] <= 6 for i, p in enumerate(cells)):
            raise StateError("buffalo: a dog or the chief stands beyond a river")
        variant, ply, last = data.get("variant"), data.get("ply"), data.get("last_move")
        if variant not in (STANDARD, REBEL) or type(ply) is not int or ply < 0:
            raise StateError("buffalo: bad variant or ply")
        if last is not None and (not isinstance(last, str) or not _LAST_RE.fullmatch(last)):
            raise StateError(f"buffalo: bad last move {last!r}")
        state = _judge(BuffaloState(cells, variant, ply, last))
        if data.get("winner") != state.winner or data.get("reason") != state.reason:
            raise StateError("buffalo: the stored result does not match the board")
        return state


def _why_not(cells: str, src: int, dst: int) -> str:
    """Why White's piece on ``src`` cannot go to ``dst``."""
    who = "the chief" if cells[src] == CHIEF else "a dog"
    (c1, r1), (c2, r2) = _col_row(src), _col_row(dst)
    dc, dr = c2 - c1, r2 - r1
    if src == dst:
        return "a piece must move to another square"
    if r2 in (1, 7):
        return f"{who} never crosses a river, so {name(dst)} is out of reach (rows 2-6 only)"
    if cells[src] == CHIEF:
        if max(abs(dc), abs(dr)) > 1:
            return "the chief steps only one square, in any direction"
        return f"{name(dst)} is taken by a dog; the chief captures only buffalo"
    if dc and dr and abs(dc) != abs(dr):
        return "a dog moves like a queen: along a row, a column or a diagonal"
    step_c, step_r = (dc > 0) - (dc < 0), (dr > 0) - (dr < 0)
    c, r = c1 + step_c, r1 + step_r
    while (c, r) != (c2, r2):
        if cells[square(c, r)] != EMPTY:
            return f"the way is blocked at {name(square(c, r))}; a dog never jumps"
        c, r = c + step_c, r + step_r
    return f"{name(dst)} is taken by {_PIECE_NAMES[cells[dst]]}, and a dog never captures"


GAME = Buffalo()
