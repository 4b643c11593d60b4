"""submit / confirm and pass: a move played only when confirmed, and passing where allowed."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.db.models import MoveRow
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "1 alice secret1", "1 Bob hunter22"


def moves(players: Client) -> list[str]:
    rows = players.query(select(MoveRow.text).where(MoveRow.kind == "move").order_by(MoveRow.id))
    return [text for (text,) in rows]


def test_a_submitted_move_is_shown_kept_and_played_on_confirm(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    kept = players.run(f"extinction submit {ALICE} e4")
    assert kept.ok and "is kept, not played yet" in kept.text
    assert " 4  . . . . P . . .  4" in kept.text  # the board after it
    assert "extinction confirm 1 alice PASSWORD" in kept.text  # names the user, as preview
    assert moves(players) == [] and players.notifications == []
    # A second submission replaces the first.
    assert players.run(f"extinction submit {ALICE} d4").ok
    played = players.run(f"extinction confirm {ALICE}")
    assert played.ok and moves(players) == ["d4"]
    assert {n.to for n in players.notifications} == {"alice@example.org", "bob@example.org"}
    # Nothing is left to confirm, and the history never shows the submissions.
    again = players.run(f"extinction confirm {ALICE}")
    assert not again.ok and "no submitted move waiting" in again.text
    history = players.run("extinction history 1").text
    assert "e4" not in history and "d4" in history


def test_a_bad_submission_is_refused_and_a_move_made_since_cancels_one(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    refused = players.run(f"extinction submit {ALICE} e5")
    assert not refused.ok and "no white pawn can move to e5" in refused.text
    assert players.run(f"extinction submit {ALICE} e4").ok
    assert players.run(f"extinction move {ALICE} Nf3").ok
    stale = players.run(f"extinction confirm {ALICE}")
    assert not stale.ok and "no submitted move waiting" in stale.text
    assert moves(players) == ["Nf3"]
    # Bob's submission is his own: alice cannot confirm it.
    assert players.run(f"extinction submit {BOB} e5", sender="bob@example.org").ok
    assert not players.run(f"extinction confirm {ALICE}").ok


def test_pass_where_the_rules_allow_it_and_a_clear_refusal_elsewhere(players: Client) -> None:
    assert players.run("entropy challenge alice bob").ok
    assert players.run(f"entropy move {ALICE} c3").ok  # Chaos (alice, round 1) places
    passed = players.run(f"entropy pass {BOB}", sender="bob@example.org")
    assert passed.ok, passed.text
    assert moves(players)[-1] == "pass"
    assert players.run("chameleon challenge -size=5 alice bob").ok
    refused = players.run("chameleon pass 2 alice secret1")
    assert not refused.ok and "there is no passing in Chameleon" in refused.text
    assert "The right syntax" not in refused.text
