"""Where settings come from besides the defaults: the TOML file, its env file, and the
environment variable of each setting (the operator's names, which never change)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pbmserv.config.errors import ConfigError
from pbmserv.config.settings import Settings

# Environment variable for each setting.
ENV_NAMES = {
    "db_url": "PBMSERV_DB",
    "listen": "PBMSERV_LISTEN",
    "web_listen": "PBMSERV_WEB_LISTEN",
    "web_url": "PBMSERV_WEB_URL",
    "web_metrics_from": "PBMSERV_WEB_METRICS_FROM",
    "relay": "PBMSERV_RELAY",
    "relay_username": "PBMSERV_RELAY_USERNAME",
    "relay_password": "PBMSERV_RELAY_PASSWORD",
    "relay_tls": "PBMSERV_RELAY_TLS",
    "relay_tls_server_name": "PBMSERV_RELAY_TLS_SERVER_NAME",
    "relay_ca_file": "PBMSERV_RELAY_CA_FILE",
    "ehlo_name": "PBMSERV_EHLO_NAME",
    "dkim_selector": "PBMSERV_DKIM_SELECTOR",
    "dkim_key_file": "PBMSERV_DKIM_KEY_FILE",
    "dkim_domain": "PBMSERV_DKIM_DOMAIN",
    "dkim_ed25519_selector": "PBMSERV_DKIM_ED25519_SELECTOR",
    "dkim_ed25519_key_file": "PBMSERV_DKIM_ED25519_KEY_FILE",
    "bounce_limit": "PBMSERV_BOUNCE_LIMIT",
    "imap": "PBMSERV_IMAP",
    "imap_password": "PBMSERV_IMAP_PASSWORD",
    "imap_poll_seconds": "PBMSERV_IMAP_POLL_SECONDS",
    "spool": "PBMSERV_SPOOL",
    "address": "PBMSERV_ADDRESS",
    "max_message_bytes": "PBMSERV_MAX_MESSAGE_BYTES",
    "rate_limit_per_hour": "PBMSERV_RATE_LIMIT",
    "from_rate_limit_per_hour": "PBMSERV_FROM_RATE_LIMIT",
    "dedupe_window_seconds": "PBMSERV_DEDUPE_WINDOW_SECONDS",
    "max_connections": "PBMSERV_MAX_CONNECTIONS",
    "poll_seconds": "PBMSERV_POLL_SECONDS",
    "processing_gather_seconds": "PBMSERV_PROCESSING_GATHER_SECONDS",
    "retry_base_seconds": "PBMSERV_RETRY_BASE_SECONDS",
    "retry_max_seconds": "PBMSERV_RETRY_MAX_SECONDS",
    "delivery_lease_seconds": "PBMSERV_DELIVERY_LEASE_SECONDS",
    "max_commands_per_message": "PBMSERV_MAX_COMMANDS",
    "failed_logins_per_user": "PBMSERV_FAILED_LOGINS_PER_USER",
    "failed_logins_per_sender": "PBMSERV_FAILED_LOGINS_PER_SENDER",
    "failed_login_window_minutes": "PBMSERV_FAILED_LOGIN_WINDOW_MINUTES",
    "remind_after_days": "PBMSERV_REMIND_AFTER_DAYS",
    "forfeit_after_days": "PBMSERV_FORFEIT_AFTER_DAYS",
    "forfeit_notice_days": "PBMSERV_FORFEIT_NOTICE_DAYS",
    "trusted_authserv_ids": "PBMSERV_TRUSTED_AUTHSERV_IDS",
    "digest_hour": "PBMSERV_DIGEST_HOUR",
    "board_pictures": "PBMSERV_BOARD_PICTURES",
    "maintenance_interval_seconds": "PBMSERV_MAINTENANCE_INTERVAL_SECONDS",
    "sent_retention_days": "PBMSERV_SENT_RETENTION_DAYS",
    "delivery_connections": "PBMSERV_DELIVERY_CONNECTIONS",
    "workers": "PBMSERV_WORKERS",
    "delivery_processes": "PBMSERV_DELIVERY_PROCESSES",
    "processing_process": "PBMSERV_PROCESSING_PROCESS",
    "child_niceness": "PBMSERV_CHILD_NICENESS",
    "robots": "PBMSERV_ROBOTS",
    "robot_cpu_seconds": "PBMSERV_ROBOT_CPU_SECONDS",
    "robot_games_per_user": "PBMSERV_ROBOT_GAMES_PER_USER",
    "robot_poll_seconds": "PBMSERV_ROBOT_POLL_SECONDS",
    "robot_turns_at_once": "PBMSERV_ROBOT_TURNS_AT_ONCE",
    "robot_cpu_seconds_per_person_per_hour": "PBMSERV_ROBOT_CPU_SECONDS_PER_PERSON_PER_HOUR",
    "robot_proposal_cpu_seconds": "PBMSERV_ROBOT_PROPOSAL_CPU_SECONDS",
    "rating_period_days": "PBMSERV_RATING_PERIOD_DAYS",
    "clock": "PBMSERV_CLOCK",
    "tournament_clock": "PBMSERV_TOURNAMENT_CLOCK",
    "clock_reminder_hours": "PBMSERV_CLOCK_REMINDER_HOURS",
    "vacation_days_per_year": "PBMSERV_VACATION_DAYS_PER_YEAR",
    "clock_sweep_seconds": "PBMSERV_CLOCK_SWEEP_SECONDS",
    "log_format": "PBMSERV_LOG_FORMAT",
    "confirm_addresses": "PBMSERV_CONFIRM_ADDRESSES",
    "max_accounts_per_address": "PBMSERV_MAX_ACCOUNTS_PER_ADDRESS",
    "max_mails_per_message": "PBMSERV_MAX_MAILS_PER_MESSAGE",
    "max_message_recipients": "PBMSERV_MAX_MESSAGE_RECIPIENTS",
    "max_observers_per_board": "PBMSERV_MAX_OBSERVERS_PER_BOARD",
    "text_mails_per_recipient_per_day": "PBMSERV_TEXT_MAILS_PER_RECIPIENT_PER_DAY",
}
CONFIG_ENV = "PBMSERV_CONFIG"
# A file of PBMSERV_*=VALUE lines (systemd's EnvironmentFile form) that every command reading
# the config file reads too: secrets kept out of the TOML reach the MTA's pipe, `deliver` and
# the admin shell, not only the systemd unit. The process's own environment wins over it.
ENV_FILE_KEY = "env_file"


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings a TOML file sets (raw values, checked by name)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read the config file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    known = set(Settings.__dataclass_fields__) - {"game_limits", "game_clocks"}
    for key in data:
        if key not in known and key not in ("games", ENV_FILE_KEY):
            raise ConfigError(f"{path}: unknown setting {key!r}")
    return data


def read_env_file(path: Path) -> dict[str, str]:
    """The PBMSERV_* variables a KEY=VALUE file sets (blank lines and # comments skipped, a
    value may be quoted), as systemd's EnvironmentFile reads them."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"cannot read the env_file {path}: {error.strerror}") from None
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        name, equals, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not equals or not name.isidentifier():
            raise ConfigError(f"{path}, line {number}: not NAME=VALUE")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        if name.startswith("PBMSERV_"):
            found[name] = value
    return found
