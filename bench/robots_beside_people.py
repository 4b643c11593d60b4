"""People's board latency while robots think (issue 33): the same paced stream of moves by
mail (bench/throughput.py's Chameleon load) against `pbmserv serve` with its robots off, and
with robots thinking all the while in their own process (robot3 on 11x11 Chameleon boards
where the robot is to move, each move up to ``robot_cpu_seconds`` of CPU), side by side,
alternated. It prints each run's board latency p50/p99, the people's server CPU per move, and
the CPU the robots' process used and how many moves it made meanwhile.

    python bench/robots_beside_people.py [--moves 600] [--rate 20] [--repeat 2] [--only sqlite]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine, func, select  # noqa: E402

from bench.rig import DEFAULT_PG, announce  # noqa: E402
from bench.rig.move_load import (  # noqa: E402
    make_players,
    pairings,
    pbmserv_rig,
    plan_moves,
    run_load,
    set_up_by_mail,
)
from bench.throughput import player_count  # noqa: E402
from pbmserv.config import Settings  # noqa: E402
from pbmserv.core.context import CommandContext  # noqa: E402
from pbmserv.core.dispatch import dispatch_line  # noqa: E402
from pbmserv.db.engine import session_factory, transaction  # noqa: E402
from pbmserv.db.models import MoveRow, Seat, User  # noqa: E402


@dataclass
class Run:
    robots: bool
    p50: float = float("nan")
    p99: float = float("nan")
    done: int = 0
    people_cpu_ms: float = float("nan")
    robot_cpu_s: float = 0.0
    robot_moves: int = 0
    note: str = ""


def seed_robot_boards(count: int, size: int) -> Callable[[Engine], None]:
    """A ``prepare`` hook: ``count`` boards where robot3 is to move, one a person."""

    def prepare(engine: Engine) -> None:
        settings = Settings(confirm_addresses=False, robot_games_per_user=1)
        for i in range(count):
            with transaction(session_factory(engine)) as session:
                ctx = CommandContext(session, settings, f"robotfan{i}@example.org")
                assert dispatch_line(ctx, f"signup robotfan{i} secret{i:04d}").ok
                line = f"chameleon challenge -size={size} robot3 robotfan{i}"
                assert dispatch_line(ctx, line).ok

    return prepare


def robot_moves(engine: Engine) -> int:
    robot_seats = select(Seat.game_id, Seat.seat).join(User, User.id == Seat.user_id)
    robot_seats = robot_seats.where(User.robot_level.is_not(None)).subquery()
    query = (
        select(func.count())
        .select_from(MoveRow)
        .join(
            robot_seats,
            (robot_seats.c.game_id == MoveRow.game_id) & (robot_seats.c.seat == MoveRow.seat),
        )
        .where(MoveRow.kind == "move")
    )
    with engine.connect() as connection:
        return int(connection.scalar(query) or 0)


@contextmanager
def robots_setting(on: bool) -> Iterator[None]:
    before = os.environ.get("PBMSERV_ROBOTS")
    os.environ["PBMSERV_ROBOTS"] = "true" if on else "false"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PBMSERV_ROBOTS", None)
        else:
            os.environ["PBMSERV_ROBOTS"] = before


def measure(kind: str, robots: bool, args: argparse.Namespace) -> Run:
    run = Run(robots)
    games = max(10, args.moves // 20)
    pairs = pairings(make_players(player_count(args.moves, games)), games)
    prepare = seed_robot_boards(args.robot_boards, args.size) if robots else None
    label = f"robots{'on' if robots else 'off'}"
    with robots_setting(robots), pbmserv_rig(kind, args.pg, label, prepare=prepare) as rig:
        mail_games = set_up_by_mail(rig, pairs, args.size, 8, args.max_seconds)
        plan_moves(mail_games, args.moves)
        server = rig.servers[0]
        before, robots_before = server.cpu_by_part(), robot_moves(rig.engine)
        result = run_load(rig.ports, mail_games, 8, args.max_seconds, rig.tracker, rate=args.rate)
        after, robots_after = server.cpu_by_part(), robot_moves(rig.engine)
    run.done = result.done
    if result.latencies:
        run.p50, run.p99 = result.p50, result.p99
    spent = {part: after.get(part, 0.0) - before.get(part, 0.0) for part in after}
    run.robot_cpu_s = spent.pop("robots", 0.0)
    if result.done:
        run.people_cpu_ms = sum(spent.values()) * 1000 / result.done
    run.robot_moves = robots_after - robots_before
    run.note = "; ".join(result.notes)
    return run


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=600)
    parser.add_argument("--rate", type=float, default=20.0, help="people's moves a second")
    parser.add_argument("--repeat", type=int, default=2, help="off/on pairs, alternated")
    parser.add_argument("--robot-boards", type=int, default=60)
    parser.add_argument("--size", type=int, default=11)
    parser.add_argument("--only", choices=("sqlite", "postgres"), action="append")
    parser.add_argument("--pg", default=DEFAULT_PG)
    parser.add_argument("--max-seconds", type=float, default=600.0)
    args = parser.parse_args(argv)
    announce(
        f"robots beside people: {args.moves} moves at {args.rate:g}/s, "
        f"{args.robot_boards} robot3 boards waiting for the robot"
    )
    runs: list[tuple[str, Run]] = []
    for kind in args.only or ["sqlite"]:
        for _ in range(args.repeat):
            for robots in (False, True):
                runs.append((kind, measure(kind, robots, args)))
                print(f"  done: {kind} robots={'on' if robots else 'off'}", flush=True)
    print(
        "| engine | robots | moves done | board p50 / p99 | people's server CPU ms/move "
        "| robots' CPU s | robot moves meanwhile |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind, run in runs:
        print(
            f"| {kind} | {'thinking' if run.robots else 'off'} | {run.done} "
            f"| {run.p50:.2f} s / {run.p99:.2f} s | {run.people_cpu_ms:.1f} "
            f"| {run.robot_cpu_s:.1f} | {run.robot_moves} |"
        )
    for kind, run in runs:
        if run.note:
            print(f"- {kind} robots={'on' if run.robots else 'off'}: {run.note}")


if __name__ == "__main__":
    main()
