"""Extinction Chess: the rules that differ from chess, draws, move reading and its errors,
storage, the diagram, the help file and the PGN record.

The checks against Fairy-Stockfish are in test_extinction_oracle.py. Positions come from
``position(fen)`` (a state with no moves behind it) or from moves played with ``play``; each
FEN is described where it is used. Where a rule differs from chess, the test also asks
python-chess's plain chess board, to show that the position really tests the difference.
"""

from __future__ import annotations

import io
import json
import random
import re
from dataclasses import replace
from pathlib import Path

import chess
import chess.pgn
import chess.variant
import jinja2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pbmserv.games import find_game
from pbmserv.games.base import (
    OMNISCIENT,
    PUBLIC,
    AmbiguousMoveError,
    IllegalMoveError,
    InvalidMoveError,
    MoveError,
    OptionError,
    Outcome,
    StateError,
    Termination,
)
from pbmserv.games.extinction import (
    GAME,
    ExtinctionBoard,
    ExtinctionState,
    _load_seen,
    position,
    position_key,
)
from pbmserv.games.testing import random_playout, replay

RNG = random.Random(0)  # Extinction Chess draws nothing; any generator will do
HELP = Path(__file__).parents[2] / "templates" / "help" / "extinction.txt.j2"


def new() -> ExtinctionState:
    return GAME.new_game(GAME.validate_options({}, 2), random.Random(0))


def play(texts: list[str], state: ExtinctionState | None = None) -> ExtinctionState:
    """Play ``texts`` in turn from ``state`` (the start if None), each by the seat to move."""
    state = new() if state is None else state
    for text in texts:
        (seat,) = GAME.to_move(state).seats
        state = GAME.apply(state, GAME.parse_move(state, seat, text), RNG)
    return state


def piece(state: ExtinctionState, square: str) -> str | None:
    found = state.board().piece_at(chess.parse_square(square))
    return found.symbol() if found else None


def winner(state: ExtinctionState) -> set[int] | None:
    result = GAME.outcome(state)
    return None if result is None else set(result.winners)


def chess_legal(fen: str, san: str) -> bool:
    """Whether ``san`` is legal in plain chess (python-chess's own board)."""
    try:
        chess.Board(fen).parse_san(san)
    except ValueError:
        return False
    return True


# --- the start ------------------------------------------------------------------------------


def test_the_start_is_the_chess_start_with_white_to_move() -> None:
    state = new()
    assert find_game("EXTINCTION") is GAME
    assert GAME.validate_options({}, 2) == {}
    with pytest.raises(OptionError):
        GAME.validate_options({"size": "8"}, 2)
    assert GAME.to_move(state).seats == frozenset({0})
    assert GAME.legal_moves(state, 1) == []
    moves = GAME.legal_moves(state, 0)
    texts = {GAME.format_move(state, m) for m in moves}
    assert texts == {chess.Board().san(m) for m in chess.Board().legal_moves}
    assert len(moves) == 20  # chess moves only: a draw is agreed or claimed apart from them
    assert GAME.move_number(state) == 0 and GAME.last_move_text(state) is None
    assert GAME.seat_name(state, 0) == "White" and GAME.seat_name(state, 1) == "Black"


# --- kings are ordinary pieces ---------------------------------------------------------------

# After 1.e4 f6 2.Qh5 the queen attacks Black's king on e8 through g6 and f7.
QUEEN_EYES_KING = ["e4", "f6", "Qh5"]


def test_a_king_may_stay_attacked_and_walk_into_attack() -> None:
    state = play(QUEEN_EYES_KING)
    fen = state.fen
    for text in ("a6", "Kf7"):
        assert not chess_legal(fen, text)  # in chess Black must answer the check
        assert GAME.format_move(state, GAME.parse_move(state, 1, text)) == text
    assert GAME.outcome(play(["Kf7"], state)) is None


def test_capturing_the_king_wins() -> None:
    state = play([*QUEEN_EYES_KING, "a6", "Qxe8"])
    assert GAME.outcome(state) == Outcome(
        frozenset({0}), "White wins: Black has no king left", termination=Termination.GOAL
    )
    assert GAME.last_move_text(state) == "Qxe8#"
    assert GAME.to_move(state).seats == frozenset()
    assert state.taken == ("k", "")


# --- castling ignores attacks ----------------------------------------------------------------

CASTLING_CASES = {
    # Black's bishop on c4 attacks f1, the square the king crosses.
    "through": "rnbqk1nr/pppp1ppp/8/4p3/2b5/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4",
    # Black's queen on h4 attacks the king on e1 (f2 is empty).
    "out of": "rnb1kbnr/pppp1ppp/8/4p3/7q/5N2/PPPPP1PP/RNBQK2R w KQkq - 0 4",
    # Black's knight on h3 attacks g1, where the king lands.
    "into": "rnbqkb1r/pppppppp/8/8/8/5N1n/PPPPBPPP/RNBQK2R w KQkq - 0 4",
}


@pytest.mark.parametrize("case", CASTLING_CASES)
@pytest.mark.parametrize("text", ["O-O", "0-0", "o-o", "e1g1", "e1h1", "E1-G1"])
def test_castling_out_of_through_and_into_attack(case: str, text: str) -> None:
    fen = CASTLING_CASES[case]
    assert not chess_legal(fen, "O-O")
    state = position(fen)
    move = GAME.parse_move(state, 0, text)
    assert GAME.format_move(state, move) == "O-O"
    after = GAME.apply(state, move, RNG)
    assert (piece(after, "g1"), piece(after, "f1"), piece(after, "e1")) == ("K", "R", None)
    assert after.fen.split()[2] == "kq"  # White's castling rights are gone


