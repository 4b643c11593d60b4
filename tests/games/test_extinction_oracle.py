"""Extinction Chess against an independent implementation: Fairy-Stockfish's ``extinction``
variant through ``pyffish`` (the test extra installs it).

Perft from the start, the legal moves in every position of random games, how those games end,
a published game, and the one place where we differ on purpose: when a move makes a kind of
each side extinct, Fairy-Stockfish gives the win to the side that did not move; we follow the
inventor, who gives it to the mover. Set ``CI=true`` for a few hundred random games.
"""

from __future__ import annotations

import os
import random

import chess
import pytest

from pbmserv.games.extinction import GAME, ExtinctionBoard, ExtinctionState, position

sf = pytest.importorskip("pyffish")

VARIANT = "extinction"
CI = os.environ.get("CI", "").lower() == "true"
RANDOM_GAMES = 300 if CI else 25
RNG = random.Random(0)
START = ExtinctionBoard().fen()


def perft(board: ExtinctionBoard, depth: int) -> int:
    """Leaf count of the move tree, by our board."""
    moves = list(board.generate_legal_moves())
    if depth == 1:
        return len(moves)
    total = 0
    for move in moves:
        board.push(move)
        total += perft(board, depth - 1)
        board.pop()
    return total


def sf_perft(moves: list[str], depth: int) -> int:
    """Leaf count by Fairy-Stockfish, counting its legal moves after each move list."""
    legal = sf.legal_moves(VARIANT, START, moves)
    if depth == 1:
        return len(legal)
    return sum(sf_perft([*moves, move], depth - 1) for move in legal)


def sf_legal(fen: str) -> set[str]:
    return set(sf.legal_moves(VARIANT, fen, []))


def our_legal(state: ExtinctionState) -> set[str]:
    moves = GAME.legal_moves(state, state.seat_to_move)
    return {m.uci() for m in moves}


def sf_winner(fen: str, moves: list[str]) -> int | None:
    """The seat Fairy-Stockfish says has won after ``moves``, or None (no end, or a draw)."""
    over, value = sf.is_immediate_game_end(VARIANT, fen, moves)
    if not over:
        value = (
            sf.game_result(VARIANT, fen, moves) if not sf.legal_moves(VARIANT, fen, moves) else 0
        )
    if value == 0:
        return None
    to_move = ExtinctionBoard(sf.get_fen(VARIANT, fen, moves)).turn
    side_to_move = 0 if to_move == chess.WHITE else 1
    return side_to_move if value > 0 else 1 - side_to_move


# --- perft -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("depth", "nodes"), [(1, 20), (2, 400), (3, 8902), (4, 197742)])
def test_perft_from_the_start(depth: int, nodes: int) -> None:
    assert perft(ExtinctionBoard(), depth) == nodes


@pytest.mark.parametrize(("depth", "nodes"), [(1, 20), (2, 400), (3, 8902)])
def test_fairy_stockfish_counts_the_same(depth: int, nodes: int) -> None:
    assert sf.start_fen(VARIANT) == START
    assert sf_perft([], depth) == nodes


@pytest.mark.slow
def test_fairy_stockfish_perft_4() -> None:
    assert sf_perft([], 4) == 197742


# --- random games ------------------------------------------------------------------------------


def random_game(seed: int) -> None:
    """Random chess moves from the start, checked against Fairy-Stockfish in
    every position: the same legal moves, the same position after each move, the same end."""
    chooser = random.Random(f"oracle:{seed}")
    state = GAME.new_game({}, random.Random(seed))
    played: list[str] = []
    while GAME.outcome(state) is None:
        ours = our_legal(state)
        assert ours == sf_legal(state.fen), (seed, state.fen, ours ^ sf_legal(state.fen))
        # Draw claims: Fairy-Stockfish sees the whole move list, we only our window.
        claim = GAME.claimable_draw(state, state.seat_to_move) is not None
        if claim or state.board().halfmove_clock >= 98:
            assert sf.is_optional_game_end(VARIANT, START, played)[0] == claim, (seed, played)
        move = chooser.choice(sorted(ours))
        played.append(move)
        state = GAME.apply(state, chess.Move.from_uci(move), RNG)
    ended = GAME.outcome(state)
    assert sf.get_fen(VARIANT, START, played).split()[:4] == state.fen.split()[:4]
    board = state.board()
    mover = 1 if board.turn == chess.WHITE else 0
    if board.extinct_kinds(chess.WHITE) and board.extinct_kinds(chess.BLACK):
        # The known divergence (see the last test): we give it to the mover.
        assert ended.winners == {mover} and sf_winner(START, played) == 1 - mover
    elif "repetition" in ended.reason or "75-move" in ended.reason:
        # Fairy-Stockfish knows only the claims; the automatic draws are FIDE's, and ours.
        assert sf.is_optional_game_end(VARIANT, START, played)[0]
    else:
        expected = set(ended.winners) or {None}
        assert {sf_winner(START, played)} == expected, (seed, played, ended)


