"""The robots' strengths and the public entry points: :func:`robot_move`, :func:`robot_value`.

A level is a search budget: iterations decide the answer (the same generator seed gives the
same move), and a CPU cap stops a search that would run too long on a slow or busy machine.
Each level searches eight times as long as the one below it, and the lower levels draw their
move by its visits (a temperature) rather than always playing the most visited one: a
shorter search alone plays much the same moves where the evaluation does most of the work
(measured on Extinction, L2 against L1 without temperatures won 17 of 24, with them 24 of 24),
as a weaker player makes the mistakes a stronger one does not. A game's policy may set its own
temperatures (Buffalo's defence loses to one lesser move, so only its L1 errs, and less often),
and a factor on one level's iterations (``Policy.level_scales``: Buffalo's L3 spends its CPU
headroom).
Where a game's policy has tactics (:mod:`pbmserv.robots.tactics`), a stronger level reads them
deeper and lets less slip past them: its mistakes are a weaker plan, not a piece left hanging.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from pbmserv.games.base import AnyGame
from pbmserv.robots.lean_search import LeanSearch
from pbmserv.robots.mcts import Budget, SearchResult, outcome_values, search
from pbmserv.robots.policies import policy_for
from pbmserv.robots.policy import Policy
from pbmserv.robots.tactics import LeanPlay
from pbmserv.robots.view import SeatView

LEVELS: tuple[int, ...] = (1, 2, 3)

#: Iterations, CPU cap (seconds), temperature and plies of tactics (where a game has them) of
#: each level.
BUDGETS: dict[int, Budget] = {
    1: Budget(iterations=50, cpu_seconds=1.0, temperature=1.0, tactics_depth=1),
    2: Budget(400, cpu_seconds=2.5, temperature=0.3, tactics_depth=3, tactics_margin=0.3),
    3: Budget(iterations=3200, cpu_seconds=5.0, tactics_depth=5, tactics_margin=0.15),
}


@dataclass(frozen=True)
class Choice:
    """A robot's move and what it cost."""

    text: str  # game.format_move(state, move), the move as a player would mail it
    value: float  # the robot's estimate of its seat's result, 0 (loss) .. 1 (win), draws 0.5
    iterations: int  # searches done
    # CPU time spent (time.process_time); two choices compare equal without it, as it varies
    # from run to run where nothing else does.
    cpu_seconds: float = field(compare=False)


def _budget(game: AnyGame, level: int, cpu_seconds: float | None, temperature: bool) -> Budget:
    if level not in BUDGETS:
        raise ValueError(f"no robot level {level}: the levels are {', '.join(map(str, LEVELS))}")
    budget, policy = BUDGETS[level], policy_for(game)
    scale = policy.iteration_scale
    if policy.level_scales is not None:
        scale *= policy.level_scales[level - 1]
    iterations = round(budget.iterations * scale)
    cap = budget.cpu_seconds if cpu_seconds is None else min(budget.cpu_seconds, cpu_seconds)
    drawn = budget.temperature if policy.temperatures is None else policy.temperatures[level - 1]
    drawn = drawn if temperature else 0.0
    return Budget(iterations, cap, drawn, budget.tactics_depth, budget.tactics_margin)


def level_policy(game: AnyGame, level: int) -> Policy:
    """The game's policy as ``level`` plays it: every legal move in the tree below the
    policy's ``candidates_from_level``."""
    policy = policy_for(game)
    if level < policy.candidates_from_level and policy.candidates is not None:
        return replace(policy, candidates=None)
    return policy


def _search(
    game: AnyGame,
    state: Any,
    seat: int,
    level: int,
    rng: random.Random,
    cpu: float | None,
    temperature: bool = True,
) -> SearchResult:
    budget, policy = _budget(game, level, cpu, temperature), level_policy(game, level)
    fixed = not (game.SPEC.uses_chance or game.SPEC.hidden_information)
    lean = policy.tactics.lean if policy.tactics is not None else None
    if policy.lean_tree and fixed and isinstance(lean, LeanPlay):
        return LeanSearch(game, state, seat, policy, rng, lean).run(budget)
    return search(game, state, seat, policy, budget, rng)


def robot_move(
    game: AnyGame,
    view: SeatView,
    level: int,
    rng: random.Random,
    cpu_seconds: float | None = None,
) -> Choice:
    """The move a robot of `level` makes for the seat of ``view`` (a seat to move).
    `cpu_seconds` caps the CPU spent (None: the level's own cap). It is handed the seat's view
    alone (pbmserv.robots.view: no other seat's secrets) and never the game's seed; in a game
    with secrets it searches determinize(view, seat, rng) samples."""
    state, seat = view.state, view.seat
    if seat not in game.to_move(state).seats:
        raise ValueError(f"seat {seat} is not to move")
    found = _search(game, state, seat, level, rng, cpu_seconds)
    assert found.move is not None  # the seat is to move, so it has a legal move
    return Choice(
        text=game.format_move(state, found.move),
        value=found.value,
        iterations=found.iterations,
        cpu_seconds=found.cpu_seconds,
    )


def robot_value(
    game: AnyGame,
    view: SeatView,
    level: int,
    rng: random.Random,
    *,
    cpu_seconds: float | None = None,
) -> float:
    """The robot's estimate of the result of the seat of ``view`` (0..1), for deciding on a
    draw offer."""
    state, seat = view.state, view.seat
    result = game.outcome(state)
    if result is not None:
        return outcome_values(result, game.SPEC.players)[seat]
    # Judged by the best move, not one drawn at the level's temperature.
    found = _search(game, state, seat, level, rng, cpu_seconds, temperature=False)
    # When the seat is to move its best move says most; otherwise the position's mean.
    return found.value if found.move is not None else found.root_value
