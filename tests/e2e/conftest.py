from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from pbmserv.config import Settings
from tests.support import RunningServer, Sink


@pytest.fixture
def sink() -> Iterator[Sink]:
    relay = Sink().start()
    yield relay
    relay.stop()


@pytest.fixture
def settings(db_url: str, sink: Sink, tmp_path) -> Settings:  # type: ignore[no-untyped-def]
    return Settings(
        db_url=db_url,
        listen="127.0.0.1:0",
        relay=sink.address,
        spool=tmp_path / "spool",
        poll_seconds=0.2,
        retry_base_seconds=0.2,
        retry_max_seconds=1.0,
        max_message_bytes=64 * 1024,
    )


@pytest.fixture
def server(settings: Settings) -> Iterator[RunningServer]:
    running = RunningServer(settings).start()
    yield running
    running.stop()


@pytest.fixture
def with_settings(settings: Settings):  # type: ignore[no-untyped-def]
    return lambda **changes: replace(settings, **changes)
