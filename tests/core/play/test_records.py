"""A board's records (core/play/records.py): PGN of real Extinction games read by python-chess
and played by Fairy-Stockfish, the JSON record against its schema in docs/RECORDS.md, the
plain-text record, and what each reader may see of a game with hidden information."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import chess
import chess.pgn
import pytest

from pbmserv.core.play import records
from pbmserv.games import all_games, find_game
from pbmserv.games.extinction import ExtinctionBoard
from tests.core.client import Client
from tests.core.play.boards_played import challenge, loaded, move, play_random, resign

sf = pytest.importorskip("pyffish")

pytestmark = pytest.mark.db

EXTINCTION = find_game("extinction")
HMDG = find_game("hmdg")
DOC = Path(__file__).resolve().parents[3] / "docs" / "RECORDS.md"
START = ExtinctionBoard().fen()


# --- PGN ---------------------------------------------------------------------------------------


def read_pgn(text: str) -> chess.pgn.Game:
    handle = io.StringIO(text)
    game = chess.pgn.read_game(handle)
    assert game is not None
    assert game.errors == [], game.errors
    assert chess.pgn.read_game(handle) is None  # one game, nothing else
    return game


def check_pgn(players: Client, number: int) -> chess.pgn.Game:
    """The board's PGN read by python-chess and played move by move by Fairy-Stockfish."""
    with loaded(players, number) as (board, moves):
        pgn = records.pgn_record(board, moves)
        texts = [row.text for row in moves]
        fen = board.state.fen
        created = board.row.created_at.strftime("%Y.%m.%d")
    assert pgn is not None and '[Variant "Extinction"]' in pgn
    game = read_pgn(pgn)
    assert isinstance(game.board(), ExtinctionBoard)
    assert game.headers["White"] == "alice" and game.headers["Black"] == "Bob"
    assert game.headers["Date"] == created
    assert f"board {number}" in game.headers["Event"]
    mainline = list(game.mainline_moves())
    assert len(mainline) == len(texts)
    board = game.board()
    played: list[str] = []
    for chosen, text in zip(mainline, texts, strict=True):
        assert board.san(chosen) == text  # the record's moves are the stored ones
        assert chosen.uci() in sf.legal_moves("extinction", START, played), (played, text)
        played.append(chosen.uci())
        board.push(chosen)
    assert board.fen() == fen
    assert sf.get_fen("extinction", START, played).split()[:4] == fen.split()[:4]
    return game


@pytest.mark.parametrize("seed", range(4))
def test_pgn_of_random_extinction_games_reads_and_replays(players: Client, seed: int) -> None:
    number = challenge(players, EXTINCTION)
    play_random(players, EXTINCTION, number, random.Random(f"pgn:{seed}"), 400)
    game = check_pgn(players, number)
    with loaded(players, number) as (board, _):
        outcome = board.game.outcome(board.state)
        assert board.finished == (outcome is not None)
    if outcome is None:
        assert game.headers["Result"] == "*"
    else:
        expected = "1-0" if 0 in outcome.winners else "0-1" if outcome.winners else "1/2-1/2"
        assert game.headers["Result"] == expected
        assert game.end().comment == outcome.reason


def test_pgn_of_a_running_and_of_a_resigned_game(players: Client) -> None:
    number = challenge(players, EXTINCTION)
    start = read_pgn(_pgn(players, number))
    assert list(start.mainline_moves()) == [] and start.headers["Result"] == "*"
    play_random(players, EXTINCTION, number, random.Random("short"), 9)
    assert check_pgn(players, number).headers["Result"] == "*"
    resign(players, EXTINCTION, number, 0)
    game = check_pgn(players, number)
    assert game.headers["Result"] == "0-1"
    assert "resigned" in game.end().comment


def _pgn(players: Client, number: int) -> str:
    with loaded(players, number) as (board, moves):
        pgn = records.pgn_record(board, moves)
    assert pgn is not None
    return pgn


@pytest.mark.parametrize(
    "game",
    [g for g in all_games() if "pgn" not in g.SPEC.record_formats],
    ids=lambda g: g.SPEC.name,
)
def test_games_without_a_pgn_format_have_no_pgn_record(players: Client, game: Any) -> None:
    number = challenge(players, game)
    play_random(players, game, number, random.Random(1), 4)
    with loaded(players, number) as (board, moves):
        assert records.pgn_record(board, moves) is None


# --- the JSON record against docs/RECORDS.md ----------------------------------------------------


def documented_schema() -> dict[str, dict[str, str]]:
    """The doc's tables: for each part (``record``, ``player``, ``move``, ``result``), its
    fields' types in words."""
    parts: dict[str, dict[str, str]] = {}
    part = None
    for line in DOC.read_text().splitlines():
        heading = re.fullmatch(r"### `(\w+)`", line)
        if heading:
            part = heading.group(1)
            parts[part] = {}
        row = re.match(r"\| `(\w+)` \| ([^|]+) \|", line)
        if row and part is not None:
            parts[part][row.group(1)] = row.group(2).strip()
    assert set(parts) == {"record", "player", "move", "result"}, parts
    return parts


def check_type(value: Any, words: str, where: str) -> None:
    kinds = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "null": lambda v: v is None,
    }
    for choice in words.split(" or "):
        if choice.startswith("array of "):
            if isinstance(value, list) and all(
                kinds[choice.removeprefix("array of ")](v) for v in value
            ):
                return
        elif kinds[choice](value):
            return
    raise AssertionError(f"{where} = {value!r} is not {words}")


