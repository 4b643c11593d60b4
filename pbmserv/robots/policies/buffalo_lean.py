"""Buffalo's lean position for the tactics and the tree search (:mod:`pbmserv.robots.tactics`,
:mod:`pbmserv.robots.lean_search`), and the board reckoning the policy's evaluation and tree
moves share with it (:mod:`pbmserv.robots.policies.buffalo`).

The position is the 77 cells as a list of one-character strings (the rule module's ``cells``,
row 1 first), the ply, and an undo stack: a move is pushed and popped in place instead of
building a new state (``apply`` judges the result and formats the move's text every time, and
the state's prompt builds an example move). The result is judged at each push and kept on the
stack, so that ``ended`` costs nothing however often the search asks. Moves are the rule
module's own ``BuffaloMove`` objects (built once for every source and target), so the move the
search picks is a move of the real position; Rebel Buffalo's enclosed dogs are found here and
placed by the rule module's own functions (rare, so not worth a second implementation).

The reckoning is table driven: each square's king steps and queen rays within rows 2-6, and the
king distances, are computed once. The two-move tactics (does a push to row 2 get through, is
there a push to row 3 no White move answers) are judged incrementally: a White move changes
the threats on row 3 only where it leaves or lands, so the position after each White reply is
never built. The tests compare every such shortcut with the plain reckoning it replaces.

The evaluation and the tree's move order are the policy's; they are handed to
:class:`BuffaloLean` (the policy module builds it), so this module depends on no policy. The
tree's order breaks ties at random, with the tree search's generator (handed to
:meth:`BuffaloLean.position`): another seed, another game. The tactics hand none; their
position then draws from one seeded by the state.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from pbmserv.games.buffalo.rules import (
    REBEL,
    BuffaloMove,
    _all_placements,
    enclosed_dogs,
)

COLS = 11
CELLS = 77
BLACK, WHITE = 0, 1
BUFFALO, DOG, CHIEF, EMPTY = "B", "D", "C", "."
ROW2 = range(COLS, 2 * COLS)
ROW3 = range(2 * COLS, 3 * COLS)
ROW4 = range(3 * COLS, 4 * COLS)
KING_STEPS = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)


def _white_square(col: int, row: int) -> bool:
    """Whether (column, row 1-7) is a square White's pieces may stand on (rows 2-6)."""
    return 0 <= col < COLS and 2 <= row <= 6


def _rays(src: int) -> tuple[tuple[int, ...], ...]:
    """The queen's rays from ``src`` within rows 2-6, in KING_STEPS order, nearest first."""
    col, row = src % COLS, src // COLS + 1
    rays = []
    for dc, dr in KING_STEPS:
        ray = []
        c, r = col + dc, row + dr
        while _white_square(c, r):
            ray.append((r - 1) * COLS + c)
            c, r = c + dc, r + dr
        rays.append(tuple(ray))
    return tuple(rays)


