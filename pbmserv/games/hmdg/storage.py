"""HMDG's stored form: the moves that made the position, then what they give (pieces, revealed
pieces, ply, last move, result).

Loading costs the same early and late in a game (issue 16). ``load`` reads the fields that say
what the position is and the last turn, and checks them against each other; the earlier turns
are read when first needed (the log, ``apply``, ``dump``: :class:`StoredTurns`), in one pass
over bit masks that also gives each turn's five and pass flags."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import partial
from typing import Any, Final

from pbmserv.games.base import (
    IllegalMoveError,
    StateError,
)
from pbmserv.games.hmdg.geometry import (
    _NAMES,
    COL,
    O_SIDE,
    ROW,
    SIDES,
    SIZE,
    X_SIDE,
    _double_five_among,
    _five_masks,
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
    _next_turn,
    _play,
)
from pbmserv.games.hmdg.state import (
    Announce,
    Choice,
    HmdgState,
    Opening,
    StoredTurns,
    TurnRecord,
)

_STORED_KEYS: Final = frozenset(
    {"version", "opening", "x_seat", "turns", "pending", "ply", "pieces", "revealed"}
    | {"last_move", "result"}
)


def _read_state(data: Mapping[str, Any]) -> HmdgState:
    """The state ``data`` stores (StateError if it is malformed or its fields disagree,
    IllegalMoveError if its last move could not have been played)."""
    opening = data["opening"]
    opening = None if opening is None else _stored_point(opening)
    x_seat = data["x_seat"]
    if x_seat is not None and (type(x_seat) is not int or x_seat not in (0, 1)):
        raise StateError(f"hmdg: bad x_seat {x_seat!r}")
    turns = data["turns"]
    if not isinstance(turns, list):
        raise StateError("hmdg: 'turns' must be a list")
    pending = None if data["pending"] is None else _stored_announce(data["pending"])

    state = HmdgState()
    if opening is not None:
        state = _play(state, Opening(opening))
    if x_seat is not None:
        state = _play(state, Choice(X_SIDE if x_seat == 1 else O_SIDE))
    if turns and x_seat is None:
        raise IllegalMoveError("turns were played before the sides were chosen")
    if turns:
        state = _after_turns(state, turns, data)
    elif data["pieces"] != _side_names(state.pieces) or data["revealed"] != _side_names(
        state.shown
    ):
        raise StateError("hmdg: the stored pieces are not those of the opening")
    if pending is not None:
        # A stored announcement waits for its answer, even one stored before "none" was
        # answered at once: its player has been asked.
        state = _play(state, pending, answer_at_once=False)

    result = None
    if state.result is not None:
        result = {"winners": sorted(state.result.winners), "reason": state.result.reason}
    for key, value in (("ply", state.ply), ("last_move", state.last_move), ("result", result)):
        if data[key] != value:
            raise StateError(f"hmdg: stored {key!r} does not match the moves: {data[key]!r}")
    return state


def _after_turns(state: HmdgState, turns: list[Any], data: Mapping[str, Any]) -> HmdgState:
    """The position after the stored ``turns`` (``state``: the sides chosen), from the stored
    pieces and the last turn: whose turn it is, the fives, the result and the last move's text
    are a few bit operations on them. The last turn is checked against the pieces, and the
    position before it (what the last turn changed, taken back) against the rules.

    The earlier turns are left unread (StoredTurns): checking them against the rules, and the
    pieces against them, is a pass over every turn. Only ``dump`` of a state that ``apply``
    made writes a state, and ``apply`` plays legal moves only, so every stored game is legal
    throughout; a hand edit there would show only in the log, or once the game is over.
    """
    assert state.opening is not None and state.x_seat is not None
    pieces = _stored_masks(data["pieces"], "pieces")
    shown = _stored_masks(data["revealed"], "revealed pieces")
    opening = 1 << state.opening
    if shown[X_SIDE] & ~pieces[X_SIDE] or shown[O_SIDE] & ~pieces[O_SIDE]:
        raise StateError("hmdg: a revealed piece is not among its side's pieces")
    if not shown[X_SIDE] & opening:
        raise StateError("hmdg: the opening x is not among X's revealed pieces")
    count = len(turns)
    if pieces[X_SIDE].bit_count() - 1 + pieces[O_SIDE].bit_count() > count:
        raise StateError(f"hmdg: more pieces than {count} turns could place")

    side, announce, points, asked = _stored_turn(turns[-1])
    point, line, other = announce.point, announce.line, 1 - side
    bit, wanted = 1 << point, mask_of(points)
    placed = not bit & wanted
    if list(points) != points_of(wanted) or wanted & ~(shown[other] & line_mask(point, line)):
        raise IllegalMoveError(f"{_names(points)}: not revealed pieces of {SIDES[other]} there")
    # The pieces before the last turn: what it placed and revealed, taken back.
    before_pieces, before_shown = list(pieces), list(shown)
    before_shown[other] &= ~wanted
    if placed:
        if not pieces[side] & bit or bool(wanted) != bool(shown[side] & bit):
            raise StateError(f"hmdg: the pieces do not hold the last turn's {point_name(point)}")
        before_pieces[side] &= ~bit
        before_shown[side] &= ~bit
    before_revealed = before_shown[X_SIDE] | before_shown[O_SIDE]
    # Each side's lines of five, and before the last turn: those not through its piece.
    lines = (_five_masks(pieces[X_SIDE]), _five_masks(pieces[O_SIDE]))
    before_lines = list(lines)
    before_lines[side] = [mask for mask in lines[side] if not mask & bit]
    if _double_five_among(before_lines[X_SIDE]) or _double_five_among(before_lines[O_SIDE]):
        raise IllegalMoveError("a side had two lines of five before the last turn")
    if (before_pieces[side] | before_revealed) & bit:
        raise IllegalMoveError(f"{SIDES[side]} may not play on {point_name(point)}")
    # "None" is answered at once only where the line was known to hold no hidden piece of the
    # other side's, which it then did not (rules.may_hide_in; the lines the other side placed
    # its pieces in secret on are in the earlier turns).
    if not asked and (
        points or before_pieces[other] & ~before_shown[other] & line_mask(point, line)
    ):
        raise IllegalMoveError(f"turn {count}: answered at once, though it was not known")
    to_play = O_SIDE
    if count > 1:  # the side after the turn before, as _next_turn gave it
        previous = _stored_turn(turns[-2])[0]
        to_play = 1 - previous if _free(before_pieces[1 - previous], before_revealed) else previous
    if side != to_play:
        raise IllegalMoveError(f"turn {count}: {SIDES[to_play]} was to play")

    # The turn made the side's first five if it has one now and had none before; it can win
    # only with a line through its piece.
    five = bool(lines[side]) and not before_lines[side]
    win = double_five(pieces[side], point) if len(before_lines[side]) < len(lines[side]) else None
    record = TurnRecord(side, point, line, points, placed, five, asked=asked)
    mover, result, record = _next_turn(state, record, win, pieces, shown[X_SIDE] | shown[O_SIDE])

    ply = data["ply"]
    plies = ply - 2 - (data["pending"] is not None) if type(ply) is int else -1
    # Each turn took one move or two; the last one as its "asked" says.
    last_plies = 2 if asked else 1
    if not count - 1 + last_plies <= plies <= 2 * (count - 1) + last_plies:
        raise StateError(f"hmdg: stored 'ply' does not match the moves: {ply!r}")
    return HmdgState(
        opening=state.opening,
        x_seat=state.x_seat,
        turns=StoredTurns(partial(_turn_records, state.opening, list(turns)), count, plies),
        mover=mover,
        pieces=pieces,
        shown=shown,
        fives=(bool(lines[X_SIDE]), bool(lines[O_SIDE])),
        result=result,
        last_move=_answer_text(record, result),
    )


def _turn_records(opening: int, turns: list[Any]) -> tuple[TurnRecord, ...]:
    """The records of stored turns, with the five and pass flags each earned, in one pass over
    bit masks (StateError if a turn cannot be read).

    The turns are taken as legal (see _after_turns): load checked the last one against the
    stored position, and the pieces here are those replayed, so a pass flag is what the turn
    gave; a side's first five is found from the lines it holds at the end (pieces are never
    taken away)."""
    pieces, shown = [1 << opening, 0], [1 << opening, 0]
    # The turn that placed each side's pieces (the opening x: -1).
    placed_at = ([-1] * (SIZE * SIZE), [-1] * (SIZE * SIZE))
    records: list[TurnRecord] = []
    for index, turn in enumerate(turns):
        side, announce, points, asked = _stored_turn(turn)
        point, other = announce.point, 1 - side
        bit, wanted = 1 << point, mask_of(points)
        placed = not bit & wanted
        shown[other] |= wanted
        if placed:
            pieces[side] |= bit
            placed_at[side][point] = index
            if wanted:  # anything revealed reveals the mover's point too
                shown[side] |= bit
        revealed = shown[X_SIDE] | shown[O_SIDE]
        passed = not _free(pieces[other], revealed) and bool(_free(pieces[side], revealed))
        records.append(
            TurnRecord(side, point, announce.line, points, placed, passed=passed, asked=asked)
        )
    for side in (X_SIDE, O_SIDE):
        held = fives(pieces[side])
        if held:  # the side's first five came with the turn that completed one first
            first = min(max(placed_at[side][p] for p in points_of(w.mask)) for w in held)
            records[first] = replace(records[first], five=True)
    last = records[-1]
    if last.passed and last.placed and double_five(pieces[last.side], last.point):
        records[-1] = replace(last, passed=False)  # a win ends the game before any pass
    return tuple(records)


def _side_names(masks: tuple[int, int]) -> dict[str, list[str]]:
    """The points of each side's mask, by name (as dump writes them)."""
    return {SIDES[s]: [_NAMES[p] for p in points_of(masks[s])] for s in (X_SIDE, O_SIDE)}