def check_against_doc(record: dict[str, Any]) -> None:
    schema = documented_schema()

    def check(data: dict[str, Any], part: str, where: str) -> None:
        assert set(data) == set(schema[part]), (where, set(data) ^ set(schema[part]))
        for name, words in schema[part].items():
            check_type(data[name], words, f"{where}.{name}")

    check(record, "record", "record")
    for i, player in enumerate(record["players"]):
        check(player, "player", f"players[{i}]")
    for i, entry in enumerate(record["moves"]):
        check(entry, "move", f"moves[{i}]")
    if record["result"] is not None:
        check(record["result"], "result", "result")
    assert record["schema"] == "pbmserv-record" and record["version"] == 1
    assert record["plies"] == len(record["moves"])
    assert [m["ply"] for m in record["moves"]] == list(range(record["plies"]))
    assert record["status"] in ("active", "finished")
    assert (record["result"] is None) == (record["status"] == "active")


def test_the_doc_s_example_matches_its_schema() -> None:
    example = re.search(r"```json\n(.*?)```", DOC.read_text(), re.S)
    assert example is not None
    check_against_doc(json.loads(example.group(1)))


@pytest.mark.parametrize("game", all_games(), ids=lambda g: g.SPEC.name)
def test_json_and_text_records_of_every_game(players: Client, game: Any) -> None:
    number = challenge(players, game)
    with loaded(players, number) as (board, moves):
        empty = records.json_record(board, moves, None)
        assert "No moves yet." in records.text_record(board, moves, None)
    check_against_doc(empty)
    assert empty["moves"] == [] and empty["to_move"] and empty["result"] is None
    played = play_random(players, game, number, random.Random(f"json:{game.SPEC.name}"), 24)
    with loaded(players, number) as (board, moves):
        hidden = game.SPEC.hidden_information and not board.finished
        public_texts = [row.public_text or row.text for row in moves]
        for seat in (None, 0, 1):
            record = records.json_record(board, moves, seat)
            assert json.loads(json.dumps(record)) == record
            check_against_doc(record)
            assert record["game"] == game.SPEC.name and record["board"] == number
            assert record["viewer"] == ("public" if seat is None else f"seat {seat}")
            assert [p["userid"] for p in record["players"]] == ["alice", "Bob"]
            assert [m["player"] for m in record["moves"]] == [
                ["alice", "Bob"][row.seat] for row in moves
            ]
            texts = [m["text"] for m in record["moves"]]
            if not hidden:
                assert texts == played
            else:
                expected = [
                    text if row.seat == seat else public
                    for row, text, public in zip(moves, played, public_texts, strict=True)
                ]
                assert texts == expected
            lines = records.text_record(board, moves, seat).splitlines()
            assert lines[0] == f"{game.SPEC.title} ({game.SPEC.name}), board {number}"
            numbered = [line for line in lines if re.match(r" +\d+\.(\.\.)? ", line)]
            assert len(numbered) == len(played)
            for line, entry in zip(numbered, record["moves"], strict=True):
                assert line == f"  {entry['label']:>5} {entry['text']}  ({entry['player']})"


def test_a_finished_board_s_record_shows_everything(players: Client) -> None:
    number = challenge(players, EXTINCTION)
    play_random(players, EXTINCTION, number, random.Random(7), 6)
    resign(players, EXTINCTION, number, 1)
    with loaded(players, number) as (board, moves):
        record = records.json_record(board, moves, None)
        text = records.text_record(board, moves, None)
    check_against_doc(record)
    assert record["status"] == "finished" and record["to_move"] == []
    assert record["result"]["winners"] == [0]
    assert record["result"]["termination"] == "resignation"
    assert "resigned" in record["result"]["reason"]
    assert text.endswith(f"Result: {record['result']['text']}.\n")


# --- hidden information: only what the reader may see ---------------------------------------


def test_a_running_hmdg_record_hides_the_other_seat_s_points(players: Client) -> None:
    number = challenge(players, HMDG)
    for seat, text in [(0, "E5"), (1, "x"), (0, "C3 row"), (1, "G7 col")]:
        move(players, HMDG, number, seat, text)
    with loaded(players, number) as (board, moves):
        views = {
            seat: (records.json_record(board, moves, seat), records.text_record(board, moves, seat))
            for seat in (None, 0, 1)
        }
        assert records.pgn_record(board, moves) is None
    for seat, (record, text) in views.items():
        texts = [m["text"] for m in record["moves"]]
        everything = json.dumps(record) + text
        if seat is None:
            assert "C3" not in everything and "G7" not in everything
            assert texts[2:] == ["a point in row C", "a point in column 7"]
        else:
            mine, theirs = ("C3", "G7") if seat == 0 else ("G7", "C3")
            assert mine in everything and theirs not in everything
        assert record["viewer"] == ("public" if seat is None else f"seat {seat}")
    resign(players, HMDG, number, 0)
    with loaded(players, number) as (board, moves):
        for seat in (None, 0, 1):
            record = records.json_record(board, moves, seat)
            assert record["viewer"] == "everyone"
            assert [m["text"] for m in record["moves"]] == ["E5", "x", "C3 row", "G7 col"]
            assert "Seen by: everyone" in records.text_record(board, moves, seat)