#: Each square's queen rays (rows 2-6); a ray's first square is a king step.
RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(_rays(i) for i in range(CELLS))
#: Each square's king steps within rows 2-6, in KING_STEPS order.
KING_SQUARES: tuple[tuple[int, ...], ...] = tuple(
    tuple(ray[0] for ray in RAYS[i] if ray) for i in range(CELLS)
)
#: Each square's rays that can end on row 2 (downwards, or along row 2 from row 2).
ROW2_RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(
        ray
        for (dc, dr), ray in zip(KING_STEPS, RAYS[i], strict=True)
        if ray and (dr == -1 or (dr == 0 and i in ROW2))
    )
    for i in range(CELLS)
)
#: King distances between every two squares.
KING_DISTANCE: tuple[tuple[int, ...], ...] = tuple(
    tuple(max(abs(a % COLS - b % COLS), abs(a // COLS - b // COLS)) for b in range(CELLS))
    for a in range(CELLS)
)
#: The squares a king's step or less from each square (the board's edge aside).
NEAR: tuple[frozenset[int], ...] = tuple(
    frozenset(b for b in range(CELLS) if KING_DISTANCE[a][b] <= 1) for a in range(CELLS)
)
#: Every (source, target) move without Rebel placements, built once.
PLAIN_MOVES: tuple[tuple[BuffaloMove, ...], ...] = tuple(
    tuple(BuffaloMove(src, dst) for dst in range(CELLS)) for src in range(CELLS)
)


# --- the board reckoning ---------------------------------------------------------------------


def white_targets(cells: Sequence[str], src: int) -> list[int]:
    """Squares the dog or chief on ``src`` reaches (rows 2-6; only the chief captures), in
    the rule module's order. An empty ``src`` counts as a dog's (a square a dog could use)."""
    if cells[src] == CHIEF:
        return [t for t in KING_SQUARES[src] if cells[t] == EMPTY or cells[t] == BUFFALO]
    found = []
    for ray in RAYS[src]:
        for target in ray:
            if cells[target] != EMPTY:
                break
            found.append(target)
    return found


def _row3_threats(cells: Sequence[str]) -> list[int]:
    """Buffalo on row 3 that can step to row 2 (and win the move after)."""
    return [i for i in ROW3 if cells[i] == BUFFALO and cells[i - COLS] == EMPTY]


def _threats_hold(threats: Sequence[int], chief: int) -> bool:
    """Whether the chief can capture whichever of ``threats`` steps to row 2: each must be
    next to it, and all in two neighbouring columns (after one capture it cannot reach a far
    one)."""
    near = NEAR[chief]
    low = high = threats[0] % COLS
    for threat in threats:
        if threat - COLS not in near:
            return False
        col = threat % COLS
        low, high = min(low, col), max(high, col)
    return high - low <= 1


def white_survives(cells: Sequence[str]) -> bool:
    """With Black to move: whether every push to row 2 can be captured by the chief."""
    for i in ROW2:
        if cells[i] == BUFFALO:
            return False
    threats = _row3_threats(cells)
    return not threats or _threats_hold(threats, cells.index(CHIEF))


def _threats_after(threats: Sequence[int], cells: Sequence[str], src: int, dst: int) -> list[int]:
    """The row-3 threats once White's piece goes from ``src`` to ``dst`` (``threats`` those of
    ``cells``, before it): it stops the one it lands on or in front of, and a piece leaving
    row 2 opens the square in front of the buffalo above it."""
    after = [i for i in threats if i != dst and i - COLS != dst]
    opened = src + COLS
    if src < 2 * COLS and opened != dst and cells[opened] == BUFFALO:
        after.append(opened)
    return after


def survives_after(
    cells: Sequence[str], threats: Sequence[int], chief: int, src: int, dst: int
) -> bool:
    """``white_survives`` of the position after White's ``src``-``dst`` in ``cells``, without
    making the move (``threats`` and ``chief`` are those of ``cells``): a buffalo on row 2
    must be the one it captures."""
    for i in ROW2:
        if cells[i] == BUFFALO and i != dst:
            return False
    return _holds_after(cells, threats, chief, src, dst)


def dog_squares(cells: Sequence[str]) -> list[int]:
    """The dogs' squares, in board order."""
    found, start = [], 0
    for _ in range(4):
        try:
            start = cells.index(DOG, start) + 1
        except ValueError:
            break
        found.append(start - 1)
    return found


def _rescue_holds(cells: list[str], threats: list[int], chief: int) -> bool:
    """With White to move and no buffalo on row 2: whether some move of the chief, or of a
    dog to row 2, leaves every push to row 2 capturable (the moves the policy calls White's
    rescues)."""
    for target in KING_SQUARES[chief]:
        piece = cells[target]
        if piece in (EMPTY, BUFFALO) and _holds_after(cells, threats, chief, chief, target):
            return True
    for dog in dog_squares(cells):
        for ray in ROW2_RAYS[dog]:
            for target in ray:
                if cells[target] != EMPTY:
                    break
                if target < 2 * COLS and _holds_after(cells, threats, chief, dog, target):
                    return True
    return False


def _holds_after(
    cells: Sequence[str], threats: Sequence[int], chief: int, src: int, dst: int
) -> bool:
    """Whether the chief holds the row-3 threats after White's ``src``-``dst``."""
    after = _threats_after(threats, cells, src, dst)
    return not after or _threats_hold(after, dst if src == chief else chief)


def pushes_through(cells: list[str]) -> bool:
    """With Black to move, White surviving the pushes to row 2: whether a push to row 3 makes
    a threat no rescue of White's answers. ``cells`` is changed and restored."""
    threats = _row3_threats(cells)
    chief = -1
    for src in ROW4:
        ahead = src - COLS
        if cells[src] != BUFFALO or cells[ahead] != EMPTY or cells[ahead - COLS] != EMPTY:
            continue
        if chief < 0:
            chief = cells.index(CHIEF)
        cells[src], cells[ahead] = EMPTY, BUFFALO
        holds = _rescue_holds(cells, [*threats, ahead], chief)
        cells[src], cells[ahead] = BUFFALO, EMPTY
        if not holds:
            return True
    return False


def black_wins_soon(cells: list[str]) -> bool:
    """With Black to move: whether Black wins within two of its moves, by a push to row 2
    now or by a push to row 3 that no White move answers. ``cells`` is changed and restored."""
    return not white_survives(cells) or pushes_through(cells)


def open_leads(cells: Sequence[str]) -> list[int]:
    """Buffalo with no White piece anywhere below them, the most advanced first."""
    leads = []
    for col in range(COLS):
        for index in range(COLS + col, CELLS, COLS):
            piece = cells[index]
            if piece != EMPTY:
                if piece == BUFFALO:
                    leads.append(index)
                break
    leads.sort()
    return leads


def white_replies(cells: list[str], moves: Sequence[BuffaloMove]) -> tuple[list[bool], list[bool]]:
    """For each of White's ``moves``: whether White survives the pushes to row 2 after it, and
    whether it is also safe from a push to row 3 no White move answers. ``cells`` is changed
    and restored."""
    threats = _row3_threats(cells)
    chief = cells.index(CHIEF)
    survives, safe = [], []
    for move in moves:
        src, dst = move.src, move.dst
        ok = survives_after(cells, threats, chief, src, dst)
        survives.append(ok)
        if ok:
            taken = cells[dst]
            cells[dst], cells[src] = cells[src], EMPTY
            ok = not pushes_through(cells)
            cells[src], cells[dst] = cells[dst], taken
        safe.append(ok)
    return survives, safe


# --- the lean position -----------------------------------------------------------------------


class BuffaloPosition:
    """A mutable position: the cells, the ply, the result (None while it goes on, else the
    winner's seat) and the undo stack."""

    __slots__ = ("cells", "ply", "rebel", "winner", "undo", "rng", "chance")

    def __init__(
        self, cells: str, ply: int, rebel: bool, winner: int | None, rng: random.Random | None
    ) -> None:
        self.cells = list(cells)
        self.ply = ply
        self.rebel = rebel
        self.winner = winner
        #: (move, piece it took, the winner before it) for each move pushed.
        self.undo: list[tuple[BuffaloMove, str, int | None]] = []
        # Ties in the tree's order are broken by this generator (see the module docstring).
        self.rng = rng if rng is not None else random.Random(f"{cells}/{ply}")
        #: The side to move's win chance, kept until the next push or pop.
        self.chance: float | None = None


BlackValue = Callable[[list[str], int], float]
TreeOrder = Callable[[list[str], int, list[BuffaloMove], random.Random], list[BuffaloMove]]
#: The win chances the tactics' scores are kept within (their logits, about +-6.9).
CHANCE_FLOOR = 0.001


class BuffaloLean:
    """The :class:`~pbmserv.robots.tactics.LeanPlay` of Buffalo. ``black_value(cells,
    to_move)`` is Black's chance in a position that has not ended; ``tree_order(cells, seat,
    moves, rng)`` the moves the tree considers, in its order (both the policy's). Its
    ``evaluate`` is the logit of the side to move's chance, so a tactics scale of 1 gives it
    back."""

    def __init__(self, black_value: BlackValue, tree_order: TreeOrder) -> None:
        self.black_value = black_value
        self.tree_order = tree_order

    def position(self, state: Any, rng: random.Random | None = None) -> BuffaloPosition:
        return BuffaloPosition(state.cells, state.ply, state.variant == REBEL, state.winner, rng)

    def legal(self, position: BuffaloPosition) -> list[BuffaloMove]:
        """The side to move's legal moves, in the rule module's order."""
        if position.winner is not None:
            return []
        cells = position.cells
        if position.ply % 2 == WHITE:
            moves: list[BuffaloMove] = []
            for src in range(COLS, 6 * COLS):
                piece = cells[src]
                if piece in (DOG, CHIEF):
                    row = PLAIN_MOVES[src]
                    moves.extend(row[dst] for dst in white_targets(cells, src))
            return moves
        moves = [
            PLAIN_MOVES[src][src - COLS]
            for src in range(COLS, CELLS)
            if cells[src] == BUFFALO and cells[src - COLS] == EMPTY
        ]
        return self._with_placements(cells, moves) if position.rebel else moves

    @staticmethod
    def _with_placements(cells: list[str], moves: list[BuffaloMove]) -> list[BuffaloMove]:
        """Rebel Buffalo: each push once per way of sending home the dogs it encloses."""
        found = []
        for move in moves:
            cells[move.src], cells[move.dst] = EMPTY, BUFFALO
            if _encloses_a_dog(cells):
                after = "".join(cells)
                for placements in _all_placements(after, enclosed_dogs(after)):
                    found.append(BuffaloMove(move.src, move.dst, placements))
            else:
                found.append(move)
            cells[move.src], cells[move.dst] = BUFFALO, EMPTY
        return found

    def moves(self, position: BuffaloPosition) -> list[BuffaloMove]:
        """The legal moves, the forcing ones first: the chief's captures; pushes, the most
        advanced first."""
        legal = self.legal(position)
        cells = position.cells
        if position.ply % 2 == WHITE:
            captures = [m for m in legal if cells[m.dst] == BUFFALO]
            return captures + [m for m in legal if cells[m.dst] != BUFFALO] if captures else legal
        return sorted(legal, key=lambda move: move.dst)

    def captures(self, position: BuffaloPosition) -> list[BuffaloMove]:
        """The race's forcing moves: the chief's captures, and Black's pushes to rows 1-2."""
        cells = position.cells
        if position.winner is not None:
            return []
        if position.ply % 2 == WHITE:
            chief = cells.index(CHIEF)
            return [PLAIN_MOVES[chief][t] for t in KING_SQUARES[chief] if cells[t] == BUFFALO]
        pushes = [
            PLAIN_MOVES[src][src - COLS]
            for src in range(COLS, 3 * COLS)
            if cells[src] == BUFFALO and cells[src - COLS] == EMPTY
        ]
        return self._with_placements(cells, pushes) if position.rebel else pushes

    def push(self, position: BuffaloPosition, move: BuffaloMove) -> None:
        cells = position.cells
        src, dst, placements = move
        taken = cells[dst]
        cells[dst], cells[src] = cells[src], EMPTY
        for dog, _ in placements:
            cells[dog] = EMPTY
        for _, target in placements:
            cells[target] = DOG
        position.undo.append((move, taken, position.winner))
        position.ply += 1
        position.chance = None
        position.winner = _winner(cells, position.ply % 2, dst)

    def pop(self, position: BuffaloPosition) -> None:
        cells = position.cells
        (src, dst, placements), taken, position.winner = position.undo.pop()
        for _, target in placements:
            cells[target] = EMPTY
        for dog, _ in placements:
            cells[dog] = DOG
        cells[src], cells[dst] = cells[dst], taken
        position.ply -= 1
        position.chance = None

    def ended(self, position: BuffaloPosition) -> float | None:
        winner = position.winner
        if winner is None:
            return None
        return 1.0 if winner == position.ply % 2 else -1.0

    def no_moves(self, position: BuffaloPosition) -> float:
        return -1.0  # a side with no move has lost (``ended`` says so first)

    def seat(self, position: BuffaloPosition) -> int:
        return position.ply % 2

    def win_chance(self, position: BuffaloPosition) -> float:
        """The policy's evaluation for the side to move (kept: the tree asks twice)."""
        chance = position.chance
        if chance is None:
            to_move = position.ply % 2
            black = self.black_value(position.cells, to_move)
            chance = position.chance = black if to_move == BLACK else 1.0 - black
        return chance

    def evaluate(self, position: BuffaloPosition) -> float:
        chance = min(max(self.win_chance(position), CHANCE_FLOOR), 1.0 - CHANCE_FLOOR)
        return math.log(chance / (1.0 - chance))

    def tree_moves(self, position: BuffaloPosition) -> list[BuffaloMove]:
        """The policy's candidates, ties broken by the position's generator."""
        moves = self.legal(position)
        if not moves:
            return moves
        return self.tree_order(position.cells, position.ply % 2, moves, position.rng) or moves

    def playout_move(self, position: BuffaloPosition, rng: random.Random) -> BuffaloMove | None:
        """Any legal move (the policy plays no playouts: its cut-off is 0)."""
        moves = self.legal(position)
        return moves[rng.randrange(len(moves))] if moves else None


def _encloses_a_dog(cells: Sequence[str]) -> bool:
    """Whether a dog stands between two buffalo, left and right or above and below."""
    for dog in dog_squares(cells):
        col = dog % COLS
        if 0 < col < COLS - 1 and cells[dog - 1] == BUFFALO and cells[dog + 1] == BUFFALO:
            return True
        if COLS <= dog < CELLS - COLS and cells[dog - COLS] == BUFFALO == cells[dog + COLS]:
            return True
    return False


def _winner(cells: list[str], to_move: int, landed: int) -> int | None:
    """The winner after a move that landed on ``landed``, ``to_move`` now to move; None while
    the game goes on (the rule module's ``_judge``)."""
    if landed < COLS and cells[landed] == BUFFALO:
        return BLACK
    if to_move == WHITE:
        for src in range(COLS, 6 * COLS):
            piece = cells[src]
            if piece == CHIEF:
                if any(cells[t] == EMPTY or cells[t] == BUFFALO for t in KING_SQUARES[src]):
                    return None
            elif piece == DOG and any(cells[t] == EMPTY for t in KING_SQUARES[src]):
                return None
        return BLACK
    for src in range(COLS, CELLS):
        if cells[src] == BUFFALO and cells[src - COLS] == EMPTY:
            return None
    return WHITE
