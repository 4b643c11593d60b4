"""signoff / signon, the vacation's old words: no reminders or forfeits while away, the boards
marked, full time after."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from pbmserv.core.context import CommandContext
from pbmserv.core.maintenance import run_maintenance
from pbmserv.db.engine import transaction
from pbmserv.db.models import GameRow
from tests.core.client import Client

pytestmark = pytest.mark.db


def maintain(players: Client, days: float):  # type: ignore[no-untyped-def]
    later = datetime.now(UTC) + timedelta(days=days)
    with transaction(players.factory) as session:
        return run_maintenance(CommandContext(session, players.settings, None, clock=lambda: later))


def test_a_signed_off_players_boards_wait_and_get_full_time_back(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    away = players.run("signoff alice secret1")
    assert away.ok and "alice is on vacation" in away.text
    assert "(Vert, away)" in players.run("chameleon board 1").text
    assert "alice is on vacation (away)" in players.run("status alice").text
    report = maintain(players, 365)
    assert report.reminded == [] and report.forfeited == []
    back = players.run("signon alice secret1")
    assert back.ok and "Welcome back" in back.text and "took 1 day; 19 left" in back.text
    ((status,),) = players.query(select(GameRow.status))
    assert status == "active"
    # The idle clock started again at the signon: nothing is due at once.
    limits = players.settings.idle_limits("chameleon")
    assert maintain(players, limits.remind_after_days - 0.5).reminded == []
    assert maintain(players, limits.remind_after_days + 0.5).reminded == [1]
    assert "away" not in players.run("chameleon board 1").text


def test_signon_without_signoff_changes_nothing(players: Client) -> None:
    again = players.run("signon alice secret1")
    assert again.ok and "was not on vacation" in again.text
    assert not players.run("signoff alice wrong").ok
