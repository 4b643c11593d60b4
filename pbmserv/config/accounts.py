"""Accounts and the limits on strangers: confirmed addresses, password guessing, and what one
message may cause."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AccountSettings:
    # Mail goes only to addresses whose owners confirmed them (one confirmation mail, at most
    # one a day; a message from a new address waits for it). false: a private server where
    # everyone is trusted (all addresses count as confirmed).
    confirm_addresses: bool = True
    # User ids one address may hold (signup, email).
    max_accounts_per_address: int = 3
    # Wrong passwords allowed in a window, per user id and per sending address; above them a
    # login is refused without even checking, and the owner is told once a day.
    failed_logins_per_user: int = 10
    failed_logins_per_sender: int = 30
    failed_login_window_minutes: float = 15.0
    max_commands_per_message: int = 30
    # Mails one incoming message may cause to other people (board mail, notices; its own
    # reply and tournament news apart); a command that would go over is refused.
    max_mails_per_message: int = 25
    # Users one ``message`` may name, and observers one board may have.
    max_message_recipients: int = 10
    max_observers_per_board: int = 10
    # Mails carrying other users' text (chat, message, challenge) one address gets a day (UTC).
    text_mails_per_recipient_per_day: int = 20
