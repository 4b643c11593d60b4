"""Checks of a game's static facts: its SPEC and its options."""

from __future__ import annotations

from collections.abc import Mapping

from pbmserv.games import find_game
from pbmserv.games.base import (
    Game,
    OptionError,
)
from pbmserv.games.testing.kit import fail

# --- static facts --------------------------------------------------------------------------


def check_spec(game: Game) -> None:
    """The SPEC is consistent and the registry finds the game by its name and aliases."""
    spec = game.SPEC
    if not spec.name or spec.name != spec.name.lower() or not spec.name.isidentifier():
        raise fail(f"{spec.name!r}: a game name is one lower-case word")
    if spec.players < 1:
        raise fail(f"{spec.name}: no seat names")
    if not isinstance(game.STATE_VERSION, int):
        raise fail(f"{spec.name}: STATE_VERSION must be an int")
    if spec.numbering not in ("plies", "chess") or (
        spec.numbering == "chess" and spec.players != 2
    ):
        raise fail(f"{spec.name}: numbering is plies, or chess for a two-player game")
    for opt in spec.options:
        typed = (opt.default, *(opt.choices or ()))
        if opt.type not in (int, str) or any(type(v) is not opt.type for v in typed):
            raise fail(f"{spec.name}: -{opt.name}'s default and choices must be {opt.type}")
        if opt.choices and opt.default not in opt.choices:
            raise fail(f"{spec.name}: -{opt.name} default {opt.default!r} is not a choice")
        if opt.type is int and not (
            (opt.minimum is None or opt.minimum <= opt.default)
            and (opt.maximum is None or opt.default <= opt.maximum)
        ):
            raise fail(f"{spec.name}: -{opt.name} default {opt.default} is out of range")
        if not opt.help:
            raise fail(f"{spec.name}: -{opt.name} has no help line")
    for key in (spec.name, *spec.aliases):
        if find_game(key) is not game or find_game(key.upper()) is not game:
            raise fail(f"{spec.name}: find_game({key!r}) does not return the game")


def check_options(game: Game) -> None:
    """Defaults fill in, bad names, bad values and wrong player counts raise OptionError."""
    spec = game.SPEC
    n = spec.players
    defaults = {opt.name: opt.default for opt in spec.options}
    got = game.validate_options({}, n)
    if got != defaults:
        raise fail(f"{spec.name}: validate_options({{}}) gave {got}, not the defaults {defaults}")
    _expect_option_error(game, {"no-such-option": "1"}, n)
    _expect_option_error(game, {}, n + 1)
    for opt in spec.options:
        if opt.choices:
            for choice in opt.choices:
                written = str(choice).upper()
                value = game.validate_options({opt.name: written}, n)[opt.name]
                if value != choice:
                    raise fail(f"{spec.name}: -{opt.name}={written} gave {value!r}")
            _expect_option_error(game, {opt.name: "no-such-choice"}, n)
        elif opt.type is int:
            for bound in (opt.minimum, opt.maximum):
                if bound is not None:
                    value = game.validate_options({opt.name: str(bound)}, n)[opt.name]
                    if value != bound:
                        raise fail(f"{spec.name}: -{opt.name}={bound} gave {value!r}")
            if opt.minimum is not None:
                _expect_option_error(game, {opt.name: str(opt.minimum - 1)}, n)
            if opt.maximum is not None:
                _expect_option_error(game, {opt.name: str(opt.maximum + 1)}, n)
            _expect_option_error(game, {opt.name: "lots"}, n)


def _expect_option_error(game: Game, options: Mapping[str, str], n_players: int) -> None:
    try:
        game.validate_options(options, n_players)
    except OptionError as exc:
        if not str(exc) or "\n" in str(exc):
            raise fail(f"{game.SPEC.name}: OptionError needs a one-line message") from None
        return
    raise fail(f"{game.SPEC.name}: options {dict(options)} for {n_players} players were accepted")
