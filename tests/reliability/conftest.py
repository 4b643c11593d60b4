"""Fixtures shared by the reliability tests."""

from __future__ import annotations

import pytest

from pbmserv.core.commands import TOP_LEVEL


@pytest.fixture
def poisoned_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """``help poison`` crashes inside the command, as a bug in a handler would."""
    spec = TOP_LEVEL["help"]

    def handler(ctx, line, game):  # type: ignore[no-untyped-def]
        if "poison" in line.words:
            raise RuntimeError("a bug in a handler")
        return spec.handler(ctx, line, game)

    monkeypatch.setitem(TOP_LEVEL, "help", type(spec)(**{**spec.__dict__, "handler": handler}))