def test_castling_queenside_into_attack_for_black() -> None:
    # White's knight on b6 attacks c8, where Black's king lands.
    fen = "r3kbnr/pppqpppp/1Nn1b3/8/8/8/PPPPPPPP/R1BQKBNR b KQkq - 0 5"
    assert not chess_legal(fen, "O-O-O")
    after = play(["O-O-O"], position(fen))
    assert (piece(after, "c8"), piece(after, "d8")) == ("k", "r")
    assert after.fen.split()[2] == "KQ"


@pytest.mark.parametrize(
    ("moves", "text", "message"),
    [
        (
            [],
            "O-O",
            '"O-O": to castle kingside the squares between the king and the rook must be '
            "empty, but f1 holds your bishop",
        ),
        (
            ["Nf3", "d5", "g3", "d4", "Bg2", "d3"],
            "O-O-O",
            '"O-O-O": to castle queenside the squares between the king and the rook must be '
            "empty, but d1 holds your queen",
        ),
        (
            ["Nf3", "d5", "g3", "d4", "Bg2", "d3", "Rf1", "e6", "Rh1", "e5"],
            "O-O",
            '"O-O": White can no longer castle kingside: the king or the h1 rook has moved, '
            "or that rook was captured",
        ),
        (
            ["Nf3", "d5", "g3", "d4", "Bg2", "d3", "Kf1", "e6", "Ke1", "e5"],
            "e1g1",
            '"e1g1": White can no longer castle kingside: the king or the h1 rook has moved, '
            "or that rook was captured",
        ),
    ],
)
def test_castling_still_needs_its_rights_and_empty_squares(
    moves: list[str], text: str, message: str
) -> None:
    state = play(moves)
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 0, text)
    assert str(caught.value) == message


# --- promotion and extinction ----------------------------------------------------------------

# White: king e1, queen d1, rooks a1 h1, bishop f1, knight g1, pawns a7 b2 f2 g2 h2.
# Black: king e8, rook h8, queen b4 (eyeing e1 through c3 and d2), bishop e6, knight c6,
# pawns f7 g7 h7.
KING_PROMOTION = "4k2r/P4ppp/2n1b3/8/1q6/8/1P3PPP/R2QKBNR w KQk - 0 1"


@pytest.mark.parametrize("text", ["a8=K", "a8K", "a8k", "a7a8k", "a7-a8=k"])
def test_a_pawn_may_promote_to_a_king(text: str) -> None:
    state = position(KING_PROMOTION)
    assert not chess_legal(KING_PROMOTION, "a8=K")
    move = GAME.parse_move(state, 0, text)
    assert move == chess.Move.from_uci("a7a8k")
    assert GAME.format_move(state, move) == "a8=K"


def test_a_promoted_king_keeps_its_side_alive() -> None:
    state = play(["a8=K"], position(KING_PROMOTION))
    assert len(state.board().pieces(chess.KING, chess.WHITE)) == 2
    # Black takes the king White started with: White still has a king, so play goes on,
    # and the new king never castles.
    state = play(["Qxe1"], state)
    assert GAME.outcome(state) is None
    assert "K" not in state.fen.split()[2]
    state = play(["Qxe1"], state)  # White's queen takes Black's only queen
    assert GAME.outcome(state) == Outcome(
        frozenset({0}), "White wins: Black has no queen left", termination=Termination.GOAL
    )


def test_a_promoted_king_on_the_move_leaves_castling_rights_alone() -> None:
    # Only the king on e1 and the corner rooks carry rights (python-chess's own push would
    # drop them for any king it does not know to be promoted, as after a trip through a FEN).
    state = play(["a8=K", "h6", "Kb7", "h5"], position(KING_PROMOTION))
    assert state.fen.split()[2] == "KQk"
    reloaded = GAME.load(GAME.dump(play(["a8=K", "h6"], position(KING_PROMOTION))))
    assert play(["Kb7", "h5"], reloaded) == state


def test_promotion_to_king_onto_a_corner_keeps_the_castling_field_kqk() -> None:
    # b7xa8=K takes Black's a8 rook: Black keeps kingside only, White both. python-chess
    # would measure White's rooks from the new king on a8 and write "KAk".
    state = play(["b7a8k"], position("rnbqk1nr/1Ppppppp/8/8/8/8/8/RNBQKBNR w KQkq - 0 1"))
    assert state.fen.split()[2] == "KQk"
    board = state.board()
    assert board.castling_rights == chess.BB_A1 | chess.BB_H1 | chess.BB_H8
    assert ExtinctionBoard(state.fen).fen() == state.fen
    assert GAME.load(GAME.dump(state)).fen == state.fen


# White: king e1, queen d1, bishop f1, knight g1, rook h1, pawns b7 h2.
# Black: rook a8, queen d8, king e8, bishops f8 h5 (eyeing d1), knight h8, pawn h7.
PROMOTED_QUEEN = "r2qkb1n/1P5p/8/7b/8/8/7P/3QKBNR w K - 0 1"


