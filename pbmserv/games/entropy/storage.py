"""Loading a stored Entropy state field by field: every field is checked, and the stored
result against the boards."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from typing import Any

from pbmserv.games.base import (
    Outcome,
    StateError,
)
from pbmserv.games.entropy.notation import (
    _CANONICAL_ORDER_RE,
    _CANONICAL_PLACE_RE,
)
from pbmserv.games.entropy.rules import (
    _result,
)
from pbmserv.games.entropy.state import (
    _COLUMNS,
    _LETTERS,
    COLOURS,
    ENTROPY2,
    OVER,
    PLACE,
    RESERVE_SIZE,
    SIZES,
    SLIDE,
    STANDARD,
    STOCK,
    EntropyState,
    _letters,
)

# --- loading -------------------------------------------------------------------------------


@cache
def _codes_table(size: int) -> bytes:
    """bytes.translate table from the characters of a stored board to cell codes."""
    allowed = ("." + _LETTERS[:size]).encode()
    return bytes.maketrans(allowed, bytes(range(len(allowed))))


class _Loader:
    """Checks stored data field by field and rebuilds the state from it."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data

    def fail(self, why: str) -> StateError:
        return StateError(f"entropy: {why}")

    def state(self) -> EntropyState:
        data = self.data
        size, variant, round_, stage = (data.get(k) for k in ("size", "variant", "round", "stage"))
        if type(size) is not int or size not in SIZES:
            raise self.fail(f"bad board size {size!r}")
        if variant not in (STANDARD, ENTROPY2):
            raise self.fail(f"bad variant {variant!r}")
        if type(round_) is not int or round_ not in (1, 2):
            raise self.fail(f"bad round {round_!r}")
        if stage not in (PLACE, SLIDE, STOCK, OVER) or (stage == STOCK and variant == STANDARD):
            raise self.fail(f"bad stage {stage!r}")
        cells = self.board(data.get("board"), size, "board")
        first = None
        if round_ == 2:
            first = self.board(data.get("first_board"), size, "first_board")
            if 0 in first:
                raise self.fail("round 1's board must be full")
        elif data.get("first_board") is not None:
            raise self.fail("round 1 has no earlier board")
        state = EntropyState(
            size=size,
            variant=variant,
            round=round_,
            stage=stage,
            cells=cells,
            reserve=self.reserve(data.get("reserve"), size, variant),
            drawn=self.drawn(data.get("drawn"), size),
            first=first,
            ply=data.get("ply"),  # type: ignore[arg-type]  # checked below
            last_move=data.get("last_move"),
        )
        self.check_progress(state)
        self.check_last_move(state)
        return replace(state, result=self.result(state))

    def board(self, rows: object, size: int, key: str) -> bytes:
        if (
            not isinstance(rows, list)
            or len(rows) != size
            or not all(isinstance(r, str) and len(r) == size for r in rows)
        ):
            raise self.fail(f"{key} must be {size} rows of {size} characters")
        text = "".join(rows)
        allowed = "." + _LETTERS[:size]
        if set(text) - set(allowed):
            raise self.fail(f"{key} may hold only {allowed!r}")
        # One C-level translate rather than a look-up per cell (a second board in round 2).
        cells = text.encode().translate(_codes_table(size))
        for c in range(1, size + 1):
            if cells.count(c) > size:
                raise self.fail(f"{key} has more than {size} {COLOURS[c - 1][1]} counters")
        return cells

    def reserve(self, raw: object, size: int, variant: str) -> tuple[int, ...]:
        if not isinstance(raw, str) or set(raw) - set(_LETTERS[:size]):
            raise self.fail(f"bad reserve {raw!r}")
        if variant == STANDARD and raw:
            raise self.fail("standard Entropy has no reserve")
        counts = tuple(raw.count(letter) for letter in _LETTERS[:size])
        if raw != _letters(counts):
            raise self.fail(f"the reserve {raw!r} is not in colour order")
        return counts

    def drawn(self, raw: object, size: int) -> int:
        if raw is None:
            return 0
        if not isinstance(raw, str) or len(raw) != 1 or raw not in _LETTERS[:size]:
            raise self.fail(f"bad drawn counter {raw!r}")
        return _LETTERS.index(raw) + 1

    def check_progress(self, state: EntropyState) -> None:
        """Stage, ply, drawn counter and reserve must fit the number of counters placed."""
        size, stage = state.size, state.stage
        area = size * size
        placed = area - state.cells.count(0)
        standard = state.variant == STANDARD
        per_round = 2 * area - 1 if standard else 2 * area
        if stage == OVER:
            within, ok = per_round, placed == area and state.round == 2
        elif stage == STOCK:
            within, ok = 0, placed == 0
        elif stage == PLACE:
            within, ok = 2 * placed + (not standard), placed < area
        else:
            within, ok = 2 * placed - standard, 0 < placed < area
        if not ok:
            raise self.fail(f"a {stage} stage with {placed} counters on the board")
        expected = within + (state.round - 1) * per_round
        if type(state.ply) is not int or state.ply != expected:
            raise self.fail(f"ply {state.ply!r} does not match the board (expected {expected})")
        wants_draw = standard and stage == PLACE
        if wants_draw != bool(state.drawn) or min(state.bag()) < 0:
            raise self.fail("the drawn counter does not match the stage and the bag")
        if not standard:
            held = sum(state.reserve)
            want = {PLACE: min(RESERVE_SIZE, area - placed), SLIDE: min(4, area - placed)}
            if held != want.get(stage, 0) or min(state.supply()) < 0:
                raise self.fail(f"Chaos's reserve of {held} does not match the board")

    def check_last_move(self, state: EntropyState) -> None:
        """The last move must be one that leads to this stage, and fit the board."""
        last = state.last_move
        if state.ply == 0:
            if last is not None:
                raise self.fail("no move made, yet a last move is stored")
            return
        if not isinstance(last, str):
            raise self.fail(f"bad last move {last!r}")
        placed = state.size * state.size - state.cells.count(0)
        if state.stage in (SLIDE, OVER):  # after a placement
            self.check_last_place(state, state.cells, last)
        elif placed and state.stage == PLACE:  # after Order's move
            self.check_last_order(state, last)
        elif state.stage == PLACE and state.variant == ENTROPY2:  # after the stocking
            if last != f"stock {_letters(state.reserve)}":
                raise self.fail(f"the last move {last!r} is not the stocking of the reserve")
        else:  # round 2 has just begun: after round 1's last placement
            self.check_last_place(state, state.first, last)

    def check_last_place(self, state: EntropyState, board: bytes | None, last: str) -> None:
        match = _CANONICAL_PLACE_RE.fullmatch(last)
        size = state.size
        if match is None or board is None:
            raise self.fail(f"the last move {last!r} is not a placement")
        col, row = _COLUMNS.index(match.group(1)), int(match.group(2)) - 1
        letter = match.group(3)
        if col >= size or row >= size or letter not in _LETTERS[:size]:
            raise self.fail(f"the last move {last!r} is off the board")
        if board[row * size + col] != _LETTERS.index(letter) + 1:
            raise self.fail(f"the last move {last!r} is not on the board")

    def check_last_order(self, state: EntropyState, last: str) -> None:
        match = _CANONICAL_ORDER_RE.fullmatch(last)
        if match is None:
            raise self.fail(f"the last move {last!r} is not Order's")
        size = state.size
        a, b, c, d, give = match.groups()
        if a is not None:
            cols, rows = (_COLUMNS.index(a), _COLUMNS.index(c)), (int(b) - 1, int(d) - 1)
            if max(*cols, *rows) >= size:
                raise self.fail(f"the last move {last!r} is off the board")
            src, dst = rows[0] * size + cols[0], rows[1] * size + cols[1]
            if state.cells[src] or not state.cells[dst] or src == dst:
                raise self.fail(f"the last move {last!r} does not fit the board")
        if state.variant == STANDARD:
            ok = give is None
        elif give is None:
            ok = not any(state.supply())
        else:
            ok = give in _LETTERS[:size] and state.reserve[_LETTERS.index(give)] > 0
        if not ok:
            raise self.fail(f"the counter handed over in {last!r} does not fit the variant")

    def result(self, state: EntropyState) -> Outcome | None:
        stored = self.data.get("result")
        if state.stage != OVER:
            if stored is not None:
                raise self.fail("a result is stored but the game goes on")
            return None
        result = _result(state)
        scores = result.scores or {}
        if (
            not isinstance(stored, Mapping)
            or stored.get("winners") != sorted(result.winners)
            or stored.get("scores") != [scores[0], scores[1]]
            or not isinstance(stored.get("reason"), str)
        ):
            raise self.fail(f"the stored result does not match the boards: {stored!r}")
        return replace(result, reason=stored["reason"])
