"""propose / accept / reject / draw: a draw or taking back moves, by the players' consent."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from pbmserv.db.models import GameRow, MoveRow
from pbmserv.outbound.compose import render_notice
from pbmserv.outbound.wording import notice_headline
from tests.core.client import Client

pytestmark = pytest.mark.db

ALICE, BOB = "1 alice secret1", "1 Bob hunter22"


def run_as_bob(players: Client, line: str):  # type: ignore[no-untyped-def]
    return players.run(line, sender="bob@example.org")


def board(players: Client) -> GameRow:
    with players.session() as session:
        row = session.get(GameRow, 1)
        assert row is not None
        session.expunge(row)
        return row


def moves(players: Client) -> list[str]:
    rows = players.query(select(MoveRow.text).where(MoveRow.kind == "move").order_by(MoveRow.id))
    return [text for (text,) in rows]


def test_a_draw_proposed_and_accepted_ends_the_game_drawn_by_agreement(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction move {ALICE} e4").ok
    proposed = players.run(f"extinction propose {ALICE} draw")
    assert proposed.ok and "You proposed a draw" in proposed.text
    (note,) = players.notifications
    assert note.to == "bob@example.org"
    assert notice_headline(note) == "extinction board 1: alice (White) proposed a draw"
    body = render_notice(note, "s@x")
    assert "extinction accept 1 USERID PASSWORD" in body and "secret1" not in body
    # Bob may think it over across his own move: only alice's next move withdraws it.
    assert run_as_bob(players, f"extinction move {BOB} e5").ok
    agreed = run_as_bob(players, f"extinction accept {BOB} draw")
    assert agreed.ok and "Draw agreed" in agreed.text, agreed.text
    row = board(players)
    assert row.status == "finished" and row.result is not None
    assert row.result["winners"] == [] and row.result["termination"] == "agreement"
    assert {n.to for n in players.notifications} == {"alice@example.org", "bob@example.org"}
    history = players.run("extinction history 1").text
    assert "alice proposes a draw" in history and "Bob accepts the draw proposal" in history


def test_a_draw_proposal_lapses_when_its_maker_moves_again(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction propose {ALICE} draw").ok
    assert players.run(f"extinction move {ALICE} e4").ok
    late = run_as_bob(players, f"extinction accept {BOB} draw")  # bare: the board (consent)
    assert not late.ok and "no proposal waiting for your answer" in late.text
    assert board(players).status == "active"


def test_a_rejected_proposal_is_told_to_its_maker_and_can_no_longer_be_accepted(
    players: Client,
) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction propose {ALICE} draw").ok
    refused = run_as_bob(players, f"extinction reject {BOB}")
    assert refused.ok and "the game goes on" in refused.text
    (note,) = players.notifications
    assert note.to == "alice@example.org"
    assert "Bob (Black) rejected your proposal of a draw" in render_notice(note, "s@x")
    assert not run_as_bob(players, f"extinction accept {BOB} draw").ok
    # The maker may not answer their own proposal either.
    assert players.run(f"extinction propose {ALICE} draw").ok
    own = players.run(f"extinction accept {ALICE}")
    assert not own.ok and "no proposal waiting" in own.text


def test_undo_takes_back_the_proposers_move_and_the_reply_to_it(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction move {ALICE} e4").ok
    assert run_as_bob(players, f"extinction move {BOB} e5").ok
    # Alice's turn: undo takes back bob's reply and her e4.
    assert players.run(f"extinction propose {ALICE} undo").ok
    taken = run_as_bob(players, f"extinction accept {BOB} undo")
    assert taken.ok and "took back 1. e4, 1... e5" in taken.text, taken.text
    row = board(players)
    assert row.ply == 0 and row.to_move == "0" and moves(players) == []
    assert players.run(f"extinction move {ALICE} d4").ok
    assert moves(players) == ["d4"]


def test_undo_of_the_last_move_alone_and_its_lapse_at_the_next_move(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    assert players.run(f"chameleon move {ALICE} c3x").ok
    assert players.run(f"chameleon propose {ALICE} undo").ok
    assert run_as_bob(players, f"chameleon move {BOB} b2o").ok
    lapsed = run_as_bob(players, f"chameleon accept {BOB}")
    assert not lapsed.ok and moves(players) == ["c3x", "b2o"]
    # Bob just moved: his undo takes back b2 only.
    assert run_as_bob(players, f"chameleon propose {BOB} undo").ok
    assert players.run(f"chameleon accept {ALICE}").ok
    assert moves(players) == ["c3x"] and board(players).to_move == "1"


def test_a_game_without_draws_refuses_a_draw_and_undo_needs_a_move(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok
    no_draw = players.run(f"chameleon propose {ALICE} draw")
    assert not no_draw.ok and "no drawn result" in no_draw.text
    assert "The right syntax" not in no_draw.text
    nothing = players.run(f"chameleon propose {ALICE} undo")
    assert not nothing.ok and "nothing to take back" in nothing.text
    bad = players.run(f"chameleon propose {ALICE} peace")
    assert not bad.ok and "propose draw or undo" in bad.text
    assert players.notifications == []


def test_one_proposal_at_a_time(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    assert players.run(f"extinction move {ALICE} e4").ok
    assert players.run(f"extinction propose {ALICE} undo").ok
    again = players.run(f"extinction propose {ALICE} draw")
    assert not again.ok and "still waiting for an answer" in again.text
    crossed = run_as_bob(players, f"extinction propose {BOB} draw")
    assert not crossed.ok and "accept or reject it first" in crossed.text
    wrong = run_as_bob(players, f"extinction accept {BOB} draw")
    assert not wrong.ok and "not a draw" in wrong.text


KNIGHTS_OUT_AND_BACK = ["Nf3", "Nf6", "Ng1", "Ng8"]


def test_the_draw_command_claims_a_repetition_or_else_proposes_and_accepts(
    players: Client,
) -> None:
    assert players.run("extinction challenge alice bob").ok
    offered = players.run(f"extinction draw {ALICE}")
    assert offered.ok and "You proposed a draw" in offered.text
    assert players.run(f"extinction move {ALICE} Nf3").ok  # the proposal lapses
    for number, text in enumerate(KNIGHTS_OUT_AND_BACK[1:] + KNIGHTS_OUT_AND_BACK):
        who, sender = (BOB, "bob@example.org") if number % 2 == 0 else (ALICE, None)
        assert players.run(f"extinction move {who} {text}", sender=sender or "alice@example.org").ok
    # The start position has come back for the third time with alice to move: she may claim.
    claimed = players.run(f"extinction draw {ALICE}")
    assert claimed.ok and "claimed a draw" in claimed.text, claimed.text
    row = board(players)
    assert row.status == "finished" and row.result["termination"] == "repetition"


def test_draw_accepts_a_draw_proposed_by_the_opponent(players: Client) -> None:
    assert players.run("hmdg challenge alice bob").ok
    assert players.run(f"hmdg propose {ALICE} draw").ok
    agreed = run_as_bob(players, f"hmdg draw {BOB}")
    assert agreed.ok and "Draw agreed" in agreed.text
    assert board(players).result["termination"] == "agreement"


def test_a_draw_is_no_move_of_extinction(players: Client) -> None:
    assert players.run("extinction challenge alice bob").ok
    refused = players.run(f"extinction move {ALICE} draw")
    assert not refused.ok and "apart from the moves" in refused.text
    assert moves(players) == []
