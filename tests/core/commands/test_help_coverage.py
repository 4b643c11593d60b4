"""help covers every command word and every game's own kind of move."""

from __future__ import annotations

import re

from pbmserv.core.commands import all_commands
from pbmserv.games import all_games
from tests.core.client import Client


def test_every_command_and_move_kind_has_help(client: Client) -> None:
    words = {spec.name for spec in all_commands()}
    kinds = {kind.name for game in all_games() for kind in game.SPEC.move_kinds}
    assert {"propose", "queue", "submit", "showas", "ratings", "signoff", "reveal"} <= words | kinds
    for word in sorted(words | kinds):
        answer = client.run(f"help {word}")
        assert answer.ok, (word, answer.text)
        assert re.search(rf"\b{word}\b", answer.text), (word, answer.text)


def test_help_on_a_games_own_move_names_the_game(client: Client) -> None:
    reveal = client.run("help reveal")
    assert reveal.ok and "hmdg reveal BOARD USERID PASSWORD" in reveal.text
    assert 'see "help hmdg"' in reveal.text
    # Summaries keep their capitals: the user ids and syntax words stay as written.
    assert 'as "GAME ratings"' in client.run("help standings").text
    listing = client.run("help commands").text
    for spec in all_commands():
        assert spec.syntax in listing


def test_help_on_undo_digest_and_broadcast(client: Client) -> None:
    undo = client.run("help undo")
    assert undo.ok and "GAME propose BOARD USERID PASSWORD undo" in undo.text
    digest = client.run("help digest")
    assert digest.ok and "set USERID PASSWORD digest=daily" in digest.text
    assert "07:00 UTC" in digest.text
    broadcast = client.run("help broadcast")
    assert broadcast.ok and "pbmserv admin broadcast" in broadcast.text
    assert "players cannot" in " ".join(broadcast.text.split())


def test_the_help_errors_syntax_names_topics(client: Client) -> None:
    missing = client.run("help nothing-here")
    assert not missing.ok and "help [commands | topics | GAME | COMMAND | TOPIC]" in missing.text
