"""Hidden Move Double Gomoku (hmdg): Gomoku on a 9x9 grid where moves are hidden.

Designed by teucer and Levitating Potato (SF0, 2008). The first player places an opening ``x``;
the second chooses to play X or O, and O moves first. A turn has two stages: the mover names a
point in secret and announces its row or its column (stage ``move``); the opponent may reveal
any of their own hidden pieces on that line (stage ``reveal``, the ``hmdg reveal`` command).
If anything is revealed, the mover's point is revealed too, and the move fails if it is one of
the revealed points; if nothing is revealed, the piece is placed in secret, even on a point
where the opponent has a hidden piece. The first to make two lines of five that share at most
one piece wins.

Points are named by row letter (``A``-``H``, ``J``; no ``I``) and column number: ``C5``. A point
is a bit of an 81-bit integer (bit ``row * 9 + column``), so each side's pieces and revealed
pieces are two integers and a move is a few bit operations.

The state keeps one record per finished turn: the public log (line announced, points revealed,
whether the move failed, fives, passes) with each mover's point, which is shown only to its
owner until the game ends. ``dump`` stores the opening, the choice of side and these turns;
``load`` checks them under the rules, move by move, in one pass over bit masks (no state per
move), so every stored state is still checked and a late position loads nearly as fast as an
early one.
"""

from __future__ import annotations

import random
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Any, Final, NamedTuple

from pbmserv.games.base import (
    OMNISCIENT,
    Game,
    GameSpec,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    MoveKind,
    Outcome,
    StateError,
    Termination,
    Turn,
    Viewer,
)

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


# --- moves -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Opening:
    """The first player's opening ``x``."""

    point: int


@dataclass(frozen=True)
class Choice:
    """The second player's choice of side (X or O)."""

    side: int


@dataclass(frozen=True)
class Announce:
    """A secret point and the line (``row`` or ``col``) announced with it."""

    point: int
    line: str


@dataclass(frozen=True)
class Reveal:
    """The opponent's answer: their hidden pieces on the announced line that they reveal."""

    points: tuple[int, ...]


HmdgMove = Opening | Choice | Announce | Reveal


# --- state -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TurnRecord:
    """One finished turn, as everyone may learn it, plus the mover's secret ``point``."""

    side: int
    point: int
    line: str
    revealed: tuple[int, ...]  # the opponent's answer; empty: the piece went down in secret
    placed: bool  # False when a revealed piece stood on the point (the move failed)
    five: bool = False  # the placement gave the mover their first five in a row
    passed: bool = False  # the opponent had no point left to play on: the mover goes again


@dataclass(frozen=True)
class HmdgState:
    """One position. Immutable: ``apply`` builds a new one.

    ``pieces`` and ``shown`` are bit masks per side (X, O): every piece of the side, and those
    that are revealed. ``mover`` is the side that announces next (stage move) or has announced
    (stage reveal, with ``pending`` its announcement). ``fives`` says whose first five has been
    announced. Public facts are stored when they happen, never recomputed from secret pieces.
    """

    opening: int | None = None
    x_seat: int | None = None
    turns: tuple[TurnRecord, ...] = ()
    mover: int = O_SIDE
    pending: Announce | None = None
    pieces: tuple[int, int] = (0, 0)
    shown: tuple[int, int] = (0, 0)
    fives: tuple[bool, bool] = (False, False)
    result: Outcome | None = None
    last_move: str | None = None

    @property
    def ply(self) -> int:
        """Moves made: the opening, the choice, then an announcement and an answer a turn."""
        made = (self.opening is not None) + (self.x_seat is not None) + 2 * len(self.turns)
        return made + (self.pending is not None)

    @property
    def stage(self) -> str:
        """opening, choose, move, reveal (the opponent's answer), or over."""
        if self.result is not None:
            return OVER
        if self.opening is None:
            return OPENING
        if self.x_seat is None:
            return CHOOSE
        return MOVE if self.pending is None else REVEAL

    @property
    def revealed(self) -> int:
        """The points where a revealed piece stands: nobody may play there any more."""
        return self.shown[X_SIDE] | self.shown[O_SIDE]

    def hidden(self, side: int) -> int:
        """The pieces of ``side`` that are not revealed."""
        return self.pieces[side] & ~self.shown[side]

    def free(self, side: int) -> int:
        """The points ``side`` may play on: not its own and not revealed."""
        return _free(self.pieces[side], self.revealed)

    def seat_of(self, side: int) -> int:
        """The seat playing ``side`` (once the second player has chosen)."""
        assert self.x_seat is not None
        return self.x_seat if side == X_SIDE else 1 - self.x_seat

    def side_of(self, seat: int) -> int | None:
        """The side of ``seat``, or None before the second player has chosen."""
        if self.x_seat is None:
            return None
        return X_SIDE if seat == self.x_seat else O_SIDE


# --- the rules -------------------------------------------------------------------------------


