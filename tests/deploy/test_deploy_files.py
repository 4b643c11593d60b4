"""The deployment kit agrees with the program: the example config loads with the values it
states, and every command line in the systemd unit, the Postfix pipe and the container files is
one the CLI accepts (renaming a flag breaks these tests, not a production server)."""

from __future__ import annotations

import re
import shlex
from dataclasses import fields
from pathlib import Path

import pytest

from pbmserv.cli.main import build_parser
from pbmserv.config import IdleLimits, Settings, load_settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def accepts(argv: list[str]) -> None:
    """Fail (instead of exiting) if the CLI rejects ``argv``."""
    try:
        build_parser().parse_args(argv)
    except SystemExit as exit_:
        pytest.fail(f"pbmserv rejects {' '.join(argv)!r} (exit {exit_.code})")


def test_the_example_config_loads_with_what_it_says() -> None:
    settings = load_settings(environ={}, config_file=DEPLOY / "pbmserv.toml")
    assert settings.db_url.startswith("postgresql+psycopg://")
    assert (settings.relay, settings.log_format) == ("127.0.0.1:25", "json")
    assert settings.idle_limits("extinction") == IdleLimits(5.0, 21.0)
    assert settings.idle_limits("chameleon") == IdleLimits(7.0, 28.0)


def test_the_example_config_names_every_setting() -> None:
    text = (DEPLOY / "pbmserv.toml").read_text()
    named = set(re.findall(r"^#?\s*([a-z_]+) =", text, re.M))
    assert {f.name for f in fields(Settings)} - {"game_limits"} <= named


def _unit_commands() -> list[list[str]]:
    unit = (DEPLOY / "systemd" / "pbmserv.service").read_text()
    lines = re.findall(r"^Exec\w+=(\S+pbmserv) (.*)$", unit, re.M)
    return [shlex.split(rest) for _binary, rest in lines]


def test_the_systemd_unit_runs_real_commands() -> None:
    commands = _unit_commands()
    assert [c[0] for c in commands] == ["db", "serve"]
    for argv in commands:
        accepts(argv)


def test_the_postfix_pipe_runs_a_real_command() -> None:
    master = (DEPLOY / "postfix" / "pipe" / "master.cf").read_text()
    argv = shlex.split(re.search(r"argv=\S+/pbmserv (.*)$", master, re.M).group(1))  # type: ignore[union-attr]
    assert argv[0] == "mail" and argv[-2:] == ["-f", "${sender}"]
    accepts(argv)


def test_the_container_files_run_real_commands() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    assert re.search(r'^ENTRYPOINT \["pbmserv"\]$', dockerfile, re.M)
    assert re.search(r'^CMD \["serve"\]$', dockerfile, re.M)
    compose = (DEPLOY / "compose.yaml").read_text()
    commands = re.findall(r"command: \[(.*)\]", compose)
    assert commands == ['"db", "upgrade"', '"serve"']
    for command in commands:
        accepts([word.strip('" ') for word in command.split(",")])
    assert "service_completed_successfully" in compose  # the server waits for the migration
