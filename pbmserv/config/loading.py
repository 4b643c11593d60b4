"""Loading the settings: defaults, then the TOML file, then the environment, then flags; each
value converted to its setting's type and checked."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

from pbmserv.config.errors import ConfigError
from pbmserv.config.settings import Settings
from pbmserv.config.sources import (
    CONFIG_ENV,
    ENV_FILE_KEY,
    ENV_NAMES,
    read_config_file,
    read_env_file,
)
from pbmserv.config.timing import IdleLimits, parse_hours
from pbmserv.config.web import metrics_networks
from pbmserv.time_controls import TimeControlError, parse_time_control

LOG_FORMATS = ("text", "json")
RELAY_TLS_LEVELS = ("may", "starttls", "tls", "none")
_TYPES = {f.name: f.type for f in fields(Settings)}
_WEB_LISTEN = re.compile(r"[^\s:]*:\d{1,5}|\[[0-9a-fA-F:.]+\]:\d{1,5}")
_WEB_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")
# Settings whose empty value says something (web_listen: no web view): an empty variable sets
# them, where for the others it counts as unset.
_EMPTY_IS_A_VALUE = frozenset({"web_listen", "web_metrics_from"})
# A host name (letters, digits, hyphens, dots) or an address literal such as [192.0.2.1].
_EHLO_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252}[A-Za-z0-9])?|\[[0-9A-Fa-f.:]{2,45}\]")


def _convert(name: str, raw: object) -> object:
    kind = _TYPES[name]
    if raw is None:
        return None
    if kind == "bool":
        text = str(raw).strip().lower()
        if isinstance(raw, bool) or text in ("true", "false", "1", "0", "yes", "no", "on", "off"):
            return raw if isinstance(raw, bool) else text in ("true", "1", "yes", "on")
        raise ConfigError(f"{name} must be true or false, not {raw!r}")
    try:
        if kind == "int":
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError(raw)
            return int(raw)  # type: ignore[call-overload]
        if kind == "float":
            if isinstance(raw, bool):
                raise ValueError(raw)
            return float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be a number, not {raw!r}") from None
    if kind in ("Path", "Path | None"):
        return Path(str(raw))
    if name == "log_format" and raw not in LOG_FORMATS:
        raise ConfigError(f"log_format must be one of {', '.join(LOG_FORMATS)}, not {raw!r}")
    if name == "web_listen" and str(raw).strip() and not _WEB_LISTEN.fullmatch(str(raw).strip()):
        raise ConfigError(f"web_listen must be HOST:PORT (or empty: no web view), not {raw!r}")
    if name == "web_url" and str(raw) and not _WEB_URL.fullmatch(str(raw)):
        raise ConfigError(f"web_url must be an http:// or https:// address, not {raw!r}")
    if name == "web_metrics_from":
        try:
            metrics_networks(str(raw))
        except ValueError:
            raise ConfigError(
                "web_metrics_from must be addresses or networks, comma-separated "
                f"(127.0.0.1, ::1, 10.0.0.0/8), not {raw!r}"
            ) from None
    if name == "relay_tls" and raw not in RELAY_TLS_LEVELS:
        levels = ", ".join(RELAY_TLS_LEVELS)
        raise ConfigError(f"relay_tls must be one of {levels}, not {raw!r}")
    return str(raw)


def _check_ed25519(settings: Settings) -> None:
    """Ed25519 signs beside RSA, never alone (few receivers check it yet), under a selector
    of its own (one DNS record a key)."""
    selector, key_file = settings.dkim_ed25519_selector, settings.dkim_ed25519_key_file
    if not selector and key_file is None:
        return
    if not selector or key_file is None:
        raise ConfigError("set both dkim_ed25519_selector and dkim_ed25519_key_file, or neither")
    if not settings.dkim_selector or settings.dkim_key_file is None:
        raise ConfigError(
            "dkim_ed25519_selector signs beside RSA: set dkim_selector and dkim_key_file too"
        )
    if selector.lower() == settings.dkim_selector.lower():
        raise ConfigError("dkim_ed25519_selector must differ from dkim_selector")


def _clock(where: str, text: object) -> str:
    try:
        parse_time_control(str(text))
    except TimeControlError as error:
        raise ConfigError(f"{where}: {error}") from None
    return str(text)


def _limits(name: str, table: object, defaults: IdleLimits) -> IdleLimits:
    if not isinstance(table, dict):
        raise ConfigError(f"[games.{name}] must be a table")
    unknown = set(table) - {"remind_after_days", "forfeit_after_days", "clock"}
    if unknown:
        raise ConfigError(f"[games.{name}]: unknown key {sorted(unknown)[0]!r}")
    limits = IdleLimits(
        float(table.get("remind_after_days", defaults.remind_after_days)),
        float(table.get("forfeit_after_days", defaults.forfeit_after_days)),
    )
    if limits.forfeit_after_days <= limits.remind_after_days:
        raise ConfigError(f"[games.{name}]: forfeit_after_days must exceed remind_after_days")
    return limits


def load_settings(
    overrides: Mapping[str, object] | None = None,
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
) -> Settings:
    """Defaults, then the TOML ``config_file`` (or the file named by PBMSERV_CONFIG), then
    ``environ`` (os.environ by default), then non-None ``overrides`` (command-line flags)."""
    env = os.environ if environ is None else environ
    if config_file is None and env.get(CONFIG_ENV):
        config_file = Path(env[CONFIG_ENV])
    values: dict[str, Any] = {}
    games: dict[str, object] = {}
    if config_file is not None:
        data = read_config_file(config_file)
        games = data.pop("games", {})
        env_file = data.pop(ENV_FILE_KEY, None)
        if env_file is not None:
            env = {**read_env_file(Path(str(env_file))), **env}
        values.update({name: _convert(name, raw) for name, raw in data.items()})
    for name, var in ENV_NAMES.items():
        if env.get(var) or (name in _EMPTY_IS_A_VALUE and var in env):
            values[name] = _convert(name, env[var])
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = _convert(name, value)
    settings = replace(Settings(), **values)
    if settings.forfeit_after_days <= settings.remind_after_days:
        raise ConfigError("forfeit_after_days must exceed remind_after_days")
    if not 0 <= settings.digest_hour <= 23:
        raise ConfigError("digest_hour must be an hour of the day, 0 to 23")
    if settings.forfeit_notice_days < 0:
        raise ConfigError("forfeit_notice_days must be 0 or more")
    if settings.sent_retention_days < 0:
        raise ConfigError("sent_retention_days must be 0 (keep sent mail) or more")
    if not 1 <= settings.delivery_connections <= 64:
        raise ConfigError("delivery_connections must be between 1 and 64")
    if not 1 <= settings.workers <= 64:
        raise ConfigError("workers must be between 1 and 64")
    if not 0 <= settings.delivery_processes <= 16:
        raise ConfigError("delivery_processes must be between 0 and 16")
    if not 0 <= settings.child_niceness <= 19:
        raise ConfigError("child_niceness must be between 0 and 19")
    if not 0.05 <= settings.robot_cpu_seconds <= 600:
        raise ConfigError("robot_cpu_seconds must be between 0.05 and 600")
    if not 0 <= settings.robot_games_per_user <= 1000:
        raise ConfigError("robot_games_per_user must be between 0 and 1000")
    if not 0.01 <= settings.rating_period_days <= 3650:
        raise ConfigError("rating_period_days must be between 0.01 and 3650")
    if settings.robot_poll_seconds <= 0:
        raise ConfigError("robot_poll_seconds must be more than 0")
    if not 1 <= settings.robot_turns_at_once <= 64:
        raise ConfigError("robot_turns_at_once must be between 1 and 64")
    if not 1 <= settings.robot_cpu_seconds_per_person_per_hour <= 3600:
        raise ConfigError("robot_cpu_seconds_per_person_per_hour must be between 1 and 3600")
    if not 0.05 <= settings.robot_proposal_cpu_seconds <= 600:
        raise ConfigError("robot_proposal_cpu_seconds must be between 0.05 and 600")
    for name in (
        "max_accounts_per_address",
        "max_mails_per_message",
        "max_message_recipients",
        "max_observers_per_board",
        "text_mails_per_recipient_per_day",
    ):
        if getattr(settings, name) < 1:
            raise ConfigError(f"{name} must be 1 or more")
    if not _EHLO_NAME.fullmatch(settings.ehlo_hostname):
        shown = settings.ehlo_hostname
        raise ConfigError(f"ehlo_name must be a host name such as mail.example.org, not {shown!r}")
    if settings.bounce_limit < 1:
        raise ConfigError("bounce_limit must be 1 or more")
    _check_ed25519(settings)
    if settings.imap and settings.workers > 1:
        raise ConfigError("imap: run one worker (workers = 1); several would race for each message")
    if settings.imap_poll_seconds <= 0:
        raise ConfigError("imap_poll_seconds must be more than 0")
    if not 0 <= settings.processing_gather_seconds <= 1:
        raise ConfigError("processing_gather_seconds must be from 0 to 1")
    if settings.dedupe_window_seconds <= 0:
        raise ConfigError("dedupe_window_seconds must be more than 0")
    if not isinstance(games, dict):
        raise ConfigError("[games] must be a table of [games.NAME] tables")
    defaults = IdleLimits(settings.remind_after_days, settings.forfeit_after_days)
    limits = {name: _limits(name, table, defaults) for name, table in games.items()}
    _clock("clock", settings.clock)
    _clock("tournament_clock", settings.tournament_clock)
    parse_hours(settings.clock_reminder_hours)
    if not 0 <= settings.vacation_days_per_year <= 366:
        raise ConfigError("vacation_days_per_year must be between 0 and 366")
    if settings.clock_sweep_seconds < 0:
        raise ConfigError("clock_sweep_seconds must be 0 (off) or more")
    clocks = {
        name: _clock(f"[games.{name}] clock", table["clock"])
        for name, table in games.items()
        if isinstance(table, dict) and "clock" in table
    }
    return replace(settings, game_limits=limits, game_clocks=clocks)
