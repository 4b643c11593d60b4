"""SQLAlchemy models: users, games (boards), seats, moves, observers, inbox and outbox."""

from __future__ import annotations

from datetime import date, datetime
from typing import cast

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    # Lower-cased for lookups: user ids are not case-sensitive.
    userid: Mapped[str] = mapped_column(String(32), unique=True)
    display_id: Mapped[str] = mapped_column(String(32))
    full_name: Mapped[str] = mapped_column(String(200), default="")
    email: Mapped[str] = mapped_column(String(320))
    password_hash: Mapped[str] = mapped_column(String(200))
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # When the owner was last told that someone is guessing this account's password.
    guess_alert_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: Signed off (on holiday) since then: no reminders or forfeits on their boards.
    away_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: Board mail as "html" (the text and a picture of the board) or "text" alone.
    mail_format: Mapped[str] = mapped_column(String(8), default="html", server_default="html")
    #: "daily": the boards waiting for a move come in one mail a day; "off": a mail a move.
    digest: Mapped[str] = mapped_column(String(8), default="off", server_default="off")
    #: When the last daily digest was made for the user (None: never).
    digest_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: "on": the operator's broadcasts come; "off": the user left them
    #: (core.accounts.unsubscribing).
    broadcasts: Mapped[str] = mapped_column(String(8), default="on", server_default="on")
    #: The address ``email`` asked to move to, waiting for its owner's confirmation (None: none).
    pending_email: Mapped[str | None] = mapped_column(String(320), nullable=True)
    #: A robot's strength (1 to 3): a computer player, mailed nothing, taking no commands
    #: (core.robots.turns). None: a person.
    robot_level: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: The planned end of the vacation that began at ``away_since`` (None: until stopped, or
    #: until the vacation bank runs out).
    vacation_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: The vacation was begun by a clock running out (core.timing.clocks): a move ends it.
    vacation_automatic: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    #: The vacation was begun by the user's address being marked bouncing
    #: (core.accounts.unreachable): mail from any of the user's addresses ends it, as a move does.
    vacation_unreachable: Mapped[bool] = mapped_column(Boolean, default=False, server_default="0")
    #: Vacation days used in ``vacation_year`` (a started day counts whole).
    vacation_days_used: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    vacation_year: Mapped[int | None] = mapped_column(Integer, nullable=True)


class UserAddress(Base):
    """Another address a user writes from (``add``); mail still goes to ``User.email``."""

    __tablename__ = "user_addresses"

    #: Lower-cased: one address belongs to one user.
    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)


class Address(Base):
    """A mail address the server has met: mail goes to it only once its owner has confirmed
    it (a reply to the one confirmation mail), so the server cannot be made to mail strangers."""

    __tablename__ = "addresses"

    #: Lower-cased.
    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    confirmed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: Unused since migration 0024 (one code per address ran every request waiting for it);
    #: each waiting request has its own code now (HeldRequest).
    code: Mapped[str | None] = mapped_column(String(32), nullable=True, unique=True)
    #: When the last confirmation mail went to it (at most one a day).
    code_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: Hard bounces (5.x.x delivery reports) since mail last came from the address.
    hard_bounces: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    #: Marked bouncing (``bounce_limit`` hard bounces) since then; None: mail reaches it.
    bouncing_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    last_bounce_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: The last delivery report's status and diagnostic, for the operator.
    last_bounce: Mapped[str | None] = mapped_column(Text, nullable=True)


class HeldRequest(Base):
    """One request waiting for an address's owner to say yes, with the code of the one mail
    that asked them: a message held from the address, or a user's ``email``/``add`` naming it.
    The code runs this request and no other (core.accounts.confirmation)."""

    __tablename__ = "held_requests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: Lower-cased: the address whose owner is asked.
    address: Mapped[str] = mapped_column(String(320), index=True)
    #: "message" (``inbox_id`` is held), "email" or "add" (by ``user_id``).
    kind: Mapped[str] = mapped_column(String(16))
    code: Mapped[str] = mapped_column(String(32), unique=True)
    inbox_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    #: When it came; it expires HELD_FOR later.
    requested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ServerKey(Base):
    """A secret the server made for itself once (e.g. the key of its bounce addresses)."""

    __tablename__ = "server_keys"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))


