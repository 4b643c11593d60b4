"""How strong the robots are: real games to the end between the levels, and against the 1-ply
greedy player and the uniform random player, seats alternated.

Run ``python bench/robots.py`` (40 games a pair), ``--quick`` (4 a pair), ``--games N``,
``--only GAME`` (repeatable), ``--pairs L2:L1,L3:greedy`` (the first named is measured),
``--jobs N`` (games played in N processes at once), ``--record FILE`` (each finished game is
kept in FILE, a JSON line each, and a later run with the same robots' code reuses it: the full
run takes hours, and may be done in parts). Every robot move goes through its mailed text:
``parse_move`` must read it back as the same move. Chance is drawn as the server draws it
(``move_rng(seed, ply)`` of the board's seed), the robots from generators of their own. Prints,
per game and pair, wins/draws/losses and the win share (a draw half a win) of the first player
named, whether the goal is met, and the CPU ms per move of each robot level.

Goals (the issue's): each level beats the level below in at least 75% of the games; the top
level beats the greedy player in at least 90% and the random player in at least 98%.

A record's games are kept under ``code_version(game)``, a digest of the code that decides them,
so a change to that code leaves them behind, even a change that plays every game alike (code
moved, a module split). ``--record FILE --carry-over`` (with ``--only`` and ``--jobs`` as
usual) brings them over honestly and plays nothing else: for each game whose games stand in
the record only under an older digest (the latest one), it replays with today's code, from
the seeds the record's games were played with, the recorded game with the fewest moves of
each pair there, and compares the result and each player's number of moves with the record.
Only if every replay of a game matches exactly does it append that version's games (one line
a game, the last where a game stands twice) under today's digest; the old lines stay. It
prints each game it replayed and what it carried, or why it refused (and then exits 1).
"""

from __future__ import annotations

import argparse
import ast
import atexit
import hashlib
import inspect
import json
import math
import os
import random
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

try:
    import pbmserv  # noqa: F401
except ImportError:  # run from a checkout without installing the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pbmserv.games import all_games, find_game
from pbmserv.games.base import AnyGame, move_rng
from pbmserv.robots.baselines import greedy_move, random_move
from pbmserv.robots.levels import LEVELS, robot_move
from pbmserv.robots.view import seat_view

sys.path.insert(0, str(Path(__file__).resolve().parent))  # its sibling, imported as a script's
from fairy_stockfish import (
    close_engines,
    engine_identity,
    engine_move,
    engine_path,
    engine_setting,
)  # noqa: E402

MAX_PLIES = 3000
TOP = f"L{max(LEVELS)}"
DEFAULT_PAIRS = (
    *(f"L{high}:L{low}" for low, high in zip(LEVELS, LEVELS[1:], strict=False)),
    f"{TOP}:greedy",
    f"{TOP}:random",
)

#: The outside yardstick (Extinction only): each level against Fairy-Stockfish at one-ply-ish
#: searches, weakest level against the weakest engine; the goal of each is half the points.
ENGINE_GAME = "extinction"
ENGINE_PAIRS = ("L1:fsf-20d1", "L2:fsf0d1", "L3:fsf20d1")
#: The issue's stretch: level 3 against a two-ply engine.
ENGINE_STRETCH = "L3:fsf20d2"

T = TypeVar("T")

#: A player: the text of its move for ``seat``.
Player = Callable[[AnyGame, Any, int, random.Random], str]


@dataclass
class Cpu:
    """CPU seconds spent and moves made, per player name."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    moves: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, other: Cpu) -> None:
        for name, seconds in other.seconds.items():
            self.seconds[name] += seconds
            self.moves[name] += other.moves[name]

    def ms_per_move(self, name: str) -> float | None:
        return 1000 * self.seconds[name] / self.moves[name] if self.moves[name] else None


@dataclass(frozen=True)
class Played:
    """One finished game of a pair: the first-named player's result and the CPU spent."""

    game: str
    pair: str
    index: int
    result: str  # "win", "draw" or "loss" of the first player named
    cpu: dict[str, tuple[float, int]]  # per player name: CPU seconds, moves


