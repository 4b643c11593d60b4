"""The tournament formats and the tie-break each one shows in its standings."""

from __future__ import annotations

from enum import StrEnum

from pbmserv.tournaments.standings import Tiebreak


class Format(StrEnum):
    """A tournament format, by the name used in commands."""

    KNOCKOUT = "knockout"
    ROUND_ROBIN = "roundrobin"
    DOUBLE_ROUND_ROBIN = "double-roundrobin"
    SWISS = "swiss"
    ITALO_SWISS = "italo"

    @property
    def tiebreak(self) -> Tiebreak:
        """Buchholz for the Swiss systems, Sonneborn-Berger for round robin, none for knockout."""
        if self in (Format.SWISS, Format.ITALO_SWISS):
            return Tiebreak.BUCHHOLZ
        if self in (Format.ROUND_ROBIN, Format.DOUBLE_ROUND_ROBIN):
            return Tiebreak.SONNEBORN_BERGER
        return Tiebreak.NONE


def parse_format(name: str) -> Format:
    """The format called ``name`` (case-insensitive); ValueError naming the choices otherwise."""
    try:
        return Format(name.strip().lower())
    except ValueError:
        choices = ", ".join(f.value for f in Format)
        raise ValueError(f"unknown tournament format {name!r}: choose one of {choices}") from None
