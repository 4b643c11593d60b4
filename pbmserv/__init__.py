"""pbmserv: a play-by-email game server."""

__version__ = "0.1.0"
