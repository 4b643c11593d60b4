"""Settings: defaults, then an optional TOML file, then environment variables, then flags.

The settings object is passed explicitly to whatever needs it; there is no global config.
The TOML file uses the field names of :class:`Settings` as top-level keys, and per-game idle
limits in ``[games.NAME]`` tables (see deploy/pbmserv.toml for a commented example).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pbmserv.time_controls import TimeControl, TimeControlError, parse_time_control


class ConfigError(ValueError):
    """The configuration file or a setting's value is wrong; the message says which."""


@dataclass(frozen=True)
class IdleLimits:
    """Days a board may wait for a move before a reminder, and before it is forfeited."""

    remind_after_days: float
    forfeit_after_days: float


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///pbmserv.db"
    listen: str = "127.0.0.1:2525"
    relay: str | None = None
    relay_username: str | None = None
    relay_password: str | None = None
    # TLS to the relay, as Postfix's smtp_tls_security_level: "may" (STARTTLS when offered,
    # certificate not checked: opportunistic), "starttls" (STARTTLS required, certificate
    # checked), "tls" (implicit TLS from the first byte: port 465), "none" (plain). SMTP AUTH
    # is only ever done over TLS.
    relay_tls: str = "may"
    # The name the relay's certificate must carry (default: the relay's host name).
    relay_tls_server_name: str | None = None
    # CA certificates (PEM) to check the relay's certificate against (default: the system's).
    relay_ca_file: Path | None = None
    # The name pbmserv gives itself in EHLO to the relay (default: the domain of ``address``;
    # the host's own name is often "localhost", which providers score as spam).
    ehlo_name: str | None = None
    # DKIM signing of every outgoing mail: selector, PEM private key, signing domain (default:
    # the domain of ``address``). Unset selector or key: mail goes unsigned.
    dkim_selector: str | None = None
    dkim_key_file: Path | None = None
    dkim_domain: str | None = None
    # Hard bounces (5.x.x delivery reports) after which an address counts as bouncing: it
    # gets no more mail but what its owner asks for from it, until mail comes from it again.
    bounce_limit: int = 3
    # A hosted mailbox read by IMAP instead of an SMTP listener ("imaps://user@host/INBOX"),
    # its password (or XOAUTH2 token), and how often to look when the server has no IDLE.
    imap: str | None = None
    imap_password: str | None = None
    imap_poll_seconds: float = 30.0
    spool: Path = Path("spool")
    address: str = "pbmserv@localhost"
    max_message_bytes: int = 1_048_576
    # Messages per hour from one envelope sender, and in the name of one From address by
    # other envelope senders (see pbmserv.inbound.inbox); 0: no limit.
    rate_limit_per_hour: int = 300
    from_rate_limit_per_hour: int = 60
    # A copy of a message without a Message-ID that comes within this many seconds is a
    # retransmission; after it, the same bytes are a new message.
    dedupe_window_seconds: float = 300.0
    # SMTP sessions at once; the next one is answered 421. 0: no limit.
    max_connections: int = 100
    poll_seconds: float = 2.0
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 3600.0
    # How long a server may hold outgoing mail it is sending before another (or it, after a
    # crash) takes it over.
    delivery_lease_seconds: float = 120.0
    max_commands_per_message: int = 30
    # Wrong passwords allowed in a window, per user id and per sending address; above them a
    # login is refused without even checking, and the owner is told once a day.
    failed_logins_per_user: int = 10
    failed_logins_per_sender: int = 30
    failed_login_window_minutes: float = 15.0
    # Idle boards: a reminder after this many days without a move, a forfeit after that many.
    remind_after_days: float = 7.0
    forfeit_after_days: float = 28.0
    # A board is forfeited only after a reminder sent at least this many days before (after
    # downtime too: an overdue board gets its reminder first, and this notice).
    forfeit_notice_days: float = 2.0
    # Board mail with a picture of the board for the users who take it (mail=html, the
    # default). Drawing one costs 0.2-1 ms of CPU (bench/pictures.py), in the delivery process.
    board_pictures: bool = True
    # The hour (0-23, UTC) at which the daily digests go out, to the users who chose them.
    digest_hour: int = 7
    # How often `serve` runs the maintenance (reminders, forfeits, digests); 0 turns it off.
    maintenance_interval_seconds: float = 3600.0
    # `serve` deletes sent mail queued more than this many days ago, once an hour; 0 keeps it.
    sent_retention_days: float = 30.0
    # SMTP connections `serve` delivers over at once: each message waits for the relay's
    # answers, so one connection alone leaves the server idle between them.
    delivery_connections: int = 4
    # Server processes `serve` runs, sharing the listening port (SO_REUSEPORT) and the
    # database: each uses a core of its own.
    workers: int = 1
    # Processes of its own each `serve` (each worker) delivers mail from (drawing pictures,
    # signing, sending: as much CPU as playing the moves), beside the one that listens and
    # plays; 0 delivers from that one.
    delivery_processes: int = 1
    # Whether `serve` (each worker) plays the moves in a process of its own, apart from the
    # one that listens: the listener then stores at its own pace while moves are played.
    processing_process: bool = True
    # How far below the listener's the CPU priority of `serve`'s child processes is (nice,
    # 0-19): in a burst the listener then keeps storing what arrives, and answering its
    # senders, while the moves and the mail wait their turn for the CPU. Measured on 2 cores
    # shared with PostgreSQL and the senders, 5 stored a PostgreSQL burst up to a third
    # faster but played a steady stream of moves a tenth slower: off unless bursts matter.
    child_niceness: int = 0
    # Whether the robots (computer players, core.robots.turns) play: `serve` then thinks for them
    # in a process of its own at the lowest CPU priority, so a person's move never waits.
    robots: bool = True
    # CPU seconds a robot may think about one move at most (its level may stop sooner).
    robot_cpu_seconds: float = 5.0
    # Boards one person may have against robots at a time.
    robot_games_per_user: int = 5
    # How often the robots' process looks for boards where a robot is to act.
    robot_poll_seconds: float = 1.0
    # Fair shares of the robots' time (runtime.robot_fairness): turns thought about at once (each
    # for a different person), the CPU seconds one person's robot turns may take an hour
    # (then they wait), and the CPU seconds a robot thinks about a proposal (a draw).
    robot_turns_at_once: int = 2
    robot_cpu_seconds_per_person_per_hour: float = 600.0
    robot_proposal_cpu_seconds: float = 0.5
    # Glicko-2's rating period, in days: a player's rating deviation grows by one period's
    # volatility for each period (fractions counted) since their last rated board.
    rating_period_days: float = 7.0
    # "text" for people, "json" for log collectors.
    log_format: str = "text"
    # Hosts (authserv-ids, comma-separated) whose Authentication-Results headers are trusted
    # (the receiving MTA's, on top of the message): a reply to a seat's reply address must then
    # have one that passes DMARC, or aligned DKIM or SPF, for its From domain (none: refused);
    # only such a From counts as an account's owner for the failed-login limit; a From they
    # say failed DMARC is not answered at all. Empty: the From address alone is checked.
    trusted_authserv_ids: str = ""
    # Mail goes only to addresses whose owners confirmed them (one confirmation mail, at most
    # one a day; a message from a new address waits for it). false: a private server where
    # everyone is trusted (all addresses count as confirmed).
    confirm_addresses: bool = True
    # User ids one address may hold (signup, email).
    max_accounts_per_address: int = 3
    # Mails one incoming message may cause to other people (board mail, notices; its own
    # reply and tournament news apart); a command that would go over is refused.
    max_mails_per_message: int = 25
    # Users one ``message`` may name, and observers one board may have.
    max_message_recipients: int = 10
    max_observers_per_board: int = 10
    # Mails carrying other users' text (chat, message, challenge) one address gets a day (UTC).
    text_mails_per_recipient_per_day: int = 20
    # Correspondence clocks ("help clocks"): the clock of a board challenged without -clock=:
    # "none" (the idle rule above), a preset (fast, normal, slow) or one like 10d+36h/10d.
    clock: str = "none"
    # The clock of a tournament's boards when `admin tournaments create` names none: a round
    # then waits at most this clock plus the players' vacation days.
    tournament_clock: str = "normal"
    # Hours left at which a player whose clock runs is reminded, comma-separated.
    clock_reminder_hours: str = "48,24"
    # Vacation days a user has a year (UTC), taken by `vacation` and, when a clock runs out,
    # automatically while any are left.
    vacation_days_per_year: int = 20
    # How often `serve` looks for clocks due (a reminder, a time run out); 0 turns it off.
    clock_sweep_seconds: float = 60.0
    # Per-game idle limits that replace the two above: game name -> limits.
    game_limits: Mapping[str, IdleLimits] = field(default_factory=dict)
    # Per-game clocks that replace ``clock``: game name -> time control.
    game_clocks: Mapping[str, str] = field(default_factory=dict)

    @property
    def listen_host(self) -> str:
        return self.listen.rsplit(":", 1)[0]

    @property
    def listen_port(self) -> int:
        return int(self.listen.rsplit(":", 1)[1])

    @property
    def relay_host_port(self) -> tuple[str, int] | None:
        if not self.relay:
            return None
        host, _, port = self.relay.rpartition(":")
        return (host or "127.0.0.1", int(port))

    @property
    def ehlo_hostname(self) -> str:
        """The name said in EHLO: ``ehlo_name``, else the domain of ``address``."""
        return self.ehlo_name or self.address.rpartition("@")[2] or "localhost"

    def time_control(self, game: str) -> TimeControl | None:
        """The clock of a new board of ``game`` when its challenge names none."""
        return parse_time_control(self.game_clocks.get(game, self.clock))

    @property
    def reminder_hours(self) -> tuple[int, ...]:
        """Hours left at which a running clock's player is reminded, most first."""
        return _hours(self.clock_reminder_hours)

    def idle_limits(self, game: str) -> IdleLimits:
        """The reminder and forfeit limits for boards of ``game``."""
        return self.game_limits.get(
            game, IdleLimits(self.remind_after_days, self.forfeit_after_days)
        )


