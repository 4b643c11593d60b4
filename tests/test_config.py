"""Settings precedence (defaults < TOML file < environment < flags) and config-file errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from pbmserv.config import ConfigError, IdleLimits, describe_settings, load_settings


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
