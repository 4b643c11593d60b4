"""A short game of Extinction Chess by mail, from signup to an extinction win, checked against a
golden transcript: a refused move, a draw proposal that lapses, an ambiguous move, the history in
both forms (the PGN read back by python-chess).

Every message goes through the real SMTP listener; every reply and board mail comes back
through a real relay (see tests/golden/runner.py).
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import chess.pgn
import pytest

from pbmserv.games.extinction import ExtinctionBoard
from tests.golden.runner import check_golden, describe, play_transcript
from tests.support import Sink

pytestmark = pytest.mark.db

GOLDEN = Path(__file__).with_name("extinction_game.txt")
ALICE, BOB = "alice@example.org", "bob@example.org"

STEPS: list[tuple[str, str, str]] = [
    (ALICE, "signup alice secret1 Alice Liddell", ""),
    (BOB, "signup bob hunter22 Bob", ""),
    (ALICE, "help extinction", ""),
    (ALICE, "extinction challenge alice bob", ""),
    (ALICE, "extinction move 1 alice secret1 e5", ""),  # a pawn cannot go that far
    (ALICE, "extinction move 1 alice secret1 e4", ""),
    (BOB, "extinction move 1 bob hunter22 d5", ""),
    (ALICE, "extinction move 1 alice secret1 exd5", ""),
    (BOB, "extinction move 1 bob hunter22 Qxd5", ""),
    (ALICE, "extinction move 1 alice secret1 Nc3", ""),
    (BOB, "extinction draw 1 bob hunter22", ""),  # a proposal: still Black's turn
    (BOB, "extinction move 1 bob hunter22 O-O", ""),  # pieces in the way
    (BOB, "extinction move 1 bob hunter22 Qxd2", ""),
    (ALICE, "extinction accept 1 alice secret1", ""),  # too late: Black has moved again
    (ALICE, "extinction move 1 alice secret1 Ne2", ""),  # which knight?
    (ALICE, "extinction move 1 alice secret1 Bxd2", ""),  # the last black queen
    (BOB, "extinction history 1", ""),
    (BOB, "extinction history 1 pgn", ""),
]


def test_whole_game_by_mail_matches_golden(server, engine, sink: Sink) -> None:  # type: ignore[no-untyped-def]
    before = datetime.now(UTC).strftime("%Y.%m.%d")
    transcript, messages = play_transcript(server, engine, sink, STEPS)
    # The PGN dates the game by the server's clock, which the golden file cannot know.
    dates = {f'[Date "{day}"]' for day in (before, datetime.now(UTC).strftime("%Y.%m.%d"))}
    (date,) = [d for d in dates if d in transcript]
    transcript = transcript.replace(date, '[Date "(the day the game started)"]')
    sent = "\n".join(describe(m) for m in messages)
    # Facts checked directly, whatever the golden file says.
    assert "extinction board 1: you won" in transcript
    assert "extinction board 1: you lost" in transcript
    assert "hunter22" not in sent and "secret1" not in sent
    assert '"e5": no white pawn can move to e5: the pawn on e2 can go to e3 or e4 only' in (
        transcript
    )
    assert "but f8 holds your bishop" in transcript
    assert '"Ne2" is ambiguous: it could be Nce2 or Nge2' in transcript
    assert "bob (Black) proposes a draw on extinction board 1" in transcript
    assert "there is no proposal waiting for your answer on board 1" in transcript
    assert "White wins: Black has no queen left" in transcript
    # The PGN in the last reply is a game python-chess reads, with the moves and the result.
    pgn = messages[-1].body[messages[-1].body.index("[Event") :]
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None and game.headers["Variant"] == "Extinction"
    assert game.headers["Result"] == "1-0"
    assert (game.headers["White"], game.headers["Black"]) == ("alice", "bob")
    board = game.end().board()
    assert isinstance(board, ExtinctionBoard)
    assert board.fen() == "rnb1kbnr/ppp1pppp/8/8/8/2N5/PPPB1PPP/R2QKBNR b KQkq - 0 4"
    check_golden(transcript, GOLDEN)