class RelayHold(Base):
    """A relay that refused the server's login for good (535): no mail goes to it, and no
    login is tried, until its credentials change or the operator releases it (see
    pbmserv.outbound.relay.hold). The operator's view of the relay's state."""

    __tablename__ = "relay_holds"

    #: The relay, ``host:port``.
    relay: Mapped[str] = mapped_column(String(300), primary_key=True)
    username: Mapped[str] = mapped_column(String(320))
    #: A salted hash of the credentials refused (never the password): new ones release it.
    credentials: Mapped[str] = mapped_column(String(128))
    #: The relay's reply to the login.
    reason: Mapped[str] = mapped_column(Text)
    held_since: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class TextMailCount(Base):
    """How many mails carrying other users' text (chat, message, challenge) one address got
    on one day (UTC): a daily cap keeps anyone from flooding a player through the server."""

    __tablename__ = "text_mail_counts"

    address: Mapped[str] = mapped_column(String(320), primary_key=True)
    day: Mapped[date] = mapped_column(Date, primary_key=True)
    count: Mapped[int] = mapped_column(Integer, default=0)


class GameRow(Base):
    """A board: one game between its seats."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game: Mapped[str] = mapped_column(String(40))
    options: Mapped[dict] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(BigInteger)
    status: Mapped[str] = mapped_column(String(16), default="active")  # active | finished
    ply: Mapped[int] = mapped_column(Integer, default=0)
    # Seats to act, as "0" or "0,1" ("" when over): lets "your move" be a query.
    to_move: Mapped[str] = mapped_column(String(40), default="")
    state: Mapped[dict] = mapped_column(JSON)
    state_version: Mapped[int] = mapped_column(Integer)
    # Optimistic lock: every write checks and bumps it.
    version: Mapped[int] = mapped_column(Integer, default=1)
    result: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # When the idle players were last reminded (maintenance); None: not since the last move.
    reminded_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: The tournament match this board is a game of (None: a board of its own).
    match_id: Mapped[int | None] = mapped_column(
        ForeignKey("matches.id"), nullable=True, index=True
    )

    #: The board's clock as ``core.time_controls`` writes it (``10d+36h/10d``); None: no
    #: clock, the idle rule of ``core.maintenance``.
    time_control: Mapped[str | None] = mapped_column(String(40), nullable=True)
    #: When the clock sweep must next look at the board: a reminder or a time running out
    #: (None: no clock running).
    clock_due_at: Mapped[datetime | None] = mapped_column(
        DateTime(timezone=True), nullable=True, index=True
    )

    seats: Mapped[list[Seat]] = relationship(
        back_populates="game_row",
        order_by="Seat.seat",
        lazy="selectin",
        cascade="all, delete-orphan",
    )

    __table_args__ = (Index("ix_games_status_updated", "status", "updated_at"),)
    __mapper_args__ = {"version_id_col": version}


class Seat(Base):
    __tablename__ = "seats"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    #: Seconds on the seat's clock at ``clock_since`` (None: the board has no clock).
    clock_left: Mapped[float | None] = mapped_column(Float, nullable=True)
    #: Since when the clock runs (None: stopped: not the seat's turn, or its player away).
    clock_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    #: The fewest hours left of which the player was reminded this turn (None: not yet).
    clock_warned: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: When the player accepted the board (None: not yet: someone else started it, and until
    #: they move or accept, it runs no clock of theirs and is not rated; core.play.consent).
    accepted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    game_row: Mapped[GameRow] = relationship(back_populates="seats")
    user: Mapped[User] = relationship(lazy="joined")


class BoardMail(Base):
    """One user's mail of one board: the Message-IDs that thread it, and for a player the
    secret of the seat's reply address (``pbmserv+b17-s0-TOKEN@host``)."""

    __tablename__ = "board_mail"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)
    #: The seat the user plays (None: an observer, who gets no reply address).
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    token: Mapped[str | None] = mapped_column(String(32), nullable=True, unique=True)
    first_message_id: Mapped[str | None] = mapped_column(String(250), nullable=True)
    last_message_id: Mapped[str | None] = mapped_column(String(250), nullable=True)


class PrivateLink(Base):
    """A player's private link to one board: the web view's page of what their seat sees. The
    link's token is never stored, only its SHA-256 (core.play.private_links); a new generation
    makes a new token, and the old one answers 404."""

    __tablename__ = "private_links"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)
    seat: Mapped[int] = mapped_column(Integer)
    generation: Mapped[int] = mapped_column(Integer, default=1)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class MoveRow(Base):
    """One entry of a board's history: a move, or an event such as a resignation."""

    __tablename__ = "moves"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"))
    ply: Mapped[int] = mapped_column(Integer)  # ply before this entry
    seat: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # move | resign | forfeit | adjudicate | undo (the last two kinds come from the operator)
    kind: Mapped[str] = mapped_column(String(16), default="move")
    text: Mapped[str] = mapped_column(Text)  # canonical; the mover's own view of the move
    #: What the other players and observers may see while the game goes on (None: ``text``).
    public_text: Mapped[str | None] = mapped_column(Text, nullable=True)
    chance: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    #: Seconds on each seat's clock just after the move, by seat number (None: no clock).
    clocks: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    message_id: Mapped[str | None] = mapped_column(String(300), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_moves_game_ply", "game_id", "ply"),)


class Observer(Base):
    __tablename__ = "observers"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)


