"""Buffalo (Alex Randolph, 1975) and Rebel Buffalo, SPEC 4.4.

An 11 x 7 board, columns a-k and rows 1-7; two rivers lie between rows 1-2 and 6-7. Seat 0
is Black (11 buffalo on row 7, moves first), seat 1 is White (the Indian chief on f2 and dogs
on d2 e2 g2 h2). A buffalo steps straight towards row 1 onto an empty square; a dog moves like a
queen without jumping or capturing; the chief moves like a king and captures a buffalo by
moving onto it; neither ever crosses a river (rows 2-6 only). Black wins when a buffalo reaches
row 1, or when White cannot move; White wins when Black cannot move.

Rebel Buffalo (the SPEC's ruling, with the points this module decides):

- After every buffalo move, every dog on the board that stands between two buffalo directly
  next to it on opposite orthogonal sides (left and right, or above and below) is enclosed,
  whichever buffalo moved: a dog that walked in between two buffalo is safe on its own move and
  goes home after Black's next move. A diagonal flank does not count.
- All enclosed dogs are lifted together, then put on row 2: first to the squares the move
  names, ``dog:b2`` (given to the enclosed dogs in board order: by column, then row) or
  ``dog:d5>b2`` (naming the dog); then the others, those already on row 2 first and then in
  board order, each to the empty row-2 square nearest its column (the lower column on a tie).
  "Returned to row 2" means another square: a dog enclosed on row 2 never goes back to its
  own square (SPEC 4.4), so it goes to the nearest other empty one.
- Should that nearest-first rule leave a dog without a square while some placement would
  move every dog, the placement with the least total distance (then the board's order) is
  used instead.
- If no placement moves every dog, no ``dog:`` may be named, and the dogs that find no other
  empty square of row 2 stay where they are.
- The canonical text records every placement made (``e6-e5 dog:d2``; with several dogs
  ``e6-e5 dog:d5>d2 dog:f5>f2``) so a replay is exact.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import permutations
from typing import Any, NamedTuple

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
from pbmserv.games.drawing import Grid, Mark, cells_named, square_svg

COLS, ROWS = 11, 7
LETTERS = "abcdefghijk"
BLACK, WHITE = 0, 1
ROLES = ("Black", "White")
BUFFALO, DOG, CHIEF, EMPTY = "B", "D", "C", "."
STANDARD, REBEL = "standard", "rebel"
KING_STEPS = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)
START = (
    EMPTY * COLS  # row 1
    + "...DDCDD..."  # row 2
    + EMPTY * COLS * 4  # rows 3-6
    + BUFFALO * COLS  # row 7
)
_PIECE_NAMES = {BUFFALO: "a buffalo", DOG: "a dog", CHIEF: "the chief"}
_SYNTAX = (
    "write the square a piece leaves and the square it reaches, like e7-e6 or f2xf3, "
    "or a buffalo's target alone, like e6"
)
# A square as players write it; checked against the board afterwards for a polite message.
_SQ = r"([a-z])\s*(\d{1,2})"
_MAIN_RE = re.compile(rf"{_SQ}(?:\s*(?:-|x|:|to)?\s*{_SQ})?")
_DOG_RE = re.compile(rf"dog\s*[:=]?\s*(?:{_SQ}\s*(?:>|->|-|to)\s*)?{_SQ}")
_DOG_WORD = re.compile(r"\bdog\b")
_LAST_RE = re.compile(r"[a-k][1-7][-x][a-k][1-7](?: dog:(?:[a-k][1-7]>)?[a-k]2)*")


def square(col: int, row: int) -> int:
    """Index of (column 0-10, row 1-7) in a state's ``cells`` string."""
    return (row - 1) * COLS + col


def name(index: int) -> str:
    """The square's name, like ``e7``."""
    return f"{LETTERS[index % COLS]}{index // COLS + 1}"


def _col_row(index: int) -> tuple[int, int]:
    return index % COLS, index // COLS + 1


