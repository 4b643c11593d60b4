"""A whole 5x5 Entropy game by mail through both rounds to the result, then the opening of an
Entropy II board, checked against a golden transcript.

Every message goes through the real SMTP listener and every reply and board mail comes back
through a real relay (see tests/golden/runner.py). The server picks a board's random seed with
``secrets.randbits``; this test fixes it, so the counters drawn from the bag (and with them the
transcript) are the same on every run.

The game has 98 moves and about 300 mails. To keep the golden file readable, the steps marked
FULL are recorded in full (the first moves, every mistake, the change of rounds, the end, the
history and the Entropy II opening); for the others only each mail's recipient and Subject, and
the board mail's first line (who played what), are kept.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pbmserv.core.play import game_service
from tests.golden.runner import check_golden, play_transcript
from tests.support import Received, Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("entropy_game.txt")
ALICE, BOB = "alice@example.org", "bob@example.org"
PASSWORDS = {ALICE: ("alice", "secret1"), BOB: ("bob", "hunter22")}
SEED = 2024  # the board seed the server is made to pick

# The moves of board 1 as the players type them, in order. In round 1 alice is Chaos and bob
# Order; in round 2 the other way round. Chaos may leave out the colour of the drawn counter.


def _moves(text: str) -> list[str]:
    return [move.strip() for move in text.split(",")]


ROUND_1 = _moves(
    "a1, pass, b1, pass, d1 R, b1-c1, a2, a2-c2, b1, pass, e1 y, pass, a2, b1-b2, b1, pass, "
    "d2, e1-e2, b3, b3-a3, b3, b3-c3, e1, pass, d3, pass, e3, pass, a4, a4-d4, b4, b4-a4, "
    "b3, pass, b4, pass, a5, a5-d5, a5, a5-c5, b5, e3-e5, e4, e4-e3, c4, pass, a5, PASS, e4 G"
)
ROUND_2 = _moves(
    "a1 R, pass, b1, pass, d1, d1-c1, d1, pass, e1, pass, a2, pass, b2, b2-c2, d2, pass, b2, "
    "pass, e2, pass, a3, a3-d3, a3, a3 to b3, c3, a2-a3, a2, e2-e3, a4, a4-d4, a4, a4-b4, e2, "
    "pass, a4, pass, b5, b5-a5, c5, c5-b5, d5, d5-c5, e4, pass, c4, pass, d5, pass, e5"
)
# Mistakes, sent before the move of the same number (0-based): each gets a polite error.
MISTAKES = {
    2: "a1",  # alice places on a taken square
    4: "d1 B",  # alice names the wrong colour: the bag gave a red
    5: "a1-c1",  # bob slides through the counter on b1
    50: "b2",  # alice, Order now, tries to place a counter
}
FULL_PLIES = {0, 1, 2, 3, 4, 5, 47, 48, 49, 50, 95, 96, 97}


def _command(sender: str, board: int, text: str, verb: str = "move") -> str:
    userid, password = PASSWORDS[sender]
    return f"entropy {verb} {board} {userid} {password} {text}"


def _mover(ply: int) -> str:
    """alice is Chaos in round 1 (49 placements, 48 Order moves) and Order in round 2."""
    chaos, order = (ALICE, BOB) if ply < 49 else (BOB, ALICE)
    return chaos if (ply if ply < 49 else ply - 49) % 2 == 0 else order


def steps() -> list[tuple[str, str, bool]]:
    """(sender, subject, recorded in full) of every mail the players send."""
    out = [
        (ALICE, "signup alice secret1 Alice Liddell", True),
        (BOB, "signup bob hunter22 Bob", True),
        (ALICE, "help entropy", True),
        (ALICE, "entropy challenge -size=5 alice bob", True),
    ]
    for ply, text in enumerate(ROUND_1 + ROUND_2):
        sender = _mover(ply)
        if ply in MISTAKES:
            out.append((sender, _command(sender, 1, MISTAKES[ply]), True))
        out.append((sender, _command(sender, 1, text), ply in FULL_PLIES))
    out += [
        (BOB, "entropy history 1", True),
        # Entropy II: alice, named first, opens as Order by stocking Chaos's reserve.
        (ALICE, "entropy challenge -size=5 -variant=entropy2 alice bob", True),
        (ALICE, _command(ALICE, 2, "RRGBY", verb="stock"), True),
        (BOB, _command(BOB, 2, "c3"), True),  # which of the four colours? An error says so
        (BOB, _command(BOB, 2, "c3 red"), True),
        (ALICE, _command(ALICE, 2, "c3-c5"), True),  # and which counter to hand over?
        (ALICE, _command(ALICE, 2, "c3-c5 give P"), True),
    ]
    return out


def _brief(sender: str, subject: str, messages: list[Received]) -> str:
    """A step in short: the mails' recipients and Subjects, and who played what."""
    lines = [f"=== {sender}: {subject}"]
    # A board's mail keeps one Subject: what it tells is its first line, then what happened.
    board_mail = [m for m in messages if m.message["Auto-Submitted"] != "auto-replied"]
    lines += [
        f"<<< to {m.to}: {m.body.splitlines()[0] if m in board_mail else m.subject}"
        for m in messages
    ]
    events = {m.body.splitlines()[2] for m in board_mail}
    lines += [f"    {event}" for event in sorted(events)]
    return "\n".join(lines) + "\n"


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(game_service, "secrets", SimpleNamespace(randbits=lambda bits: SEED))
    parts, sent = [], []
    for sender, subject, full in steps():
        text, messages = play_transcript(server, engine, sink, [(sender, subject, "")])
        parts.append(text if full else _brief(sender, subject, messages))
        sent += messages
    transcript = "\n".join(parts)

    # Facts checked directly, whatever the golden file says.
    subjects = [m.subject for m in sent]
    # A board's thread keeps one Subject; each board mail's first line says what it tells.
    firsts = [(m.body.splitlines() or [""])[0] for m in sent]
    assert "entropy board 1: you won" in firsts and "entropy board 1: you lost" in firsts
    assert not any("hunter22" in m.body or "secret1" in m.body for m in sent)
    assert not any("hunter22" in s or "secret1" in s for s in subjects)
    errors = [m for m in sent if "Sorry, that did not work" in m.body]
    assert len(errors) == len(MISTAKES) + 2  # and the two Entropy II questions
    assert all("Nothing was changed." in m.body for m in errors)
    final = next(
        m.body for m, first in zip(sent, firsts, strict=True) if first == "entropy board 1: you won"
    )
    # The final mail names each round's roles and says who won by how much.
    assert "Round 1: bob was Order, alice was Chaos." in final
    assert "bob scored as Order: 18 in rows + 20 in columns = 38." in final
    assert "Round 2: alice was Order, bob was Chaos." in final
    assert "alice scored as Order: 13 in rows + 28 in columns = 41." in final
    assert "alice won by 3 points: 41 as Order, against 38 for bob." in final
    assert "Game over: alice (Chaos, then Order) won by 3 points (41 points as Order" in final
    history = next(m.body for m in sent if m.subject == "Re: entropy history 1")
    assert " 98. e5 P  (bob)" in history and "  1. a1 Y  (alice" in history
    assert "entropy stock 2 alice PASSWORD COLOURS" in transcript
    check_golden(transcript, GOLDEN)