def _play(state: HmdgState, move: HmdgMove) -> HmdgState:
    """The state after ``move``; IllegalMoveError (plain reason) if it cannot be played."""
    stage = state.stage
    if isinstance(move, Opening) and stage == OPENING:
        return _open(state, move.point)
    if isinstance(move, Choice) and stage == CHOOSE:
        return _choose(state, move.side)
    if isinstance(move, Announce) and stage == MOVE:
        return _announce(state, move)
    if isinstance(move, Reveal) and stage == REVEAL:
        return _answer(state, move.points)
    raise IllegalMoveError(f"{type(move).__name__.lower()} is not a move of stage {stage}")


def _open(state: HmdgState, point: int) -> HmdgState:
    if not 0 <= point < SIZE * SIZE:
        raise IllegalMoveError(f"no point {point}")
    bit = 1 << point
    return replace(
        state, opening=point, pieces=(bit, 0), shown=(bit, 0), last_move=f"x on {point_name(point)}"
    )


def _choose(state: HmdgState, side: int) -> HmdgState:
    if side not in (X_SIDE, O_SIDE):
        raise IllegalMoveError(f"no side {side}")
    last = f"the second player takes {SIDES[side]}; O moves first"
    return replace(state, x_seat=1 if side == X_SIDE else 0, mover=O_SIDE, last_move=last)


def _announce(state: HmdgState, move: Announce) -> HmdgState:
    if move.line not in (ROW, COL) or not 0 <= move.point < SIZE * SIZE:
        raise IllegalMoveError(f"no announcement {move}")
    if not state.free(state.mover) >> move.point & 1:
        raise IllegalMoveError(f"{SIDES[state.mover]} may not play on {point_name(move.point)}")
    last = f"{SIDES[state.mover]} plays in {line_name(move.point, move.line)}"
    return replace(state, pending=move, last_move=last)


def _answer(state: HmdgState, points: tuple[int, ...]) -> HmdgState:
    """Resolve the pending turn with the opponent's answer ``points``."""
    assert state.pending is not None and state.x_seat is not None
    move, side, other = state.pending, state.mover, 1 - state.mover
    if not all(0 <= p < SIZE * SIZE for p in points):
        raise IllegalMoveError(f"no points {points}")
    wanted = mask_of(points)
    line = line_mask(move.point, move.line)
    if list(points) != points_of(wanted) or wanted & ~(state.hidden(other) & line):
        raise IllegalMoveError(f"{_names(points)}: not hidden pieces of {SIDES[other]} there")
    bit = 1 << move.point
    placed = not bit & wanted
    pieces, shown, fives = list(state.pieces), list(state.shown), list(state.fives)
    shown[other] |= wanted
    if placed:
        pieces[side] |= bit
        if wanted:  # anything revealed reveals the mover's point too
            shown[side] |= bit
    new_five = placed and bool(_fives_through(pieces[side], move.point))
    record = TurnRecord(side, move.point, move.line, points, placed, new_five and not fives[side])
    fives[side] = fives[side] or new_five
    win = double_five(pieces[side], move.point) if new_five else None
    mover, result, record = _next_turn(state, record, win, pieces, shown[X_SIDE] | shown[O_SIDE])
    return HmdgState(
        opening=state.opening,
        x_seat=state.x_seat,
        turns=(*state.turns, record),
        mover=mover,
        pieces=(pieces[X_SIDE], pieces[O_SIDE]),
        shown=(shown[X_SIDE], shown[O_SIDE]),
        fives=(fives[X_SIDE], fives[O_SIDE]),
        result=result,
        last_move=_answer_text(record, result),
    )


def _next_turn(
    state: HmdgState,
    record: TurnRecord,
    win: tuple[Window, Window] | None,
    pieces: Sequence[int],
    revealed: int,
) -> tuple[int, Outcome | None, TurnRecord]:
    """Who announces next, the result, and the record with its pass noted: normally the other
    side announces; the same side when the other has no point left; nobody when it is over."""
    side, other = record.side, 1 - record.side
    if win is not None:
        reason = f"{SIDES[side]} made two lines of five: {win[0]} and {win[1]}"
        return (
            side,
            Outcome(frozenset({state.seat_of(side)}), reason, termination=Termination.GOAL),
            record,
        )
    if _free(pieces[other], revealed):
        return other, None, record
    if _free(pieces[side], revealed):
        return side, None, replace(record, passed=True)
    return side, Outcome(frozenset(), NO_POINT_LEFT, termination=Termination.NO_MOVES), record


def _free(pieces: int, revealed: int) -> int:
    """The points a side with these pieces may play on: not its own and not revealed."""
    return FULL & ~pieces & ~revealed