class InboxMessage(Base):
    """A message accepted by SMTP or stdin; stored before it is acknowledged."""

    __tablename__ = "inbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dedupe_key: Mapped[str] = mapped_column(String(300))
    envelope_from: Mapped[str | None] = mapped_column(String(320), nullable=True)
    #: The envelope recipients (RCPT TO), one per line, where the listener knew them.
    envelope_to: Mapped[str | None] = mapped_column(Text, nullable=True)
    # The header From address (lower-cased), read cheaply at storing time for rate limits.
    from_address: Mapped[str | None] = mapped_column(String(320), nullable=True)
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # pending | done | ignored | failed
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    summary: Mapped[str | None] = mapped_column(Text, nullable=True)
    # A message whose processing failed waits until then, so it never holds up the others.
    not_before: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        UniqueConstraint("dedupe_key", name="uq_inbox_dedupe_key"),
        Index("ix_inbox_status_id", "status", "id"),
        Index("ix_inbox_from_received", "envelope_from", "received_at"),
        Index("ix_inbox_fromaddr_received", "from_address", "received_at"),
    )


class AuthFailure(Base):
    """A wrong password: counted per user id and per sender to slow down guessing."""

    __tablename__ = "auth_failures"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    userid: Mapped[str] = mapped_column(String(64))
    sender: Mapped[str] = mapped_column(String(320))
    failed_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_auth_failures_userid_at", "userid", "failed_at"),
        Index("ix_auth_failures_sender_at", "sender", "failed_at"),
        # The latest failure, looked at once a batch: none lately, no limit can be reached.
        Index("ix_auth_failures_at", "failed_at"),
    )


# The condition of the partial index on pending mail, spelt out: a query can use that index only
# if its WHERE contains this very comparison (a bound parameter in its place would not do).
PENDING_OUTBOX = "status = 'pending'"
SENT_OUTBOX = "status = 'sent'"
FAILED_OUTBOX = "status = 'failed'"


class OutboxMessage(Base):
    """A rendered message waiting for delivery (or delivered, kept for the operator)."""

    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    inbox_id: Mapped[int | None] = mapped_column(
        ForeignKey("inbox.id", ondelete="SET NULL"), nullable=True, index=True
    )
    message_id: Mapped[str] = mapped_column(String(300), unique=True)
    recipient: Mapped[str] = mapped_column(String(320))
    kind: Mapped[str] = mapped_column(String(16))  # reply | board | notice
    raw: Mapped[bytes] = mapped_column(LargeBinary)
    # pending | sent | failed
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    # Who holds the lease (a token per delivery run): only the holder may mark the row.
    lease_owner: Mapped[str | None] = mapped_column(String(40), nullable=True)
    last_error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    __table_args__ = (
        # The mail waiting to be sent, and only that: the delivery claim reads it whatever the
        # statistics say about the (ever growing) sent rows.
        Index(
            "ix_outbox_pending",
            "next_attempt_at",
            "id",
            sqlite_where=text(PENDING_OUTBOX),
            postgresql_where=text(PENDING_OUTBOX),
        ),
        # A recipient's mail waiting to be sent: a claim passes over mail whose recipient has
        # earlier mail in flight (outbound.leases), looked up here rather than by reading all.
        Index(
            "ix_outbox_pending_recipient",
            "recipient",
            "id",
            sqlite_where=text(PENDING_OUTBOX),
            postgresql_where=text(PENDING_OUTBOX),
        ),
        # Sent mail by age, for the retention purge; failed mail, for the operator. No index
        # leads with status: SQLite, without statistics, would serve the claim from it.
        Index(
            "ix_outbox_sent_created",
            "created_at",
            sqlite_where=text(SENT_OUTBOX),
            postgresql_where=text(SENT_OUTBOX),
        ),
        Index(
            "ix_outbox_failed",
            "id",
            sqlite_where=text(FAILED_OUTBOX),
            postgresql_where=text(FAILED_OUTBOX),
        ),
    )


