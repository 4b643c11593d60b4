"""The headers that mark bulk mail (a digest, a broadcast), as Gmail and Yahoo require of bulk
senders: List-Id (RFC 2919), List-Unsubscribe (RFC 2369) with List-Unsubscribe-Post
(RFC 8058), and Precedence: bulk. Mail about a user's own games carries none of them.

The unsubscribe target is a mailto: a mail to the server's address whose Subject (and body,
for a mail program that drops the Subject) is the ``unsubscribe`` command with its secret
code; the server acts on it as it comes, with no confirmation step. An HTTPS endpoint for
RFC 8058's one-click POST goes beside it once the web view exists (``web_unsubscribe``).
DKIM signs all of these headers (see :mod:`pbmserv.outbound.signing`).
"""

from __future__ import annotations

from contextlib import suppress
from urllib.parse import quote

from pbmserv.core.results import BulkMail
from pbmserv.outbound import headers


def unsubscribe_mailto(server_address: str, bulk: BulkMail) -> str:
    """``mailto:SERVER?subject=COMMAND&body=COMMAND``, the command percent-encoded."""
    command = quote(bulk.unsubscribe_command, safe="")
    address = quote(server_address, safe="@+-._")  # RFC 6068: UTF-8, percent-encoded
    return f"mailto:{address}?subject={command}&body={command}"


def list_id(server_address: str, bulk: BulkMail) -> str:
    """The list's id: its name under the server's domain (``digest.example.org``)."""
    domain = server_address.rpartition("@")[2].lower()
    return f"{bulk.list_name}.{domain}"


def list_fields(
    server_address: str, bulk: BulkMail | None, web_unsubscribe: str | None = None
) -> list[str]:
    """The header fields of bulk mail, written by :mod:`pbmserv.outbound.headers`; none for mail
    that is no bulk mail. ``web_unsubscribe``: an https URL taking RFC 8058's POST (none yet:
    a URL with nothing behind it would lose the user's request)."""
    if bulk is None:
        return []
    urls = [web_unsubscribe] if web_unsubscribe else []
    urls.append(unsubscribe_mailto(server_address, bulk))
    fields = [
        headers.urls_field("List-Unsubscribe", urls),
        # RFC 8058 one-click: a receiver POSTs this to the https URL (when there is one) or
        # sends the mailto, with no page or question in between.
        headers.raw_field("List-Unsubscribe-Post", "List-Unsubscribe=One-Click"),
        headers.raw_field("Precedence", "bulk"),
    ]
    description = f"pbmserv {bulk.list_name}"
    # An internationalised domain is no dot-atom: such a server's lists go unnamed.
    with suppress(ValueError):
        fields.insert(0, headers.list_id_field(description, list_id(server_address, bulk)))
    return fields
