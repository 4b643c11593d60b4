"""The player pages' speed (issue 51), a part of bench/web.py: a player with 500 rated boards
(100 with ``--quick``; four in five 5x5 Chameleon, the rest Extinction, so two charts), played
into the bench's scratch database through the command core as mail plays them (challenged,
accepted and resigned, a day apart), and their pages asked of ``pbmserv web``:

  player page     /u/USERID: boards running, the newest 50 over, ratings, a chart a game
  player, 304     the same with its ETag (the page is made to know its tag: little less)
  head to head    /u/A/vs/B: the score of the 500, the newest 50 boards
  rating list     /ratings/chameleon
  player's feed   /u/USERID/feed.atom: the boards where it is their move, the newest 20 over

Goals (issue 51): a player page with 500 rated boards and its charts in <= 10 ms of the web
process's CPU; that player's Atom feed in <= 5 ms.
"""

from __future__ import annotations

import argparse
import http.client
import sys
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import func, select

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.db.engine import make_engine, session_factory, transaction
from pbmserv.db.models import GameRow
from pbmserv.db.times import utcnow

GOAL_PLAYER_MS, GOAL_FEED_MS = 10.0, 5.0
RATED = 500
#: Players of their own, apart from bench/web.py's long games.
PLAYERS = (("pat", "secret1", "pat@bench.example"), ("quinn", "hunter22", "quinn@bench.example"))


def play_rated(db_url: str, rated: int = RATED) -> None:
    """``rated`` rated boards between the two players, pat winning and losing by turns."""
    engine = make_engine(db_url)
    factory = session_factory(engine)
    settings = Settings(
        confirm_addresses=False, db_url=db_url, text_mails_per_recipient_per_day=10**6
    )
    start = utcnow() - timedelta(days=rated + 1)

    def run(line: str, sender: str, day: int) -> None:
        at = start + timedelta(days=day)
        with transaction(factory) as session:
            ctx = CommandContext(session, settings, sender, clock=lambda: at)
            section = dispatch_line(ctx, line)
        if not section.ok:
            raise RuntimeError(f"{line!r} was refused: {section}")

    (pat, pat_password, pat_address), (quinn, quinn_password, quinn_address) = PLAYERS
    run(f"signup {pat} {pat_password}", pat_address, 0)
    run(f"signup {quinn} {quinn_password}", quinn_address, 0)
    try:
        for i in range(rated):
            game, options = ("extinction", "") if i % 5 == 4 else ("chameleon", " -size=5")
            run(f"{game} challenge{options} {pat} {quinn}", pat_address, i)
            with factory() as session:
                board = session.scalar(select(func.max(GameRow.id)))
            run(f"{game} accept {board} {quinn} {quinn_password}", quinn_address, i)
            if i % 2:
                run(f"{game} resign {board} {quinn} {quinn_password}", quinn_address, i)
            else:
                run(f"{game} resign {board} {pat} {pat_password}", pat_address, i)
            if (i + 1) % 100 == 0:
                print(f"... {i + 1} rated boards of {pat}", file=sys.stderr, flush=True)
    finally:
        engine.dispose()


#: bench/web.py's measure(name, web, requests, threads, expect, max_seconds, goal_ms).
Measure = Callable[..., Any]
Get = Callable[[http.client.HTTPConnection, str, dict[str, str]], tuple[int, str | None, bytes]]


def player_rows(
    db_url: str, web: Any, args: argparse.Namespace, measure: Measure, get: Get
) -> list[Any]:
    """The rows of the player pages (``web``: bench/web.py's WebProcess)."""
    rated = 100 if args.quick else RATED
    play_rated(db_url, rated)
    pat, quinn = PLAYERS[0][0], PLAYERS[1][0]
    connection = http.client.HTTPConnection("127.0.0.1", web.port, timeout=60)
    status, etag, body = get(connection, f"/u/{pat}", {})
    if status != 200 or not etag or body.count(b"<svg") != 2:
        raise RuntimeError(f"/u/{pat}: {status}, ETag {etag!r}, {body.count(b'<svg')} charts")
    status, _tag, feed = get(connection, f"/u/{pat}/feed.atom", {})
    if status != 200 or feed.count(b"<entry>") != 20:
        raise RuntimeError(f"/u/{pat}/feed.atom: {status}, {feed.count(b'<entry>')} entries")
    connection.close()
    n = max(1, min(args.requests, 500))
    title = f"player pages ({rated} rated boards)"
    runs: tuple[tuple[str, str, dict[str, str], int, float | None], ...] = (
        ("player page", f"/u/{pat}", {}, 200, GOAL_PLAYER_MS),
        ("player, 304", f"/u/{pat}", {"If-None-Match": etag}, 304, GOAL_PLAYER_MS),
        ("head to head", f"/u/{pat}/vs/{quinn}", {}, 200, None),
        ("rating list", "/ratings/chameleon", {}, 200, None),
        ("player's feed", f"/u/{pat}/feed.atom", {}, 200, GOAL_FEED_MS),
    )
    rows = []
    for name, path, headers, expect, goal in runs:
        print(f"... {title}: {name}", file=sys.stderr, flush=True)
        requests = [(path, headers)] * n
        rows.append(
            measure(f"{title}: {name}", web, requests, args.threads, expect, args.max_seconds, goal)
        )
    return rows
