"""The relay session (pbmserv.outbound.relay.session) over real sockets: a real aiosmtpd relay that
offers PIPELINING, and a scripted relay that writes its replies byte by byte or all at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope
from aiosmtpd.smtp import Session as SMTPSession

from pbmserv.config import Settings
from pbmserv.outbound.delivery_items import DELIVERED, Claimed
from pbmserv.outbound.relay.connection import RelayConnection
from pbmserv.outbound.relay.session import RelayBroken, RelaySession
from tests.support import CapturingHandler, free_port


class PipeliningHandler(CapturingHandler):
    """A relay that offers PIPELINING, as Postfix does, and refuses one recipient."""

    async def handle_EHLO(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        hostname: str,
        responses: list[str],
    ) -> list[str]:
        session.host_name = hostname
        return [responses[0], "250-PIPELINING", *responses[1:]]

    async def handle_RCPT(
        self,
        server: SMTP,
        session: SMTPSession,
        envelope: Envelope,
        address: str,
        options: list[str],
    ) -> str:
        if address.startswith("nobody@"):
            return "550 5.1.1 no such user here"
        envelope.rcpt_tos.append(address)
        return "250 OK"


def _claimed(number: int, recipient: str) -> Claimed:
    raw = (
        f"From: pbmserv@games.test\nTo: {recipient}\nSubject: message {number}\n"
        f"Message-ID: <m{number}@games.test>\n\n.a line that starts with a dot\nbody {number}\n"
    ).encode()
    return Claimed(number, recipient, f"<m{number}@games.test>", raw, datetime.now(UTC), 0)


async def _send(relay: RelayConnection, item: Claimed) -> object:
    deadline = asyncio.get_running_loop().time() + 10
    refused = await relay.start(item, deadline, "bounces@games.test")
    return refused if refused is not None else await relay.finish(deadline)


def test_a_pipelining_relay_takes_each_message_and_a_refusal_fails_only_its_own() -> None:
    handler = PipeliningHandler()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    try:
        settings = Settings(relay=f"127.0.0.1:{controller.port}", relay_tls="none")

        async def run() -> list[object]:
            relay = RelayConnection(settings)
            try:
                recipients = ["alice@example.org", "nobody@example.org", "bob@example.org"]
                outcomes = [await _send(relay, _claimed(n, r)) for n, r in enumerate(recipients)]
                assert relay.session is not None and relay.session.supports("pipelining")
                return outcomes
            finally:
                await relay.close()

        outcomes = asyncio.run(run())
    finally:
        controller.stop()
    assert outcomes[0] == DELIVERED and outcomes[2] == DELIVERED
    refused = outcomes[1]
    assert refused.permanent and "550 5.1.1 no such user here" in (refused.error or "")
    assert [m.to for m in handler.messages] == ["alice@example.org", "bob@example.org"]
    body = handler.messages[1].message.get_payload()
    assert ".a line that starts with a dot\nbody 2" in body.replace("\r\n", "\n")


# --- a scripted relay ----------------------------------------------------------------------------


@dataclass
class Scripted:
    """What the scripted relay read: every read's bytes, and the command lines."""

    reads: list[bytes] = field(default_factory=list)
    lines: list[bytes] = field(default_factory=list)


Conversation = Callable[[asyncio.StreamReader, asyncio.StreamWriter, Scripted], Awaitable[None]]


@asynccontextmanager
async def scripted_relay(conversation: Conversation) -> AsyncIterator[tuple[int, Scripted]]:
    seen = Scripted()

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await conversation(reader, writer, seen)
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    try:
        yield server.sockets[0].getsockname()[1], seen
    finally:
        server.close()


async def _read_lines(reader: asyncio.StreamReader, seen: Scripted, count: int) -> None:
    """Read ``count`` command lines, noting what each read brought."""
    while len(seen.lines) < count:
        chunk = await reader.read(4096)
        if not chunk:
            return
        seen.reads.append(chunk)
        seen.lines += [line for line in chunk.split(b"\r\n") if line]


async def _session(port: int) -> RelaySession:
    transport, _ = await asyncio.get_running_loop().create_connection(
        asyncio.Protocol, "127.0.0.1", port
    )
    session = RelaySession.take_over(transport, {"PIPELINING": ""}, awaiting=1)  # the greeting
    assert (await session.read()).code == 220
    return session


async def _write(writer: asyncio.StreamWriter, data: bytes, one_byte_at_a_time: bool) -> None:
    for piece in [data[i : i + 1] for i in range(len(data))] if one_byte_at_a_time else [data]:
        writer.write(piece)
        await writer.drain()
        if one_byte_at_a_time:
            await asyncio.sleep(0)


