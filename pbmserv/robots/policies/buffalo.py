"""The robots' policy for Buffalo.

The game is a race of tactics: a buffalo on row 2 wins at once unless the chief captures it, so
a buffalo on row 3 with an empty square ahead must be blocked or be within the chief's reach,
and two such threats far apart lose. White's plan is to freeze buffalo with the dogs (a dog
just below a buffalo holds it) and eat the frozen ones with the chief, freeing the dogs again.
Playouts teach nothing here (the defence needs a plan, and random defenders lose to random
buffalo), so the search scores each new position by the evaluation alone. It reads the tactics
first (a push to row 2 nobody captures, a push to row 3 no White move answers), then reckons
the threat column by column: open buffalo by how near they are, the chief answering one it can
reach in time and each free dog another (a dog holding back an advanced buffalo is not free),
and one nobody can answer in time weighing as much as a lost game nearly; frozen buffalo
little, more the further the chief must walk; buffalo that will walk down onto a dog on row 2
and pin it; every buffalo left; an idle chief, and a chief far from the herd's front (the
robots lost to random buffalo by eating stragglers on one wing while a wall of buffalo pinned
every dog on the other). White's tree moves are those that survive the two-move tactics (the
search cannot afford to find them among ~80 moves), and of those the useful ones: captures,
chief steps, dogs that close a column; with ordered candidates and implicit minimax backups.
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
#: An open buffalo's weight by its row (the moves it still needs, less one).
RUNNER_WEIGHT = (0.0, 40.0, 12.0, 5.0, 2.5, 1.2, 0.6)
#: An open buffalo the chief can meet in time weighs this much of it.
INTERCEPTED = 0.5
#: An open buffalo a free dog can answer (it reaches a square below it in one move) weighs this
#: much of it; the heaviest are answered first, each dog once.
COVERED = 0.25
#: A buffalo frozen by a White piece just below it: on row 7, where the chief cannot capture it;
#: elsewhere, more the further the chief has to walk to eat it, and much more on row 3, where
#: it ties its dog to row 2.
FROZEN_ON_ROW7 = 0.3
FROZEN = 0.4
FROZEN_PER_CHIEF_STEP = 0.08
FROZEN_ON_ROW3 = 1.5
#: A buffalo that will walk down to a White piece further below, halving with every step it
#: still needs; three times as much when that piece is on row 2, where it will be pinned.
HELD = 1.0
HELD_DECAY = 0.6
HELD_ON_ROW2 = 3.0
#: A dog below a buffalo on this row or nearer stays to hold it (it is not free to answer
#: another).
HOLDS_FROM_ROW = 5
#: An open buffalo no White piece can answer in time weighs this much more: it walks through.
UNANSWERED = 10.0
#: An open buffalo a free dog can answer only in two moves weighs this much of it.
COVERED_LATER = 0.4
#: Each step beyond two between the chief and each buffalo on rows 3-5: the chief must be
#: near the herd's front to eat the buffalo that pin the dogs, not away on the other wing.
CHIEF_WING = 0.4
#: Each buffalo left on the board.
MATERIAL = 2.0
#: Each step between the chief and the nearest buffalo it may capture (rows 3-6): an idle
#: chief lets Black choose where to break through.
IDLE_CHIEF_STEP = 0.6
#: Black to move is a tempo up.
TEMPO = 0.5
#: The threat of an even game, and how quickly the value leaves it.
EVEN = 25.0
SPREAD = 2.5
#: Black's value when the immediate tactics decide (short of a proven result).
SURE = 0.98


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


def _open_leads(cells: Sequence[str]) -> list[int]:
    """Buffalo with no White piece anywhere below them, the most advanced first."""
    leads = []
    for col in range(COLS):
        for index in range(COLS + col, CELLS, COLS):
            if cells[index] != EMPTY:
                if cells[index] == BUFFALO:
                    leads.append(index)
                break
    return sorted(leads)


def _black_value(cells: Sequence[str], to_move: int) -> float:
    """Black's chance in a position that has not ended: the tactics first, then a threat
    reckoned column by column, where each of White's free pieces answers one open buffalo (a
    dog holding a buffalo back is not free)."""
    chief = cells.index(CHIEF)
    on_row2 = [i for i in ROW2 if cells[i] == BUFFALO]
    if to_move == BLACK:
        if on_row2:
            return 1.0
        if _black_wins_soon(cells):
            return SURE
    elif len(on_row2) > 1 or (on_row2 and not _near(chief, on_row2[0])):
        return 1.0
    threat, committed = 0.0, set()
    runners: list[tuple[float, int, bool]] = []
    for col in range(COLS):
        below = -1  # the nearest White piece below the column's buffalo
        for index in range(COLS + col, CELLS, COLS):
            piece = cells[index]
            if piece == BUFFALO:
                threat += _column_threat(cells, index, below, chief, to_move, runners)
                holds = below == index - COLS or _row(index) <= HOLDS_FROM_ROW
                if below >= 0 and cells[below] == DOG and holds:
                    committed.add(below)
                break
            if piece != EMPTY:
                below = index
    free = [i for i, piece in enumerate(cells) if piece == DOG and i not in committed]
    reach = {dog: _white_targets(cells, dog) for dog in free} if runners else {}
    for weight, lead, intercepted in sorted(runners, reverse=True):
        # A free dog answers it if it can stand below it in its column before it reaches row 2:
        # in one move if it reaches such a square, else (given the time) in two.
        spare = _moves_to_spare(_row(lead), to_move)
        dog = next(
            (d for d in free if any(t % COLS == lead % COLS and t < lead for t in reach[d])), None
        )
        if dog is not None:
            threat += weight * COVERED
            free.remove(dog)
        elif spare >= 2 and (dog := _dog_in_two(cells, lead, free, reach)) is not None:
            threat += weight * COVERED_LATER
            free.remove(dog)
        else:
            threat += weight + (0.0 if intercepted else UNANSWERED)
    threat += MATERIAL * sum(1 for piece in cells if piece == BUFFALO)
    prey = [i for i in range(2 * COLS, 6 * COLS) if cells[i] == BUFFALO]
    if prey:
        threat += IDLE_CHIEF_STEP * min(_king_distance(chief, i) for i in prey)
    front = [i for i in range(2 * COLS, 5 * COLS) if cells[i] == BUFFALO]
    threat += CHIEF_WING * sum(max(0, _king_distance(chief, i) - 2) for i in front)
    if to_move == BLACK:
        threat += TEMPO
    # Short of the tactics above nothing is sure: those values stay out of their range.
    return 0.02 + 0.94 * sigmoid((threat - EVEN) / SPREAD)


def _moves_to_spare(row: int, to_move: int) -> int:
    """White's moves before an open buffalo on ``row`` reaches row 2, less the one it needs."""
    return row - 2 - (1 if to_move == BLACK else 0)


