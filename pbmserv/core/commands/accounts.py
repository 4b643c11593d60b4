"""signup, password, email: the account commands."""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlalchemy import delete as delete_rows
from sqlalchemy import func, select

from pbmserv.core.accounts import confirmation, logins
from pbmserv.core.accounts.addresses import MAX_ADDRESSES, users_of_address
from pbmserv.core.accounts.passwords import hash_password
from pbmserv.core.commands.registry import TOP_LEVEL, command
from pbmserv.core.context import CommandContext
from pbmserv.core.parser import CommandLine
from pbmserv.core.play import board_mail
from pbmserv.core.play.reply_rotation import rotate_reply_addresses
from pbmserv.core.results import CommandError, Section
from pbmserv.db.models import Entry, GameRow, Observer, Seat, Tournament, User, UserAddress
from pbmserv.games import find_game
from pbmserv.games.base import AnyGame

USERID_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{1,23}$")
ADDRESS_PATTERN = re.compile(r"^[^@\s<>\"',;]+@[A-Za-z0-9.-]+$")
MIN_PASSWORD = 4
#: Words that cannot be user ids besides the command words (which the registry knows).
RESERVED = {"admin", "all", "signon"}
#: User ids kept for robots, present and to come (migration 0017 names them so).
ROBOT_NAMES = re.compile(r"(pbm)?robot\d*")


def _address(word: str) -> str:
    """A mail address as written in a command (angle brackets allowed), checked."""
    address = word.strip("<>")
    if not ADDRESS_PATTERN.match(address):
        raise CommandError(f'"{word}" is not a mail address like name@example.org')
    return address


def _check_room_at(ctx: CommandContext, address: str) -> None:
    """Refuse when ``address`` holds as many user ids as one address may."""
    most = ctx.settings.max_accounts_per_address
    query = select(func.count()).select_from(User)
    held = ctx.session.scalar(
        query.where(func.lower(User.email) == address.lower(), User.disabled.is_(False))
    )
    if (held or 0) >= most:
        raise CommandError(
            f"{address} already has {most} user ids, the most one address may have",
            hint="Play on with one of them; an operator can close one you no longer use.",
            syntax_was_right=True,
        )


def _check_not_anothers(ctx: CommandContext, user: User, address: str) -> None:
    """Refuse an address that is another user's, registered or added (in any letter case)."""
    if any(other.id != user.id for other in users_of_address(ctx.session, address)):
        raise CommandError(f"{address} belongs to another user", syntax_was_right=True)


def check_password_rules(password: str) -> None:
    if len(password) < MIN_PASSWORD or len(password) > 128:
        raise CommandError(f"a password must have {MIN_PASSWORD} to 128 characters (no spaces)")


