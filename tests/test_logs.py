"""The JSON log line: the facts a line carries never overwrite the line's own keys."""

from __future__ import annotations

import json
import logging

from pbmserv.logs import JsonFormatter, TextFormatter


def record(fields: dict[str, object]) -> logging.LogRecord:
    line = logging.LogRecord("pbmserv.robots", logging.INFO, __file__, 1, "robot", None, None)
    line.fields = fields
    return line


def test_a_field_named_like_a_key_keeps_the_log_level() -> None:
    entry = json.loads(JsonFormatter().format(record({"level": 3, "board": 7, "message": "x"})))
    assert entry["level"] == "info" and entry["message"] == "robot"
    assert entry["field_level"] == 3 and entry["field_message"] == "x" and entry["board"] == 7


def test_the_text_line_carries_the_fields() -> None:
    line = TextFormatter().format(record({"robot_level": 2}))
    assert " INFO pbmserv.robots robot robot_level=2" in line
