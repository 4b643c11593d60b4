"""Every kind of mail the server sends, scored by SpamAssassin's stock rules (Debian's
``spamassassin``, local tests only): none may score above 0.5.

A scripted club plays through the real server (SMTP in, the spool out, DKIM-signed as the
deployment kit signs): a board mail with its picture for every game, to the player to move
and to the one who waits, board mail as text alone, the answers, chat, messages, proposals,
vacation notices, a reminder, a digest, an address change, password guessing, the operator's
broadcast, password reset and board deletion, a confirmation, and a tournament's entry,
pairings and standings. Each mail gets a Received header whose last hop is a public address
(so that ALL_TRUSTED does not apply), and all are scored by one ``spamassassin -L -t`` run.

CI installs SpamAssassin (.ci/run) and this test fails there without it; elsewhere it is
skipped when SpamAssassin is not installed.
"""

from __future__ import annotations

import email
import email.policy
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine

from pbmserv.cli.admin import run_admin
from pbmserv.cli.main import build_parser
from pbmserv.config import Settings
from pbmserv.core.accounts.bouncing import bounce_key, return_path
from pbmserv.games import all_games
from pbmserv.outbound.signing import new_key
from tests.e2e.by_mail.test_bounces_by_mail import report_to
from tests.support import RunningServer, make_mail, settle, smtp_send

pytestmark = pytest.mark.db

SPAMASSASSIN = shutil.which("spamassassin")
if SPAMASSASSIN is None:
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("CI needs SpamAssassin for the spam score test (.ci/run installs it)")
    pytest.skip("SpamAssassin is not installed here", allow_module_level=True)

MAX_SCORE = 0.5
SERVER = "pbmserv@games.example.org"
ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
#: The hop that hands the mail to the reader's provider: a public address (not TEST-NET, which
#: SpamAssassin calls illegal), named as Postfix names a client.
LAST_HOP = (
    "Received: from games.example.org (games.example.org [46.23.90.12])\n"
    "\tby mx.example.net (Postfix) with ESMTPS id 4Xb7Lq0k2Tz9rx\n"
    "\tfor <{to}>; {date}\n"
)


@dataclass
class Mail:
    raw: bytes
    message: EmailMessage
    outbox_id: int  # its spool file is named by it

    @property
    def text(self) -> str:
        part = self.message.get_body(preferencelist=("plain",))
        return part.get_content() if part is not None else ""

    @property
    def first_line(self) -> str:
        return (self.text.strip().splitlines() or [""])[0]


class Club:
    """The players at their mail programs and the operator at the shell, around one running
    server that delivers to its spool (the bytes that would leave, signed)."""

    def __init__(self, settings: Settings, engine: Engine) -> None:
        self.settings, self.engine = settings, engine
        self.server = RunningServer(settings).start()
        self.seen: set[Path] = set()

    def new_mail(self) -> list[Mail]:
        settle(self.engine)
        folder = self.settings.spool / "new"
        fresh = sorted(set(folder.glob("*.eml")) - self.seen) if folder.exists() else []
        self.seen.update(fresh)
        return [Mail(p.read_bytes(), _parsed(p.read_bytes()), int(p.name[:10])) for p in fresh]

    def send(self, sender: str, subject: str, body: str = "") -> list[Mail]:
        message = make_mail(sender, subject, body, to=self.settings.address)
        assert smtp_send(self.server.port, message, to=self.settings.address)[0] == 250
        return self.new_mail()

    def admin(self, *args: str) -> list[Mail]:
        """An admin command run as ``pbmserv admin`` runs it, in this process."""
        assert run_admin(build_parser().parse_args(["admin", *args]), self.settings) == 0, args
        return self.new_mail()

    def maintain(self, at: datetime) -> list[Mail]:
        """The maintenance pass as if run at ``at`` (its mail is sent now)."""
        return self.admin("maintain", "--now", at.isoformat())


def _parsed(raw: bytes) -> EmailMessage:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


def one(mails: list[Mail], to: str, first_line: str = "", subject: str = "") -> Mail:
    """The first of ``mails`` to ``to`` (any, if "") whose first line and Subject contain
    the words given."""
    found = [
        m
        for m in mails
        if to in (m.message["To"], "")
        and first_line in m.first_line
        and subject in str(m.message["Subject"])
    ]
    shown = [(m.message["To"], str(m.message["Subject"]), m.first_line) for m in mails]
    assert found, (to, first_line, subject, shown)
    return found[0]