@command(
    "signup",
    "signup USERID PASSWORD [FULL NAME]",
    "register a user id at the address you send from",
    secret_words=(2,),
    min_words=3,
    details="User ids are 2-24 letters, digits, '_', '.' or '-', starting with a letter; "
    "they are not case-sensitive. Passwords are case-sensitive.\n"
    "The first time you write from an address, pbmserv holds your message and sends that\n"
    "address one short mail naming it: reply to it (the text does not matter) and that\n"
    "message is processed. Until then, nothing else is sent to the address. Messages sent\n"
    "meanwhile are not run by that reply (anyone can write in your name): send them again.",
)
def signup(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    userid, password = line.words[1], line.words[2]
    full_name = line.rest(3)[:200]
    if not USERID_PATTERN.match(userid):
        raise CommandError(
            f'"{userid}" cannot be a user id: use 2-24 letters, digits, "_", "." or "-", '
            "starting with a letter"
        )
    if userid.lower() in RESERVED | TOP_LEVEL.keys() or find_game(userid) is not None:
        raise CommandError(f'"{userid}" is a command or game name; choose another user id')
    if ROBOT_NAMES.fullmatch(userid.lower()):
        raise CommandError(f'"{userid}" is kept for the robots (see "help robots"); choose another')
    check_password_rules(password)
    if ctx.sender is None:
        raise CommandError("signup needs the address to register: send it by mail")
    if ctx.find_user(userid) is not None:
        raise CommandError(f'the user id "{userid}" is taken; choose another')
    _check_room_at(ctx, ctx.sender)
    user = User(
        userid=userid.lower(),
        display_id=userid,
        full_name=full_name,
        email=ctx.sender,
        password_hash=hash_password(password),
        disabled=False,
        created_at=ctx.now(),
    )
    ctx.session.add(user)
    ctx.session.flush()
    return Section(
        kind="signed_up",
        data={"userid": userid, "email": ctx.sender, "full_name": full_name},
        summary=f"signup {userid}",
    )


@command(
    "password",
    "password USERID OLDPASSWORD NEWPASSWORD",
    "change your password",
    secret_words=(2, 3),
    min_words=4,
    max_words=4,
)
def password(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    new = line.words[3]
    check_password_rules(new)
    user.password_hash = hash_password(new)
    # Old reply addresses stop; each active board is mailed again with its new one.
    mailed = rotate_reply_addresses(ctx, user)
    return Section(
        kind="password_changed",
        data={"userid": user.display_id, "boards": mailed},
        summary=f"password {user.display_id}",
    )


@command(
    "email",
    "email USERID PASSWORD NEWADDRESS",
    "change the address your boards and mail go to",
    secret_words=(2,),
    min_words=4,
    max_words=4,
    details="Unless you send it from the new address, its owner is asked first (one mail,\n"
    "to reply to within a week); your mail goes where it went until they say yes.",
)
def email(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    new_address = _address(line.words[3])
    if new_address.lower() == user.email.lower():
        if user.pending_email:
            # Staying at the address it has: the move still waiting for a reply is called off.
            waiting, user.pending_email = user.pending_email, None
            return Section(
                "email_changed",
                {
                    "userid": user.display_id,
                    "old": user.email,
                    "new": user.email,
                    "called_off": waiting,
                },
                summary=f"email {user.display_id} kept",
            )
        raise CommandError(
            f"{user.display_id}'s mail goes to {user.email} already; nothing was changed",
            syntax_was_right=True,
        )
    _check_not_anothers(ctx, user, new_address)
    _check_room_at(ctx, new_address)
    context = {"userid": user.display_id, "old": user.email, "new": new_address}
    if _needs_consent(ctx, user, new_address):
        # The move waits for the new address's owner's yes to it: until then mail goes where
        # it went. No mail within the day: nothing waits (the user may ask again tomorrow).
        sent = confirmation.ask(ctx, new_address, confirmation.EMAIL, user=user)
        user.pending_email = new_address if sent else None
        return Section(
            "email_pending", {**context, "sent": sent}, summary=f"email {user.display_id} pending"
        )
    user.pending_email = None
    confirmation.move_mail(ctx, user, new_address)
    return Section(
        "email_changed",
        context,
        summary=f"email {user.display_id}",
    )


def _needs_consent(ctx: CommandContext, user: User, address: str) -> bool:
    """Must the owner of ``address`` say yes before ``user`` may use it? Always (where
    addresses are confirmed), unless the request came from that address itself, confirmed,
    or the user added it already: its owner confirming it for anything else is no yes to
    this user (issue 48)."""
    if not ctx.settings.confirm_addresses:
        return False
    key = address.lower()
    if ctx.sender is not None and ctx.sender.lower() == key and ctx.may_mail(key):
        return False
    added = ctx.session.get(UserAddress, key)
    return added is None or added.user_id != user.id


@command(
    "confirm",
    "confirm CODE",
    "confirm your address (the code is in the one mail we sent it)",
    secret_words=(1,),
    min_words=2,
    max_words=2,
    details="A reply to that mail does the same; the code is needed only when replying\n"
    "is not possible. It says yes to the one request that mail names, and to nothing else.",
)
def confirm(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    code = line.words[1]
    done = confirmation.confirm(ctx, code) if confirmation.CODE_PATTERN.fullmatch(code) else None
    if done is None:
        raise CommandError(
            "that code confirms nothing: the address it was for is confirmed already, or the "
            "code was mistyped",
            hint='Reply to the confirmation mail itself, or copy its "confirm" line exactly.',
            syntax_was_right=True,
        )
    return confirmed_section(done)


def confirmed_section(done: confirmation.Confirmed) -> Section:
    data = {
        "address": done.address,
        "request": done.request,
        "released": done.released,
        "moved": done.moved,
        "added": done.added,
        "refused": done.refused,
        "waiting": done.waiting,
        "days": confirmation.HELD_FOR.days,
    }
    return Section("address_confirmed", data, summary="address confirmed")


#: ``change WHAT ...``: pbmserv's forms of the account changes.
_CHANGES: dict[str, Callable[[CommandContext, CommandLine, AnyGame | None], Section]] = {
    "password": password,
    "address": email,
    "email": email,
}


def _change_secrets(words: tuple[str, ...]) -> tuple[int, ...]:
    """``change password``'s two passwords; ``change address``'s one (an address is not a
    secret, and is quoted back as ``email`` quotes it)."""
    if len(words) > 1 and words[1].lower() in ("address", "email"):
        return (3,)
    return (3, 4)


@command(
    "change",
    "change password USERID OLDPASSWORD NEWPASSWORD | change address USERID PASSWORD NEWADDRESS",
    'the forms pbmserv uses for "password" and "email"',
    secret_words=_change_secrets,
    min_words=5,
    max_words=5,
)
def change(ctx: CommandContext, line: CommandLine, game: AnyGame | None) -> Section:
    what = line.words[1].lower()
    if what not in _CHANGES:
        raise CommandError(f'"{line.words[1]}" cannot be changed: change password or address')
    return _CHANGES[what](ctx, CommandLine(line.raw, line.words[1:]), game)


@command(
    "delete",
    "delete USERID PASSWORD",
    "close your account (only with no board in play and no tournament to come)",
    secret_words=(2,),
    min_words=3,
    max_words=3,
    details="Finished boards keep your user id in their records, so it cannot be taken again;\n"
    "your address, name and password are removed, and no mail goes to you any more.",
)
def delete(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    playing = ctx.session.scalars(
        select(GameRow.id)
        .join(Seat, Seat.game_id == GameRow.id)
        .where(Seat.user_id == user.id, GameRow.status == "active")
        .order_by(GameRow.id)
    ).all()
    if playing:
        boards = ", ".join(str(board) for board in playing)
        raise CommandError(
            f"{user.display_id} still plays on board(s) {boards}: finish or resign them first",
            syntax_was_right=True,
        )
    entered = ctx.session.scalars(
        select(Tournament.name)
        .join(Entry, Entry.tournament_id == Tournament.id)
        .where(
            Entry.user_id == user.id,
            Entry.withdrawn.is_(False),
            Tournament.status.in_(("draft", "open", "running")),
        )
    ).all()
    if entered:
        raise CommandError(
            f"{user.display_id} is entered in tournament {', '.join(entered)}: withdraw first",
            syntax_was_right=True,
        )
    address = user.email
    user.disabled = True
    user.email = ""
    user.full_name = ""
    user.password_hash = "!"  # matches no password: argon2 hashes start with "$"
    board_mail.rotate_tokens(ctx.session, user)
    for watched in ctx.session.scalars(select(Observer).where(Observer.user_id == user.id)):
        ctx.session.delete(watched)
    ctx.session.execute(delete_rows(UserAddress).where(UserAddress.user_id == user.id))
    return Section(
        kind="deleted",
        data={"userid": user.display_id, "email": address},
        summary=f"delete {user.display_id}",
    )


@command(
    "add",
    "add USERID PASSWORD ADDRESS",
    "another address you write from (mail still goes to your registered one)",
    secret_words=(2,),
    min_words=4,
    max_words=4,
    details="Unless you send it from that address, its owner is asked first (one mail, to\n"
    "reply to within a week); it is added when they say yes.",
)
def add_address(ctx: CommandContext, line: CommandLine, _game: AnyGame | None) -> Section:
    user = logins.authenticate(ctx, line.words[1], line.words[2])
    address = _address(line.words[3])
    key = address.lower()
    _check_not_anothers(ctx, user, key)
    taken = ctx.session.get(UserAddress, key)
    extra = list(ctx.session.scalars(select(UserAddress).where(UserAddress.user_id == user.id)))
    waits = taken is None and key != user.email.lower() and _needs_consent(ctx, user, key)
    if taken is None and key != user.email.lower():
        if len(extra) >= MAX_ADDRESSES:
            raise CommandError(f"a user may add at most {MAX_ADDRESSES} addresses")
        if not waits:
            ctx.session.add(UserAddress(address=key, user_id=user.id))
            extra.append(UserAddress(address=key, user_id=user.id))
    data = {
        "userid": user.display_id,
        "email": user.email,
        "addresses": sorted(a.address for a in extra),
        # Taken only once its owner says yes to this request (its own code).
        "confirming": key if waits else None,
        "sent": confirmation.ask(ctx, address, confirmation.ADD, user=user) if waits else False,
    }
    return Section("address_added", data, summary=f"add address {user.userid}")
