"""A client that runs command lines on a real database like mail would, one transaction each."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.orm import Session

from pbmserv.config import Settings
from pbmserv.core.context import CommandContext
from pbmserv.core.dispatch import dispatch_line
from pbmserv.core.results import Section
from pbmserv.db.engine import session_factory, transaction
from pbmserv.db.times import utcnow
from pbmserv.outbound.compose import render_section


class Client:
    """Runs command lines as one sender, each in its own transaction, like one message each."""

    def __init__(self, engine) -> None:  # type: ignore[no-untyped-def]
        self.factory = session_factory(engine)
        self.settings = Settings(confirm_addresses=False)
        self.notifications: list = []

    def run(
        self, line: str, sender: str = "alice@example.org", at: datetime | None = None
    ) -> Section:
        """Run ``line`` from ``sender`` (``at``: as if it were then; None: now)."""
        with transaction(self.factory) as session:
            clock = (lambda: at) if at is not None else utcnow
            ctx = CommandContext(
                session=session, settings=self.settings, sender=sender, clock=clock
            )
            section = dispatch_line(ctx, line)
            self.notifications = list(ctx.notifications)
            # Every section must render with its template.
            section.text = render_section(section, "s@x")
            return section

    def query(self, statement):  # type: ignore[no-untyped-def]
        with self.factory() as session:
            return session.execute(statement).all()

    def session(self) -> Session:
        return self.factory()