def test_a_promoted_piece_counts_as_its_new_kind() -> None:
    state = play(["b8=Q"], position(PROMOTED_QUEEN))
    assert len(state.board().pieces(chess.QUEEN, chess.WHITE)) == 2
    state = play(["Bxd1"], state)  # the queen White started with
    assert GAME.outcome(state) is None
    state = play(["Nf3", "Rxb8"], state)  # the promoted one: White's queens are extinct
    assert GAME.outcome(state) == Outcome(
        frozenset({1}), "Black wins: White has no queen left", termination=Termination.GOAL
    )
    assert state.taken[1].endswith("QQ")


# White: rook a1, knight b1, bishops c1 f1, queen d1, king e1 and one pawn, on b7.
LAST_PAWN = "2bqkbnr/1P5p/8/8/8/8/8/RNBQKB2 w Q - 0 1"


@pytest.mark.parametrize("text", ["b8=Q", "b8=R", "b8=B", "b8=N", "b8=K", "bxc8=Q"])
def test_promoting_the_last_pawn_loses(text: str) -> None:
    state = play([text], position(LAST_PAWN))
    assert GAME.outcome(state) == Outcome(
        frozenset({1}),
        "Black wins: White has no pawns left (White promoted the last one)",
        termination=Termination.GOAL,
    )


# White's last pawn, on b7, can take Black's last bishop, on a8, as it promotes; the mirror
# image has Black's last pawn on b2 taking White's last bishop on a1.
DOUBLE = "b1n1k2r/1P1q3p/8/8/8/8/8/RB1QK1N1 w - - 0 1"


@pytest.mark.parametrize(
    ("fen", "text", "mover", "reason"),
    [
        (
            DOUBLE,
            "bxa8=Q",
            0,
            "White wins: Black has no bishops left; White has no pawns left either, and the "
            "player who moved wins",
        ),
        (
            chess.Board(DOUBLE).mirror().fen(),
            "bxa1=N",
            1,
            "Black wins: White has no bishops left; Black has no pawns left either, and the "
            "player who moved wins",
        ),
    ],
)
def test_a_double_extinction_is_won_by_the_mover(
    fen: str, text: str, mover: int, reason: str
) -> None:
    state = play([text], position(fen))
    board = state.board()
    assert not board.pawns & board.occupied_co[chess.WHITE if mover == 0 else chess.BLACK]
    assert not board.bishops & board.occupied_co[chess.BLACK if mover == 0 else chess.WHITE]
    assert GAME.outcome(state) == Outcome(frozenset({mover}), reason, termination=Termination.GOAL)
    assert GAME.last_move_text(state).endswith("#")


def test_en_passant_as_usual() -> None:
    state = play(["e4", "a6", "e5", "d5"])
    move = GAME.parse_move(state, 0, "e5d6")
    assert GAME.format_move(state, move) == "exd6"
    after = GAME.apply(state, move, RNG)
    assert (piece(after, "d6"), piece(after, "d5"), piece(after, "e5")) == ("P", None, None)
    assert after.taken == ("p", "")
    with pytest.raises(IllegalMoveError, match="there is nothing to capture on d6"):
        GAME.parse_move(play(["Nf3", "a5"], state), 0, "exd6")  # one move late


# --- draws -----------------------------------------------------------------------------------

KNIGHTS_OUT_AND_BACK = ["Nf3", "Nf6", "Ng1", "Ng8"]

# Black's king, queen, rooks, bishops, knight and pawns are walled in by their own pieces and
# by White pawns they cannot take: with Black to move there is no legal move at all.
STALEMATE = "qb4bk/prp2prp/PpP2PpP/1P4P1/4N3/1p2Q3/1Pp5/n1B1K2R b - - 0 1"


def test_stalemate_is_a_draw() -> None:
    state = play(["Ke2"], position(STALEMATE.replace(" b ", " w ")))
    assert GAME.outcome(state) == Outcome(
        frozenset(), "stalemate: Black has no legal move", termination=Termination.NO_MOVES
    )
    assert not any(chess.Board(STALEMATE).generate_pseudo_legal_moves())


def test_threefold_repetition_may_be_claimed() -> None:
    twice = play(KNIGHTS_OUT_AND_BACK)
    assert GAME.claimable_draw(twice, 0) is None  # only two occurrences so far
    thrice = play(KNIGHTS_OUT_AND_BACK, twice)
    assert "you may claim a draw by threefold repetition" in GAME.to_move(thrice).prompts[0]
    assert GAME.claimable_draw(thrice, 1) is None  # only the side to move claims
    assert GAME.claimable_draw(thrice, 0) == Outcome(
        frozenset(),
        "White claimed a draw by threefold repetition",
        termination=Termination.REPETITION,
    )
    # Not claimed: the game goes on until the fifth occurrence, which ends it at once.
    fourth = play(KNIGHTS_OUT_AND_BACK, thrice)
    assert GAME.outcome(fourth) is None
    fifth = play(KNIGHTS_OUT_AND_BACK, fourth)
    assert GAME.outcome(fifth) == Outcome(
        frozenset(),
        "fivefold repetition: the same position occurred five times",
        termination=Termination.REPETITION,
    )
    assert GAME.claimable_draw(fifth, 0) is None  # over already