def _answer_text(record: TurnRecord, result: Outcome | None, *, in_log: bool = False) -> str:
    """The public account of how a turn was resolved, for the last-move line or (shorter,
    after the announcement) the log."""
    mover, other = SIDES[record.side], SIDES[1 - record.side]
    point = point_name(record.point)
    if not record.revealed:
        whose = "" if in_log else f"{mover}'s piece is "
        text = f"{other} reveals nothing: {whose}placed in secret"
    elif record.placed:
        text = f"{other} reveals {_names(record.revealed)}: {mover}'s piece is placed on {point}"
    else:
        text = f"{other} reveals {_names(record.revealed)}: {mover}'s move on {point} fails"
    if result is not None and result.winners:
        text += f"; {mover} has two lines of five and wins"
    elif record.five:
        text += f"; {mover} has made a five in a row"
    if result is not None and not result.winners:
        text += "; no point is left for either player: a draw"
    if record.passed:
        text += f"; {other} has no point left, so {mover} plays again"
    return text


def _rebuild(data: Mapping[str, Any]) -> HmdgState:
    """The state the stored moves lead to, checked under the rules in one pass over bit masks
    (IllegalMoveError if a move could not have been played, StateError if data is malformed).

    It does what replaying them would, without building a state per move: each turn's
    legality and the next mover are a few bit operations; a side's first five is found from
    the windows it holds at the end, and no win before the last turn from the pieces held
    before it (pieces are never taken away, so both only grow)."""
    opening, x_side, turns, pending = _stored_moves(data)
    state = HmdgState()
    if opening is not None:
        state = _play(state, Opening(opening))
    if x_side is not None:
        state = _play(state, Choice(x_side))
    if turns and x_side is None:
        raise IllegalMoveError("turns were played before the sides were chosen")
    if not turns:
        return state if pending is None else _play(state, pending)
    pieces, shown = list(state.pieces), list(state.shown)
    # The turn that placed each side's pieces (the opening x: -1).
    placed_at = ([-1] * (SIZE * SIZE), [-1] * (SIZE * SIZE))
    records: list[TurnRecord] = []
    mover, before_last = O_SIDE, (0, 0)
    for index, (side, announce, points) in enumerate(turns):
        if side != mover:
            raise IllegalMoveError(f"turn {index + 1}: {SIDES[mover]} was to play")
        point, line, other = announce.point, announce.line, 1 - side
        bit = 1 << point
        if (pieces[side] | shown[X_SIDE] | shown[O_SIDE]) & bit:
            raise IllegalMoveError(f"{SIDES[side]} may not play on {point_name(point)}")
        wanted = mask_of(points)
        hidden = pieces[other] & ~shown[other]
        if list(points) != points_of(wanted) or wanted & ~(hidden & line_mask(point, line)):
            raise IllegalMoveError(f"{_names(points)}: not hidden pieces of {SIDES[other]} there")
        before_last = (pieces[X_SIDE], pieces[O_SIDE])
        placed = not bit & wanted
        shown[other] |= wanted
        if placed:
            pieces[side] |= bit
            placed_at[side][point] = index
            if wanted:  # anything revealed reveals the mover's point too
                shown[side] |= bit
        revealed = shown[X_SIDE] | shown[O_SIDE]
        record = TurnRecord(side, point, line, points, placed)
        if _free(pieces[other], revealed):
            mover = other
        elif _free(pieces[side], revealed):
            record = replace(record, passed=True)
        elif index != len(turns) - 1:
            raise IllegalMoveError(f"turn {index + 2}: no point was left for either player")
        records.append(record)
    made = [False, False]
    for side in (X_SIDE, O_SIDE):
        held = fives(pieces[side])
        # Two fives at least for a win; the pieces before the last turn are fewer still.
        if len(held) > 1 and double_five(before_last[side]):
            raise IllegalMoveError("a side had two lines of five before the last turn")
        if held:  # the side's first five came with the turn that completed one first
            made[side] = True
            first = min(max(placed_at[side][p] for p in points_of(w.mask)) for w in held)
            records[first] = replace(records[first], five=True)
    last = records[-1]
    win = double_five(pieces[last.side], last.point) if last.placed else None
    if win is not None and last.passed:
        records[-1] = last = replace(last, passed=False)
    # The last turn's result, as _next_turn gives it; a win ends the game before any pass.
    result = None
    if win is not None:
        reason = f"{SIDES[last.side]} made two lines of five: {win[0]} and {win[1]}"
        result = Outcome(
            frozenset({state.seat_of(last.side)}), reason, termination=Termination.GOAL
        )
        mover = last.side
    elif not last.passed and mover == last.side:
        result = Outcome(frozenset(), NO_POINT_LEFT, termination=Termination.NO_MOVES)
    built = HmdgState(
        opening=state.opening,
        x_seat=state.x_seat,
        turns=tuple(records),
        mover=mover,
        pieces=(pieces[X_SIDE], pieces[O_SIDE]),
        shown=(shown[X_SIDE], shown[O_SIDE]),
        fives=(made[X_SIDE], made[O_SIDE]),
        result=result,
        last_move=_answer_text(last, result),
    )
    return built if pending is None else _play(built, pending)


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


