"""How strong the robots are: real games to the end between the levels, and against the 1-ply
greedy player and the uniform random player, seats alternated.

Run ``python bench/robots.py`` (40 games a pair), ``--quick`` (4 a pair), ``--games N``,
``--only GAME`` (repeatable), ``--pairs L2:L1,L3:greedy`` (the first named is measured).
Every robot move goes through its mailed text: ``parse_move`` must read it back as the same
move. Chance is drawn as the server draws it (``move_rng(seed, ply)`` of the board's seed), the
robots from generators of their own. Prints, per game and pair, wins/draws/losses and the win
share (a draw half a win) of the first player named, whether the goal is met, and the CPU ms
per move of each robot level.

Goals (the issue's): each level beats the level below in at least 75% of the games; the top
level beats the greedy player in at least 90% and the random player in at least 98%.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.games import all_games, find_game
from pbmserv.games.base import AnyGame, move_rng
from pbmserv.robots.baselines import greedy_move, random_move
from pbmserv.robots.levels import LEVELS, robot_move

MAX_PLIES = 3000
TOP = f"L{max(LEVELS)}"
DEFAULT_PAIRS = (
    *(f"L{high}:L{low}" for low, high in zip(LEVELS, LEVELS[1:], strict=False)),
    f"{TOP}:greedy",
    f"{TOP}:random",
)

#: A player: the text of its move for ``seat``.
Player = Callable[[AnyGame, Any, int, random.Random], str]


@dataclass
class Cpu:
    """CPU seconds spent and moves made, per player name."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    moves: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def ms_per_move(self, name: str) -> float | None:
        return 1000 * self.seconds[name] / self.moves[name] if self.moves[name] else None


def player(name: str) -> Player:
    """The player called ``name``: ``L1``.. a robot level, ``greedy`` or ``random``."""
    if name.startswith("L") and name[1:].isdigit() and int(name[1:]) in LEVELS:
        level = int(name[1:])
        return lambda game, state, seat, rng: robot_move(game, state, seat, level, rng).text
    chooser = {"greedy": greedy_move, "random": random_move}.get(name)
    if chooser is None:
        raise SystemExit(f"no player {name!r}: L1..L{max(LEVELS)}, greedy or random")
    return lambda game, state, seat, rng: game.format_move(state, chooser(game, state, seat, rng))


def play(
    game: AnyGame, options: dict[str, Any], seed: int, names: tuple[str, ...], cpu: Cpu
) -> frozenset[int]:
    """One game, ``names[seat]`` playing each seat; the winning seats (empty: a draw)."""
    players = [player(name) for name in names]
    rngs = [random.Random(f"robot:{game.SPEC.name}:{seed}:{seat}") for seat in range(len(names))]
    state = game.new_game(options, random.Random(seed))
    for ply in range(MAX_PLIES):
        seats = game.to_move(state).seats
        if not seats:
            break
        seat = min(seats)
        started = time.process_time()
        text = players[seat](game, state, seat, rngs[seat])
        cpu.seconds[names[seat]] += time.process_time() - started
        cpu.moves[names[seat]] += 1
        move = game.parse_move(state, seat, text)
        if game.format_move(state, move) != text:
            raise AssertionError(f"{game.SPEC.name}: {text!r} does not read back")
        state = game.apply(state, move, move_rng(seed, ply))
    result = game.outcome(state)
    if result is None:
        raise AssertionError(f"{game.SPEC.name}: no end after {MAX_PLIES} moves")
    return result.winners


def goal(pair: str) -> float:
    """The win share the first player of ``pair`` must reach."""
    first, second = pair.split(":")
    if first == TOP and second == "greedy":
        return 0.90
    if first == TOP and second == "random":
        return 0.98
    return 0.75


def run_pair(
    game: AnyGame, options: dict[str, Any], pair: str, games: int, cpu: Cpu
) -> tuple[int, int, int]:
    """Wins, draws and losses of the first player of ``pair`` over ``games`` games."""
    first, second = pair.split(":")
    wins = draws = losses = 0
    for index in range(games):
        seat = index % 2  # the measured player takes seat 0, then seat 1, and so on
        names = (first, second) if seat == 0 else (second, first)
        winners = play(game, options, 1000 + index, names, cpu)
        if not winners:
            draws += 1
        elif seat in winners:
            wins += 1
        else:
            losses += 1
        print(".", end="", file=sys.stderr, flush=True)
    return wins, draws, losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 games a pair")
    parser.add_argument("--games", type=int, help="games a pair (default 40, quick 4)")
    parser.add_argument("--only", action="append", help="only this game (repeatable)")
    parser.add_argument("--pairs", help="comma-separated pairs like L2:L1 (default: all goals)")
    args = parser.parse_args(argv)
    games = args.games or (4 if args.quick else 40)
    pairs = args.pairs.split(",") if args.pairs else list(DEFAULT_PAIRS)
    chosen = [find_game(name) for name in args.only] if args.only else all_games()
    if any(g is None for g in chosen):
        raise SystemExit(f"unknown game in {args.only}")
    print(f"{games} games a pair, seats alternated; share = (wins + draws/2) / games")
    print(f"{'game':<11} {'pair':<10} {'W':>3} {'D':>3} {'L':>3} {'share':>6} {'goal':>5}  met")
    all_met = True
    for game in chosen:
        assert game is not None
        options = game.validate_options({}, game.SPEC.players)
        cpu = Cpu()
        started = time.perf_counter()
        for pair in pairs:
            wins, draws, losses = run_pair(game, options, pair, games, cpu)
            share = (wins + draws / 2) / games
            met = share >= goal(pair)
            all_met = all_met and met
            print(file=sys.stderr)
            print(
                f"{game.SPEC.name:<11} {pair:<10} {wins:>3} {draws:>3} {losses:>3} "
                f"{share:>6.0%} {goal(pair):>5.0%}  {'yes' if met else 'NO'}",
                flush=True,
            )
        per_level = []
        for level in LEVELS:
            ms = cpu.ms_per_move(f"L{level}")
            if ms is not None:
                per_level.append(f"L{level} {ms:.0f} ms ({cpu.moves[f'L{level}']} moves)")
        print(
            f"{game.SPEC.name:<11} CPU per robot move: {', '.join(per_level)}; "
            f"{time.perf_counter() - started:.0f} s wall",
            flush=True,
        )
    print("every goal met" if all_met else "some goals NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
