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
