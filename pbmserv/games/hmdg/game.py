"""Hidden Move Double Gomoku under the game contract, built on the modules beside it."""

from __future__ import annotations

import random
import textwrap
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import TYPE_CHECKING, Any

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
    Turn,
    Viewer,
)
from pbmserv.games.drawing import Grid, Mark, cells_named, square_svg
from pbmserv.games.hmdg.determinize import (
    determinized,
)
from pbmserv.games.hmdg.geometry import (
    _NAMES,
    _WIDTH,
    CHOOSE,
    COL,
    FIRST_PLAYER,
    HOW_TO_MOVE,
    HOW_TO_REVEAL,
    MOVE,
    O_SIDE,
    OPENING,
    OVER,
    REVEAL,
    ROW,
    ROWS,
    SECOND_PLAYER,
    SIDES,
    SIZE,
    X_SIDE,
    _names,
    line_mask,
    line_name,
    point_name,
    points_of,
)
from pbmserv.games.hmdg.hidden import (
    _vary_once,
)
from pbmserv.games.hmdg.notation import (
    _ANNOUNCE_AFTER,
    _ANNOUNCE_BEFORE,
    _CHOICE_RE,
    _NONE_WORDS,
    _OPENING_RE,
    _POINT_LIST,
    _POINT_RE,
    _line_value_matches,
    _normal,
    _point,
    _quote,
)
from pbmserv.games.hmdg.rules import (
    _answer_text,
    _play,
)
from pbmserv.games.hmdg.state import (
    Announce,
    Choice,
    HmdgMove,
    HmdgState,
    Opening,
    Reveal,
    announcements,
)
from pbmserv.games.hmdg.storage import (
    _STORED_KEYS,
    _read_state,
    _side_names,
)

if TYPE_CHECKING:
    from pbmserv.games.hmdg.state import TurnRecord


def _seat_to_act(state: HmdgState, stage: str) -> int | None:
    """The seat ``to_move`` names, without writing its prompt (the robots ask often)."""
    if stage == OVER:
        return None
    if stage == OPENING:
        return 0
    if stage == CHOOSE:
        return 1
    return state.seat_of(state.mover if stage == MOVE else 1 - state.mover)


class HiddenMoveDoubleGomoku(Game[HmdgState, HmdgMove]):
    """Hidden Move Double Gomoku for two; seat 0 opens, seat 1 chooses X or O."""

    SPEC = GameSpec(
        name="hmdg",
        title="Hidden Move Double Gomoku",
        draw_by_agreement=True,
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
        stage = state.stage
        if seat != _seat_to_act(state, stage):
            return []
        if stage == OPENING:
            return [Opening(p) for p in range(SIZE * SIZE)]
        if stage == CHOOSE:
            return [Choice(X_SIDE), Choice(O_SIDE)]
        if stage == MOVE:
            return announcements(state.free(state.mover))
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

    def render(self, state: HmdgState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """The grid, a key, the piece counts and the log of announcements, as ``viewer`` may
        see them: a seat its own pieces and the revealed ones, the public only the revealed;
        the administrator, and everyone once the game is over, every piece."""
        del players  # the side names say who is who
        sees = self._sees(state, viewer)
        lines = self._grid(state, sees)
        lines += ["", *self._key(state, viewer, sees), *self._counts(state), ""]
        lines += self._log(state, sees, viewer)
        return "\n".join(lines)

    def svg(self, state: HmdgState, viewer: Viewer) -> str:
        """The grid as :meth:`render` shows it to ``viewer``: revealed pieces as discs (X
        black, O white), the viewer's own hidden pieces as rings, the points the last move
        named highlighted."""
        sees = self._sees(state, viewer)
        visible = [state.shown[s] | (state.pieces[s] if sees[s] else 0) for s in (X_SIDE, O_SIDE)]
        fills = ("#222222", "#ffffff")
        inks = ("#ffffff", "#000000")
        marks = {}
        for point in range(SIZE * SIZE):
            has = [bool(visible[s] >> point & 1) for s in (X_SIDE, O_SIDE)]
            at = divmod(point, SIZE)
            if all(has):
                marks[at] = Mark("#888888", "*", "#ffffff")
            elif any(has):
                side = X_SIDE if has[X_SIDE] else O_SIDE
                hidden = not state.shown[side] >> point & 1
                label = SIDES[side].lower() if hidden else SIDES[side]
                marks[at] = Mark(
                    fills[side] if not hidden else "#444444", label, inks[side], hidden
                )

        def cell_of(name: str) -> tuple[int, int] | None:
            return divmod(_NAMES.index(name), SIZE) if name in _NAMES else None

        grid = Grid(
            rows=SIZE,
            cols=SIZE,
            marks=marks,
            row_labels=list(ROWS),
            col_labels=[str(c + 1) for c in range(SIZE)],
            highlight=cells_named(state.last_move, r"\b[A-HJ][1-9]\b", cell_of),
        )
        return square_svg(grid)

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

    def determinize(self, state: HmdgState, viewer: int, rng: random.Random) -> HmdgState:
        """The same game as ``viewer`` sees it, with the opponent's hidden pieces (and pending
        point, while ``viewer`` is to answer it) drawn with ``rng`` among the placements that
        agree with every public fact: from ``viewer``'s view and ``rng`` alone (see the
        determinize module). Nothing is secret before the sides are chosen or once it is over."""
        side = state.side_of(viewer)
        if state.result is not None or side is None:
            return state
        return determinized(state, 1 - side, rng)

    # --- storage --------------------------------------------------------------------------

    def dump(self, state: HmdgState) -> dict[str, Any]:
        """Versioned JSON: the moves that made the position, then what they give (pieces,
        revealed pieces, ply, last move, result), which ``load`` reads the position from."""
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
                    # Only where "none" was answered at once: older data reads the same.
                    **({} if t.asked else {"asked": False}),
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
        """Read the position from the stored fields and the last turn, checked against each
        other and the rules, at a cost that does not grow with the turns played (issue 16);
        the earlier turns are read when first needed (see the storage module)."""
        if not isinstance(data, Mapping):
            raise StateError("hmdg: the state is not a JSON object")
        self._check_version(data)
        if set(data) != _STORED_KEYS:
            raise StateError(f"hmdg: the stored keys are not {sorted(_STORED_KEYS)}")
        try:
            return _read_state(data)
        except IllegalMoveError as exc:
            raise StateError(f"hmdg: the stored moves are not legal: {exc}") from None


GAME = HiddenMoveDoubleGomoku()