def test_a_capture_or_a_pawn_move_starts_the_count_again() -> None:
    state = play([*KNIGHTS_OUT_AND_BACK, *KNIGHTS_OUT_AND_BACK, "e4", "e5"])
    assert len(state.seen) == 1
    state = play(KNIGHTS_OUT_AND_BACK, state)
    assert len(state.seen) == 5  # the positions since 2...e5
    assert GAME.claimable_draw(state, 0) is None  # the second time since then
    assert GAME.claimable_draw(play(KNIGHTS_OUT_AND_BACK, state), 0) is not None


def test_fifty_moves_may_be_claimed_and_seventy_five_end_the_game() -> None:
    quiet = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - {} 80"
    assert GAME.claimable_draw(position(quiet.format(99)), 0) is None
    assert GAME.claimable_draw(position(quiet.format(100)), 0) == Outcome(
        frozenset(),
        "White claimed a draw by the fifty-move rule",
        termination=Termination.MOVE_LIMIT,
    )
    assert GAME.outcome(play(["Nf3"], position(quiet.format(148)))) is None
    assert GAME.outcome(play(["Nf3"], position(quiet.format(149)))) == Outcome(
        frozenset(),
        "75-move rule: 75 moves by each side without a capture or a pawn move",
        termination=Termination.MOVE_LIMIT,
    )


@pytest.mark.parametrize(
    "text", ["draw", "DRAW", " Draw ", "draw offer", "offer draw", "draw accepted", "claim draw"]
)
def test_a_draw_is_no_move(text: str) -> None:
    with pytest.raises(InvalidMoveError, match="a draw is offered, accepted or claimed apart"):
        GAME.parse_move(new(), 0, text)


# --- reading moves ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["Nf3", "nf3", "NF3", "Ng1f3", "Ng1-f3", "N g1 f3", "g1f3", "G1F3", "g1-f3", "g1 f3",
     "Nf3+", "Nf3!?", " Nf3 "],
)  # fmt: skip
def test_ways_to_write_nf3(text: str) -> None:
    state = new()
    move = GAME.parse_move(state, 0, text)
    assert move == chess.Move.from_uci("g1f3")
    assert GAME.format_move(state, move) == "Nf3"


@pytest.mark.parametrize("text", ["exd5", "e4xd5", "e4d5", "e:d5", "exd5+", "ed5"])
def test_ways_to_write_a_pawn_capture(text: str) -> None:
    state = play(["e4", "d5"])
    assert GAME.parse_move(state, 0, text) == chess.Move.from_uci("e4d5")


RANK_TWINS = ["g4", "f5", "g5", "a6", "g6", "a5", "gxh7", "a4", "hxg8=B", "a3", "Bg2", "Nc6"]


@pytest.mark.parametrize(("text", "uci"), [("B2d5", "g2d5"), ("B8d5", "g8d5")])
def test_a_bishop_named_by_its_rank_is_san_not_coordinates(text: str, uci: str) -> None:
    # Bishops on g2 and g8 both reach d5: SAN names them by rank, B2d5 and B8d5, which also
    # read as the coordinates b2-d5 and b8-d5. The piece letter wins.
    state = play(RANK_TWINS)
    move = chess.Move.from_uci(uci)
    assert GAME.format_move(state, move) == text
    assert GAME.parse_move(state, 0, text) == move
    assert GAME.parse_move(state, 0, uci) == move
    assert GAME.parse_move(state, 0, text.lower()) == move  # b2d5: no piece on b2 goes to d5
    after = play([text], state)
    # The record replays: what admin undo and every reload rely on.
    record = [(k % 2, t) for k, t in enumerate([*RANK_TWINS, text])]
    assert replay(GAME, {}, 0, record)[-1].fen == after.fen


def test_coordinates_still_read_where_only_they_make_sense() -> None:
    # The queen on b1 reaches d3 over the empty c2; neither bishop of rank 1 can: "B1d3" is
    # no bishop move, so it is the coordinates b1-d3.
    state = position("rnbqkbnr/pppppppp/8/8/8/8/PP1PPPPP/RQB1KBNR w KQkq - 0 1")
    queen = chess.Move.from_uci("b1d3")
    assert GAME.parse_move(state, 0, "B1d3") == queen
    assert GAME.parse_move(state, 0, "b1-d3") == queen
    assert GAME.format_move(state, queen) == "Qd3"


def test_a_small_b_is_a_pawn_first_then_a_bishop() -> None:
    # 1.b3 e6 2.c4 d5: bxc4 is the pawn, bb2 (no pawn can go there) the bishop.
    state = play(["b3", "e6", "c4", "d5", "Nc3", "dxc4"])
    assert GAME.parse_move(state, 0, "bxc4") == chess.Move.from_uci("b3c4")
    assert GAME.parse_move(state, 0, "bb2") == chess.Move.from_uci("c1b2")


