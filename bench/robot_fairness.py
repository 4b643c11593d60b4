"""The robots under one person's load (issue 48, item 4): in one run of `pbmserv serve` with its
robots on, person B plays robot1 by mail, move after move (each after a pause of up to
--pause seconds, as a person's), first with nothing else for the robots to do, then with
twelve robot3 boards of another person A waiting: A's three user ids at one address, four
11x11 Chameleon boards each, challenged by mail, and A answering each robot3 move at once,
so that all twelve keep waiting for robot3. B's reply time is from
the SMTP acceptance of B's move to robot1's answering move being played (committed, its board
mail queued), read from the database every 5 ms. It prints each phase's median and worst
reply, the ratio of the medians (goal: at most 3x) and how many of A's boards were waiting
for robot3 when B's last reply came.

    python bench/robot_fairness.py [--moves 12] [--pg URL]

Against another checkout: ``PYTHONPATH=/that/checkout python bench/robot_fairness.py``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Executable, func, select  # noqa: E402

from bench.rig import (  # noqa: E402
    DEFAULT_PG,
    Outgoing,
    RecordingRelay,
    ServerProcess,
    SmtpClient,
    announce,
    mail_bytes,
    scratch_database,
    wait_until,
    workdir_for,
)
from pbmserv.db.engine import make_engine  # noqa: E402
from pbmserv.db.models import GameRow, MoveRow, Seat, User  # noqa: E402
from pbmserv.games import find_game  # noqa: E402

B, B_PASSWORD = "bob@example.org", "hunter22"
A = "attacker@example.org"
A_IDS, A_BOARDS_EACH = 3, 4


class Bench:
    def __init__(self, server: ServerProcess, url: str) -> None:
        self.smtp = SmtpClient(server.port)
        self.engine = make_engine(url)

    def send(self, sender: str, line: str) -> None:
        _mid, raw = mail_bytes(sender, line)
        code, reply = self.smtp.send(Outgoing(sender, raw))
        if code != 250:
            raise RuntimeError(f"{line!r}: {code} {reply}")

    def scalar(self, query: Executable) -> Any:
        with self.engine.connect() as connection:
            return connection.scalar(query)

    def wait(self, condition: Callable[[], bool], timeout: float, step: float = 0.005) -> bool:
        return wait_until(condition, time.monotonic() + timeout, step)

    def board_of(self, userid: str) -> int | None:
        query = (
            select(func.max(Seat.game_id))
            .join(User, User.id == Seat.user_id)
            .where(User.userid == userid)
        )
        return self.scalar(query)

    def robot_moves(self, board: int) -> int:
        query = (
            select(func.count())
            .select_from(MoveRow)
            .where(MoveRow.game_id == board, MoveRow.kind == "move", MoveRow.seat == 1)
        )
        return int(self.scalar(query) or 0)

    def b_reply(self, board: int, rng: random.Random, timeout: float) -> float | None:
        """Send B's next move; the seconds until robot1's answering move is played."""
        with self.engine.connect() as connection:
            row = connection.execute(
                select(GameRow.state, GameRow.status).where(GameRow.id == board)
            ).one()
        if row.status != "active":
            return None
        game = find_game("chameleon")
        assert game is not None
        state = game.load(row.state)
        move = game.format_move(state, rng.choice(game.legal_moves(state, 0)))
        before = self.robot_moves(board)
        self.send(B, f"chameleon move {board} bob {B_PASSWORD} {move}")
        sent = time.monotonic()
        if not self.wait(lambda: self.robot_moves(board) > before or self.over(board), timeout):
            return float("inf")
        if self.robot_moves(board) == before:
            return None  # B's move ended the game: nothing for the robot to answer
        return time.monotonic() - sent

    def over(self, board: int) -> bool:
        return self.scalar(select(GameRow.status).where(GameRow.id == board)) != "active"

    def new_b_board(self) -> int:
        """A new board of B's against robot1, B to move first."""
        before = self.board_of("bob")
        self.send(B, "chameleon challenge -size=11 bob robot1")
        assert self.wait(lambda: self.board_of("bob") != before, 30)
        board = self.board_of("bob")
        assert board is not None
        return board

    def a_boards(self, waiting: bool = False) -> int:
        """A's boards (``waiting``: those where robot3 is to act)."""
        query = (
            select(func.count())
            .select_from(GameRow)
            .join(Seat, Seat.game_id == GameRow.id)
            .join(User, User.id == Seat.user_id)
            .where(User.email == A, GameRow.status == "active")
        )
        if waiting:
            query = query.where(GameRow.to_move == "0")
        return int(self.scalar(query) or 0)

    def a_waiting(self) -> int:
        return self.a_boards(waiting=True)