@pytest.mark.parametrize("seed", range(RANDOM_GAMES))
def test_random_games_agree_with_fairy_stockfish(seed: int) -> None:
    random_game(seed)


# --- positions from the rules --------------------------------------------------------------------

POSITIONS = {
    # castling through, out of and into attack
    "through": "rnbqk1nr/pppp1ppp/8/4p3/2b5/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4",
    "out of": "rnb1kbnr/pppp1ppp/8/4p3/7q/5N2/PPPPP1PP/RNBQK2R w KQkq - 0 4",
    "into": "rnbqkb1r/pppppppp/8/8/8/5N1n/PPPPBPPP/RNBQK2R w KQkq - 0 4",
    # promotion to king, and Black's queen eyeing White's king
    "king promotion": "4k2r/P4ppp/2n1b3/8/1q6/8/1P3PPP/R2QKBNR w KQk - 0 1",
    # White's last pawn can promote
    "last pawn": "2bqkbnr/1P5p/8/8/8/8/8/RNBQKB2 w Q - 0 1",
    # en passant possible
    "en passant": "rnbqkbnr/1pp1pppp/p7/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",
    # Black has no move at all
    "stalemate": "qb4bk/prp2prp/PpP2PpP/1P4P1/4N3/1p2Q3/1Pp5/n1B1K2R b - - 0 1",
}


@pytest.mark.parametrize("name", POSITIONS)
def test_rule_positions_have_the_same_moves_and_ends(name: str) -> None:
    state = position(POSITIONS[name])
    assert our_legal(state) == sf_legal(state.fen)
    for move in sorted(our_legal(state)):
        after = GAME.apply(state, chess.Move.from_uci(move), RNG)
        assert our_legal(after) == sf_legal(after.fen), (name, move)
        ended = GAME.outcome(after)
        assert sf_winner(state.fen, [move]) == (
            min(ended.winners) if ended and ended.winners else None
        )
    if name == "stalemate":
        assert GAME.outcome(state).reason.startswith("stalemate")
        assert sf.game_result(VARIANT, state.fen, []) == sf.VALUE_DRAW


def test_threefold_repetition_is_claimable_when_fairy_stockfish_says_so() -> None:
    cycle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    state = GAME.new_game({}, RNG)
    played: list[str] = []
    for move in cycle * 3:
        claim = GAME.claimable_draw(state, state.seat_to_move) is not None
        assert sf.is_optional_game_end(VARIANT, START, played)[0] == claim
        state = GAME.apply(state, chess.Move.from_uci(move), RNG)
        played.append(move)


# --- a published game --------------------------------------------------------------------------

# N.N. - Liardet, Messigny 1998, 0-1 (White resigned).
MESSIGNY = [
    "e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5", "a3", "e5", "b4", "Bxb4", "axb4", "Qxa1", "Bc4",
    "Nf6", "Ba2", "O-O", "Nge2", "Rd8", "Bc4", "Nc6", "b5", "Nd4", "O-O", "Nxe2", "Nxe2", "Rd4",
]  # fmt: skip


def test_messigny_1998_replays_to_fairy_stockfishs_position() -> None:
    state = GAME.new_game({}, RNG)
    played = []
    for san in MESSIGNY:
        move = GAME.parse_move(state, state.seat_to_move, san)
        assert move in GAME.legal_moves(state, state.seat_to_move)
        assert GAME.format_move(state, move) == san
        assert move.uci() in sf_legal(state.fen)
        played.append(move.uci())
        state = GAME.apply(state, move, RNG)
        assert GAME.outcome(state) is None
    assert state.fen == sf.get_fen(VARIANT, START, played)
    assert state.fen == "r1b3k1/ppp2ppp/5n2/1P2p3/2Br4/8/2PPNPPP/q1BQ1RK1 w - - 1 14"


# --- where we follow the inventor --------------------------------------------------------------

# White's last pawn, on b7, takes Black's last bishop, on a8, and promotes: both sides lose a
# kind in one move.
DOUBLE = "b1n1k2r/1P1q3p/8/8/8/8/8/RB1QK1N1 w - - 0 1"


def test_double_extinction_is_the_one_known_divergence() -> None:
    state = position(DOUBLE)
    assert our_legal(state) == sf_legal(DOUBLE)
    after = GAME.apply(state, chess.Move.from_uci("b7a8q"), RNG)
    assert sf.get_fen(VARIANT, DOUBLE, ["b7a8q"]).split()[:4] == after.fen.split()[:4]
    # Fairy-Stockfish: Black, who did not move, has won.
    assert sf_winner(DOUBLE, ["b7a8q"]) == 1
    # The inventor's ruling, which we follow: the mover wins.
    assert GAME.outcome(after).winners == frozenset({0})
    # With only one side's kind gone, both agree (here: White loses by promoting elsewhere).
    alone = GAME.apply(state, chess.Move.from_uci("b7b8q"), RNG)
    assert GAME.outcome(alone).winners == frozenset({1}) and sf_winner(DOUBLE, ["b7b8q"]) == 1
