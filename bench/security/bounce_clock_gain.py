"""Clock time gained by self-forged bounces beyond the vacation bank (issue 48, item 1; goal 0).

Run ``python bench/security/bounce_clock_gain.py`` (SQLite in a temporary directory). For each pause
length, a fresh database and the server's own processing, on a simulated clock:

1. bob challenges alice on a ``-clock=3d`` board (no increment: the clock's arithmetic stays
   plain); alice moves, and bob's clock runs;
2. bob sends three made-up "undeliverable" reports to the return paths of mail he received,
   and his address is marked bouncing;
3. the clock sweep runs every 6 hours for the pause's length; then bob ``add``s a second
   address from it and moves from it (if his board is not lost by then).

Bob's turn lasted ``wall``; his clock was charged ``clock``; his bank ``bank`` (days charged
times 24 hours). What he gained beyond the bank is ``wall - clock - bank`` (at least 0): a
vacation stops a clock for no more than the days it charges, so an honest player's figure is 0.
Before issue 48 a bounce stopped the clock for free, and the move from the second address left
the mark (and the pause) in place: the gain was the whole pause.
"""

from __future__ import annotations

import argparse
import logging
import re
import shutil
import sys
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sqlalchemy import Engine, select  # noqa: E402

from bench.rig import scratch_database, workdir_for  # noqa: E402
from pbmserv.config import Settings  # noqa: E402
from pbmserv.core.accounts.bouncing import bounce_key, return_path  # noqa: E402
from pbmserv.db.engine import make_engine, session_factory  # noqa: E402
from pbmserv.db.models import GameRow, OutboxMessage, Seat, User  # noqa: E402
from pbmserv.inbound.inbox import store_message  # noqa: E402
from pbmserv.runtime.processor import process_pending  # noqa: E402
from pbmserv.runtime.upkeep import sweep  # noqa: E402

SAMPLE = ROOT / "tests" / "inbound" / "data" / "bounces" / "postfix-5.1.1-remote.eml"
SAMPLE_PATH = "pbmserv+bounce-17-k3mpq7abcdef@games.example.net"
SAMPLE_RECIPIENT = "bob@gone.example.net"
SAMPLE_ID = re.compile(rb"^Message-Id: <[^>]+>", re.M)

ALICE, BOB, BOB2 = "alice@bench.example", "bob@bench.example", "bob2@elsewhere.example"
T0 = datetime(2031, 2, 1, 9, 0, tzinfo=UTC)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)
CLOCK = 3 * 86400.0
#: Pause lengths tried, in days: within a day, within the bank, past the bank (20 days) and
#: past the bank and the clock together.
PAUSES = (0.2, 1.0, 5.0, 12.5, 19.5, 21.0, 30.0, 60.0)


class Run:
    """One attack on one fresh database, on a simulated clock."""

    def __init__(self, url: str) -> None:
        self.engine: Engine = make_engine(url)
        self.factory = session_factory(self.engine)
        self.settings = Settings(confirm_addresses=False, db_url=url, robots=False)
        self.now = T0

    def mail(self, sender: str, text: str) -> None:
        message = EmailMessage()
        message["From"], message["To"] = sender, self.settings.address
        message["Subject"], message["Message-ID"] = text, make_msgid(domain="bench.example")
        message.set_content(text)
        self._store(message.as_bytes(), sender, [self.settings.address])

    def forged_report(self, path: str) -> None:
        raw = SAMPLE.read_bytes().replace(SAMPLE_PATH.encode(), path.encode())
        raw = raw.replace(SAMPLE_RECIPIENT.encode(), BOB.encode())
        raw = SAMPLE_ID.sub(b"Message-Id: " + make_msgid(domain="mx.example").encode(), raw)
        self._store(raw, BOB, [path])  # sent by bob himself

    def _store(self, raw: bytes, sender: str, to: list[str]) -> None:
        store_message(self.factory, self.settings, raw, sender, lambda: self.now, to)
        process_pending(self.factory, self.settings, lambda: self.now)

    def sweep_until(self, end: datetime, step: timedelta = 6 * HOUR) -> None:
        """Sweep every ``step``, and at each moment the board is due (as `serve`, whose sweep
        comes every few seconds, would): a loss on time is dated when the time ran out."""
        while self.now < end:
            with self.factory() as session:
                due = session.scalar(select(GameRow.clock_due_at).where(GameRow.id == 1))
            due = due.replace(tzinfo=UTC) if due is not None and due.tzinfo is None else due
            self.now = min(self.now + step, end, *([due] if due and due > self.now else []))
            sweep(self.factory, self.settings, lambda: self.now)

    def bobs_return_paths(self) -> list[str]:
        key = bounce_key(self.engine)
        with self.factory() as session:
            ids = session.scalars(select(OutboxMessage.id).where(OutboxMessage.recipient == BOB))
            return [return_path(self.settings.address, key, i) for i in ids]

    def facts(self) -> tuple[float, str, int]:
        """bob's clock (seconds left), the board's status, bob's vacation days used."""
        with self.factory() as session:
            seat = session.scalars(select(Seat).where(Seat.game_id == 1, Seat.seat == 1)).one()
            board = session.get_one(GameRow, 1)
            user = session.scalars(select(User).where(User.userid == "bob")).one()
            return float(seat.clock_left or 0.0), board.status, user.vacation_days_used


