"""Settings: defaults, overridden by environment variables, overridden by command-line flags.

The settings object is passed explicitly to whatever needs it; there is no global config.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path


@dataclass(frozen=True)
class Settings:
    db_url: str = "sqlite:///pbmserv.db"
    listen: str = "127.0.0.1:2525"
    relay: str | None = None
    spool: Path = Path("spool")
    address: str = "pbmserv@localhost"
    max_message_bytes: int = 1_048_576
    rate_limit_per_hour: int = 300
    poll_seconds: float = 2.0
    retry_base_seconds: float = 30.0
    retry_max_seconds: float = 3600.0
    # How long a server may hold outgoing mail it is sending before another (or it, after a
    # crash) takes it over.
    delivery_lease_seconds: float = 120.0
    max_commands_per_message: int = 30

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


# Environment variable for each setting.
ENV_NAMES = {
    "db_url": "PBMSERV_DB",
    "listen": "PBMSERV_LISTEN",
    "relay": "PBMSERV_RELAY",
    "spool": "PBMSERV_SPOOL",
    "address": "PBMSERV_ADDRESS",
    "max_message_bytes": "PBMSERV_MAX_MESSAGE_BYTES",
    "rate_limit_per_hour": "PBMSERV_RATE_LIMIT",
    "poll_seconds": "PBMSERV_POLL_SECONDS",
    "retry_base_seconds": "PBMSERV_RETRY_BASE_SECONDS",
    "retry_max_seconds": "PBMSERV_RETRY_MAX_SECONDS",
    "delivery_lease_seconds": "PBMSERV_DELIVERY_LEASE_SECONDS",
}


def _convert(name: str, raw: object) -> object:
    kind = {f.name: f.type for f in fields(Settings)}[name]
    if raw is None:
        return None
    if kind in ("int",):
        return int(raw)  # type: ignore[arg-type]
    if kind in ("float",):
        return float(raw)  # type: ignore[arg-type]
    if kind == "Path":
        return Path(str(raw))
    return str(raw)


def load_settings(
    overrides: Mapping[str, object] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Defaults, then ``environ`` (os.environ by default), then non-None ``overrides``."""
    env = os.environ if environ is None else environ
    values: dict[str, object] = {}
    for name, var in ENV_NAMES.items():
        if env.get(var):
            values[name] = _convert(name, env[var])
    for name, value in (overrides or {}).items():
        if value is not None:
            values[name] = _convert(name, value)
    return replace(Settings(), **values)