class BuffaloMove(NamedTuple):
    """A piece's move from ``src`` to ``dst``; ``placements`` are the (dog, row-2 square)
    pairs of the enclosed dogs sent home by it (Rebel Buffalo), in board order of the dogs."""

    src: int
    dst: int
    placements: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class BuffaloState:
    """A position: ``cells`` holds 77 of B, D, C and ``.``, row 1 first, a-k in each row."""

    cells: str = START
    variant: str = STANDARD
    ply: int = 0
    last_move: str | None = None
    winner: int | None = None
    reason: str = ""
    #: The kind of end, set with ``winner`` by the rules (not stored: they give it again).
    termination: Termination | None = None

    @property
    def to_move(self) -> int:
        """The seat whose turn it is (Black on even plies)."""
        return self.ply % 2


def position(
    pieces: Mapping[str, str], to_move: int = BLACK, variant: str = STANDARD
) -> BuffaloState:
    """A hand-built position: ``pieces`` maps squares (``"e5"``) to B, D or C; the result is
    judged at once, so a position where the side to move is stuck reports its outcome."""
    cells = [EMPTY] * (COLS * ROWS)
    for where, piece in pieces.items():
        cells[square(LETTERS.index(where[0]), int(where[1:]))] = piece
    state = BuffaloState(cells="".join(cells), variant=variant, ply=to_move)
    return _judge(state)


# --- the rules -------------------------------------------------------------------------------


def _inside(col: int, row: int) -> bool:
    return 0 <= col < COLS and 1 <= row <= ROWS


def _white_targets(cells: str, src: int) -> Iterator[int]:
    """Squares a dog or the chief on ``src`` can reach (rows 2-6 only)."""
    col, row = _col_row(src)
    piece = cells[src]
    for dc, dr in KING_STEPS:
        c, r = col + dc, row + dr
        while 0 <= c < COLS and 2 <= r <= 6:
            target = cells[square(c, r)]
            if target == EMPTY or (piece == CHIEF and target == BUFFALO):
                yield square(c, r)
            if target != EMPTY or piece == CHIEF:
                break
            c, r = c + dc, r + dr


def _buffalo_moves(cells: str) -> Iterator[tuple[int, int]]:
    for src in range(COLS, COLS * ROWS):
        if cells[src] == BUFFALO and cells[src - COLS] == EMPTY:
            yield src, src - COLS


def _white_moves(cells: str) -> Iterator[tuple[int, int]]:
    for src, piece in enumerate(cells):
        if piece in (DOG, CHIEF):
            for dst in _white_targets(cells, src):
                yield src, dst


def _moved(cells: str, src: int, dst: int) -> str:
    chars = list(cells)
    chars[dst], chars[src] = chars[src], EMPTY
    return "".join(chars)


def enclosed_dogs(cells: str) -> list[int]:
    """Dogs with buffalo directly on both sides, left and right or above and below, in board
    order (by column, then row)."""
    found = []
    for index, piece in enumerate(cells):
        if piece != DOG:
            continue
        col, row = _col_row(index)
        for (c1, r1), (c2, r2) in (
            ((col - 1, row), (col + 1, row)),
            ((col, row - 1), (col, row + 1)),
        ):
            if (
                _inside(c1, r1)
                and _inside(c2, r2)
                and cells[square(c1, r1)] == BUFFALO
                and cells[square(c2, r2)] == BUFFALO
            ):
                found.append(index)
                break
    return sorted(found, key=_col_row)


def _row_two_free(chars: Sequence[str]) -> list[int]:
    return [square(c, 2) for c in range(COLS) if chars[square(c, 2)] == EMPTY]


def _lifted(cells: str, dogs: Sequence[int]) -> list[str]:
    chars = list(cells)
    for dog in dogs:
        chars[dog] = EMPTY
    return chars


