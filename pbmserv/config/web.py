"""The read-only web view: where it listens and the address its pages have for the public."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class WebSettings:
    # Where `serve` starts the web view as a child process, and `pbmserv web` listens by
    # default ("host:port"); empty: `serve` starts no web view.
    web_listen: str = "127.0.0.1:8080"
    # The public base address of the web view ("https://games.example.org"), for the links in
    # mail; none: mail carries no links (a proxy in front decides the public address).
    web_url: str | None = None
    # Who may read the operator's /metrics and /healthz: addresses or networks, comma-separated
    # ("127.0.0.1, ::1, 10.0.0.0/8"); anyone else gets 404. Empty: nobody.
    web_metrics_from: str = "127.0.0.1, ::1"

    @property
    def web_host_port(self) -> tuple[str, int] | None:
        """Where the web view listens; None: nowhere (``web_listen`` empty)."""
        if not self.web_listen.strip():
            return None
        host, _, port = self.web_listen.strip().rpartition(":")
        return host or "127.0.0.1", int(port)

    @property
    def web_base(self) -> str | None:
        """``web_url`` without a trailing slash, for links (None: no links)."""
        return self.web_url.rstrip("/") if self.web_url else None

    @property
    def web_metrics_networks(self) -> tuple[Network, ...]:
        """The networks ``web_metrics_from`` names (an address is a network of one)."""
        return metrics_networks(self.web_metrics_from)


def metrics_networks(text: str) -> tuple[Network, ...]:
    """The networks a comma-separated list names (ValueError: one is none)."""
    names = [name.strip() for name in text.split(",")]
    return tuple(ipaddress.ip_network(name, strict=False) for name in names if name)