def has_picture(mail: Mail) -> bool:
    return any(part.get_content_type() == "image/png" for part in mail.message.walk())


def every_kind_of_mail(club: Club) -> Iterator[tuple[str, Mail]]:
    """One mail of each kind, by name, as the club's play brings them."""
    welcome = club.send(ALICE, "signup alice secret1")
    yield "answer (signup)", one(welcome, ALICE)
    club.send(BOB, "signup bob hunter22")
    to_bob: list[Mail] = []  # to bounce, at the end
    for game in all_games():
        name = game.SPEC.name
        out = club.send(ALICE, f"{name} challenge alice bob")
        to_move = one(out, ALICE, "your move")
        assert has_picture(to_move), name
        yield f"board mail with picture, {name}, your move", to_move
        to_bob.append(one(out, BOB, "waiting for"))
        yield f"board mail with picture, {name}, waiting", to_bob[-1]
    out = club.send(ALICE, "chameleon challenge -size=3 alice bob")
    board = re.search(r"board (\d+)", one(out, ALICE, "your move").first_line)
    assert board is not None
    small = board.group(1)
    yield "board mail with picture, chameleon 3x3, waiting", one(out, BOB, "waiting for")
    out = club.send(ALICE, f"chameleon chat {small} alice secret1 Good luck, and have fun!")
    yield "chat", one(out, BOB, "alice says")
    out = club.send(ALICE, "message alice secret1 bob Shall we play Owlman next week?")
    yield "message", one(out, BOB, subject="a message from alice")
    out = club.send(ALICE, f"chameleon move {small} alice secret1 a1x")
    yield "board mail with picture, after a move", one(out, BOB, "your move")
    out = club.send(ALICE, f"chameleon propose {small} alice secret1 undo")
    yield "proposal", one(out, BOB, "proposes")
    out = club.send(BOB, "vacation bob hunter22 start 3")
    yield "vacation notice", one(out, ALICE, subject="vacation")
    club.send(BOB, "vacation bob hunter22 stop")

    # Board mail as text alone, to a player who asked for it.
    club.send(BOB, "set bob hunter22 mail=text")
    out = club.send(ALICE, "owlman challenge alice bob")
    text_only = one(out, BOB, "waiting for")
    assert not has_picture(text_only)
    yield "board mail as text", text_only
    club.send(BOB, "set bob hunter22 mail=html")

    # Idle boards: a reminder; a digest for a player who chose one.
    later = datetime.now(UTC) + timedelta(days=8)
    reminders = club.maintain(later)
    reminder = one(reminders, ALICE, "reminder")
    assert has_picture(reminder)
    yield "reminder", reminder
    # The shortest digest: one small board.
    club.send(CAROL, "signup carol pw-carol")
    club.send(CAROL, "set carol pw-carol digest=daily")
    club.send(CAROL, "chameleon challenge -size=3 carol alice")
    hour = club.settings.digest_hour
    digest_time = (later + timedelta(days=1)).replace(hour=hour, minute=5)
    digests = club.maintain(digest_time)
    digest = one(digests, CAROL, subject="your move on 1 board")
    assert has_picture(digest)
    yield "digest", digest

    out = club.send(ALICE, "email alice secret1 alice@example.net")
    yield "address changed", one(out, "", subject="address of alice changed")
    club.send("alice@example.net", "email alice secret1 alice@example.org")

    # The operator's mail.
    out = club.admin("broadcast", "--subject", "Downtime on Sunday", "--text", BROADCAST)
    yield "broadcast", one(out, BOB, subject="Downtime")
    out = club.admin("users", "reset-password", "alice")
    yield "password reset", one(out, ALICE, subject="new password")
    out = club.admin("games", "delete", small, "--yes")
    yield "board deleted", one(out, BOB, subject="was deleted")

    # A tournament: entries, pairings, standings.
    club.admin("tournaments", "create", "cup", "--format", "swiss", "--rounds", "1",
               "--game", "small=chameleon:size=3")  # fmt: skip
    club.admin("tournaments", "open", "cup")
    yield "tournament entry", one(club.admin("tournaments", "add", "cup", "carol"), CAROL)
    club.admin("tournaments", "add", "cup", "bob")
    pairings = club.admin("tournaments", "start", "cup")
    yield "tournament pairings", one(pairings, CAROL, subject="pairings")
    # One game: the match's board is made at once; the player to move resigns it.
    to_move = one(pairings, "", "your move")
    board = re.search(r"board (\d+)", to_move.first_line)
    assert board is not None
    players = {CAROL: ("carol", "pw-carol"), BOB: ("bob", "hunter22")}
    userid, password = players[str(to_move.message["To"])]
    out = club.send(str(to_move.message["To"]), f"chameleon resign {board[1]} {userid} {password}")
    yield "board mail with picture, game over", one(out, "", "you won")
    yield "tournament standings", one(out, CAROL, subject="standings")

    # Last (the account is locked after it): someone guessing bob's password.
    guessed: list[Mail] = []
    for _ in range(club.settings.failed_logins_per_user):
        guessed += club.send(CAROL, "set bob wrong-password mail=text")
    yield "password guessing", one(guessed, BOB, subject="guessing")
    # Bob's mail bounces (hard, as often as counts): his opponents are told.
    key = bounce_key(club.engine)
    told: list[Mail] = []
    for mail in to_bob[: club.settings.bounce_limit]:
        path = return_path(club.settings.address, key, mail.outbox_id)
        assert smtp_send(club.server.port, report_to(path), mail_from="", to=path)[0] == 250
        told += club.new_mail()
    yield "unreachable", one(told, ALICE, subject="cannot be reached")