def _dog_in_two(
    cells: Sequence[str], lead: int, free: list[int], reach: dict[int, list[int]]
) -> int | None:
    """A free dog that can stand below ``lead``, a step further down, in two moves: one that
    reaches a square from which such a square is in line (moves are symmetric)."""
    for target in range(lead % COLS + COLS, lead - COLS, COLS):
        if cells[target] != EMPTY:
            continue
        meeting = set(_white_targets(cells, target))
        dog = next((d for d in free if meeting.intersection(reach[d])), None)
        if dog is not None:
            return dog
    return None


def _column_threat(
    cells: Sequence[str],
    buffalo: int,
    below: int,
    chief: int,
    to_move: int,
    runners: list[tuple[float, int, bool]],
) -> float:
    """The threat of the buffalo on ``buffalo`` with the White piece ``below`` it (-1: none);
    an open buffalo's weight goes to ``runners`` instead, to be answered by the free dogs."""
    row = _row(buffalo)
    if below < 0:
        # The chief meets it if it can stand next to the column's row-2 square in time.
        spare = _moves_to_spare(row, to_move)
        intercepted = _king_distance(chief, COLS + buffalo % COLS) - 1 <= spare
        weight = RUNNER_WEIGHT[row - 1] * (INTERCEPTED if intercepted else 1.0)
        runners.append((weight, buffalo, intercepted))
        return 0.0
    if below == buffalo - COLS:
        if row == 7:
            return FROZEN_ON_ROW7
        frozen = FROZEN + FROZEN_PER_CHIEF_STEP * _king_distance(chief, buffalo)
        return frozen + (FROZEN_ON_ROW3 if row == 3 else 0.0)
    steps = row - _row(below) - 1
    return HELD * HELD_DECAY**steps * (HELD_ON_ROW2 if _row(below) == 2 else 1.0)


def _buffalo_evaluate(game: AnyGame, state: Any) -> Values:
    value = _black_value(state.cells, state.ply % 2)
    return (value, 1.0 - value)


# --- the tree's moves ------------------------------------------------------------------------


def _buffalo_candidates(
    game: AnyGame, state: Any, seat: int, moves: list[Any], rng: random.Random
) -> list[Any]:
    """Black: every push, open buffalo first. White: the moves that survive a push to row 2,
    and among them captures, chief steps and dogs closing a column, the most urgent first.
    Ties go in the generator's order: the search gives equal moves their turns in that order,
    so a robot does not replay the same game move for move."""
    cells = state.cells
    if seat == BLACK:
        open_set = set(_open_leads(cells))
        return sorted(moves, key=lambda m: (m.src not in open_set, rng.random()))
    open_leads = _open_leads(cells)
    urgency = {lead % COLS: rank for rank, lead in enumerate(open_leads)}
    after = {move: _moved(cells, move.src, move.dst) for move in moves}
    survivors = [m for m in moves if _white_survives(after[m])]
    safe = [m for m in survivors if not _black_wins_soon(after[m])]
    scored = []
    for move in safe or survivors or moves:
        if cells[move.dst] == BUFFALO:
            rank: tuple[float, ...] = (0, move.dst)
        elif cells[move.src] == DOG:
            col = move.dst % COLS
            if col not in urgency or move.dst > open_leads[urgency[col]]:
                continue  # a dog that closes no column
            rank = (1 + urgency[col], -move.dst, rng.random())
        else:
            rank = (20, rng.random())
        scored.append((rank, move))
    if not scored:  # only idle dog moves left: let the search see them all
        return safe or survivors or moves
    scored.sort(key=lambda pair: pair[0])
    return [move for _, move in scored]


POLICY = Policy(
    evaluate=_buffalo_evaluate,
    cutoff=0,
    candidates=_buffalo_candidates,
    minimax_weight=0.3,
    temperatures=(0.5, 0.0, 0.0),
    ordered=True,
    # Little exploration: with more, the top level's longer search spread its visits over
    # defences that all look lost and lost to the greedy player 16 games of 20 as White.
    exploration=0.2,
)
