"""The server itself: its database, its own address, its logs."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerSettings:
    db_url: str = "sqlite:///pbmserv.db"
    address: str = "pbmserv@localhost"
    # "text" for people, "json" for log collectors.
    log_format: str = "text"