@pytest.mark.parametrize(
    ("moves", "text", "error", "message"),
    [
        ([], "", InvalidMoveError, '"" is not a chess move'),
        ([], "Ze4", InvalidMoveError, '"Ze4" is not a chess move'),
        ([], "e9", InvalidMoveError, '"e9" is not a chess move'),
        ([], "Nf3 Nc6", InvalidMoveError, '"Nf3 Nc6" is not a chess move'),
        ([], "e5", IllegalMoveError,
         '"e5": no white pawn can move to e5: the pawn on e2 can go to e3 or e4 only'),
        (["e4", "e5"], "e6", IllegalMoveError,
         '"e6": no white pawn can move to e6: the pawn on e4 is blocked'),
        ([], "e2e5", IllegalMoveError, '"e2e5": no white pawn can move to e5'),
        ([], "e3e4", IllegalMoveError, '"e3e4": there is no piece on e3'),
        ([], "e7e5", IllegalMoveError, '"e7e5": the piece on e7 is Black\'s pawn; you play White'),
        ([], "e2e2", IllegalMoveError, '"e2e2": a move must go to another square'),
        ([], "Nd2", IllegalMoveError, '"Nd2": d2 is occupied by your pawn'),
        ([], "Ne4", IllegalMoveError, '"Ne4": no white knight can reach e4'),
        ([], "Nbe4", IllegalMoveError, '"Nbe4": the knight on b1 cannot reach e4'),
        ([], "Nce4", IllegalMoveError, '"Nce4": you have no knight on the c-file'),
        ([], "Bc4", IllegalMoveError, '"Bc4": the bishop on f1 is blocked by your pawn on e2'),
        ([], "Qh5", IllegalMoveError, '"Qh5": the queen on d1 is blocked by your pawn on e2'),
        ([], "Ke3", IllegalMoveError, '"Ke3": the king moves one square at a time'),
        ([], "Nf3=Q", IllegalMoveError, "only a pawn that reaches the last rank is promoted"),
        ([], "e4=Q", IllegalMoveError, "only a pawn that reaches the last rank is promoted"),
        ([], "exd3", IllegalMoveError, '"exd3": there is nothing to capture on d3'),
        ([], "bd3", IllegalMoveError, "(a bishop is written with a capital B)"),
        (["e4", "e5"], "e5", IllegalMoveError,
         "\"e5\": pawns capture diagonally, and e5 holds Black's pawn"),
        (["e4", "d5"], "d5", IllegalMoveError,
         "\"d5\": pawns capture diagonally, and d5 holds Black's pawn; to take it, write exd5"),
        (["e4", "a6", "e5", "d5"], "d6", IllegalMoveError,
         '"d6": no white pawn can move straight to d6; to take en passant, write exd6'),
        (["e4", "e5", "Nc3", "a6"], "Ne2", AmbiguousMoveError,
         '"Ne2" is ambiguous: it could be Nce2 or Nge2'),
        (["Nc3", "a6", "Ne4", "b6", "Nf3", "c6"], "Ng5", AmbiguousMoveError,
         '"Ng5" is ambiguous: it could be Neg5 or Nfg5; write the one you mean'),
    ],
)  # fmt: skip
def test_move_errors(moves: list[str], text: str, error: type[MoveError], message: str) -> None:
    state = play(moves)
    with pytest.raises(MoveError) as caught:
        GAME.parse_move(state, state.seat_to_move, text)
    assert type(caught.value) is error
    assert "\n" not in str(caught.value)
    assert str(caught.value).startswith(f'"{text.strip()}"')
    assert message in str(caught.value)


def test_a_pawn_on_the_last_rank_must_name_its_promotion() -> None:
    # White's pawn on e7 faces an empty e8 and can take on d8 and f8.
    state = position("rnbq1bnr/ppppPkpp/8/8/8/8/PPPP1PPP/RNBQKBNR w KQ - 0 1")
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 0, "e8")
    assert str(caught.value) == (
        '"e8": a pawn that reaches the last rank must be promoted: write e8=Q, e8=R, e8=B, '
        "e8=N or e8=K"
    )
    with pytest.raises(IllegalMoveError, match="write exd8=Q, exd8=R"):
        GAME.parse_move(state, 0, "e7d8")
    assert GAME.format_move(state, GAME.parse_move(state, 0, "e7f8k")) == "exf8=K"


def test_out_of_turn_and_after_the_end() -> None:
    state = new()
    with pytest.raises(IllegalMoveError) as caught:
        GAME.parse_move(state, 1, "e5")
    assert str(caught.value) == '"e5": it is not your turn; White is to move'
    over = play([*QUEEN_EYES_KING, "a6", "Qxe8"])
    for seat in (0, 1):
        with pytest.raises(IllegalMoveError, match=r'^"a6": the game is over \(White wins'):
            GAME.parse_move(over, seat, "a6")
        assert GAME.legal_moves(over, seat) == []
    with pytest.raises(IllegalMoveError):
        GAME.apply(over, chess.Move.from_uci("a7a6"), RNG)
    with pytest.raises(IllegalMoveError):
        GAME.apply(new(), chess.Move.from_uci("e2e5"), RNG)


def playout_states(seed: int) -> list[ExtinctionState]:
    return random_playout(GAME, {}, seed).states


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), pick=st.randoms(use_true_random=False))
def test_every_legal_move_reads_back_in_san_and_coordinates(seed: int, pick: random.Random) -> None:
    states = playout_states(seed)
    state = pick.choice(states[:-1])
    (seat,) = GAME.to_move(state).seats
    moves = GAME.legal_moves(state, seat)
    for move in pick.sample(moves, min(6, len(moves))):
        san = GAME.format_move(state, move)
        uci = move.uci()
        variants = [san, san.rstrip("#"), san + "+", san.lower() if san[0] in "KQRN" else san,
                    uci, uci.upper(), f"{uci[:2]}-{uci[2:]}", f" {uci[:2]} {uci[2:]} "]  # fmt: skip
        for text in variants:
            assert GAME.parse_move(state, seat, text) == move, (state.fen, text)