def attack(url: str, pause_days: float) -> dict[str, float | str]:
    run = Run(url)
    run.mail(ALICE, "signup alice secret1")
    run.mail(BOB, "signup bob hunter22")
    run.mail(BOB, "extinction challenge -clock=3d alice bob")
    run.now = T0 + HOUR
    run.mail(ALICE, "extinction move 1 alice secret1 e4")
    turn_began = run.now
    run.mail(ALICE, "extinction chat 1 alice secret1 your move")
    run.now = T0 + 2 * HOUR
    for path in run.bobs_return_paths()[: run.settings.bounce_limit]:
        run.forged_report(path)
    run.sweep_until(run.now + timedelta(days=pause_days))
    _left, status, _days = run.facts()
    if status == "active":
        run.mail(BOB2, f"add bob hunter22 {BOB2}")
        run.mail(BOB2, "extinction move 1 bob hunter22 e5")
    left, status, days = run.facts()
    with run.factory() as session:
        board = session.get_one(GameRow, 1)
        ended = (
            board.updated_at if board.updated_at.tzinfo else board.updated_at.replace(tzinfo=UTC)
        )
    turn_ended = run.now if status == "active" else ended
    wall = (turn_ended - turn_began).total_seconds()
    gained = max(wall - (CLOCK - max(left, 0.0)) - days * DAY.total_seconds(), 0.0)
    run.engine.dispose()
    return {
        "pause_days": pause_days,
        "board": "moved" if status == "active" else status,
        "bank_days_charged": days,
        "clock_hours_charged": round((CLOCK - max(left, 0.0)) / 3600, 2),
        "gained_days": round(gained / 86400, 3),
    }


def main() -> None:
    logging.getLogger("pbmserv").setLevel(logging.ERROR)  # each report logs a warning
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pauses", type=float, nargs="*", default=list(PAUSES))
    args = parser.parse_args()
    rows = []
    with (
        workdir_for("pbm-bounce-gain-") as workdir,
        scratch_database(None, workdir, "template") as template,
    ):
        source = Path(template.url.removeprefix("sqlite:///"))
        for number, pause in enumerate(args.pauses):
            copy = workdir / f"run{number}.db"
            shutil.copy(source, copy)
            rows.append(attack(f"sqlite:///{copy}", pause))
    print("pause (days)  board     bank days  clock hours  gained beyond the bank (days)")
    for row in rows:
        print(
            f"{row['pause_days']:>12}  {row['board']:<8}  {row['bank_days_charged']:>9}"
            f"  {row['clock_hours_charged']:>11}  {row['gained_days']}"
        )
    worst = max(float(row["gained_days"]) for row in rows)
    print(
        f"clock time gained by self-forged bounces beyond the vacation bank: {worst} days (goal 0)"
    )


if __name__ == "__main__":
    main()