class OlderRobot:
    """A level of another commit's robots (``L3@REV``), thinking in a process of REV's own
    (bench/robot_worker.py, run by REV's venv, built by bench/rig/baseline.py). Its CPU is the
    worker's, as it reports it."""

    def __init__(self, level: int, rev: str) -> None:
        self.level, self.rev = level, rev
        self.last_cpu = 0.0

    def __call__(self, game: AnyGame, state: Any, seat: int, rng: random.Random) -> str:
        worker = _older_worker(self.rev)
        assert worker.stdin is not None and worker.stdout is not None
        request = {
            "game": game.SPEC.name,
            "state": game.dump(state),
            "seat": seat,
            "level": self.level,
            "seed": rng.getrandbits(64),
        }
        worker.stdin.write(json.dumps(request) + "\n")
        worker.stdin.flush()
        line = worker.stdout.readline()
        if not line:
            raise RuntimeError(f"the robot worker of {self.rev} stopped")
        answer = json.loads(line)
        self.last_cpu = float(answer["cpu"])
        return str(answer["text"])


#: By the process that started each (a forked --jobs process starts its own).
_OLDER_WORKERS: dict[tuple[int, str], subprocess.Popen[str]] = {}


def _older_worker(rev: str) -> subprocess.Popen[str]:
    worker = _OLDER_WORKERS.get((os.getpid(), rev))
    if worker is None:
        root = Path(__file__).resolve().parents[1]
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        from bench.rig.baseline import build_baseline

        baseline = build_baseline(rev, say=lambda text: print(text, file=sys.stderr))
        script = Path(__file__).resolve().parent / "robot_worker.py"
        worker = subprocess.Popen(
            [str(baseline.folder / ".venv" / "bin" / "python"), str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
            env={**os.environ, "PYTHONPATH": ""},  # REV's own pbmserv, not this tree's
        )
        atexit.register(worker.kill)
        _OLDER_WORKERS[(os.getpid(), rev)] = worker
    return worker


def player(name: str) -> Player:
    """The player called ``name``: ``L1``.. a robot level, ``greedy``, ``random``,
    Fairy-Stockfish (``fsf20d1``: Skill Level 20, depth 1; see bench/fairy_stockfish.py), or a
    level of another commit (``L3@020b28e``: give a commit's hash, which names fixed code)."""
    level_text, _, rev = name.partition("@")
    if rev and level_text.startswith("L") and level_text[1:].isdigit():
        return OlderRobot(int(level_text[1:]), rev)
    if name.startswith("L") and name[1:].isdigit() and int(name[1:]) in LEVELS:
        level = int(name[1:])
        return lambda game, state, seat, rng: (
            robot_move(game, seat_view(game, state, seat), level, rng).text
        )
    setting = engine_setting(name)
    if setting is not None:

        def engine(game: AnyGame, state: Any, seat: int, rng: random.Random) -> str:
            if game.SPEC.name != ENGINE_GAME:
                raise SystemExit(f"{name}: Fairy-Stockfish plays only {ENGINE_GAME} here")
            return game.format_move(state, engine_move(setting, state.board()))

        return engine
    chooser = {"greedy": greedy_move, "random": random_move}.get(name)
    if chooser is None:
        raise SystemExit(
            f"no player {name!r}: L1..L{max(LEVELS)}, greedy, random or fsf<skill>d<depth>"
        )
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
        # Another commit's robot thinks in its own process, which reports its CPU.
        remote = getattr(players[seat], "last_cpu", None)
        cpu.seconds[names[seat]] += time.process_time() - started if remote is None else remote
        cpu.moves[names[seat]] += 1
        move = game.parse_move(state, seat, text)
        if game.format_move(state, move) != text:
            raise AssertionError(f"{game.SPEC.name}: {text!r} does not read back")
        state = game.apply(state, move, move_rng(seed, ply))
    result = game.outcome(state)
    if result is None:
        raise AssertionError(f"{game.SPEC.name}: no end after {MAX_PLIES} moves")
    return result.winners


def play_one(game_name: str, pair: str, index: int) -> Played:
    """Game ``index`` of ``pair``: the measured player takes seat 0, then seat 1, and so on."""
    game = find_game(game_name)
    assert game is not None
    options = game.validate_options({}, game.SPEC.players)
    first, second = pair.split(":")
    seat = index % 2
    names = (first, second) if seat == 0 else (second, first)
    cpu = Cpu()
    try:
        winners = play(game, options, 1000 + index, names, cpu)
    finally:
        close_engines()  # one a game: a --jobs worker could not exit with one running
    result = "draw" if not winners else "win" if seat in winners else "loss"
    spent = {name: (cpu.seconds[name], cpu.moves[name]) for name in cpu.moves}
    return Played(game_name, pair, index, result, spent)


def is_engine_pair(pair: str) -> bool:
    return any(engine_setting(name) is not None for name in pair.split(":"))


def goal(pair: str) -> float:
    """The win share the first player of ``pair`` must reach."""
    first, second = pair.split(":")
    if is_engine_pair(pair):
        return 0.50
    if "@" in second and "@" not in first:  # today's level against an older commit's
        return 0.70
    if first == TOP and second == "greedy":
        return 0.90
    if first == TOP and second == "random":
        return 0.98
    return 0.75


def code_version(game: AnyGame) -> str:
    """A digest of the code that decides ``game``'s results (:func:`deciding_files`). A record
    made by other code is not reused, and a change to one game's policy leaves the other
    games' records standing."""
    root = Path(__file__).resolve().parents[1] / "pbmserv"
    digest = hashlib.sha256()
    for path in deciding_files(game):
        digest.update(path.relative_to(root).as_posix().encode())
        digest.update(_code_of(path).encode())
    return digest.hexdigest()[:16]


def deciding_files(game: AnyGame) -> list[Path]:
    """The search, the baselines, the game's policy with its own modules (its tactics, its
    lean position) and the game's rules, in a fixed order."""
    root = Path(__file__).resolve().parents[1] / "pbmserv"
    rules = Path(inspect.getfile(type(game)))
    rule_files = [rules] if rules.parent.name == "games" else list(rules.parent.glob("**/*.py"))
    files = [
        *root.glob("robots/*.py"),
        *root.glob(f"robots/policies/{game.SPEC.name}.py"),
        *root.glob(f"robots/policies/{game.SPEC.name}_*.py"),
        root / "games" / "base.py",
        *rule_files,
    ]
    return sorted(set(files))


def _code_of(path: Path) -> str:
    """What a module does, without its comments, docstrings and layout: a record outlives a
    change of wording."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
    return ast.dump(tree)


def pair_version(version: str, pair: str) -> str:
    """A game's code version, and for a pair against the engine, the engine's name too (a
    newer engine plays other games); an older commit's robot is named by its commit."""
    engine = [engine_identity()] if is_engine_pair(pair) else []
    older = [name for name in pair.split(":") if "@" in name]
    return "+".join([version, *engine, *older])


def read_record(path: Path | None, versions: dict[str, str]) -> dict[tuple[str, str, int], Played]:
    """The games in the record played by the code of today (``versions``: by game name)."""
    if path is None or not path.exists():
        return {}
    kept = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        version = versions.get(entry["game"])
        if version is not None and entry.pop("version") == pair_version(version, entry["pair"]):
            entry["cpu"] = {name: tuple(spent) for name, spent in entry["cpu"].items()}
            played = Played(**entry)
            kept[(played.game, played.pair, played.index)] = played
    return kept


def write_record(path: Path | None, version: str, played: Played) -> None:
    if path is not None:
        with path.open("a") as record:
            record.write(json.dumps({"version": version, **played.__dict__}) + "\n")


def results(
    tasks: list[tuple[str, str, int]], done: dict[tuple[str, str, int], Played], jobs: int
) -> Iterator[Played]:
    """Every task's game: those in ``done`` first, then the others as they finish."""
    yield from (done[task] for task in tasks if task in done)
    yield from _in_order(play_one, [task for task in tasks if task not in done], jobs)


def _in_order(
    function: Callable[[str, str, int], T], tasks: list[tuple[str, str, int]], jobs: int
) -> Iterator[T]:
    """``function`` of each task, in the order of ``tasks``, in ``jobs`` processes at once."""
    if jobs <= 1:
        yield from (function(*task) for task in tasks)
        return
    with ProcessPoolExecutor(jobs) as pool:
        yield from pool.map(function, *zip(*tasks, strict=True)) if tasks else ()


def _replayed(game_name: str, pair: str, index: int) -> Played | str:
    """The game played again, or why it could not be."""
    try:
        return play_one(game_name, pair, index)
    except Exception as exc:  # a replay that fails is a difference, reported as one
        return f"{type(exc).__name__}: {exc}"


def _moves(cpu: dict[str, Any]) -> dict[str, int]:
    """Each player's number of moves, from a record's or a game's ``cpu``."""
    return {name: int(spent[1]) for name, spent in cpu.items()}


def _shown(result: str, moves: dict[str, int]) -> str:
    return f"{result} ({', '.join(f'{name} {n}' for name, n in sorted(moves.items()))} moves)"


def _ours(entry: dict[str, Any]) -> str:
    """The digest of today's side of a recorded game (its version less an older commit's name)."""
    return str(entry["version"]).partition("+")[0]


def carry_over(path: Path | None, chosen: list[AnyGame], jobs: int) -> int:
    """``--carry-over`` (see the module docstring): 0 if nothing was refused, else 1."""
    if path is None or not path.exists():
        print("--carry-over needs --record FILE, a record that exists: nothing to carry")
        return 1
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    plans = []  # (game, today's version, older version, its games by key, the replays)
    for game in chosen:
        name, version = game.SPEC.name, code_version(game)
        # The engine's games are left out: a newer engine may play them otherwise. An older
        # commit's (``L3@REV``) are replayed as ours are, REV's robot in REV's own process.
        mine = [e for e in entries if e["game"] == name and not is_engine_pair(e["pair"])]
        if not mine:
            print(f"{name:<11} no games in {path}")
            continue
        if any(_ours(entry) == version for entry in mine):
            print(f"{name:<11} games under today's code ({version}) already: nothing to carry")
            continue
        older = _ours(mine[-1])
        kept = {(e["pair"], e["index"]): e for e in mine if _ours(e) == older}
        left = sorted({_ours(entry) for entry in mine} - {older})
        if left:
            print(f"{name:<11} games under {', '.join(left)} left as they are (older still)")
        sample = []
        for pair in dict.fromkeys(p for p, _ in kept):
            games = [entry for (p, _), entry in kept.items() if p == pair]
            sample.append(min(games, key=lambda e: (sum(_moves(e["cpu"]).values()), e["index"])))
        plans.append((name, version, older, kept, sample))
    if not plans:
        return 0
    tasks = [(name, e["pair"], e["index"]) for name, _, _, _, sample in plans for e in sample]
    print(f"replaying {len(tasks)} recorded games with today's code (the fewest moves a pair):")
    replays = _in_order(_replayed, tasks, jobs)
    refused = False
    carried: list[str] = []
    for name, version, older, kept, sample in plans:
        differ = 0
        for entry in sample:
            replay = next(replays)
            recorded = _shown(entry["result"], _moves(entry["cpu"]))
            if isinstance(replay, str):
                now, same = replay, False
            else:
                now = _shown(replay.result, _moves(replay.cpu))
                same = now == recorded
            differ += not same
            print(
                f"  {name:<11} {entry['pair']:<10} #{entry['index']:<3} recorded {recorded}, "
                f"replayed {now}: {'same' if same else 'DIFFERENT'}",
                flush=True,
            )
        if differ:
            refused = True
            print(
                f"{name:<11} REFUSED: {differ} of {len(sample)} replays differ from the record, "
                f"so today's code may play other games; nothing carried from {older}"
            )
            continue
        for entry in kept.values():
            carried.append(json.dumps({**entry, "version": pair_version(version, entry["pair"])}))
        print(
            f"{name:<11} carried {len(kept)} games from {older} to {version} "
            f"({len(sample)} replays, every one the same)"
        )
    if carried:
        with path.open("a") as record:
            record.write("".join(line + "\n" for line in carried))
        print(f"{len(carried)} lines appended to {path}")
    return 1 if refused else 0


def pairs_of(game_name: str, pairs: list[str]) -> list[str]:
    """The pairs a game is played in: the engine plays only its game."""
    return [p for p in pairs if game_name == ENGINE_GAME or not is_engine_pair(p)]


def interval(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """The 95% confidence interval of the share (normal approximation, clipped to 0..1)."""
    games = wins + draws + losses
    if games == 0:
        return 0.0, 1.0
    share = (wins + draws / 2) / games
    variance = (wins * (1 - share) ** 2 + draws * (0.5 - share) ** 2 + losses * share**2) / games
    margin = 1.96 * math.sqrt(variance / games)
    return max(0.0, share - margin), min(1.0, share + margin)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 games a pair")
    parser.add_argument("--games", type=int, help="games a pair (default 40, quick 4)")
    parser.add_argument("--only", action="append", help="only this game (repeatable)")
    parser.add_argument("--pairs", help="comma-separated pairs like L2:L1 (default: all goals)")
    parser.add_argument("--jobs", type=int, default=1, help="games played at once")
    parser.add_argument("--record", type=Path, help="keep and reuse finished games here")
    parser.add_argument(
        "--carry-over",
        action="store_true",
        help="replay a sample of the record's games made by older code; if all match, keep "
        "that code's games for today's code (plays nothing else)",
    )
    parser.add_argument(
        "--stretch",
        action="store_true",
        help=f"also the stretch pair {ENGINE_STRETCH} (Extinction, Fairy-Stockfish at depth 2)",
    )
    args = parser.parse_args(argv)
    games = args.games or (4 if args.quick else 40)
    pairs = args.pairs.split(",") if args.pairs else list(DEFAULT_PAIRS)
    chosen = [find_game(name) for name in args.only] if args.only else all_games()
    if any(g is None for g in chosen):
        raise SystemExit(f"unknown game in {args.only}")
    names = [g.SPEC.name for g in chosen if g is not None]
    if ENGINE_GAME in names and not args.pairs:
        if engine_path() is None:
            print(
                "no Fairy-Stockfish rows: apt-get install fairy-stockfish (or set "
                "PBMSERV_FAIRY_STOCKFISH to the binary)"
            )
        else:
            pairs += [*ENGINE_PAIRS, *([ENGINE_STRETCH] if args.stretch else [])]
    for pair in pairs:
        for name in pair.split(":"):
            player(name)  # an unknown name stops the run before any game
    if args.carry_over:
        return carry_over(args.record, [g for g in chosen if g is not None], args.jobs)
    versions = {g.SPEC.name: code_version(g) for g in chosen if g is not None}
    done = read_record(args.record, versions)
    game_pairs = {name: pairs_of(name, pairs) for name in names}
    tasks = [(n, pair, index) for n in names for pair in game_pairs[n] for index in range(games)]
    reused = sum(1 for task in tasks if task in done)
    print(f"{games} games a pair, seats alternated; share = (wins + draws/2) / games, with its 95%")
    print("confidence interval (normal approximation over the games' points)")
    if any(is_engine_pair(pair) for pair in game_pairs.get(ENGINE_GAME, [])):
        print(f"engine: {engine_identity()} ({engine_path()})")
    if args.record:
        print(f"{reused} of {len(tasks)} games from {args.record} (played by the same code)")
    print(
        f"{'game':<11} {'pair':<12} {'W':>3} {'D':>3} {'L':>3} {'share':>6} {'95% interval':>13} "
        f"{'goal':>5}  met"
    )
    tally: dict[tuple[str, str], list[Played]] = defaultdict(list)
    cpu: dict[str, Cpu] = defaultdict(Cpu)
    started = time.perf_counter()
    all_met = True
    left = {name: len(game_pairs[name]) for name in names}
    for played in results(tasks, done, args.jobs):
        if (played.game, played.pair, played.index) not in done:
            write_record(args.record, pair_version(versions[played.game], played.pair), played)
        print(".", end="", file=sys.stderr, flush=True)
        spent = Cpu()
        for name, (seconds, moves) in played.cpu.items():
            spent.seconds[name], spent.moves[name] = seconds, moves
        cpu[played.game].add(spent)
        finished = tally[(played.game, played.pair)]
        finished.append(played)
        if len(finished) < games:
            continue
        outcome = [p.result for p in finished]
        wins, draws, losses = (outcome.count(r) for r in ("win", "draw", "loss"))
        share = (wins + draws / 2) / games
        low, high = interval(wins, draws, losses)
        met = share >= goal(played.pair)
        if played.pair != ENGINE_STRETCH:  # a stretch is reported, not required
            all_met = all_met and met
        print(file=sys.stderr)
        print(
            f"{played.game:<11} {played.pair:<12} {wins:>3} {draws:>3} {losses:>3} "
            f"{share:>6.0%} {f'{low:.0%}-{high:.0%}':>13} {goal(played.pair):>5.0%}  "
            f"{'yes' if met else 'NO'}{' (stretch)' if played.pair == ENGINE_STRETCH else ''}",
            flush=True,
        )
        left[played.game] -= 1
        if left[played.game] == 0:
            per_level = []
            # Today's levels, then an older commit's (L3@REV), each as its games measured it.
            robots = sorted(name for name in cpu[played.game].moves if name.startswith("L"))
            for name in robots:
                ms = cpu[played.game].ms_per_move(name)
                if ms is not None:
                    moves = cpu[played.game].moves[name]
                    per_level.append(f"{name} {ms:.0f} ms ({moves} moves)")
            print(f"{played.game:<11} CPU per robot move: {', '.join(per_level)}", flush=True)
    print(f"{time.perf_counter() - started:.0f} s wall")
    print("every goal met" if all_met else "some goals NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