class HiddenMoveDoubleGomoku(Game):
    """Hidden Move Double Gomoku for two; seat 0 opens, seat 1 chooses X or O."""

    SPEC = GameSpec(
        name="hmdg",
        title="Hidden Move Double Gomoku",
        seat_names=(FIRST_PLAYER, SECOND_PLAYER),
        aliases=("hiddengomoku",),
        hidden_information=True,
        move_kinds=(
            MoveKind(
                "reveal",
                "[POINT ...]",
                "answer an announcement: reveal your hidden pieces on that line, or none",
            ),
        ),
    )

    # --- setting up -----------------------------------------------------------------------

    def new_game(self, options: Mapping[str, Any], rng: random.Random) -> HmdgState:
        """An empty board; the first player places the opening x (no randomness)."""
        return HmdgState()

    # --- whose turn -----------------------------------------------------------------------

    def to_move(self, state: HmdgState) -> Turn:
        """The seat to act, the stage and its prompt."""
        stage = state.stage
        if stage == OVER:
            return Turn(frozenset())
        if stage == OPENING:
            prompt = "place the opening x on any point, e.g. E5; your opponent then chooses a side"
            return Turn(frozenset({0}), OPENING, {0: prompt})
        if stage == CHOOSE:
            assert state.opening is not None
            where = point_name(state.opening)
            prompt = (
                f"choose your side: x (you own the x on {where}, O moves first) "
                "or o (you move first)"
            )
            return Turn(frozenset({1}), CHOOSE, {1: prompt})
        if stage == MOVE:
            seat = state.seat_of(state.mover)
            return Turn(frozenset({seat}), MOVE, {seat: f"as {SIDES[state.mover]}, {HOW_TO_MOVE}"})
        seat = state.seat_of(1 - state.mover)
        return Turn(frozenset({seat}), REVEAL, {seat: self._reveal_prompt(state)})

    @staticmethod
    def _reveal_prompt(state: HmdgState) -> str:
        assert state.pending is not None
        move, side = state.pending, 1 - state.mover
        where = line_name(move.point, move.line)
        mine = points_of(state.hidden(side) & line_mask(move.point, move.line))
        head = f"{SIDES[state.mover]} plays in {where}; "
        if not mine:
            return head + "you have no hidden piece there, so reveal none"
        return head + f"reveal any of your hidden pieces there ({_names(mine)}), or none"

    # --- moves ----------------------------------------------------------------------------

    def parse_move(self, state: HmdgState, seat: int, text: str) -> HmdgMove:
        """Read the move of ``seat`` for the present stage; errors quote ``text``."""
        shown = _quote(text)
        if state.result is not None:
            raise IllegalMoveError(f"{shown}: the game is over ({state.result.reason})")
        if seat not in self.to_move(state).seats:
            raise IllegalMoveError(f"{shown}: it is not your turn; {self._waiting(state)}")
        words = _normal(text)
        stage = state.stage
        if words is None:
            raise InvalidMoveError(f"{shown} is not a move here: {self._syntax(stage)}")
        if stage == OPENING:
            return self._parse_opening(words, shown)
        if stage == CHOOSE:
            return self._parse_choice(words, shown)
        if stage == MOVE:
            return self._parse_announce(state, words, shown)
        return self._parse_reveal(state, words, shown)

    @staticmethod
    def _syntax(stage: str) -> str:
        return {
            OPENING: "name the point for the opening x, like E5",
            CHOOSE: "choose your side, x or o",
            MOVE: HOW_TO_MOVE,
            REVEAL: HOW_TO_REVEAL,
        }[stage]

    @staticmethod
    def _waiting(state: HmdgState) -> str:
        stage = state.stage
        if stage == OPENING:
            return "the first player places the opening x"
        if stage == CHOOSE:
            return "the second player is choosing a side"
        if stage == MOVE:
            return f"{SIDES[state.mover]} is to play"
        return f"{SIDES[1 - state.mover]} is to answer {SIDES[state.mover]}'s announcement"

    def _parse_opening(self, words: str, shown: str) -> Opening:
        match = _OPENING_RE.fullmatch(words)
        if match is None:
            raise InvalidMoveError(f"{shown} is not a move here: {self._syntax(OPENING)}")
        letter, digits = match.groups()
        return Opening(_point(letter, digits, shown))

    def _parse_choice(self, words: str, shown: str) -> Choice:
        match = _CHOICE_RE.fullmatch(words)
        if match is None:
            raise InvalidMoveError(f"{shown} is not a move here: {self._syntax(CHOOSE)}")
        return Choice(X_SIDE if match.group(1) == "x" else O_SIDE)

    def _parse_announce(self, state: HmdgState, words: str, shown: str) -> Announce:
        after = _ANNOUNCE_AFTER.fullmatch(words)
        before = _ANNOUNCE_BEFORE.fullmatch(words)
        if after is not None:
            letter, digits, word, value = after.groups()
        elif before is not None:
            word, letter, digits = before.groups()
            value = None
        else:
            raise self._not_an_announcement(words, shown)
        point = _point(letter, digits, shown)
        line = ROW if word.startswith("row") else COL
        if value is not None and not _line_value_matches(point, line, value):
            wrong = f"row {value.upper()}" if line == ROW else f"column {value}"
            raise InvalidMoveError(
                f"{shown}: {point_name(point)} is in {line_name(point, line)}, not in {wrong}"
            )
        name, side = point_name(point), state.mover
        if state.pieces[side] >> point & 1:
            raise IllegalMoveError(f"{shown}: you already have a piece on {name}")
        if state.revealed >> point & 1:
            holder = SIDES[X_SIDE if state.shown[X_SIDE] >> point & 1 else O_SIDE]
            raise IllegalMoveError(
                f"{shown}: {name} is revealed (an {holder} stands there), and no piece may be "
                "played on a revealed point"
            )
        return Announce(point, line)

    @staticmethod
    def _not_an_announcement(words: str, shown: str) -> MoveError:
        point = _POINT_RE.fullmatch(words)
        if point is not None:
            name = f"{point.group(1).upper()}{point.group(2)}"
            return InvalidMoveError(
                f"{shown} does not say which line to announce: add row or col, like "
                f"{name} row or {name} col"
            )
        if words.split(" ")[0] == REVEAL or words in _NONE_WORDS:
            return IllegalMoveError(
                f"{shown}: it is your turn to play, not to reveal; {HOW_TO_MOVE}"
            )
        return InvalidMoveError(f"{shown} is not a move here: {HOW_TO_MOVE}")

    def _parse_reveal(self, state: HmdgState, words: str, shown: str) -> Reveal:
        assert state.pending is not None
        first, _, rest = words.partition(" ")
        if words in _NONE_WORDS:
            return Reveal(())
        if first != REVEAL:
            if _ANNOUNCE_AFTER.fullmatch(words) or _ANNOUNCE_BEFORE.fullmatch(words):
                where = line_name(state.pending.point, state.pending.line)
                raise IllegalMoveError(
                    f"{shown}: first answer {SIDES[state.mover]}'s move in {where}; {HOW_TO_REVEAL}"
                )
            raise InvalidMoveError(f"{shown} is not a move here: {HOW_TO_REVEAL}")
        if rest in _NONE_WORDS or not rest:
            return Reveal(())
        if not _POINT_LIST.fullmatch(rest):
            raise InvalidMoveError(f"{shown} is not a reveal: {HOW_TO_REVEAL}")
        points = {_point(letter, digits, shown) for letter, digits in _POINT_RE.findall(rest)}
        for point in sorted(points):
            self._check_revealable(state, point, shown)
        return Reveal(tuple(sorted(points)))

    @staticmethod
    def _check_revealable(state: HmdgState, point: int, shown: str) -> None:
        """Only the answering side's own hidden pieces on the announced line; the messages
        speak of the answering side's pieces alone, never of the mover's secret point."""
        assert state.pending is not None
        side, name = 1 - state.mover, point_name(point)
        where = line_name(state.pending.point, state.pending.line)
        if not line_mask(state.pending.point, state.pending.line) >> point & 1:
            raise IllegalMoveError(
                f"{shown}: {name} is not in {where}; you may reveal only your hidden pieces there"
            )
        if not state.pieces[side] >> point & 1:
            raise IllegalMoveError(f"{shown}: you have no piece on {name}")
        if state.shown[side] >> point & 1:
            raise IllegalMoveError(f"{shown}: your piece on {name} is revealed already")

    def format_move(self, state: HmdgState, move: HmdgMove) -> str:
        """``E5``, ``x``/``o``, ``C5 row``/``C5 col``, ``reveal C3 C7``/``reveal none``."""
        if isinstance(move, Opening):
            return point_name(move.point)
        if isinstance(move, Choice):
            return SIDES[move.side].lower()
        if isinstance(move, Announce):
            return f"{point_name(move.point)} {move.line}"
        names = " ".join(point_name(p) for p in move.points)
        return f"{REVEAL} {names or 'none'}"

    def public_move_text(self, state: HmdgState, move: HmdgMove) -> str:
        """An announcement shows only its line ("a point in row C"); the rest is public."""
        if isinstance(move, Announce):
            return f"a point in {line_name(move.point, move.line)}"
        return self.format_move(state, move)

    def legal_moves(self, state: HmdgState, seat: int) -> list[HmdgMove]:
        """Every point for the opening; x and o; each free point with either line; every set
        of the answering side's hidden pieces on the announced line."""
        if seat not in self.to_move(state).seats:
            return []
        stage = state.stage
        if stage == OPENING:
            return [Opening(p) for p in range(SIZE * SIZE)]
        if stage == CHOOSE:
            return [Choice(X_SIDE), Choice(O_SIDE)]
        if stage == MOVE:
            free = points_of(state.free(state.mover))
            return [Announce(p, line) for p in free for line in (ROW, COL)]
        assert state.pending is not None
        mine = points_of(
            state.hidden(1 - state.mover) & line_mask(state.pending.point, state.pending.line)
        )
        return [Reveal(chosen) for k in range(len(mine) + 1) for chosen in combinations(mine, k)]

    def apply(self, state: HmdgState, move: HmdgMove, rng: random.Random) -> HmdgState:
        """The position after ``move``; ``state`` is left as it was."""
        return _play(state, move)

    def outcome(self, state: HmdgState) -> Outcome | None:
        """Set by the turn that made two fives, or that left nobody a point to play on."""
        return state.result

    # --- views ----------------------------------------------------------------------------

    def seat_name(self, state: HmdgState, seat: int) -> str:
        """X or O once chosen; before that, first player and second player."""
        side = state.side_of(seat)
        return self.SPEC.seat_names[seat] if side is None else SIDES[side]

    def render(self, state: HmdgState, viewer: Viewer) -> str:
        """The grid, a key, the piece counts and the log of announcements, as ``viewer`` may
        see them: a seat its own pieces and the revealed ones, the public only the revealed;
        the administrator, and everyone once the game is over, every piece."""
        sees = self._sees(state, viewer)
        lines = self._grid(state, sees)
        lines += ["", *self._key(state, viewer, sees), *self._counts(state), ""]
        lines += self._log(state, sees, viewer)
        return "\n".join(lines)

    @staticmethod
    def _sees(state: HmdgState, viewer: Viewer) -> tuple[bool, bool]:
        """Whether ``viewer`` sees the hidden pieces (and pending point) of X and of O."""
        if state.result is not None or viewer == OMNISCIENT:
            return (True, True)
        side = state.side_of(viewer) if isinstance(viewer, int) else None
        return (side == X_SIDE, side == O_SIDE)

    @staticmethod
    def _grid(state: HmdgState, sees: tuple[bool, bool]) -> list[str]:
        visible = [state.shown[s] | (state.pieces[s] if sees[s] else 0) for s in (X_SIDE, O_SIDE)]
        numbers = " ".join(str(c + 1) for c in range(SIZE))
        lines = [f"     {numbers}"]
        for row, letter in enumerate(ROWS):
            cells = []
            for point in range(row * SIZE, (row + 1) * SIZE):
                has = [visible[s] >> point & 1 for s in (X_SIDE, O_SIDE)]
                if has[X_SIDE] and has[O_SIDE]:
                    cells.append("*")
                elif has[X_SIDE] or has[O_SIDE]:
                    side = X_SIDE if has[X_SIDE] else O_SIDE
                    revealed = state.shown[side] >> point & 1
                    cells.append(SIDES[side] if revealed else SIDES[side].lower())
                else:
                    cells.append(".")
            lines.append(f"  {letter}  {' '.join(cells)}  {letter}")
        lines.append(f"     {numbers}")
        return lines

    @staticmethod
    def _key(state: HmdgState, viewer: Viewer, sees: tuple[bool, bool]) -> list[str]:
        both = "*: an x and an o on the same point."
        if state.result is not None:
            return [
                "The game is over and every piece is shown. X, O: revealed during the game;",
                f"x, o: hidden until the end; {both}",
            ]
        if viewer == OMNISCIENT:
            return [f"Every piece is shown. X, O: revealed pieces; x, o: hidden pieces; {both}"]
        if state.opening is None:
            return ["The first player places the opening x; the second then chooses X or O."]
        if state.x_seat is None:
            return ["The second player chooses a side next: X owns the opening x, O moves first."]
        if sees[X_SIDE] or sees[O_SIDE]:
            side = X_SIDE if sees[X_SIDE] else O_SIDE
            return [
                f"You are {SIDES[side]}. X, O: revealed pieces, seen by everyone;",
                f"{SIDES[side].lower()}: your hidden pieces; {both}",
            ]
        return ["X, O: revealed pieces. The players' hidden pieces are not shown."]

    @staticmethod
    def _counts(state: HmdgState) -> list[str]:
        if state.opening is None:
            return []
        counts = ", ".join(
            f"{SIDES[s]} {state.pieces[s].bit_count()} ({state.shown[s].bit_count()} revealed)"
            for s in (X_SIDE, O_SIDE)
        )
        lines = [f"Pieces: {counts}."]
        made = [SIDES[s] for s in (X_SIDE, O_SIDE) if state.fives[s]]
        if state.result is not None or not made:
            return lines  # once it is over, the result says more than "a five"
        who = made[0] if len(made) == 1 else "X and O"
        return [*lines, f"{who} {'has' if len(made) == 1 else 'have each'} made a five in a row."]

    def _log(self, state: HmdgState, sees: tuple[bool, bool], viewer: Viewer) -> list[str]:
        if state.opening is None:
            return ["Nothing has been played yet."]
        head = f"The opening x is on {point_name(state.opening)}"
        if state.x_seat is not None:
            chosen = X_SIDE if state.x_seat == 1 else O_SIDE
            head += f"; the second player took {SIDES[chosen]}, and O moves first"
        lines = ["Announcements:", f"  {head}."]
        for number, record in enumerate(state.turns, start=1):
            own = (
                f" ({point_name(record.point)})"
                if sees[record.side] and not record.revealed
                else ""
            )
            where = line_name(record.point, record.line)
            answer = _answer_text(record, self._end(state, record), in_log=True)
            text = f"{SIDES[record.side]} plays in {where}{own}; {answer}."
            lines.append(self._wrap(number, text))
        if state.pending is not None:
            lines.append(self._wrap(len(state.turns) + 1, self._pending_text(state, sees, viewer)))
        return lines

    @staticmethod
    def _end(state: HmdgState, record: TurnRecord) -> Outcome | None:
        return state.result if record is state.turns[-1] else None

    @staticmethod
    def _pending_text(state: HmdgState, sees: tuple[bool, bool], viewer: Viewer) -> str:
        assert state.pending is not None
        move, side = state.pending, state.mover
        own = f" ({point_name(move.point)})" if sees[side] else ""
        answering = 1 - side
        if isinstance(viewer, int) and state.side_of(viewer) == answering:
            waiting = "your answer is awaited"
        else:
            waiting = f"waiting for {SIDES[answering]}'s answer"
        return f"{SIDES[side]} plays in {line_name(move.point, move.line)}{own}; {waiting}."

    @staticmethod
    def _wrap(number: int, text: str) -> str:
        line = f"  {number:>3}. {text}"
        if len(line) <= _WIDTH:
            return line  # most are: textwrap would cost more than the rest of render
        return textwrap.fill(line, width=_WIDTH, subsequent_indent=" " * 7)

    # --- hidden information ----------------------------------------------------------------

    def vary_hidden(self, state: HmdgState, viewer: Viewer, rng: random.Random) -> HmdgState:
        """The same game with other hidden pieces (and pending point) for the sides ``viewer``
        may not see, and the same public facts; the state itself if no such change is found."""
        if state.result is not None or state.x_seat is None:
            return state
        seat = viewer if isinstance(viewer, int) else None
        secret = [s for s in (X_SIDE, O_SIDE) if seat is None or state.side_of(seat) != s]
        for _ in range(12):
            varied = _vary_once(state, rng.choice(secret), rng)
            if varied is not None:
                return varied
        return state

    # --- storage --------------------------------------------------------------------------

    def dump(self, state: HmdgState) -> dict[str, Any]:
        """Versioned JSON: the moves that made the position, then what they give (pieces,
        revealed pieces, ply, last move, result), which ``load`` checks against the moves."""
        result = None
        if state.result is not None:
            result = {"winners": sorted(state.result.winners), "reason": state.result.reason}
        pending = state.pending
        return {
            "version": self.STATE_VERSION,
            "opening": None if state.opening is None else _NAMES[state.opening],
            "x_seat": state.x_seat,
            "turns": [
                {
                    "side": SIDES[t.side],
                    "point": _NAMES[t.point],
                    "line": t.line,
                    "revealed": [_NAMES[p] for p in t.revealed],
                }
                for t in state.turns
            ],
            "pending": None
            if pending is None
            else {"point": _NAMES[pending.point], "line": pending.line},
            "ply": state.ply,
            "pieces": _side_names(state.pieces),
            "revealed": _side_names(state.shown),
            "last_move": state.last_move,
            "result": result,
        }

    def load(self, data: Mapping[str, Any]) -> HmdgState:
        """Rebuild the position from the stored moves under the rules, then check that the
        rest of the data is what they give.

        Every stored state is still checked move by move (a hidden-information game: nobody
        sees the whole state, so nobody would notice it is wrong), but in one pass over bit
        masks rather than a replay through ``apply``, which cost 2 ms late in a game (issue 16).
        """
        if not isinstance(data, Mapping):
            raise StateError("hmdg: the state is not a JSON object")
        self._check_version(data)
        if set(data) != _STORED_KEYS:
            raise StateError(f"hmdg: the stored keys are not {sorted(_STORED_KEYS)}")
        try:
            state = _rebuild(data)
        except IllegalMoveError as exc:
            raise StateError(f"hmdg: the stored moves are not legal: {exc}") from None
        # The moves parsed back exactly (canonical names, sorted reveals, no other keys), so
        # only what they give needs comparing.
        result = None
        if state.result is not None:
            result = {"winners": sorted(state.result.winners), "reason": state.result.reason}
        expected = {
            "ply": state.ply,
            "pieces": _side_names(state.pieces),
            "revealed": _side_names(state.shown),
            "last_move": state.last_move,
            "result": result,
        }
        for key, value in expected.items():
            if data[key] != value:
                raise StateError(
                    f"hmdg: stored {key!r} does not match the moves: {data.get(key)!r}"
                )
        return state


