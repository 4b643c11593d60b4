"""A command's own arguments can never be read as a setting.

`admin users set-email USERID ADDRESS` once made ADDRESS the server's own address for that
command (its From, Message-ID and reply addresses), because the argument's name was a setting's
name. Every flag that overrides a setting is stored under one prefix; these tests walk every
command of the command line and hold each argument to that rule.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from pbmserv.cli.main import build_parser
from pbmserv.cli.options import SETTING_PREFIX, setting_overrides, settings_from
from pbmserv.config import Settings

SETTING_NAMES = set(Settings.__dataclass_fields__)


def parsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser of the command line with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers(sub, (*path, name))


ALL = list(parsers(build_parser()))


def test_the_walk_reaches_every_admin_command() -> None:
    paths = {path for path, _ in ALL}
    assert ("admin", "users", "set-email") in paths
    assert ("admin", "outbox", "list") in paths
    assert ("serve",) in paths and ("dkim", "keygen") in paths
    assert len([p for p in paths if p[:1] == ("admin",)]) > 20


@pytest.mark.parametrize("path,parser", ALL, ids=[" ".join(p) or "pbmserv" for p, _ in ALL])
def test_no_argument_is_named_as_a_setting(path: tuple[str, ...], parser) -> None:  # type: ignore[no-untyped-def]
    for action in parser._actions:
        if action.dest.startswith(SETTING_PREFIX):
            # A setting's flag names a real setting.
            assert action.dest.removeprefix(SETTING_PREFIX) in SETTING_NAMES, action.dest
        else:
            assert action.dest not in SETTING_NAMES, (
                f"`{' '.join(path)}`: the argument {action.dest!r} has a setting's name"
            )


def test_set_email_leaves_the_server_address_alone() -> None:
    args = build_parser().parse_args(["admin", "users", "set-email", "bob", "bob@example.net"])
    assert args.new_address == "bob@example.net"
    assert setting_overrides(args) == {}
    assert settings_from(args).address == Settings().address


def test_setting_flags_still_override(tmp_path) -> None:  # type: ignore[no-untyped-def]
    args = build_parser().parse_args(
        ["serve", "--address", "games@example.org", "--workers", "2", "--db", "sqlite:///x.db"]
    )
    settings = settings_from(args)
    assert (settings.address, settings.workers, settings.db_url) == (
        "games@example.org",
        2,
        "sqlite:///x.db",
    )
    admin = build_parser().parse_args(["admin", "--db", "sqlite:///y.db", "users", "list"])
    assert settings_from(admin).db_url == "sqlite:///y.db"
