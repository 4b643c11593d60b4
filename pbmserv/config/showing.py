"""The settings fit to print (`pbmserv config show`): secrets masked, grouped by part."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pbmserv.config.settings import PARTS, Settings, part_fields

SECRET_FIELDS = ("relay_password", "imap_password")


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
    """The effective settings as plain data, with secrets masked (for `pbmserv config show`),
    part after part."""
    return {
        name: value
        for shown in describe_settings_by_part(settings).values()
        for name, value in shown.items()
    }


def describe_settings_by_part(settings: Settings) -> dict[str, dict[str, Any]]:
    """The effective settings as :func:`describe_settings` shows them, under the heading of
    each part (:data:`pbmserv.config.settings.PARTS`)."""
    values = asdict(settings)
    return {
        heading: {name: _shown(settings, name, values[name]) for name in part_fields(part)}
        for heading, part in PARTS.items()
    }


def _shown(settings: Settings, name: str, value: Any) -> Any:
    if name in SECRET_FIELDS and value:
        return "********"
    if name == "db_url":
        return _mask_url(value)
    if name == "ehlo_name":
        return settings.ehlo_hostname  # the name in effect, the default included
    if isinstance(value, Path):
        return str(value)
    return value