_STORED_KEYS: Final = frozenset(
    {"version", "opening", "x_seat", "turns", "pending", "ply", "pieces", "revealed"}
    | {"last_move", "result"}
)


def _side_names(masks: tuple[int, int]) -> dict[str, list[str]]:
    """The points of each side's mask, by name (as dump writes them)."""
    return {SIDES[s]: [_NAMES[p] for p in points_of(masks[s])] for s in (X_SIDE, O_SIDE)}


# --- helpers of vary_hidden and load ----------------------------------------------------------


def _vary_once(state: HmdgState, side: int, rng: random.Random) -> HmdgState | None:
    """Move the pending point of ``side``, or one of its hidden pieces, elsewhere on the same
    (public) line; None if no such change keeps the public facts."""
    pending = state.pending if state.mover == side else None
    movable = [
        i
        for i, t in enumerate(state.turns)
        if t.side == side and not t.revealed and state.hidden(side) >> t.point & 1
    ]
    if pending is not None and (not movable or rng.random() < 0.5):
        places = state.free(side) & line_mask(pending.point, pending.line) & ~(1 << pending.point)
        if not places:
            return None
        return replace(state, pending=Announce(rng.choice(points_of(places)), pending.line))
    if not movable:
        return None
    index = rng.choice(movable)
    record = state.turns[index]
    taken = state.revealed | state.pieces[side] | (1 << pending.point if pending else 0)
    choices = points_of(line_mask(record.point, record.line) & ~taken)
    if not choices:
        return None
    return _move_hidden_piece(state, index, rng.choice(choices))


