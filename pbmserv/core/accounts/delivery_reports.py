"""What a delivery report says (a DSN read from mail, or a relay's refusal at once): the value
both the reading of bounces and the sending of mail hand to
:mod:`pbmserv.core.accounts.bouncing`."""

from __future__ import annotations

from dataclasses import dataclass

#: The most of a remote server's words kept of a report.
MAX_DIAGNOSTIC = 500


@dataclass(frozen=True)
class RecipientStatus:
    """What a report says of one recipient."""

    #: The address the MTA tried (Final-Recipient), lower-cased; "" when it gave none.
    recipient: str
    #: ``failed``, ``delayed``, ``delivered``, ``relayed``, ``expanded``, or "" (none given).
    action: str
    #: The enhanced status code (RFC 3463) such as ``5.1.1``; "" when there is none.
    status: str
    #: The remote server's words (Diagnostic-Code), one printable line; "" when none.
    diagnostic: str
    #: A hard bounce: the MTA gave up on this recipient for good.
    permanent: bool


@dataclass(frozen=True)
class DeliveryReport:
    """A delivery report: each recipient it reports on, and how it was read (``rfc3464``, or
    ``flufl`` for a bounce in another form)."""

    recipients: tuple[RecipientStatus, ...]
    source: str

    @property
    def permanent(self) -> bool:
        """A hard bounce: some recipient failed for good."""
        return any(r.permanent for r in self.recipients)

    @property
    def decisive(self) -> RecipientStatus:
        """The recipient that decides what the report counts as: the first that failed for
        good, else the first."""
        return next((r for r in self.recipients if r.permanent), self.recipients[0])

    @property
    def status(self) -> str:
        return self.decisive.status

    @property
    def action(self) -> str:
        return self.decisive.action

    @property
    def diagnostic(self) -> str:
        return self.decisive.diagnostic

    def describe(self) -> str:
        """One line for logs and the operator: status, action and diagnostic."""
        first = self.decisive
        parts = [first.status or "(no status)", first.action or "(no action)", first.diagnostic]
        return " ".join(p for p in parts if p)