_EXTRAS = st.lists(st.sampled_from("QRBNqrbn"), min_size=2, max_size=8)


@settings(max_examples=150, deadline=None)
@given(extras=_EXTRAS, pick=st.randoms(use_true_random=False), white=st.booleans())
def test_every_legal_move_of_crowded_positions_reads_back(
    extras: list[str], pick: random.Random, white: bool
) -> None:
    # One of each kind a side, plus extra pieces: two rooks, bishops, knights or queens that
    # reach one square are common here, so SAN names them by file, by rank or by both.
    pieces = [*"KQRBNP", *"kqrbnp", *extras]
    squares = pick.sample(range(64), len(pieces))
    board = chess.Board(None)
    for symbol, square in zip(pieces, squares, strict=True):
        if symbol in "Pp" and chess.square_rank(square) in (0, 7):
            square = chess.square(chess.square_file(square), 3)
            if board.piece_at(square) is not None:
                return
        board.set_piece_at(square, chess.Piece.from_symbol(symbol))
    board.turn = white
    state = position(board.fen())
    seats = GAME.to_move(state).seats
    if not seats:
        return  # stalemate: a drawn position
    (seat,) = seats
    for move in GAME.legal_moves(state, seat):
        text = GAME.format_move(state, move)
        assert GAME.parse_move(state, seat, text) == move, (state.fen, text)
        assert GAME.parse_move(state, seat, move.uci()) == move, (state.fen, move.uci())


# --- storage -------------------------------------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_every_state_of_a_game_survives_dump_and_load(seed: int) -> None:
    playout = random_playout(GAME, {}, seed)
    for state in playout.states:
        data = json.loads(json.dumps(GAME.dump(state)))
        loaded = GAME.load(data)
        assert loaded == state and GAME.dump(loaded) == data
        assert GAME.outcome(loaded) == GAME.outcome(state)
    for step in playout.steps:  # apply never touched the state it was given
        assert GAME.dump(step.before) == GAME.dump(GAME.load(GAME.dump(step.before)))


def test_apply_never_changes_the_old_state() -> None:
    before = play(["e4", "d5"])
    saved = GAME.dump(before)
    for move in GAME.legal_moves(before, 0):
        GAME.apply(before, move, RNG)
    assert GAME.dump(before) == saved
    assert before.board().fen() == before.fen


def test_dump_format() -> None:
    state = play(["e4", "d5", "exd5"])
    assert GAME.dump(state) == {
        "version": 1,
        "fen": "rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR b KQkq - 0 2",
        "seen": ["rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR b KQkq -"],
        "taken": ["p", ""],
        "last_move": "exd5",
        "result": None,
    }


# 1.Nf3 Nf6 2.Ng1: three positions since the start, the last one current.
GOOD = GAME.dump(play(["Nf3", "Nf6", "Ng1"]))


@pytest.mark.parametrize(
    "change",
    [
        {"version": 2},
        {"fen": "not a fen"},
        {"fen": 7},
        {"fen": "rnbqkbnr/pppppppp/5n2/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 3 2"},  # 33 pieces
        {"fen": GOOD["fen"].replace("KQkq", "KQkq ")},  # not written as python-chess would
        {"seen": []},
        {"seen": "abc"},
        {"seen": GOOD["seen"][:-1]},  # does not end with the current position
        {"seen": ["x", *GOOD["seen"][1:]]},
        {"seen": [GOOD["seen"][1], *GOOD["seen"]]},  # sides do not alternate
        {"seen": ["rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -"] * 2 + GOOD["seen"]},
        {"taken": ["", ""], "fen": GOOD["fen"].replace("RNBQKBNR", "RNBQKBN1")},
        {"taken": ["q", ""]},
        {"taken": ["P", ""]},
        {"taken": "pp"},
        {"last_move": "Nh3"},  # does not lead from the previous position
        {"last_move": "Qd4"},  # not legal there
        {"last_move": 5},
        {"draw_offer": 2},
        {"draw_offer": True},
        {"result": {"winners": [], "reason": "made up"}},  # nothing explains a draw
        {"result": {"winners": [0], "reason": "made up"}},
        {"result": "over"},
    ],
)
def test_load_rejects_bad_data(change: dict) -> None:
    with pytest.raises(StateError):
        GAME.load({**GOOD, **change})


def test_load_rejects_a_game_that_should_have_ended_by_repetition() -> None:
    fifth = GAME.dump(play(KNIGHTS_OUT_AND_BACK * 4))
    assert GAME.load(fifth).result.reason.startswith("fivefold repetition")
    # The same game carried on by one more move, as if nobody had noticed the end.
    board = ExtinctionBoard(fifth["fen"])
    board.push_san("Nf3")
    later = {
        **fifth,
        "fen": board.fen(),
        "seen": [*fifth["seen"], board.fen().rsplit(" ", 2)[0]],
        "last_move": "Nf3",
        "result": None,
    }
    with pytest.raises(StateError, match="should have ended"):
        GAME.load(later)


