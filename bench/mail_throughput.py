"""End-to-end rate of Chameleon move messages: SMTP in, SQLite, SMTP out to a capturing relay.

Run ``python bench/mail_throughput.py [MOVES]``. It starts ``pbmserv serve`` as a child process
(bench/rig/) on a fresh SQLite file and a real capturing SMTP relay, signs up two players, opens
boards, then sends move messages one after another over SMTP and waits until every reply and
board mail has reached the relay. It prints one line of figures.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rig import (  # noqa: E402
    Outgoing,
    RecordingRelay,
    ServerProcess,
    SmtpClient,
    mail_bytes,
    scratch_database,
    wait_settled,
    workdir_for,
)
from pbmserv.games.chameleon import GAME  # noqa: E402

PLAYERS = (("alice", "secret1", "alice@example.org"), ("bob", "hunter22", "bob@example.org"))
MOVES_PER_BOARD = 20  # far from any win on 26x26


def random_moves(rng: random.Random, count: int) -> list[str]:
    state = GAME.new_game({"size": 26}, rng)
    texts = []
    for _ in range(count):
        moves = [m for m in GAME.legal_moves(state, state.ply % 2) if m != "swap"]
        move = rng.choice(moves)
        texts.append(GAME.format_move(state, move))
        state = GAME.apply(state, move, rng)
    return texts


def make_mail(sender: str, subject: str) -> Outgoing:
    return Outgoing(sender, mail_bytes(sender, subject)[1])


def send(port: int, message: Outgoing) -> None:
    """One message on a connection of its own, as a mail server forwarding it would."""
    client = SmtpClient(port)
    try:
        code, reply = client.send(message)
    finally:
        client.close()
    if code != 250:
        raise RuntimeError(f"the server answered {code} {reply}")


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    boards = max(1, total // MOVES_PER_BOARD)
    with (
        workdir_for("pbmbench-") as workdir,
        scratch_database(None, workdir) as db,
        RecordingRelay(keep=False) as relay,
    ):
        server = ServerProcess(db.url, relay.address, workdir, poll_seconds=0.5, rate_limit=0)
        server.start()
        try:
            for userid, password, address in PLAYERS:
                send(server.port, make_mail(address, f"signup {userid} {password}"))
            challenge = "chameleon challenge -size=26 alice bob"
            for _ in range(boards):
                send(server.port, make_mail(PLAYERS[0][2], challenge))
            settled = wait_settled(db, timeout=120, stall=60)
            if not settled.settled:
                raise RuntimeError(f"set-up: {settled.reason}")
            rng = random.Random(1)
            games = [random_moves(rng, MOVES_PER_BOARD) for _ in range(boards)]
            delivered_before = relay.count()
            messages = []
            for ply in range(MOVES_PER_BOARD):
                userid, password, address = PLAYERS[ply % 2]
                for board, moves in enumerate(games, start=1):
                    line = f"chameleon move {board} {userid} {password} {moves[ply]}"
                    messages.append(make_mail(address, line))
            start = time.perf_counter()
            for message in messages:
                send(server.port, message)
            accepted = time.perf_counter() - start
            settled = wait_settled(db, timeout=600, stall=120)
            elapsed = time.perf_counter() - start
            delivered = relay.count() - delivered_before
        finally:
            server.stop()
    count = len(messages)
    note = "" if settled.settled else f" (not settled: {settled.reason})"
    print(
        f"chameleon mail end-to-end (SQLite): {count} moves in {elapsed:.2f} s = "
        f"{count / elapsed:.1f} moves/s; SMTP accept {count / accepted:.1f} msg/s; "
        f"{delivered} messages delivered to the relay{note}"
    )


if __name__ == "__main__":
    main()
