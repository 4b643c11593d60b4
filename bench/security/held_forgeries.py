"""Forged requests run on a confirmation (issue 48, item 2; goal 0).

Run ``python bench/security/held_forgeries.py`` (SQLite in a temporary folder) or with
``--db postgresql+psycopg://postgres@127.0.0.1:5432/test`` (a private schema, dropped after).
It starts the real server (SMTP listener and workers, ``confirm_addresses`` on, as shipped)
and plays the attack of ``tests/e2e/security/test_held_forgeries.py`` over SMTP: two accounts of a
forger, ten forged requests in a victim's name over two days (seven signups with the victim's
From, one ``email`` and two ``add`` naming the victim's address), the victim's own signup among
them, then the victim's yes to the one mail about their own signup. It counts the forged
requests that yes ran: accounts the forged signups made, and forger accounts whose mail moved
to the victim's address or who may write from it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.rig import announce, scratch_database, workdir_for  # noqa: E402
from pbmserv.config import Settings  # noqa: E402
from pbmserv.db.engine import make_engine  # noqa: E402
from tests.e2e.security.test_held_forgeries import forge_then_confirm  # noqa: E402
from tests.support import RunningServer, Sink  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", help="a PostgreSQL URL (default: SQLite in a temporary folder)")
    args = parser.parse_args()
    announce("held forgeries: forged requests run on the owner's confirmation (goal 0)")
    with workdir_for("pbmserv-held-") as workdir, scratch_database(args.db, workdir) as db:
        sink = Sink().start()
        settings = Settings(
            confirm_addresses=True,
            db_url=db.url,
            listen="127.0.0.1:0",
            relay=sink.address,
            spool=workdir / "spool",
            poll_seconds=0.2,
            retry_base_seconds=0.2,
            retry_max_seconds=1.0,
        )
        server = RunningServer(settings).start()
        engine = make_engine(db.url)
        try:
            outcome = forge_then_confirm(server, engine, sink, by_reply=True)
        finally:
            server.stop()
            sink.stop()
            engine.dispose()
    rows = [
        ("database", db.kind),
        ("forged requests held", str(outcome.forged)),
        ("mails to the victim's address", str(len(outcome.mails_to_victim))),
        ("forged requests run on the confirmation", f"{outcome.forged_run} (goal 0)"),
        ("the owner's own signup ran", "yes" if outcome.own_ran else "NO"),
        ("the owner could sign up again", "yes" if outcome.signed_up_again else "NO"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"  {name:<{width}}  {value}")


if __name__ == "__main__":
    main()