def _move_hidden_piece(state: HmdgState, index: int, point: int) -> HmdgState | None:
    """``state`` with the secret placement of turn ``index`` on ``point`` (a point that is
    neither revealed nor its side's), or None if that changes when the side made its first five
    or gives it a win.

    Nothing else can change: every later move stays legal, and the side's free points only
    trade ``point`` for the old one, so the passes stay as they were.
    """
    turns = list(state.turns)
    side, old = turns[index].side, turns[index].point
    turns[index] = replace(turns[index], point=point)
    placing = [t for t in turns[index:] if t.side == side and t.placed]
    mask = state.pieces[side] & ~(1 << old) & ~mask_of(t.point for t in placing)
    had_five = any(t.five for t in turns[:index] if t.side == side)
    for turn in placing:
        mask |= 1 << turn.point
        new_five = bool(_fives_through(mask, turn.point))
        if turn.five != (new_five and not had_five) or (new_five and double_five(mask, turn.point)):
            return None
        had_five = had_five or new_five
    pieces = list(state.pieces)
    pieces[side] = mask
    return replace(state, turns=tuple(turns), pieces=(pieces[X_SIDE], pieces[O_SIDE]))


def _stored_moves(
    data: Mapping[str, Any],
) -> tuple[int | None, int | None, list[tuple[int, Announce, tuple[int, ...]]], Announce | None]:
    """The opening, the second player's side, the turns and the pending announcement stored in
    ``data`` (StateError if they are not well formed)."""
    opening = data.get("opening")
    opening = None if opening is None else _stored_point(opening)
    x_seat = data.get("x_seat")
    if x_seat is not None and (type(x_seat) is not int or x_seat not in (0, 1)):
        raise StateError(f"hmdg: bad x_seat {x_seat!r}")
    turns = data.get("turns")
    if not isinstance(turns, list):
        raise StateError("hmdg: 'turns' must be a list")
    moves = [_stored_turn(turn) for turn in turns]
    pending = data.get("pending")
    announce = None if pending is None else _stored_announce(pending)
    x_side = None if x_seat is None else (X_SIDE if x_seat == 1 else O_SIDE)
    return opening, x_side, moves, announce


