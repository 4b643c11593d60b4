"""Processing cost per move, in process, without SMTP: the inbox already holds the moves.

Run ``python bench/process_moves.py`` (``--pg URL`` for PostgreSQL, ``--profile`` to print the
top of a cProfile). It signs players up and opens boards through the processor itself, stores
``--rounds`` rounds of one legal Chameleon move per board, then times ``process_pending`` over
them: wall and CPU ms per move, SQL statements and transactions per move. Use it to see what a
change to the processing path costs before measuring end to end with bench/throughput.py.

``--deliver`` then sends the mail those moves queued (the boards with their pictures, the
replies) over one relay connection to Postfix's smtp-sink (``--smtp-sink PATH``), as a delivery
process does, and prints its CPU ms per move and per mail: delivery's cost alone, steadier than
the per-process figures of a loaded end-to-end run.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import shutil
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

from sqlalchemy import Engine, event, func, select, text, update

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rig import SinkProcess, mail_bytes, scratch_database, workdir_for  # noqa: E402
from bench.rig.move_load import boards_from_database, make_players, pairings  # noqa: E402
from pbmserv.config import Settings  # noqa: E402
from pbmserv.db.engine import make_engine, session_factory  # noqa: E402
from pbmserv.db.models import OutboxMessage  # noqa: E402
from pbmserv.inbound.inbox import store_message  # noqa: E402
from pbmserv.outbound.delivery import deliver_due  # noqa: E402
from pbmserv.outbound.relay.connection import RelayConnection  # noqa: E402
from pbmserv.outbound.signing import new_key
from pbmserv.runtime.processor import BATCH, process_batch, process_pending  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pg", help="a PostgreSQL URL: run in a private schema there (default: SQLite file)"
    )
    parser.add_argument("--boards", type=int, default=100)
    parser.add_argument(
        "--dkim", action="store_true", help="delivery signs (a new RSA-2048 key, as deployed)"
    )
    parser.add_argument(
        "--text-only", action="store_true", help="board mail without pictures (board_pictures off)"
    )
    parser.add_argument("--rounds", type=int, default=5, help="moves per board")
    parser.add_argument("--profile", action="store_true", help="print the top of a cProfile")
    parser.add_argument(
        "--profile-out",
        help="also write the processing's profile to this file (delivery's to FILE.delivery)",
    )
    parser.add_argument(
        "--statements", action="store_true", help="print the SQL statements a move runs"
    )
    parser.add_argument(
        "--batch", type=int, default=BATCH, help=f"messages a transaction (default {BATCH})"
    )
    parser.add_argument(
        "--deliver", action="store_true", help="then deliver the moves' mail to smtp-sink"
    )
    parser.add_argument("--smtp-sink", default="/usr/sbin/smtp-sink")
    args = parser.parse_args()
    with (
        workdir_for("pbmprocess-") as workdir,
        scratch_database(args.pg, workdir, "process") as db,
    ):
        measure(args, db.url, workdir)


def dkim_settings(workdir: Path) -> dict[str, object]:
    """Settings that sign every mail with a new RSA-2048 key (as `dkim keygen` makes one)."""
    key = workdir / "dkim.pem"
    key.write_bytes(new_key())
    key.chmod(0o600)
    return {"dkim_selector": "bench", "dkim_key_file": key}


def measure(args: argparse.Namespace, url: str, workdir: Path) -> None:
    engine = make_engine(url)
    factory = session_factory(engine)
    settings = Settings(
        confirm_addresses=False,
        db_url=url,
        address="pbmserv@localhost",
        spool=workdir / "spool",
        rate_limit_per_hour=0,
        from_rate_limit_per_hour=0,
        board_pictures=not args.text_only,
        **(dkim_settings(workdir) if args.dkim else {}),
    )
    players = make_players(max(10, args.boards // 5))
    pairs = pairings(players, args.boards)

    def run(lines: list[tuple[str, str]]) -> None:
        for sender, line in lines:
            store_message(factory, settings, mail_bytes(sender, line)[1], sender)
        process_pending(factory, settings)

    run([(p.address, f"signup {p.userid} {p.password} Bench") for p in players])
    run([(a.address, f"chameleon challenge -size=11 {a.userid} {b.userid}") for a, b in pairs])
    games = boards_from_database(engine, players)
    rng = random.Random(1)
    for _ in range(args.rounds):
        for game in games:
            player, move = game.next_move(rng)
            store_message(
                factory,
                settings,
                mail_bytes(player.address, game.line(player, move))[1],
                player.address,
            )
    with engine.connect() as conn:
        first_move_mail = (conn.scalar(select(func.max(OutboxMessage.id))) or 0) + 1
    statements = 0

    seen: Counter[str] = Counter()

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        nonlocal statements
        statements += 1
        seen[" ".join(statement.split())[:150]] += 1

    event.listen(engine, "before_cursor_execute", count)
    moves = len(games) * args.rounds
    profiler = cProfile.Profile() if args.profile or args.profile_out else None
    wall, cpu = time.perf_counter(), time.process_time()
    if profiler:
        profiler.enable()
    done = 0
    while taken := process_batch(factory, settings, limit=args.batch):
        done += taken
    if profiler:
        profiler.disable()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    with engine.connect() as conn:
        refused = conn.scalar(text("SELECT count(*) FROM inbox WHERE summary LIKE '%error%'"))
    print(
        f"{engine.dialect.name}: {done} messages ({moves} moves, {refused} refused): "
        f"{wall / moves * 1000:.2f} ms wall, {cpu / moves * 1000:.2f} ms CPU per move, "
        f"{statements / moves:.1f} statements per move (passwords cached after each "
        "player's first move)"
    )
    if args.statements:
        print("statements per move:")
        for statement, times in seen.most_common():
            print(f"  {times / moves:5.2f}  {statement}")
    if profiler and args.profile_out:
        profiler.dump_stats(args.profile_out)
    if profiler and args.profile:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(45)
    if args.deliver:
        deliver(args, engine, settings, moves, first_move_mail)


def deliver(
    args: argparse.Namespace, engine: Engine, settings: Settings, moves: int, first: int
) -> None:
    """Send the moves' mail (outbox rows from ``first`` on) to smtp-sink; print CPU figures."""
    binary = shutil.which(args.smtp_sink) or args.smtp_sink
    if not os.access(binary, os.X_OK):
        print(f"--deliver: no {args.smtp_sink} (Debian package postfix)")
        return
    as_root = ["-u", "nobody"] if os.geteuid() == 0 else []
    with engine.begin() as conn:  # the sign-ups' and challenges' mail is not the moves'
        conn.execute(update(OutboxMessage).where(OutboxMessage.id < first).values(status="sent"))
        mails = conn.scalar(select(func.count()).where(OutboxMessage.status == "pending"))
    with SinkProcess(lambda port: [binary, *as_root, f"127.0.0.1:{port}", "256"]) as sink:
        relayed = replace(settings, relay=f"127.0.0.1:{sink.port}", relay_tls="none", spool=None)
        factory = session_factory(engine)

        async def send_all() -> int:
            relay = RelayConnection(relayed)
            sent = 0
            try:
                while claimed := await deliver_due(factory, relayed, relay=relay):
                    sent += claimed
            finally:
                await relay.close()
            return sent

        profiler = cProfile.Profile() if args.profile or args.profile_out else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        sent = asyncio.run(send_all())
        if profiler:
            profiler.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"delivery: {sent} of {mails} mails ({sent / moves:.1f} a move) to smtp-sink over one "
        f"connection: {cpu / moves * 1000:.2f} ms CPU per move, {cpu / max(sent, 1) * 1000:.2f} "
        f"ms CPU per mail, {wall / moves * 1000:.2f} ms wall per move"
    )
    if profiler and args.profile_out:
        profiler.dump_stats(f"{args.profile_out}.delivery")
    if profiler and args.profile:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


if __name__ == "__main__":
    main()
