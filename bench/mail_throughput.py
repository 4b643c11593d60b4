"""End-to-end rate of Chameleon move messages: SMTP in, SQLite, SMTP out to a capturing relay.

Run ``python bench/mail_throughput.py [MOVES]``. It starts the real server (listener and
workers) on a fresh SQLite file and a real capturing SMTP relay, signs up two players, opens
boards, then sends move messages one after another over SMTP and waits until every reply and
board mail has reached the relay. It prints one line of figures.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pbmserv.config import Settings  # noqa: E402
from pbmserv.db.engine import make_engine  # noqa: E402
from pbmserv.db.migrate import upgrade  # noqa: E402
from pbmserv.games.chameleon import GAME  # noqa: E402
from tests.support import RunningServer, Sink, make_mail, settle, smtp_send  # noqa: E402

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


def main() -> None:
    total = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    boards = max(1, total // MOVES_PER_BOARD)
    workdir = Path(tempfile.mkdtemp(prefix="pbmbench-"))
    url = f"sqlite:///{workdir / 'bench.db'}"
    engine = make_engine(url)
    upgrade(engine)
    sink = Sink().start()
    settings = Settings(
        confirm_addresses=False,
        db_url=url,
        listen="127.0.0.1:0",
        relay=sink.address,
        spool=workdir / "spool",
        poll_seconds=0.5,
        rate_limit_per_hour=0,
    )
    server = RunningServer(settings).start()
    try:
        for userid, password, address in PLAYERS:
            smtp_send(server.port, make_mail(address, f"signup {userid} {password}"))
        for _ in range(boards):
            smtp_send(
                server.port, make_mail(PLAYERS[0][2], "chameleon challenge -size=26 alice bob")
            )
        settle(engine, timeout=120)
        rng = random.Random(1)
        games = [random_moves(rng, MOVES_PER_BOARD) for _ in range(boards)]
        delivered_before = len(sink.messages)
        messages = []
        for ply in range(MOVES_PER_BOARD):
            userid, password, address = PLAYERS[ply % 2]
            for board, moves in enumerate(games, start=1):
                line = f"chameleon move {board} {userid} {password} {moves[ply]}"
                messages.append(make_mail(address, line))
        start = time.perf_counter()
        for message in messages:
            code, _ = smtp_send(server.port, message)
            assert code == 250, code
        accepted = time.perf_counter() - start
        settle(engine, timeout=600)
        elapsed = time.perf_counter() - start
        delivered = len(sink.messages) - delivered_before
    finally:
        server.stop()
        sink.stop()
    count = len(messages)
    print(
        f"chameleon mail end-to-end (SQLite): {count} moves in {elapsed:.2f} s = "
        f"{count / elapsed:.1f} moves/s; SMTP accept {count / accepted:.1f} msg/s; "
        f"{delivered} messages delivered to the relay"
    )


if __name__ == "__main__":
    main()
