"""All the settings in one object, composed of the parts by subject, and which part a setting
belongs to.

Each part is a frozen dataclass in a module of its own (its fields, their comments, its
helpers); :class:`Settings` inherits them all, so code reads ``settings.relay`` whatever part
holds it. A field belongs to the part whose class body declares it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from pbmserv.config.accounts import AccountSettings
from pbmserv.config.inbound import InboundSettings
from pbmserv.config.outbound import OutboundSettings
from pbmserv.config.play import PlaySettings
from pbmserv.config.robots import RobotSettings
from pbmserv.config.runtime import RuntimeSettings
from pbmserv.config.server import ServerSettings
from pbmserv.config.timing import TimingSettings
from pbmserv.config.web import WebSettings


@dataclass(frozen=True)
class Settings(
    InboundSettings,
    OutboundSettings,
    RuntimeSettings,
    AccountSettings,
    TimingSettings,
    PlaySettings,
    RobotSettings,
    WebSettings,
    ServerSettings,
):
    """Every setting of the server (the parts' fields and helpers, flat)."""


#: The parts by their heading in `pbmserv config show`, in the order it shows them.
PARTS: dict[str, type[Any]] = {
    "server": ServerSettings,
    "mail in": InboundSettings,
    "mail out": OutboundSettings,
    "processes": RuntimeSettings,
    "accounts and limits": AccountSettings,
    "clocks and idle boards": TimingSettings,
    "play": PlaySettings,
    "robots": RobotSettings,
    "web view": WebSettings,
}


def part_fields(part: type[Any]) -> tuple[str, ...]:
    """The settings ``part`` declares itself (not those of a part it builds on)."""
    declared = vars(part).get("__annotations__", {})
    return tuple(f.name for f in fields(part) if f.name in declared)


_PART_OF = {name: heading for heading, part in PARTS.items() for name in part_fields(part)}


def part_of(name: str) -> str:
    """The heading of the part the setting ``name`` belongs to (KeyError: not a setting)."""
    return _PART_OF[name]
