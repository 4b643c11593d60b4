"""Fixtures of the command-core tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.client import Client


@pytest.fixture
def client(engine) -> Iterator[Client]:  # type: ignore[no-untyped-def]
    yield Client(engine)


@pytest.fixture
def players(client: Client) -> Client:
    assert client.run("signup alice secret1 Alice A").ok
    assert client.run("signup Bob hunter22", sender="bob@example.org").ok
    assert client.run("signup carol pass3333", sender="carol@example.org").ok
    return client