def test_load_accepts_good_data_and_checks_results() -> None:
    assert GAME.dump(GAME.load(GOOD)) == GOOD
    with pytest.raises(StateError):
        GAME.load([])  # type: ignore[arg-type]
    over = GAME.dump(play([*QUEEN_EYES_KING, "a6", "Qxe8"]))
    with pytest.raises(StateError):
        GAME.load({**over, "result": None})  # the king is gone: the game must be over
    with pytest.raises(StateError):
        GAME.load({**over, "result": {"winners": [1], "reason": "?"}})
    # Stored while a draw offer was a move of the game: an agreed draw, the offer kept.
    agreed = {
        **GAME.dump(play(["e4", "e5"])),
        "draw_offer": 1,
        "result": {"winners": [], "reason": "draw by agreement: White accepted Black's offer"},
    }
    loaded = GAME.load(agreed)
    assert loaded.result.reason == "draw by agreement: White accepted Black's offer"
    assert loaded.result.termination is Termination.AGREEMENT
    with pytest.raises(StateError):
        GAME.load({**agreed, "draw_offer": None})


def test_position_rejects_what_cannot_be() -> None:
    with pytest.raises(StateError):
        position("8/8/8/8/8/8/8/8 w - - 0 1")
    with pytest.raises(StateError):
        position("rnbqkbnr/pppppppp/8/8/8/P7/PPPPPPPP/RNBQKBNR w KQkq - 0 1")  # 9 pawns
    with pytest.raises(StateError):
        position("banana")


# --- the diagram -----------------------------------------------------------------------------


def test_diagram() -> None:
    state = play(["e4", "d5", "exd5", "Qxd5", "Nc3"])
    expected = """\
    a b c d e f g h
 8  r n b . k b n r  8
 7  p p p . p p p p  7
 6  . . . . . . . .  6
 5  . . . q . . . .  5
 4  . . . . . . . .  4
 3  . . N . . . . .  3
 2  P P P P . P P P  2
 1  R . B Q K B N R  1
    a b c d e f g h

                      K  Q  R  B  N  P   has taken
 White (capitals)     1  1  2  2  2  7   p
 Black (lower case)   1  1  2  2  2  7   P

Last move: 3. Nc3. Black to play, move 3."""
    for viewer in (0, PUBLIC, OMNISCIENT):
        assert GAME.render(state, viewer) == expected
    # Black reads the board from Black's side, as the picture in the same mail shows it.
    from_black = GAME.render(state, 1).splitlines()
    assert from_black[:10] == [
        "    h g f e d c b a",
        " 1  R N B K Q B . R  1",
        " 2  P P P . P P P P  2",
        " 3  . . . . . N . .  3",
        " 4  . . . . . . . .  4",
        " 5  . . . . q . . .  5",
        " 6  . . . . . . . .  6",
        " 7  p p p p . p p p  7",
        " 8  r n b k . b n r  8",
        "    h g f e d c b a",
    ]
    assert from_black[10:] == expected.splitlines()[10:]
    after = play(["Qxd2", "Bxd2"], state)
    lines = GAME.render(after, PUBLIC).splitlines()
    assert lines[-3:] == [
        " Black (lower case)   1  0  2  2  2  7   P P",
        "",
        "Last move: 4. Bxd2#. The game is over.",
    ]
    assert GAME.render(play(["Qxd2"], state), PUBLIC).splitlines()[-1] == (
        "Last move: 3...Qxd2. White to play, move 4."
    )


# --- the help file -------------------------------------------------------------------------


def render_help() -> str:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(HELP.read_text()).render(
        spec=GAME.SPEC, options=[], server_address="pbmserv@example.org", commands=[]
    )


def test_help_renders_with_short_lines() -> None:
    text = render_help()
    assert "Extinction Chess (extinction)" in text
    assert all(len(line) < 78 for line in text.splitlines())
    for word in ("e8=K", "O-O", "draw", "pgn", "stalemate", "en passant"):
        assert word.lower() in text.lower()
    # The double-extinction ruling (ours and the inventor's; Fairy-Stockfish differs).
    flat = " ".join(text.split())
    assert "wipes out a kind on both sides at once" in flat
    assert "the player who moved wins" in flat


def test_the_help_example_game_replays_to_its_diagram() -> None:
    text = render_help()
    example = text[text.index("Example game") : text.index("Records")]
    state = new()
    for line in example.splitlines():
        if re.match(r"   \d+\. ", line):  # a line of moves, like "   1. e4 c5  2. Nf3 Nc6"
            for _number, white, black in re.findall(r"(\d+)\. (\S+) (\S+)", line):
                state = play([white, black], state)
    assert GAME.move_number(state) == 46
    diagram = example[example.index("       a b c d e f g h") :].rstrip()
    assert "\n".join(line[3:] for line in diagram.splitlines()) == GAME.render(state, PUBLIC)


# --- the PGN record ------------------------------------------------------------------------


