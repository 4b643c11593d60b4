"""The robots' policy for Buffalo.

The game is a race of tactics: a buffalo on row 2 wins at once unless the chief captures it, so
a buffalo on row 3 with an empty square ahead must be blocked or be within the chief's reach,
and two such threats far apart lose. Random play lets the buffalo through every time, so the
playouts play the obvious tactics for both sides (Black pushes an open buffalo, White captures,
blocks the most advanced open buffalo with a dog and brings the chief near it) and stop after a
few moves (a fast playout on a list of cells). The evaluation reads the tactics first (a push
to row 2 nobody captures, a push to row 3 no White move answers), then weighs the open
columns (buffalo with nothing ahead) by how close they are, less the one the chief can reach in
time and the dogs still free to block; a buffalo held by a dog counts as one that will walk
down to it, so a buffalo frozen high costs little and one on row 3 pinning a dog much.
White's tree moves are those that survive the two-move tactics (the search cannot afford to
find them among ~80 moves), and of those the useful ones: captures, chief steps, dogs that
close a column; with ordered candidates and implicit minimax backups.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.policy import Policy, Values, sigmoid

COLS = 11
CELLS = 77
BLACK, WHITE = 0, 1
BUFFALO, DOG, CHIEF, EMPTY = "B", "D", "C", "."
ROW2 = range(COLS, 2 * COLS)
ROW3 = range(2 * COLS, 3 * COLS)
KING_STEPS = tuple((dc, dr) for dc in (-1, 0, 1) for dr in (-1, 0, 1) if dc or dr)
#: The weight of an open buffalo by the moves it still needs to reach row 1.
OPEN_WEIGHT = (0.0, 60.0, 16.0, 6.0, 2.5, 1.2, 0.6)
#: Black's value when the immediate tactics decide (short of a proven result).
SURE = 0.98
PLAYOUT_PLIES = 10


def _row(index: int) -> int:
    return index // COLS + 1


def _near(a: int, b: int) -> bool:
    """Whether ``a`` and ``b`` are a king's step apart (or the same square)."""
    return abs(a % COLS - b % COLS) <= 1 and abs(a // COLS - b // COLS) <= 1


def _king_distance(a: int, b: int) -> int:
    return max(abs(a % COLS - b % COLS), abs(a // COLS - b // COLS))


def _white_targets(cells: Sequence[str], src: int) -> list[int]:
    """Squares the dog or chief on ``src`` reaches (rows 2-6; only the chief captures)."""
    col, row = src % COLS, src // COLS + 1
    chief = cells[src] == CHIEF
    found = []
    for dc, dr in KING_STEPS:
        c, r = col + dc, row + dr
        while 0 <= c < COLS and 2 <= r <= 6:
            target = cells[(r - 1) * COLS + c]
            if target == EMPTY or (chief and target == BUFFALO):
                found.append((r - 1) * COLS + c)
            if target != EMPTY or chief:
                break
            c, r = c + dc, r + dr
    return found


def _row3_threats(cells: Sequence[str]) -> list[int]:
    """Buffalo on row 3 that can step to row 2 (and win the move after)."""
    return [i for i in ROW3 if cells[i] == BUFFALO and cells[i - COLS] == EMPTY]


def _white_survives(cells: Sequence[str]) -> bool:
    """With Black to move: whether every push to row 2 can be captured by the chief (two far
    apart cannot: after the first capture the chief is too far from the second)."""
    if any(cells[i] == BUFFALO for i in ROW2):
        return False
    threats = _row3_threats(cells)
    if not threats:
        return True
    chief = cells.index(CHIEF)
    if any(not _near(chief, i - COLS) for i in threats):
        return False
    return all(abs(a % COLS - b % COLS) <= 1 for a in threats for b in threats)


def _rescues(cells: Sequence[str]) -> list[tuple[int, int]]:
    """White's moves that can meet a push to row 2: the chief's, and dogs going to row 2."""
    chief = cells.index(CHIEF)
    moves = [(chief, t) for t in _white_targets(cells, chief)]
    for dog in (i for i, piece in enumerate(cells) if piece == DOG):
        moves.extend((dog, t) for t in _white_targets(cells, dog) if t < 2 * COLS)
    return moves


def _moved(cells: Sequence[str], src: int, dst: int) -> list[str]:
    chars = list(cells)
    chars[dst], chars[src] = chars[src], EMPTY
    return chars


def _black_wins_soon(cells: Sequence[str]) -> bool:
    """With Black to move: whether Black wins within two of its moves, by a push to row 2
    now or by a push to row 3 that no White move answers."""
    if not _white_survives(cells):
        return True
    for src in range(3 * COLS, 4 * COLS):
        if cells[src] != BUFFALO or cells[src - COLS] != EMPTY or cells[src - 2 * COLS] != EMPTY:
            continue
        pushed = _moved(cells, src, src - COLS)
        if not any(_white_survives(_moved(pushed, a, b)) for a, b in _rescues(pushed)):
            return True
    return False


def _columns(
    cells: Sequence[str],
) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """Open leads (buffalo with nothing ahead, the most advanced first), guarded leads (the
    lowest buffalo above a White piece, with that piece) and idle dogs (not the first piece
    below a buffalo)."""
    open_leads, guarded, guards = [], [], set()
    for col in range(COLS):
        lowest_white = -1
        for index in range(COLS + col, CELLS, COLS):
            piece = cells[index]
            if piece == BUFFALO:
                if lowest_white < 0:
                    open_leads.append(index)
                else:
                    guarded.append((index, lowest_white))
                    guards.add(lowest_white)
                break
            if piece != EMPTY:
                lowest_white = index  # the latest White piece met, nearest the buffalo
    open_leads.sort()
    idle = [i for i, piece in enumerate(cells) if piece == DOG and i not in guards]
    return open_leads, guarded, idle


def _black_value(cells: Sequence[str], to_move: int) -> float:
    """Black's chance in a position that has not ended."""
    chief = cells.index(CHIEF)
    on_row2 = [i for i in ROW2 if cells[i] == BUFFALO]
    if to_move == BLACK:
        if on_row2:
            return 1.0
        if _black_wins_soon(cells):
            return SURE
    elif len(on_row2) > 1 or (on_row2 and not _near(chief, on_row2[0])):
        return 1.0
    open_leads, guarded, idle = _columns(cells)
    threat, chief_used = 0.0, False
    for lead in open_leads:
        weight = OPEN_WEIGHT[_row(lead) - 1]
        # The chief meets one buffalo in time if it can stand next to its row-2 square by then.
        if not chief_used and _king_distance(chief, COLS + lead % COLS) - 1 <= _row(lead) - 2:
            chief_used = True
            weight *= 0.3
        threat += weight
    for _lead, guard in guarded:
        # It walks down to the square above its guard, pinning the guard there: a buffalo held
        # high costs White little, one held on row 3 ties a dog to row 2.
        threat += OPEN_WEIGHT[_row(guard)] * 0.4
    buffalo = sum(1 for piece in cells if piece == BUFFALO)
    movable = sum(1 for i in range(COLS, CELLS) if cells[i] == BUFFALO and cells[i - COLS] == EMPTY)
    # Each dog free to block answers about one open column; a capture or a frozen buffalo
    # brings Black nearer to having no move.
    threat += 0.4 * buffalo + 0.3 * movable - 1.5 * len(idle)
    if to_move == BLACK:
        threat += 1.0
    # Short of the tactics above nothing is sure: those values stay out of their range.
    return 0.02 + 0.94 * sigmoid((threat - 8.0) / 4.0)


def _buffalo_evaluate(game: AnyGame, state: Any) -> Values:
    value = _black_value(state.cells, state.ply % 2)
    return (value, 1.0 - value)


# --- playout moves, on a list of cells -------------------------------------------------------


def _black_pick(cells: Sequence[str], rng: random.Random) -> int | None:
    """The buffalo Black pushes (its square), None if none can move."""
    movable = [i for i in range(COLS, CELLS) if cells[i] == BUFFALO and cells[i - COLS] == EMPTY]
    if not movable:
        return None
    if movable[0] < 3 * COLS:  # on row 2 or 3: push it, it wins or forces the chief
        return movable[0]
    if rng.random() < 0.6:
        open_leads = _columns(cells)[0]
        if open_leads:
            return open_leads[0] if rng.random() < 0.5 else rng.choice(open_leads)
    return rng.choice(movable)


def _white_pick(cells: Sequence[str], rng: random.Random) -> tuple[int, int] | None:
    """White's (source, target): a capture, a dog closing one of the two most advanced open
    columns, the chief stepping towards it, else any move; the first of them that meets every
    push to row 2. None if White cannot move."""
    chief = cells.index(CHIEF)
    chief_targets = _white_targets(cells, chief)
    open_leads, _, idle = _columns(cells)
    dogs = [i for i, piece in enumerate(cells) if piece == DOG]
    wanted = [(chief, t) for t in sorted(chief_targets) if cells[t] == BUFFALO]
    for lead in open_leads[:2]:
        col = lead % COLS
        for dog in idle + [d for d in dogs if d not in idle]:
            blocks = [t for t in _white_targets(cells, dog) if t % COLS == col and t < lead]
            if blocks:
                rng.shuffle(blocks)
                wanted.extend((dog, t) for t in blocks)
        toward = COLS + col
        nearer = _king_distance(chief, toward)
        wanted.extend((chief, t) for t in chief_targets if _king_distance(t, toward) < nearer)
    for move in wanted:
        if _white_survives(_moved(cells, *move)):
            return move
    moves = [(chief, t) for t in chief_targets]
    for dog in dogs:
        moves.extend((dog, t) for t in _white_targets(cells, dog))
    if not moves:
        return None
    rng.shuffle(moves)
    for move in moves[:12]:
        if _white_survives(_moved(cells, *move)):
            return move
    return moves[0]


def _fast_playout(game: AnyGame, state: Any, rng: random.Random) -> Values | None:
    """The tactical playout on a list of cells (standard Buffalo; Rebel's dog placements need
    the rules, so it plays the ordinary way)."""
    if state.variant != "standard":
        return None
    cells = list(state.cells)
    to_move = state.ply % 2
    for _ in range(PLAYOUT_PLIES):
        if to_move == BLACK:
            src = _black_pick(cells, rng)
            if src is None:
                return (0.0, 1.0)
            cells[src - COLS], cells[src] = BUFFALO, EMPTY
            if src < 2 * COLS:
                return (1.0, 0.0)
        else:
            move = _white_pick(cells, rng)
            if move is None:
                return (1.0, 0.0)
            src, dst = move
            cells[dst], cells[src] = cells[src], EMPTY
        to_move = 1 - to_move
    value = _black_value(cells, to_move)
    return (value, 1.0 - value)


def _buffalo_choose(
    game: AnyGame, state: Any, seat: int, moves: Sequence[Any], rng: random.Random
) -> Any:
    """The ordinary playout's move (Rebel Buffalo): the same choices, among the legal moves."""
    cells = state.cells
    if seat == BLACK:
        src = _black_pick(cells, rng)
        chosen = [m for m in moves if m.src == src]
    else:
        pick = _white_pick(cells, rng)
        chosen = [m for m in moves if (m.src, m.dst) == pick]
    return chosen[rng.randrange(len(chosen))] if chosen else moves[rng.randrange(len(moves))]


# --- the tree's moves ------------------------------------------------------------------------


def _buffalo_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """Black: every push, open and advanced buffalo first. White: the moves that survive a
    push to row 2, and among them captures, chief steps and dogs closing a column, the most
    urgent first."""
    cells = state.cells
    if seat == BLACK:
        open_set = set(_columns(cells)[0])
        return sorted(moves, key=lambda m: (m.src not in open_set, m.src))
    open_leads = _columns(cells)[0]
    urgency = {lead % COLS: rank for rank, lead in enumerate(open_leads)}
    after = {move: _moved(cells, move.src, move.dst) for move in moves}
    survivors = [m for m in moves if _white_survives(after[m])]
    safe = [m for m in survivors if not _black_wins_soon(after[m])]
    scored = []
    for move in safe or survivors or moves:
        if cells[move.dst] == BUFFALO:
            rank: tuple[int, int] = (0, move.dst)
        elif cells[move.src] == DOG:
            col = move.dst % COLS
            if col not in urgency or move.dst > open_leads[urgency[col]]:
                continue  # a dog that closes no column
            rank = (1 + urgency[col], -move.dst)
        else:
            rank = (20, move.dst)
        scored.append((rank, move))
    if not scored:  # only idle dog moves left: let the search see them all
        return safe or survivors or moves
    scored.sort(key=lambda pair: pair[0])
    return [move for _, move in scored]


POLICY = Policy(
    choose=_buffalo_choose,
    evaluate=_buffalo_evaluate,
    cutoff=PLAYOUT_PLIES,
    playout=_fast_playout,
    candidates=_buffalo_candidates,
    minimax_weight=0.3,
    ordered=True,
    exploration=0.5,
)
