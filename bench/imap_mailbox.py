"""A hosted mailbox instead of an MTA, under forced disconnects (issue 30, item 8): is any
move lost or applied twice, and how long from a move's arrival in the mailbox to its answer?

Run ``python bench/imap_mailbox.py`` (300 moves, 100 disconnects); ``--moves``,
``--disconnects``, ``--boards``; ``--db postgresql+psycopg://postgres@127.0.0.1:5432/test`` for
PostgreSQL (a private schema, dropped at the end). Needs Debian's dovecot-imapd.

It starts a private Dovecot (IMAPS with a certificate from a test CA) and a relay that notes
when each answer arrives, migrates a fresh database and starts ``pbmserv serve --imap
imaps://...`` as shipped (IDLE; the first pause after a failure 1 s). The players' mail is
APPENDed into the mailbox as a provider delivers it, with a Return-Path: two sign-ups, Chameleon
challenges, then the moves, round-robin over the boards. Meanwhile the reader's connection is
cut ``--disconnects`` times, spread evenly over the stream, each a random 0.02-0.3 s after the
reader is back: Dovecot kicks it, and every 20th time the whole IMAP server crashes (SIGKILL to
all its processes) and restarts.

It prints the moves, the disconnects, the failures the reader logged, the moves lost (no move
row carries the message's Message-ID), applied twice (two rows do) and answered twice (two
answers to one message at the relay), and the median and p95 time from the APPEND to the
answer at the relay. The moves go out in step with the disconnects, three right after each, so
nearly every one waits out the reconnection's pause: a conservative measure (``--disconnects
0`` for IDLE alone).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.rig import scratch_database, workdir_for  # noqa: E402
from pbmserv.inbound import imap  # noqa: E402
from tests.e2e.dovecot import DOVECOT, play_stream  # noqa: E402


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=300, help="moves played (default 300)")
    parser.add_argument(
        "--disconnects", type=int, default=100, help="forced disconnects (default 100)"
    )
    parser.add_argument("--boards", type=int, default=10, help="boards played at once")
    parser.add_argument(
        "--backoff",
        type=float,
        default=imap.BACKOFF_FIRST_SECONDS,
        help="the reader's first pause after a failure (default: as shipped)",
    )
    parser.add_argument("--db", help="database URL (default: a fresh SQLite file)")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if not DOVECOT.exists():
        print("bench/imap_mailbox.py needs dovecot: apt-get install dovecot-imapd")
        return 2
    with (
        workdir_for("pbm-imap-bench-", args.keep) as workdir,
        scratch_database(args.db, workdir) as db,
    ):
        figures = play_stream(
            workdir,
            db.url,
            moves=args.moves,
            disconnects=args.disconnects,
            boards=args.boards,
            backoff=args.backoff,
        )
    print(
        f"hosted mailbox over IMAPS with IDLE, {db.kind}, first reconnection pause "
        f"{args.backoff:g} s:"
    )
    print(f"  moves            {figures.moves}")
    print(f"  disconnects      {figures.disconnects} ({figures.restarts} server restarts)")
    print(f"  failures logged  {figures.reconnections} (by the reader, each a reconnection)")
    print(f"  lost             {figures.lost}")
    print(f"  applied twice    {figures.applied_twice}")
    print(f"  answered twice   {figures.answered_twice}")
    print(
        f"  arrival->reply   median {figures.percentile(0.5):.2f} s, "
        f"p95 {figures.percentile(0.95):.2f} s, max {max(figures.latencies, default=0):.2f} s"
    )
    print(f"  run time         {figures.seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