# Environment variable for each setting.
ENV_NAMES = {
    "db_url": "PBMSERV_DB",
    "listen": "PBMSERV_LISTEN",
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
SECRET_FIELDS = ("relay_password", "imap_password")
LOG_FORMATS = ("text", "json")
RELAY_TLS_LEVELS = ("may", "starttls", "tls", "none")
_TYPES = {f.name: f.type for f in fields(Settings)}
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
    if name == "relay_tls" and raw not in RELAY_TLS_LEVELS:
        levels = ", ".join(RELAY_TLS_LEVELS)
        raise ConfigError(f"relay_tls must be one of {levels}, not {raw!r}")
    return str(raw)


def _hours(text: str) -> tuple[int, ...]:
    try:
        hours = sorted(
            {int(word) for word in text.replace(" ", "").split(",") if word}, reverse=True
        )
    except ValueError:
        raise ConfigError(
            f"clock_reminder_hours must be whole hours like 48,24, not {text!r}"
        ) from None
    if any(h < 1 for h in hours):
        raise ConfigError("clock_reminder_hours must be 1 or more each")
    return tuple(hours)


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


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings a TOML file sets (raw values, checked by name)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read the config file {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path} is not valid TOML: {error}") from None
    known = set(_TYPES) - {"game_limits", "game_clocks"}
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
        if env.get(var):
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
    if settings.imap and settings.workers > 1:
        raise ConfigError("imap: run one worker (workers = 1); several would race for each message")
    if settings.imap_poll_seconds <= 0:
        raise ConfigError("imap_poll_seconds must be more than 0")
    if settings.dedupe_window_seconds <= 0:
        raise ConfigError("dedupe_window_seconds must be more than 0")
    if not isinstance(games, dict):
        raise ConfigError("[games] must be a table of [games.NAME] tables")
    defaults = IdleLimits(settings.remind_after_days, settings.forfeit_after_days)
    limits = {name: _limits(name, table, defaults) for name, table in games.items()}
    _clock("clock", settings.clock)
    _clock("tournament_clock", settings.tournament_clock)
    _hours(settings.clock_reminder_hours)
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


def mask_url(url: str) -> str:
    """A database URL fit to print: its password, if any, masked."""
    return _mask_url(url)


def _mask_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    netloc = f"{parts.username}:********@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


def describe_settings(settings: Settings) -> dict[str, Any]:
    """The effective settings as plain data, with secrets masked (for `pbmserv config show`)."""
    shown: dict[str, Any] = {}
    for name, value in asdict(settings).items():
        if name in SECRET_FIELDS and value:
            value = "********"
        elif name == "db_url":
            value = _mask_url(value)
        elif name == "ehlo_name":
            value = settings.ehlo_hostname  # the name in effect, the default included
        elif isinstance(value, Path):
            value = str(value)
        shown[name] = value
    return shown
