"""Settings precedence (defaults < TOML file < environment < flags) and config-file errors."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

import pytest

from pbmserv.cli import main as cli
from pbmserv.config import (
    PARTS,
    ConfigError,
    IdleLimits,
    Settings,
    describe_settings,
    load_settings,
    part_fields,
    part_of,
)

EXAMPLE = Path(__file__).resolve().parents[1] / "deploy" / "pbmserv.toml"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "pbmserv.toml"
    path.write_text(text)
    return path


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    config = write(tmp_path, 'address = "file@x"\nlisten = "0.0.0.0:25"\npoll_seconds = 5\n')
    env = {"PBMSERV_CONFIG": str(config), "PBMSERV_LISTEN": "127.0.0.1:2626"}
    settings = load_settings({"poll_seconds": None}, env)
    assert (settings.address, settings.listen, settings.poll_seconds) == (
        "file@x",
        "127.0.0.1:2626",
        5.0,
    )
    flagged = load_settings({"address": "flag@x"}, env)
    assert flagged.address == "flag@x" and flagged.listen == "127.0.0.1:2626"


def test_per_game_limits_inherit_the_general_ones(tmp_path: Path) -> None:
    config = write(
        tmp_path,
        "remind_after_days = 3\nforfeit_after_days = 10\n[games.hmdg]\nremind_after_days = 5\n",
    )
    settings = load_settings(environ={}, config_file=config)
    assert settings.idle_limits("hmdg") == IdleLimits(5, 10)
    assert settings.idle_limits("chameleon") == IdleLimits(3, 10)
    assert describe_settings(settings)["game_limits"] == {
        "hmdg": {"remind_after_days": 5.0, "forfeit_after_days": 10.0}
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("colour = 1\n", "unknown setting 'colour'"),
        ('poll_seconds = "soon"\n', "poll_seconds must be a number"),
        ('log_format = "xml"\n', "log_format must be one of text, json"),
        ("remind_after_days = 9\nforfeit_after_days = 4\n", "must exceed"),
        ("[games.owlman]\nremind = 2\n", "unknown key 'remind'"),
        ("address = \n", "not valid TOML"),
        ("sent_retention_days = -1\n", "sent_retention_days must be 0"),
        ("delivery_connections = 0\n", "delivery_connections must be between 1 and 64"),
        ("delivery_processes = -1\n", "delivery_processes must be between 0 and 16"),
        ("child_niceness = 20\n", "child_niceness must be between 0 and 19"),
        ("processing_gather_seconds = -0.1\n", "processing_gather_seconds must be from 0 to 1"),
        ("processing_gather_seconds = 5\n", "processing_gather_seconds must be from 0 to 1"),
    ],
)
def test_config_file_mistakes_are_explained(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        load_settings(environ={}, config_file=write(tmp_path, text))


def test_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the config file"):
        load_settings(environ={"PBMSERV_CONFIG": str(tmp_path / "none.toml")})


def test_sent_mail_is_kept_30_days_unless_told_otherwise() -> None:
    assert load_settings(environ={}).sent_retention_days == 30.0
    settings = load_settings(environ={"PBMSERV_SENT_RETENTION_DAYS": "0"})
    assert settings.sent_retention_days == 0.0  # kept forever


def test_serve_delivers_over_four_connections_unless_told_otherwise() -> None:
    assert load_settings(environ={}).delivery_connections == 4
    settings = load_settings(environ={"PBMSERV_DELIVERY_CONNECTIONS": "1"})
    assert settings.delivery_connections == 1


def test_every_setting_belongs_to_exactly_one_part() -> None:
    owners = Counter(name for part in PARTS.values() for name in part_fields(part))
    assert set(owners) == set(Settings.__dataclass_fields__)
    assert [name for name, count in owners.items() if count != 1] == []
    assert all(issubclass(Settings, part) for part in PARTS.values())
    assert (part_of("listen"), part_of("relay"), part_of("clock")) == (
        "mail in",
        "mail out",
        "clocks and idle boards",
    )
    with pytest.raises(KeyError):
        part_of("colour")
    # `config show --json` stays flat: one key a setting, whatever its part.
    assert set(describe_settings(Settings())) == set(Settings.__dataclass_fields__)


def test_config_show_groups_the_settings_under_their_parts(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in os.environ:
        if name.startswith("PBMSERV_"):
            monkeypatch.delenv(name)
    monkeypatch.setattr(cli, "configure_logging", lambda *args, **kwargs: None)
    monkeypatch.setenv("PBMSERV_RELAY_PASSWORD", "s3cret")
    assert cli.main(["config", "show", "--db", "postgresql+psycopg://pbm:hunter2@db/pbm"]) == 0
    out = capsys.readouterr().out
    heading, under = "", dict[str, str]()
    for line in out.splitlines():
        if line.startswith("# "):
            heading = line.removeprefix("# ")
        elif line:
            under[line.split()[0]] = heading
    assert [line[2:] for line in out.splitlines() if line.startswith("# ")] == list(PARTS)
    assert under == {name: part_of(name) for name in Settings.__dataclass_fields__}
    assert "hunter2" not in out and "s3cret" not in out
    assert '"postgresql+psycopg://pbm:********@db/pbm"' in out


def test_the_example_config_is_in_sections_by_part() -> None:
    section, found = "", dict[str, set[str]]()
    for line in EXAMPLE.read_text(encoding="utf-8").splitlines():
        if heading := re.match(r"# --- (.+?) -+$", line):
            section = heading.group(1)
        elif (key := re.match(r"#? ?([a-z_]+) = ", line)) and section != "per-game limits":
            found.setdefault(key.group(1), set()).add(section)
    found.pop("env_file")  # before the sections: where the others may come from
    assert found == {name: {part_of(name)} for name in found}
    assert set().union(*found.values()) == set(PARTS)