BROADCAST = """Hello everyone,

the server will be down for an hour on Sunday morning (UTC) while its disk is replaced.
Mail sent meanwhile waits at your provider and is answered when the server is back.

Thank you for playing!"""


def confirmation_mail(settings: Settings, engine: Engine) -> Mail:
    """The confirmation mail a newcomer gets where addresses are confirmed (as shipped)."""
    club = Club(replace(settings, confirm_addresses=True), engine)
    try:
        out = club.send("dora@example.org", "signup dora pw-dora")
    finally:
        club.server.stop()
    return one(out, "dora@example.org", subject="may we send")


def scores(mails: dict[str, Mail], folder: Path) -> dict[str, tuple[float, str]]:
    """Each mail's score and the rules it hit (with their points), from one SpamAssassin run
    over them all (it reads each path in turn; a start costs a second)."""
    folder.mkdir()
    date = format_datetime(datetime.now(UTC))
    paths = []
    for number, mail in enumerate(mails.values()):
        path = folder / f"{number:03d}.eml"
        hop = LAST_HOP.format(to=mail.message["To"], date=date).encode()
        path.write_bytes(hop + mail.raw.replace(b"\r\n", b"\n"))
        paths.append(str(path))
    assert SPAMASSASSIN is not None
    run = subprocess.run(
        [SPAMASSASSIN, "-L", "-t", "-x", "--cf", "add_header all Tests _TESTSSCORES(,)_", *paths],
        env={**os.environ, "HOME": str(folder)},  # no one's own preferences or Bayes data
        capture_output=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    # One X-Spam-Tests header on top of each mail, in their order: RULE=POINTS,... or "none"
    # (summed here: X-Spam-Status rounds the score to a tenth).
    output = run.stdout.decode(errors="replace")
    headers = re.findall(r"^X-Spam-Tests: (.*(?:\n[ \t].*)*)", output, re.M)
    assert len(headers) == len(mails), output[-2000:]
    found = {}
    for kind, header in zip(mails, headers, strict=True):
        hits = "".join(header.split())
        points = [float(hit.rpartition("=")[2]) for hit in hits.split(",") if hit != "none"]
        found[kind] = (round(sum(points), 3), hits)
    return found


def test_every_kind_of_mail_scores_low_in_spamassassin(
    settings: Settings, engine: Engine, tmp_path: Path
) -> None:
    key = tmp_path / "dkim.key"
    key.write_bytes(new_key())
    deployed = replace(
        settings,
        address=SERVER,
        relay=None,  # to the spool: the bytes as they leave
        dkim_selector="pbmserv",
        dkim_key_file=key,
    )
    club = Club(deployed, engine)
    try:
        mails = dict(every_kind_of_mail(club))
    finally:
        club.server.stop()
    mails["confirmation"] = confirmation_mail(deployed, engine)
    scored = scores(mails, tmp_path / "scored")
    for kind, (score, hit) in scored.items():
        print(f"{score:6.3f}  {kind}: {hit}")  # with -s: the scores of every kind
    high = {kind: found for kind, found in scored.items() if found[0] > MAX_SCORE}
    assert not high, "\n".join(f"{kind}: {score} ({hit})" for kind, (score, hit) in high.items())
