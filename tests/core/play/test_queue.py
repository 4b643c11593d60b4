"""GAME queue: moves played at once when the opponent plays what was foreseen."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow, MoveRow
from pbmserv.outbound.compose import render_notice
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "1 alice secret1", "1 Bob hunter22"


def moves(players: Client) -> list[str]:
    rows = players.query(select(MoveRow.text).where(MoveRow.kind == "move").order_by(MoveRow.id))
    return [text for (text,) in rows]


def bob(players: Client, line: str):  # type: ignore[no-untyped-def]
    return players.run(line, sender="bob@example.org")


def test_a_queued_answer_is_played_at_once_and_the_rest_waits(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction move {ALICE} e4").ok
    queued = bob(players, f"extinction queue {BOB} e5")  # odd: no pair
    assert not queued.ok and "in pairs" in queued.text
    queued = bob(players, f"extinction move {BOB} e5")
    assert queued.ok
    made = bob(players, f"extinction queue {BOB} Nf3 Nc6 Bb5 a6")
    assert made.ok and "if Nf3, then Nc6" in made.text and "if Bb5, then a6" in made.text
    assert players.notifications == []  # alice is told nothing
    # alice's history shows no queue.
    assert "Nc6" not in players.run("extinction history 1").text
    played = players.run(f"extinction move {ALICE} Nf3")
    assert played.ok and "Bob (Black) played Nc6 (queued in advance)." in played.text
    assert "Now: your move." in played.text
    assert moves(players) == ["e4", "e5", "Nf3", "Nc6"]
    alice_mail = next(n for n in players.notifications if n.to == "alice@example.org")
    assert "played Nc6 (queued in advance)" in render_notice(alice_mail, "s@x")
    listed = bob(players, "extinction showas Bob hunter22 1")
    assert "Your queue: if Bb5, then a6." in listed.text
    # Something else drops the rest.
    assert players.run(f"extinction move {ALICE} Bc4").ok
    assert moves(players)[-1] == "Bc4"
    assert "Your queue" not in bob(players, "extinction showas Bob hunter22 1").text


def test_a_queue_is_checked_now_and_may_be_cleared(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    early = players.run(f"extinction queue {ALICE} e5 d4")
    assert not early.ok and "not your opponent's turn" in early.text
    assert players.run(f"extinction move {ALICE} e4").ok
    assert bob(players, f"extinction move {BOB} e5").ok
    illegal = bob(players, f"extinction queue {BOB} Nf3 Ke6")
    assert not illegal.ok and "in the queue" in illegal.text
    assert bob(players, f"extinction queue {BOB} Nf3 Nc6").ok
    assert bob(players, f"extinction queue {BOB} clear").ok
    assert players.run(f"extinction move {ALICE} Nf3").ok
    assert moves(players) == ["e4", "e5", "Nf3"]
    with players.session() as session:
        assert session.get(GameRow, 1).to_move == "1"


def test_hidden_and_chance_games_refuse_a_queue(players: Client) -> None:
    assert players.run("hmdg challenge alice bob").ok
    hidden = bob(players, "hmdg queue 1 Bob hunter22 a1 b2")
    assert not hidden.ok and "hides moves" in hidden.text
    assert players.run("entropy challenge alice bob").ok
    chance = bob(players, "entropy queue 2 Bob hunter22 a1 b2")
    assert not chance.ok and "chance" in chance.text


def test_moves_with_spaces_are_queued_between_commas(players: Client) -> None:
    # Rebel Buffalo: after f3-f4, e6-e5 encloses the dog on f4, which goes back to a2.
    assert players.run("buffalo challenge -variant=rebel alice bob").ok
    for mover, move in [
        ("alice", "c7-c6"),
        ("bob", "d2-d5"),
        ("alice", "c6-c5"),
        ("bob", "f2-f3"),
        ("alice", "e7-e6"),
    ]:
        line = f"buffalo move {ALICE} {move}" if mover == "alice" else f"buffalo move {BOB} {move}"
        assert players.run(line, sender=f"{mover}@example.org").ok, move
    gap = players.run(f"buffalo queue {ALICE} f3-f4,, e6-e5 dog:a2")
    assert not gap.ok and "each comma must stand between two moves" in gap.text
    trailing = players.run(f"buffalo queue {ALICE} f3-f4, e6-e5 dog:a2,")
    assert not trailing.ok and "each comma must stand between two moves" in trailing.text
    made = players.run(f"buffalo queue {ALICE} f3-f4, e6-e5 dog:a2")
    assert made.ok and "if f3-f4, then e6-e5 dog:a2" in made.text
    played = bob(players, f"buffalo move {BOB} f3-f4")
    assert played.ok and "played e6-e5 dog:a2 (queued in advance)" in played.text
    assert moves(players)[-2:] == ["f3-f4", "e6-e5 dog:a2"]
    assert "queue" in players.run("help queue").text and "commas" in players.run("help queue").text
