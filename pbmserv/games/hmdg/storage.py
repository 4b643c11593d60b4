"""HMDG's stored form: the moves that made the position, read back field by field and checked
under the rules in one pass over bit masks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from pbmserv.games.base import (
    IllegalMoveError,
    Outcome,
    StateError,
    Termination,
)
from pbmserv.games.hmdg.geometry import (
    _NAMES,
    COL,
    NO_POINT_LEFT,
    O_SIDE,
    ROW,
    SIDES,
    SIZE,
    X_SIDE,
    _free,
    _names,
    double_five,
    fives,
    line_mask,
    mask_of,
    point_name,
    points_of,
)
from pbmserv.games.hmdg.rules import (
    _answer_text,
    _play,
)
from pbmserv.games.hmdg.state import (
    Announce,
    Choice,
    HmdgState,
    Opening,
    TurnRecord,
)


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
        return state if pending is None else _play(state, pending, answer_at_once=False)
    pieces, shown = list(state.pieces), list(state.shown)
    # The turn that placed each side's pieces (the opening x: -1).
    placed_at = ([-1] * (SIZE * SIZE), [-1] * (SIZE * SIZE))
    records: list[TurnRecord] = []
    mover, before_last = O_SIDE, (0, 0)
    secret_lines = [0, 0]  # each side's lines where a piece of it went down in secret
    for index, (side, announce, points, asked) in enumerate(turns):
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
        if not asked and (points or (secret_lines[other] & line_mask(point, line) and hidden)):
            raise IllegalMoveError(f"turn {index + 1}: answered at once, though it was not known")
        before_last = (pieces[X_SIDE], pieces[O_SIDE])
        placed = not bit & wanted
        if placed and not wanted:
            secret_lines[side] |= line_mask(point, line)
        shown[other] |= wanted
        if placed:
            pieces[side] |= bit
            placed_at[side][point] = index
            if wanted:  # anything revealed reveals the mover's point too
                shown[side] |= bit
        revealed = shown[X_SIDE] | shown[O_SIDE]
        record = TurnRecord(side, point, line, points, placed, asked=asked)
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
    # A stored announcement waits for its answer, even one stored before "none" was answered
    # at once: its player has been asked.
    return built if pending is None else _play(built, pending, answer_at_once=False)


_STORED_KEYS: Final = frozenset(
    {"version", "opening", "x_seat", "turns", "pending", "ply", "pieces", "revealed"}
    | {"last_move", "result"}
)


def _side_names(masks: tuple[int, int]) -> dict[str, list[str]]:
    """The points of each side's mask, by name (as dump writes them)."""
    return {SIDES[s]: [_NAMES[p] for p in points_of(masks[s])] for s in (X_SIDE, O_SIDE)}


def _stored_moves(
    data: Mapping[str, Any],
) -> tuple[
    int | None, int | None, list[tuple[int, Announce, tuple[int, ...], bool]], Announce | None
]:
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
_TURN_KEYS_AT_ONCE: Final = _TURN_KEYS | {"asked"}
_SIDE_BY_NAME: Final = {name: side for side, name in enumerate(SIDES)}


def _stored_turn(data: object) -> tuple[int, Announce, tuple[int, ...], bool]:
    # Called for every turn of every load: plain dict look-ups, no set built per turn.
    if not isinstance(data, Mapping):
        raise StateError(f"hmdg: bad turn {data!r}")
    keys = data.keys()
    if keys != _TURN_KEYS and (keys != _TURN_KEYS_AT_ONCE or data["asked"] is not False):
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
        "asked" not in keys,
    )
