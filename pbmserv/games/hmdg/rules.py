"""HMDG's rules: playing an opening, a choice of side, an announcement and its answer, and what
the turn's log says."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from pbmserv.games.base import (
    IllegalMoveError,
    Outcome,
    Termination,
)
from pbmserv.games.hmdg.geometry import (
    CHOOSE,
    COL,
    MOVE,
    NO_POINT_LEFT,
    O_SIDE,
    OPENING,
    REVEAL,
    ROW,
    SIDES,
    SIZE,
    X_SIDE,
    Window,
    _fives_through,
    _free,
    _names,
    double_five,
    line_mask,
    line_name,
    mask_of,
    point_name,
    points_of,
)
from pbmserv.games.hmdg.state import (
    Announce,
    Choice,
    HmdgMove,
    HmdgState,
    Opening,
    Reveal,
    TurnRecord,
)

# --- the rules -------------------------------------------------------------------------------


def _play(state: HmdgState, move: HmdgMove, *, answer_at_once: bool = True) -> HmdgState:
    """The state after ``move``; IllegalMoveError (plain reason) if it cannot be played.
    ``answer_at_once``: an announcement whose line publicly holds no hidden piece of the
    opponent's is answered "none" at once (False: a stored announcement that still waits)."""
    stage = state.stage
    if isinstance(move, Opening) and stage == OPENING:
        return _open(state, move.point)
    if isinstance(move, Choice) and stage == CHOOSE:
        return _choose(state, move.side)
    if isinstance(move, Announce) and stage == MOVE:
        return _announce(state, move, answer_at_once)
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


def _announce(state: HmdgState, move: Announce, answer_at_once: bool) -> HmdgState:
    if move.line not in (ROW, COL) or not 0 <= move.point < SIZE * SIZE:
        raise IllegalMoveError(f"no announcement {move}")
    if not state.free(state.mover) >> move.point & 1:
        raise IllegalMoveError(f"{SIDES[state.mover]} may not play on {point_name(move.point)}")
    last = f"{SIDES[state.mover]} plays in {line_name(move.point, move.line)}"
    announced = replace(state, pending=move, last_move=last)
    if answer_at_once and not may_hide_in(state, 1 - state.mover, move):
        return _answer(announced, (), asked=False)  # "none" is the only answer: no need to ask
    return announced


def may_hide_in(state: HmdgState, side: int, move: Announce) -> bool:
    """Whether, as far as anyone but ``side`` can tell, ``side`` may have a hidden piece in
    the line ``move`` announces. Every hidden piece went down in secret in the line its turn
    announced, which is public; so the line is known to hold none when it crosses none of
    those lines. Only then is "none" answered for the player: answering it whenever the line
    holds no hidden piece would tell the mover what the rules keep secret (a player may answer
    "none" with pieces there)."""
    secret_lines = 0
    for turn in state.turns:
        if turn.side == side and turn.placed and not turn.revealed:
            secret_lines |= line_mask(turn.point, turn.line)
    line = line_mask(move.point, move.line)
    known_empty = not secret_lines & line or not state.hidden(side)
    # In a real game the public view is never wrong; the check keeps it so for any state.
    return not known_empty or bool(state.hidden(side) & line)


def _answer(state: HmdgState, points: tuple[int, ...], *, asked: bool = True) -> HmdgState:
    """Resolve the pending turn with the opponent's answer ``points`` (``asked``: False when
    the server answered "none" at once)."""
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
    record = TurnRecord(
        side, move.point, move.line, points, placed, new_five and not fives[side], asked=asked
    )
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


def _answer_text(record: TurnRecord, result: Outcome | None, *, in_log: bool = False) -> str:
    """The public account of how a turn was resolved, for the last-move line or (shorter,
    after the announcement) the log."""
    mover, other = SIDES[record.side], SIDES[1 - record.side]
    point = point_name(record.point)
    if not record.revealed:
        whose = "" if in_log else f"{mover}'s piece is "
        how = "" if record.asked else " (answered at once)"
        text = f"{other} reveals nothing{how}: {whose}placed in secret"
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
