"""The headers every response carries (the security policy, and a private page's manners), the
refusal of over-long addresses, and ETags with their ``If-None-Match`` answer (304)."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Nothing from elsewhere, nothing inline: styles and the one script come from /static/.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; img-src 'self'; style-src 'self'; script-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
PUBLIC_HEADERS: Mapping[str, str] = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
#: A player's private link: kept by no cache, shown by no search engine, sent to no other site.
PRIVATE_HEADERS: Mapping[str, str] = {
    **PUBLIC_HEADERS,
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "private, no-store",
    "X-Robots-Tag": "noindex",
}
PRIVATE_PREFIX = "/p/"
#: Longer paths or query strings than any page has (in bytes, as sent) are refused.
LONGEST_PATH = 300
LONGEST_QUERY = 300


def headers_for(path: str) -> Mapping[str, str]:
    """The headers a response to ``path`` carries, whatever it is (an error page too)."""
    return PRIVATE_HEADERS if path.startswith(PRIVATE_PREFIX) else PUBLIC_HEADERS


ErrorPage = Callable[[Scope, int], Response]


class Manners:
    """ASGI middleware: every response gets :func:`headers_for` its path (the response's own
    values give way), and a path or query string too long is answered by ``error_page``."""

    def __init__(self, app: ASGIApp, error_page: ErrorPage) -> None:
        self.app = app
        self.error_page = error_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = headers_for(scope.get("path", ""))

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in extra.items():
                    headers[name] = value
            await send(message)

        raw_path = scope.get("raw_path") or scope.get("path", "").encode("utf-8", "replace")
        if len(raw_path) > LONGEST_PATH:
            await self.error_page(scope, 404)(scope, receive, sending)
        elif len(scope.get("query_string", b"")) > LONGEST_QUERY:
            await self.error_page(scope, 400)(scope, receive, sending)
        else:
            await self.app(scope, receive, sending)


def etag_of(view_tag: str, kind: str, version: str) -> str:
    """A strong ETag: the projection's tag, the representation and the site's version."""
    return f'"{view_tag}-{kind}-{version}"'


def not_modified(request: Request, etag: str) -> bool:
    """Whether ``If-None-Match`` names ``etag`` (compared weakly, as RFC 9110 says) or ``*``."""
    wanted = request.headers.get("if-none-match")
    if not wanted:
        return False
    tags = {tag.strip().removeprefix("W/") for tag in wanted.split(",")}
    return "*" in tags or etag in tags


#: Public pages, pictures and records change with the board: always ask again (with the tag).
REVALIDATE = "no-cache"


def tagged(request: Request, etag: str, make: Callable[[], Response]) -> Response:
    """``make()``'s response with its ETag, or 304 when the client has it already."""
    headers = {"ETag": etag, "Cache-Control": REVALIDATE}
    if not_modified(request, etag):
        return Response(status_code=304, headers=headers)
    response = make()
    response.headers.update(headers)
    return response