_POINT_BY_NAME: Final = {point_name(p): p for p in range(SIZE * SIZE)}


def _stored_point(value: object) -> int:
    if not isinstance(value, str) or value not in _POINT_BY_NAME:
        raise StateError(f"hmdg: bad point {value!r}")
    return _POINT_BY_NAME[value]


def _stored_announce(data: object) -> Announce:
    if not isinstance(data, Mapping) or set(data) != {"point", "line"}:
        raise StateError(f"hmdg: bad announcement {data!r}")
    if data["line"] not in (ROW, COL):
        raise StateError(f"hmdg: bad line {data['line']!r}")
    return Announce(_stored_point(data["point"]), data["line"])


_TURN_KEYS: Final = frozenset({"side", "point", "line", "revealed"})
_SIDE_BY_NAME: Final = {name: side for side, name in enumerate(SIDES)}


def _stored_turn(data: object) -> tuple[int, Announce, tuple[int, ...]]:
    # Called for every turn of every load: plain dict look-ups, no set built per turn.
    if not isinstance(data, Mapping) or data.keys() != _TURN_KEYS:
        raise StateError(f"hmdg: bad turn {data!r}")
    side, point, line, revealed = data["side"], data["point"], data["line"], data["revealed"]
    if not isinstance(revealed, list):
        raise StateError(f"hmdg: bad revealed points {revealed!r}")
    if not isinstance(side, str) or side not in _SIDE_BY_NAME:
        raise StateError(f"hmdg: bad side {side!r}")
    if line not in (ROW, COL):
        raise StateError(f"hmdg: bad line {line!r}")
    return (
        _SIDE_BY_NAME[side],
        Announce(_stored_point(point), line),
        tuple(_stored_point(p) for p in revealed),
    )


GAME = HiddenMoveDoubleGomoku()