class Attacker:
    """A, keeping all twelve boards waiting for robot3: each time robot3 has moved on one, A
    moves there at once."""

    def __init__(self, bench: Bench, port: int, rng: random.Random) -> None:
        self.bench, self.rng = bench, rng
        self.smtp = SmtpClient(port)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._play, daemon=True)
        self.sent = 0

    def __enter__(self) -> Attacker:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join(30)
        self.smtp.close()

    def _send(self, line: str) -> None:
        _mid, raw = mail_bytes(A, line)
        self.smtp.send(Outgoing(A, raw))
        self.sent += 1

    def _play(self) -> None:
        game = find_game("chameleon")
        assert game is not None
        answered: set[tuple[int, int]] = set()
        query = (
            select(GameRow.id, GameRow.ply, GameRow.state, User.userid)
            .join(Seat, Seat.game_id == GameRow.id)
            .join(User, User.id == Seat.user_id)
            .where(User.email == A, GameRow.status == "active", GameRow.to_move == "1")
        )
        while not self.stopping.wait(0.1):
            with self.bench.engine.connect() as connection:
                rows = connection.execute(query).all()
            for board, ply, state_text, userid in rows:
                if (board, ply) in answered:
                    continue
                answered.add((board, ply))
                state = game.load(state_text)
                move = game.format_move(state, self.rng.choice(game.legal_moves(state, 1)))
                password = f"secret{int(userid[3:]):04d}"
                self._send(f"chameleon move {board} {userid} {password} {move}")


def phase(bench: Bench, args: argparse.Namespace, rng: random.Random) -> list[float]:
    """B's replies, each after a pause of a person's (up to --pause seconds: a person does
    not answer in the same millisecond, and the robots look for turns every second); on a
    new board whenever one ends."""
    times: list[float] = []
    board = bench.new_b_board()
    while len(times) < args.moves:
        time.sleep(rng.uniform(0, args.pause))
        took = bench.b_reply(board, rng, args.timeout)
        if took is None:
            board = bench.new_b_board()
            continue
        times.append(took)
        if took == float("inf"):
            break
    return times


def run(args: argparse.Namespace) -> None:
    rng = random.Random(args.seed)
    with (
        workdir_for("pbmbench-robotfair-", keep=args.keep) as workdir,
        RecordingRelay(keep=False) as relay,
        scratch_database(None if args.sqlite else args.pg, workdir, "robotfair") as db,
    ):
        env = {"PBMSERV_ROBOTS": "true"}
        server = ServerProcess(db.url, relay.address, workdir, "robotfair", env=env).start()
        bench = Bench(server, db.url)
        try:
            bench.send(B, f"signup bob {B_PASSWORD}")
            alone = phase(bench, args, rng)
            for i in range(A_IDS):
                bench.send(A, f"signup atk{i} secret{i:04d}")
                for _ in range(A_BOARDS_EACH):
                    bench.send(A, f"chameleon challenge -size=11 robot3 atk{i}")
            boards = A_IDS * A_BOARDS_EACH
            assert bench.wait(lambda: bench.a_boards() >= boards, 60)
            with Attacker(bench, server.port, random.Random(args.seed + 1)) as attacker:
                loaded = phase(bench, args, rng)
                waiting = bench.a_waiting()
            print(f"  A sent {attacker.sent} moves meanwhile", flush=True)
        finally:
            server.stop()
            bench.smtp.close()
            bench.engine.dispose()
    report(db.kind, alone, loaded, waiting, boards)


def report(kind: str, alone: list[float], loaded: list[float], waiting: int, boards: int) -> None:
    def cell(times: list[float]) -> str:
        if not times:
            return "-"
        return f"{statistics.median(times):.2f} s / {max(times):.2f} s ({len(times)} replies)"

    ratio = statistics.median(loaded) / statistics.median(alone) if alone and loaded else None
    print(
        "| engine | B's robot1 reply, none waiting: median / worst "
        f"| with {boards} robot3 boards of A waiting | ratio of medians (goal <= 3x) "
        "| A's boards waiting for robot3 at the end |"
    )
    print("|---|---|---|---|---|")
    shown = f"{ratio:.2f}x" if ratio is not None else "-"
    print(f"| {kind} | {cell(alone)} | {cell(loaded)} | {shown} | {waiting} of {boards} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=12, help="B's moves in each phase")
    parser.add_argument("--pause", type=float, default=2.0, help="B's longest pause")
    parser.add_argument("--sqlite", action="store_true", help="SQLite (the default)")
    parser.add_argument("--pg", default=None, help=f"PostgreSQL instead (e.g. {DEFAULT_PG})")
    parser.add_argument("--timeout", type=float, default=180.0, help="the longest reply waited")
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--keep", action="store_true", help="keep the work folder (logs)")
    args = parser.parse_args(argv)
    args.sqlite = args.pg is None
    announce(
        f"robots under one person's load: B's robot1 reply, {args.moves} moves alone, then "
        f"{args.moves} with {A_IDS * A_BOARDS_EACH} robot3 boards of A waiting"
    )
    run(args)


if __name__ == "__main__":
    main()