@pytest.mark.parametrize("one_byte_at_a_time", [False, True])
def test_pipelined_commands_go_in_one_write_and_replies_are_read_however_they_come(
    one_byte_at_a_time: bool,
) -> None:
    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        await _read_lines(reader, seen, 3)
        replies = b"250 2.1.0 Ok\r\n250-2.1.5 Ok\r\n250 2.1.5 really\r\n354 End data with .\r\n"
        await _write(writer, replies, one_byte_at_a_time)
        data = await reader.readuntil(b"\r\n.\r\n")
        seen.lines.append(data)
        await _write(writer, b"250 2.0.0 queued as 42\r\n", one_byte_at_a_time)

    async def run() -> tuple[object, object, Scripted]:
        async with scripted_relay(relay) as (port, seen):
            session = await _session(port)
            began = await session.begin("bounces@games.test", "alice@example.org", ["SIZE=9"])
            session.write(b"Hello.\r\n")
            ended = await session.end()
            session.close()
            return began, ended, seen

    began, ended, seen = asyncio.run(run())
    assert began is None
    assert str(ended) == "250 2.0.0 queued as 42"
    assert seen.reads[0] == (
        b"MAIL FROM:<bounces@games.test> SIZE=9\r\nRCPT TO:<alice@example.org>\r\nDATA\r\n"
    )
    assert seen.lines[-1] == b"Hello.\r\n.\r\n"


def test_without_pipelining_each_command_waits_for_its_reply() -> None:
    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        for count, reply in enumerate([b"250 Ok\r\n", b"451 try later\r\n"], start=1):
            await _read_lines(reader, seen, count)
            writer.write(reply)
        await _read_lines(reader, seen, 3)  # RSET, from the caller
        writer.write(b"250 Ok\r\n")

    async def run() -> tuple[object, Scripted]:
        async with scripted_relay(relay) as (port, seen):
            transport, _ = await asyncio.get_running_loop().create_connection(
                asyncio.Protocol, "127.0.0.1", port
            )
            session = RelaySession.take_over(transport, {"SIZE": "1000"}, awaiting=1)
            await session.read()
            refused = await session.begin("bounces@games.test", "alice@example.org", [])
            assert (await session.command(b"RSET")).code == 250
            session.close()
            return refused, seen

    refused, seen = asyncio.run(run())
    assert str(refused) == "451 try later"
    assert seen.reads[:2] == [
        b"MAIL FROM:<bounces@games.test>\r\n",
        b"RCPT TO:<alice@example.org>\r\n",
    ]
    assert b"DATA" not in seen.lines  # the refused recipient ended the transaction


def test_a_relay_that_wants_data_after_refusing_the_envelope_gets_an_empty_end() -> None:
    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        await _read_lines(reader, seen, 3)
        writer.write(b"250 Ok\r\n550 no such user\r\n354 go ahead\r\n")
        await _read_lines(reader, seen, 4)
        writer.write(b"554 no valid recipients\r\n")

    async def run() -> tuple[object, Scripted]:
        async with scripted_relay(relay) as (port, seen):
            session = await _session(port)
            refused = await session.begin("bounces@games.test", "nobody@example.org", [])
            session.close()
            return refused, seen

    refused, seen = asyncio.run(run())
    assert str(refused) == "550 no such user"
    assert seen.lines[3] == b"."


@pytest.mark.parametrize(
    "reply", [b"hello there\r\n", b"2\r\n", b"250" + b"-" * 9000], ids=["text", "short", "too long"]
)
def test_a_reply_that_is_not_smtp_breaks_the_conversation(reply: bytes) -> None:
    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        await _read_lines(reader, seen, 1)
        writer.write(reply)
        await asyncio.sleep(0.5)

    async def run() -> RelaySession:
        async with scripted_relay(relay) as (port, _seen):
            session = await _session(port)
            with pytest.raises(RelayBroken, match="not SMTP|too long"):
                await session.command(b"NOOP")
            return session

    assert not asyncio.run(run()).is_connected


def test_a_relay_that_hangs_up_breaks_the_conversation_and_the_next_write() -> None:
    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        await _read_lines(reader, seen, 1)

    async def run() -> None:
        async with scripted_relay(relay) as (port, _seen):
            session = await _session(port)
            with pytest.raises(RelayBroken, match="closed|lost"):
                await session.command(b"NOOP")
            with pytest.raises(RelayBroken):
                session.write(b"NOOP\r\n")

    asyncio.run(run())


def test_an_address_that_would_change_the_command_is_refused_before_a_byte_goes() -> None:
    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        chunk = await reader.read(4096)
        seen.reads.append(chunk)

    async def run() -> Scripted:
        async with scripted_relay(relay) as (port, seen):
            session = await _session(port)
            for address in ["a@b.test>\r\nRCPT TO:<c@d.test", "no body@example.org", "a@b@"]:
                with pytest.raises(ValueError):
                    await session.begin("bounces@games.test", address, [])
            session.close()
            await asyncio.sleep(0.1)
            return seen

    assert asyncio.run(run()).reads in ([], [b""])


def test_a_reply_no_command_asked_for_is_never_read_as_the_next_one() -> None:
    """A relay may say "421 closing" while the connection is idle, then answer on: that line
    must not become the answer to the next command (and end a message as if accepted)."""

    async def relay(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter, seen: Scripted
    ) -> None:
        writer.write(b"220 relay.test ready\r\n")
        await asyncio.sleep(0.05)
        writer.write(b"250 2.0.0 nobody asked\r\n421-4.4.2 idle\r\n421 4.4.2 too long\r\n")
        await _read_lines(reader, seen, 1)
        writer.write(b"252 2.0.0 the NOOP's own\r\n")

    async def run() -> object:
        async with scripted_relay(relay) as (port, _seen):
            session = await _session(port)
            await asyncio.sleep(0.2)  # the unasked lines arrive meanwhile
            reply = await session.command(b"NOOP")
            session.close()
            return reply

    assert str(asyncio.run(run())) == "252 2.0.0 the NOOP's own"