_POINT_BY_NAME: Final = {point_name(p): p for p in range(SIZE * SIZE)}
_BIT_BY_NAME: Final = {name: 1 << p for name, p in _POINT_BY_NAME.items()}


def _stored_masks(data: object, what: str) -> tuple[int, int]:
    """Each side's mask of the points stored by side name, as ``_side_names`` writes them."""
    if not isinstance(data, Mapping) or data.keys() != set(SIDES):
        raise StateError(f"hmdg: bad {what} {data!r}")
    return _stored_mask(data[SIDES[X_SIDE]], what), _stored_mask(data[SIDES[O_SIDE]], what)


def _stored_mask(names: object, what: str) -> int:
    # Plain look-ups over the whole list (a side may have dozens of pieces). The names sort as
    # the points do (A1 ... A9, B1 ... J9), so the order dump writes is the sorted one; a sum
    # of distinct bits has one bit a name.
    if isinstance(names, list):
        try:
            mask: int = sum(map(_BIT_BY_NAME.__getitem__, names))
        except (KeyError, TypeError):
            pass
        else:
            if mask.bit_count() == len(names) and names == sorted(names):
                return mask
    raise StateError(f"hmdg: bad {what} {names!r}")


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
    # Called for every turn the first time a loaded state's turns are read: plain dict
    # look-ups, no set built per turn.
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
