"""Playing a game as the server does: random playouts with the server's seeding, and replays."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from pbmserv.games.base import (
    Game,
    move_rng,
)
from pbmserv.games.testing.kit import DEFAULT_MAX_PLIES, Playout, Step, fail

# --- playing ---------------------------------------------------------------------------------


def random_playout(
    game: Game,
    options: Mapping[str, Any],
    seed: int,
    *,
    max_plies: int = DEFAULT_MAX_PLIES,
    require_end: bool = True,
) -> Playout:
    """Play random legal moves from ``new_game``: at each turn a random seat among those to
    move picks a random legal move. ``options`` are validated values (not raw strings)."""
    chooser = random.Random(f"playout:{seed}")
    state = game.new_game(options, random.Random(seed))
    playout = Playout(game, dict(options), seed, state)
    for ply in range(max_plies):
        seats = game.to_move(state).seats
        if not seats:
            return playout
        seat = chooser.choice(sorted(seats))
        moves = game.legal_moves(state, seat)
        if not moves:
            raise fail(f"{playout.where(ply)}: seat {seat} is to move but has no legal move")
        move = chooser.choice(moves)
        text = game.format_move(state, move)
        after = game.apply(state, move, move_rng(seed, ply))
        playout.steps.append(Step(ply, seat, move, text, state, after))
        state = after
    if require_end and game.to_move(state).seats:
        raise fail(f"{playout.where()}: no end after {max_plies} moves")
    return playout


def replay(
    game: Game, options: Mapping[str, Any], seed: int, record: Iterable[tuple[int, str]]
) -> list[Any]:
    """Replay ``(seat, text)`` moves from the start as the server does; every state, start
    first. Raises the game's MoveError if a text does not parse."""
    state = game.new_game(options, random.Random(seed))
    states = [state]
    for ply, (seat, text) in enumerate(record):
        state = game.apply(state, game.parse_move(state, seat, text), move_rng(seed, ply))
        states.append(state)
    return states
