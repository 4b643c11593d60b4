"""Logging set-up: one line per event, as text for people or JSON for log collectors.

Code that logs an event with structured facts passes them as ``extra={"fields": {...}}``; the
text format appends them as ``key=value`` pairs, the JSON format as keys of the object.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    fields = getattr(record, "fields", None)
    return fields if isinstance(fields, dict) else {}


class TextFormatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        pairs = " ".join(f"{key}={json.dumps(value)}" for key, value in _fields(record).items())
        return f"{line} {pairs}" if pairs else line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in _fields(record).items():
            # A fact never overwrites the line's own keys (a robot's "level" is not the log's).
            entry[f"field_{key}" if key in entry or key == "exception" else key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure_logging(log_format: str = "text", verbose: bool = False, quiet: bool = False) -> None:
    """Send pbmserv's logs to standard error in ``log_format`` ("text" or "json"); ``quiet``:
    warnings and errors only."""
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING if quiet else logging.INFO)
    if not verbose:
        # One line per processed message: the SMTP library's per-session chatter and the
        # migration runner's notices are detail for --verbose only.
        for noisy in ("mail.log", "alembic"):
            logging.getLogger(noisy).setLevel(logging.WARNING)
    else:
        # Never below INFO: aiosmtpd logs every DATA line at DEBUG, passwords and all.
        logging.getLogger("mail.log").setLevel(logging.INFO)
