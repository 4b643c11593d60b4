"""Daily digests on a real database: a user who chose digest=daily gets no board mail for
ordinary moves, and one mail a day at the digest hour listing the boards where it is their
move, each with its picture and reply address; new games and game ends still come at once."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.db.models import OutboxMessage
from pbmserv.outbound.wording import notice_headline
from pbmserv.runtime.upkeep import maintain
from tests.core.client import Client

pytestmark = pytest.mark.db

BOB = "bob@example.org"


def board_mail_to(client: Client, address: str) -> list[str]:
    return [
        notice_headline(n) for n in client.notifications if n.to == address and n.kind == "board"
    ]


def queued(client: Client, kind: str = "notice") -> list[email.message.EmailMessage]:
    rows = client.query(select(OutboxMessage.raw).where(OutboxMessage.kind == kind))
    return [email.message_from_bytes(raw, policy=email.policy.default) for (raw,) in rows]  # type: ignore[misc]


def test_a_digest_user_gets_one_mail_a_day_for_the_boards_waiting(players: Client) -> None:
    assert players.run("set bob hunter22 digest=daily", sender=BOB).ok
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert board_mail_to(players, BOB) == ["chameleon board 1: waiting for alice"]  # news: at once
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run("chameleon move 1 alice secret1 c3x").ok
    assert board_mail_to(players, BOB) == []  # an ordinary move waits for the digest
    assert board_mail_to(players, "alice@example.org") == ["chameleon board 1: waiting for Bob"]

    seven = datetime.now(UTC).replace(hour=7, minute=0, second=0, microsecond=0)
    report = maintain(players.factory, players.settings, clock=lambda: seven + timedelta(1))
    assert len(report.digested) == 1
    [digest] = queued(players)
    assert digest["To"] == BOB and digest["Subject"].startswith("pbmserv: your move on 1 board")
    text = digest.get_body(("plain",)).get_content()
    assert "==== chameleon board 1 ====" in text and "board 2" not in text  # 2: alice's move
    assert "Reply to: pbmserv+b1-s1-" in text
    images = [p for p in digest.walk() if p.get_content_maintype() == "image"]
    assert len(images) == 1  # the picture, queued as SVG, drawn as PNG on delivery
    # Once a day: the next pass the same day sends nothing.
    later = maintain(players.factory, players.settings, clock=lambda: seven + timedelta(1.5))
    assert later.digested == [] and len(queued(players)) == 1
    # The next day, the board still waits: another digest.
    again = maintain(players.factory, players.settings, clock=lambda: seven + timedelta(2))
    assert len(again.digested) == 1


def test_a_games_end_comes_at_once_to_a_digest_user(players: Client) -> None:
    assert players.run("set bob hunter22 digest=daily mail=text", sender=BOB).ok
    assert players.run("chameleon challenge -size=3 alice bob").ok
    assert players.run("chameleon resign 1 alice secret1").ok
    assert board_mail_to(players, BOB) == ["chameleon board 1: you won"]
    assert "digest=daily" in players.run("status bob").text


def test_before_the_hour_no_digest_goes(players: Client) -> None:
    assert players.run("set bob hunter22 digest=daily", sender=BOB).ok
    assert players.run("chameleon challenge -size=5 bob alice", sender=BOB).ok
    six = datetime.now(UTC).replace(hour=6, minute=0, second=0, microsecond=0) + timedelta(3)
    # At 06:00 the last digest time is yesterday's 07:00, which bob never had: it goes now.
    assert len(maintain(players.factory, players.settings, clock=lambda: six).digested) == 1
    # And not again until today's 07:00.
    assert (
        maintain(
            players.factory, players.settings, clock=lambda: six + timedelta(hours=0.9)
        ).digested
        == []
    )
    assert (
        len(
            maintain(
                players.factory, players.settings, clock=lambda: six + timedelta(hours=1)
            ).digested
        )
        == 1
    )


def test_the_digest_hour_is_an_hour_of_the_day() -> None:
    from pbmserv.config import ConfigError, load_settings

    assert load_settings(environ={"PBMSERV_DIGEST_HOUR": "18"}).digest_hour == 18
    with pytest.raises(ConfigError, match="digest_hour"):
        load_settings(environ={"PBMSERV_DIGEST_HOUR": "24"})