def test_the_pgn_record_is_read_back_by_python_chess() -> None:
    texts = ["e4", "d5", "exd5", "Qxd5", "Nc3", "Qxd2", "Bxd2#"]
    final = play(texts)
    record = GAME.export(
        "pgn",
        new(),
        texts,
        GAME.outcome(final),
        {"Seat0": "alice", "Seat1": "bob", "Board": "7", "Date": "2024.05.01", "Site": "pbm"},
    )
    assert chess.variant.find_variant("Extinction") is ExtinctionBoard
    game = chess.pgn.read_game(io.StringIO(record))
    assert game is not None and not game.errors
    assert game.headers["Variant"] == "Extinction"
    assert game.headers["Result"] == "1-0"
    assert (game.headers["White"], game.headers["Black"]) == ("alice", "bob")
    assert game.headers["Date"] == "2024.05.01"
    board = game.board()
    assert isinstance(board, ExtinctionBoard)
    sans = []
    for move in game.mainline_moves():
        sans.append(board.san(move))
        board.push(move)
    assert sans == texts
    assert board.fen() == final.fen
    assert board.outcome() is not None and board.outcome().winner == chess.WHITE
    assert game.end().comment == "White wins: Black has no queen left"


def test_pgn_results() -> None:
    draw = Outcome(
        frozenset(),
        "draw by agreement: Black accepted White's offer",
        termination=Termination.AGREEMENT,
    )
    for outcome, result in (
        (None, "*"),
        (draw, "1/2-1/2"),
        (Outcome(frozenset({1}), "x", termination=Termination.GOAL), "0-1"),
    ):
        record = GAME.export("pgn", new(), ["e4"], outcome, {})
        assert f'[Result "{result}"]' in record and record.rstrip().endswith(result)
    with pytest.raises(ValueError):
        GAME.export("sgf", new(), [], None, {})


# --- loading cost (issue 16) -------------------------------------------------------------------


def reference_seen_check(seen: list[str], board: ExtinctionBoard) -> bool:
    """Whether every earlier key of ``seen`` passes the check load made before issue 16, with
    a python-chess board built for each."""
    material = sorted(p.symbol() for p in board.piece_map().values())
    for back, key in enumerate(reversed(seen)):
        try:
            earlier = ExtinctionBoard(f"{key} 0 1")
        except ValueError:
            return False
        if (
            position_key(earlier) != key
            or earlier.turn != (board.turn if back % 2 == 0 else not board.turn)
            or earlier.pawns != board.pawns
            or earlier.castling_rights != board.castling_rights
            or sorted(p.symbol() for p in earlier.piece_map().values()) != material
        ):
            return False
    return True


def mutated_key(key: str, rng: random.Random) -> str:
    """A position key with one character changed, added or removed, or two pieces (a king or
    a rook among them, for the castling rights) swapped."""
    index = rng.randrange(len(key))
    char = rng.choice("PNBRQKpnbrqk12345678/ -wbKQkqe3e6")
    chars = list(key)
    royal = [i for i, c in enumerate(chars) if c in "KkRr" and i < key.index(" ")]
    other = [i for i, c in enumerate(chars) if c.isalpha() and i < key.index(" ")]
    a, b = rng.choice(royal or other), rng.choice(other)
    chars[a], chars[b] = chars[b], chars[a]
    return rng.choice(
        [key[:index] + char + key[index + 1 :], key[:index] + char + key[index:]]
        + [key[:index] + key[index + 1 :], "".join(chars), "".join(chars)]
    )


def test_the_seen_positions_are_checked_as_python_chess_would() -> None:
    """load reads the positions in 'seen' with string operations, not a board each: it must
    accept and refuse exactly what the full check by python-chess does."""
    rng = random.Random(16)
    agreed = {True: 0, False: 0}
    for seed in range(6):
        for state in random_playout(GAME, {}, seed, require_end=False).states[::3]:
            data = json.loads(json.dumps(GAME.dump(state)))
            seen = data["seen"]
            variants = [seen] + [
                [*seen[:i], mutated_key(seen[i], rng), *seen[i + 1 :]]
                for i in (rng.randrange(len(seen)) for _ in range(4))
                if i < len(seen) - 1
            ]
            for candidate in variants:
                expected = reference_seen_check(candidate, state.board())
                try:
                    _load_seen(candidate, state.board())
                    loaded = True
                except StateError as error:
                    loaded = "fivefold" in str(error) and expected
                assert loaded == expected, candidate
                agreed[expected] += 1
    assert agreed[True] > 100 and agreed[False] > 100


def test_load_reads_a_long_quiet_stretch_stored_before_issue_16() -> None:
    """A late position with many positions since the last capture, as version 1 stored it."""
    longest = max(
        (s for seed in range(6) for s in random_playout(GAME, {}, seed).states),
        key=lambda s: len(s.seen),
    )
    stored = json.loads(json.dumps(GAME.dump(longest)))
    assert stored["version"] == 1 and len(stored["seen"]) >= 10
    assert GAME.load(stored) == longest and GAME.dump(GAME.load(stored)) == stored


def test_a_stored_draw_keeps_its_kind_and_older_states_give_it_from_the_position() -> None:
    thrice = play(KNIGHTS_OUT_AND_BACK, play(KNIGHTS_OUT_AND_BACK))
    outcome = GAME.claimable_draw(thrice, 0)
    assert outcome is not None
    stored = GAME.dump(replace(thrice, result=outcome))
    assert stored["result"]["termination"] == "repetition"
    assert GAME.outcome(GAME.load(stored)).termination is Termination.REPETITION
    older = {**stored, "result": {k: v for k, v in stored["result"].items() if k != "termination"}}
    assert GAME.outcome(GAME.load(older)).termination is Termination.REPETITION
    with pytest.raises(StateError, match="bad draw kind"):
        GAME.load({**stored, "result": {**stored["result"], "termination": "resignation"}})