class Tournament(Base):
    """A tournament (SPEC section 5): its format, listed games and parameters, and progress.

    ``games`` lists ``{"label", "name", "options"}`` in the listed order; ``params`` holds the
    rounds, games per match, repechage and the poly-ludic parameters. Everything else (pairings,
    standings, the bracket) is rebuilt from the entries and matches whenever it is needed.
    """

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(40), unique=True)
    format: Mapped[str] = mapped_column(String(24))
    games: Mapped[list] = mapped_column(JSON)
    params: Mapped[dict] = mapped_column(JSON)
    # draft | open | running | finished
    status: Mapped[str] = mapped_column(String(16), default="draft")
    round: Mapped[int] = mapped_column(Integer, default=0)  # the round being played
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Entry(Base):
    """A player entered in a tournament."""

    __tablename__ = "entries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), index=True)
    seed: Mapped[int] = mapped_column(Integer)  # 1 is the best seed (entry order)
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Poly-ludic tournaments: the player's PG per game label (None until the start).
    playability: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    user: Mapped[User] = relationship(lazy="joined")

    __table_args__ = (
        UniqueConstraint("tournament_id", "user_id", name="uq_entries_tournament_user"),
    )


class Match(Base):
    """One match of a tournament round: one or more boards between two players, or a bye.

    ``game`` is the label of the listed game played (None while the chooser has not chosen);
    ``points`` are the match points of ``first`` (1, 1/2 or 0) once the match is done.
    """

    __tablename__ = "matches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    round: Mapped[int] = mapped_column(Integer)
    bracket: Mapped[str] = mapped_column(String(16), default="")  # main | consolation | final
    first_id: Mapped[int] = mapped_column(ForeignKey("users.id"))
    #: None: ``first`` has a bye this round.
    second_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    game: Mapped[str | None] = mapped_column(String(40), nullable=True)
    games: Mapped[int] = mapped_column(Integer, default=1)  # planned games, deciders apart
    # choosing | playing | done
    status: Mapped[str] = mapped_column(String(16))
    points: Mapped[float | None] = mapped_column(Float, nullable=True)
    winner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    first: Mapped[User] = relationship(foreign_keys=[first_id], lazy="joined")
    second: Mapped[User | None] = relationship(foreign_keys=[second_id], lazy="joined")

    __table_args__ = (Index("ix_matches_tournament_round", "tournament_id", "round"),)


class Rating(Base):
    """A user's ratings in one game: Elo (pbmserv's kind: 1600 to start, K=32) and Glicko-2."""

    __tablename__ = "ratings"

    game: Mapped[str] = mapped_column(String(40), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    draws: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: Glicko-2 (core.ratings.glicko2) beside Elo: rating, deviation and volatility as of
    #: ``glicko_at``, when the last rated board ended (None: never since it was started).
    glicko: Mapped[float] = mapped_column(Float, default=1500.0, server_default="1500")
    glicko_rd: Mapped[float] = mapped_column(Float, default=350.0, server_default="350")
    glicko_volatility: Mapped[float] = mapped_column(Float, default=0.06, server_default="0.06")
    glicko_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    # Not joined: rows are locked FOR UPDATE, which PostgreSQL refuses across an outer join.
    user: Mapped[User] = relationship(lazy="selectin")


class RatingChange(Base):
    """What a rated board did to one player's rating: a board is rated once, and an operator
    who reopens it takes the change back."""

    __tablename__ = "rating_changes"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    score: Mapped[float] = mapped_column(Float)  # 1 won, 0.5 drawn, 0 lost
    change: Mapped[float] = mapped_column(Float)
    glicko_change: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    glicko_rd_change: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    glicko_volatility_change: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")
    #: When the board was rated (None: before 0018, when ``games.updated_at`` tells it).
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


def table_of(model: type[Base]) -> Table:
    """The Core table of a mapped class, for hot statements written without the ORM
    (``__table__`` is typed as any FromClause; a declarative model's is always a Table)."""
    return cast(Table, model.__table__)


class Heartbeat(Base):
    """What a `serve` last said of one of its processes (runtime/heartbeats.py writes it every
    few seconds, from the parent's view of its children); the web view's /healthz and /metrics
    read it. A report older than three of its intervals is stale: that server stopped saying."""

    __tablename__ = "heartbeats"

    #: The `serve` that reports: its host and where it listens (and its worker slot).
    server: Mapped[str] = mapped_column(String(200), primary_key=True)
    #: The process's part of the work: listener, processing, delivery, robots, web ("+"
    #: between them when one process does several).
    role: Mapped[str] = mapped_column(String(60), primary_key=True)
    #: Which of the role's processes (delivery_processes may start several).
    slot: Mapped[int] = mapped_column(Integer, primary_key=True)
    pid: Mapped[int | None] = mapped_column(Integer, nullable=True)
    #: up | restarting (dead, to be started again after a pause)
    state: Mapped[str] = mapped_column(String(16))
    seen_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: How often the server reports (seconds).
    every_seconds: Mapped[float] = mapped_column(Float)
    #: How often the parent started the process again since it started itself.
    restarts: Mapped[int] = mapped_column(Integer, default=0)