def _complete_placements(cells: str, dogs: Sequence[int]) -> Iterator[tuple[tuple[int, int], ...]]:
    """Every way to put each of ``dogs`` on its own empty square of row 2, none on the square
    it was lifted from, in the order of the free squares."""
    free = _row_two_free(_lifted(cells, dogs))
    for targets in permutations(free, len(dogs)):
        if all(dog != target for dog, target in zip(dogs, targets, strict=True)):
            yield tuple(zip(dogs, targets, strict=True))


def room_for(cells: str, dogs: Sequence[int]) -> bool:
    """Whether every one of ``dogs`` can go to an empty row-2 square other than its own."""
    return next(_complete_placements(cells, dogs), None) is not None


def _distance(placements: Sequence[tuple[int, int]]) -> int:
    return sum(abs(dog % COLS - target % COLS) for dog, target in placements)


def send_home(
    cells: str, dogs: Sequence[int], named: Mapping[int, int]
) -> tuple[tuple[int, int], ...]:
    """Where the enclosed ``dogs`` go: ``named`` (dog -> square) first, then the others to
    the nearest empty row-2 square that is not their own, those on row 2 first, then in board
    order. A dog that finds no such square stays where it is (and is left out of the result)."""
    chars = _lifted(cells, dogs)
    for target in named.values():
        chars[target] = DOG
    placed = dict(named)
    for dog in sorted((d for d in dogs if d not in named), key=lambda d: (d // COLS != 1, d)):
        free = [s for s in _row_two_free(chars) if s != dog]
        if not free:
            chars[dog] = DOG  # it stays, so no other dog may take its square
            continue
        col = dog % COLS
        target = min(free, key=lambda s: (abs(s % COLS - col), s))
        chars[target] = DOG
        placed[dog] = target
    if len(placed) < len(dogs):
        # Nearest-first stranded a dog that some other choice would have moved.
        fitting = [p for p in _complete_placements(cells, dogs) if named.items() <= dict(p).items()]
        if fitting:
            return min(fitting, key=lambda p: (_distance(p), p))
    return tuple(sorted(placed.items(), key=lambda pair: _col_row(pair[0])))


def _placed_cells(cells: str, placements: Sequence[tuple[int, int]]) -> str:
    chars = _lifted(cells, [dog for dog, _ in placements])
    for _, target in placements:
        chars[target] = DOG
    return "".join(chars)


def _all_placements(after: str, dogs: list[int]) -> list[tuple[tuple[int, int], ...]]:
    """Every way to send the enclosed ``dogs`` home (each to its own empty row-2 square, never
    the one it stood on); the default placement alone when there is no such way."""
    if not dogs:
        return [()]
    return list(_complete_placements(after, dogs)) or [send_home(after, dogs, {})]


def _example(moves: Iterator[tuple[int, int]]) -> tuple[int, int]:
    """A move to show in the prompt: the one nearest the middle column (the board's order
    breaks ties). Only called while the side to move has a move."""
    return min(moves, key=lambda move: abs(move[0] % COLS - COLS // 2))


def _judge(state: BuffaloState) -> BuffaloState:
    """The state with its result set if the position is over."""
    cells = state.cells
    crossed = [name(i) for i in range(COLS) if cells[i] == BUFFALO]
    if crossed:
        reason = f"a buffalo crossed the river to row 1, at {crossed[0]}"
        return replace(state, winner=BLACK, reason=reason, termination=Termination.GOAL)
    if state.to_move == WHITE and next(_white_moves(cells), None) is None:
        return replace(
            state, winner=BLACK, reason="White cannot move", termination=Termination.NO_MOVES
        )
    if state.to_move == BLACK and next(_buffalo_moves(cells), None) is None:
        if BUFFALO not in cells:
            why, kind = "every buffalo is captured", Termination.GOAL
        else:
            why, kind = "no buffalo can move", Termination.NO_MOVES
        return replace(state, winner=WHITE, reason=why, termination=kind)
    return replace(state, winner=None, reason="", termination=None)


# --- reading moves ---------------------------------------------------------------------------


def _square_of(letter: str, digits: str, shown: str) -> int:
    row = int(digits)
    if letter not in LETTERS or not 1 <= row <= ROWS:
        raise IllegalMoveError(
            f"{shown}: there is no square {letter}{digits} (columns a-k, rows 1-7)"
        )
    return square(LETTERS.index(letter), row)


def _split(text: str) -> tuple[str, list[re.Match[str]]] | None:
    """The piece move and the ``dog:`` parts of a lower-cased move text; None if a ``dog``
    word is there but not in the ``dog:b2`` / ``dog:d5>b2`` form."""
    start = _DOG_WORD.search(text)
    if start is None:
        return text.strip(), []
    main, rest = text[: start.start()].strip(), text[start.start() :]
    parts, pos = [], 0
    for match in _DOG_RE.finditer(rest):
        if rest[pos : match.start()].strip(" ,;"):
            break
        parts.append(match)
        pos = match.end()
    if rest[pos:].strip(" ,;") or not parts:
        return None
    return main, parts


class Buffalo(Game[BuffaloState, BuffaloMove]):
    """Buffalo and Rebel Buffalo; seat 0 Black (the buffalo), seat 1 White."""

    SPEC = GameSpec(
        name="buffalo",
        title="Buffalo",
        seat_names=ROLES,
        options=(
            OptionSpec(
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

    def to_move(self, state: BuffaloState) -> Turn:
        """Black on even plies, White on odd ones; nobody once the game is over."""
        if state.winner is not None:
            return Turn(frozenset())
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
        return Turn(frozenset({seat}), "move", {seat: prompt})

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

    def outcome(self, state: BuffaloState) -> Outcome | None:
        """Set by the move that ended the game; None while it goes on."""
        if state.winner is None:
            return None
        assert state.termination is not None  # set with the winner
        return Outcome(frozenset({state.winner}), state.reason, termination=state.termination)

    # --- the diagram ---------------------------------------------------------------------------

    def render(self, state: BuffaloState, viewer: Viewer, players: Sequence[str] = ()) -> str:
        """Row 7 at the top, the rivers as lines of ``~``; every viewer sees the same."""
        del viewer, players  # nothing hidden; the side names say who is who
        letters = "      " + " ".join(LETTERS)
        river = "     " + "~" * (2 * COLS + 1) + "  river"
        lines = [letters]
        for row in range(ROWS, 0, -1):
            cells = " ".join(state.cells[square(c, row)] for c in range(COLS))
            lines.append(f"   {row}  {cells}  {row}")
            if row in (7, 2):
                lines.append(river)
        lines += [letters, "", "B buffalo (Black)   C Indian chief, D dog (White)   . empty"]
        buffalo = state.cells.count(BUFFALO)
        lines.append(f"Black's buffalo run towards row 1; {buffalo} of 11 are left.")
        if state.variant == REBEL:
            lines.append("Rebel Buffalo: a dog between two buffalo goes back to row 2.")
        return "\n".join(lines)

    def svg(self, state: BuffaloState, viewer: Viewer) -> str:
        """Row 7 at the top, the rivers in blue, buffalo black, the chief red, the dogs
        white; the last move's squares highlighted."""
        del viewer  # no hidden information
        pieces = {
            BUFFALO: Mark("#222222", "B", "#ffffff"),
            CHIEF: Mark("#c0392b", "C", "#ffffff"),
            DOG: Mark("#ffffff", "D"),
        }
        marks = {}
        for index, cell in enumerate(state.cells):
            col, row = _col_row(index)
            if cell in pieces:
                marks[(ROWS - row, col)] = pieces[cell]

        def cell_of(name: str) -> tuple[int, int] | None:
            return (ROWS - int(name[1:]), LETTERS.index(name[0]))

        grid = Grid(
            rows=ROWS,
            cols=COLS,
            marks=marks,
            row_labels=[str(r) for r in range(ROWS, 0, -1)],
            col_labels=list(LETTERS),
            highlight=cells_named(state.last_move, r"[a-k][1-7]", cell_of),
            rivers_below=frozenset({0, ROWS - 2}),  # below row 7 and below row 2
        )
        return square_svg(grid)

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
