"""GAME games, list, all show and GAME showas: many boards at once."""

from __future__ import annotations

import pytest

from tests.core.client import Client

pytestmark = pytest.mark.db


def setup_boards(players: Client) -> None:
    assert players.run("chameleon challenge -size=5 alice bob").ok  # 1: alice to move
    assert players.run("chameleon challenge -size=5 carol alice").ok  # 2: carol to move
    assert players.run("extinction challenge bob carol").ok  # 3: bob to move
    assert players.run("chameleon resign 2 carol pass3333", sender="carol@example.org").ok


def test_game_games_filters_by_user_and_state(players: Client) -> None:
    setup_boards(players)
    active = players.run("chameleon games")
    assert active.ok and [b["board"] for b in active.data["boards"]] == [1]
    assert "chameleon board 1: alice vs Bob, moves played: 0, alice to move" in active.text
    everything = players.run("chameleon games alice all")
    assert [b["board"] for b in everything.data["boards"]] == [1, 2]
    assert "won by alice" in everything.text
    over = players.run("chameleon games inactive")
    assert [b["board"] for b in over.data["boards"]] == [2]
    waiting = players.run("chameleon games bob next")
    assert waiting.data["boards"] == []  # board 1 waits for alice
    assert [b["board"] for b in players.run("chameleon games alice next").data["boards"]] == [1]
    unknown = players.run("chameleon games zed")
    assert not unknown.ok and "zed" in unknown.text


def test_list_names_the_boards_in_play_of_the_games_named(players: Client) -> None:
    setup_boards(players)
    listed = players.run("list")
    assert [b["board"] for b in listed.data["boards"]] == [1, 3]
    assert [b["board"] for b in players.run("list extinction").data["boards"]] == [3]
    wrong = players.run("list chess")
    assert not wrong.ok and '"chess" is not a game here' in wrong.text


def test_all_show_sends_the_public_diagrams(players: Client) -> None:
    setup_boards(players)
    shown = players.run("all show bob")
    assert shown.ok and [v["board"] for v in shown.data["views"]] == [1, 3]
    assert "Extinction Chess, board 3" in shown.text and "Chameleon, board 1" in shown.text
    # The public view: no reply line with anyone's user id and password.
    assert "It is your move" not in shown.text
    nexts = players.run("all show bob next")
    assert [v["board"] for v in nexts.data["views"]] == [3]
    assert not players.run("all list bob").ok


def test_showas_gives_the_players_own_view(players: Client) -> None:
    setup_boards(players)
    mine = players.run("chameleon showas alice secret1 active")
    assert mine.ok and [v["board"] for v in mine.data["views"]] == [1]
    assert "It is your move" in mine.text and "secret1" not in mine.text
    assert mine.command == "chameleon showas alice ******** active"
    one = players.run("chameleon showas alice secret1 2")
    assert one.ok and "Game over" in one.text
    refused = players.run("chameleon showas carol pass3333 1", sender="carol@example.org")
    assert not refused.ok and "carol is not playing on board 1" in refused.text
    assert not players.run("chameleon showas alice wrong active").ok
