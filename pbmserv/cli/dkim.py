"""`pbmserv dkim keygen | records`: a DKIM key (RSA, or Ed25519 to sign beside it), and the DNS
records an operator publishes."""

from __future__ import annotations

import argparse
import grp
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pbmserv.cli.options import add_config_options
from pbmserv.config import Settings
from pbmserv.outbound.signing import (
    DEFAULT_KEY_BITS,
    SigningError,
    new_ed25519_key,
    new_key,
    signer_of,
    signing_domain,
)

if TYPE_CHECKING:
    from pbmserv.outbound.signing.records import DnsRecord

EX_CANTCREAT = 73
ED25519_SELECTOR = "pbmserv-ed25519"


def add_dkim_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    dkim = commands.add_parser("dkim", help="DKIM signing: make a key, print the DNS records")
    add_config_options(dkim)
    actions = dkim.add_subparsers(dest="dkim_command", required=True)
    keygen = actions.add_parser(
        "keygen", help="make a private key and print the DNS records to publish"
    )
    add_config_options(keygen)
    keygen.add_argument(
        "--key-file",
        type=Path,
        help="where to write the key (default: dkim_key_file, with --ed25519 "
        "dkim_ed25519_key_file)",
    )
    keygen.add_argument(
        "--selector",
        help="the DKIM selector (default: dkim_selector, or pbmserv; with --ed25519 "
        f"dkim_ed25519_selector, or {ED25519_SELECTOR})",
    )
    keygen.add_argument("--domain", help="the signing domain (default: the server address's)")
    keygen.add_argument("--bits", type=int, default=DEFAULT_KEY_BITS, help="RSA key size")
    keygen.add_argument(
        "--ed25519",
        action="store_true",
        help="make an Ed25519 key (RFC 8463) for a second signature beside RSA's, and print "
        "its DNS record",
    )
    keygen.add_argument(
        "--group",
        dest="key_group",
        metavar="GROUP",
        help="make the key file mode 0640 and owned by this group (run as root with "
        "--group pbmserv: root:pbmserv like the config file; default: mode 0600 for the user "
        "who runs the command)",
    )
    records = actions.add_parser("records", help="print the DNS records for the configured key")
    add_config_options(records)


def run_dkim(args: argparse.Namespace, settings: Settings) -> int:
    if args.dkim_command == "keygen":
        return _keygen(args, settings)
    try:
        signer = signer_of(settings)
    except SigningError as error:
        print(f"pbmserv: {error}", file=sys.stderr)
        return 1
    if signer is None:
        print(
            "pbmserv: set dkim_selector and dkim_key_file first (pbmserv dkim keygen)",
            file=sys.stderr,
        )
        return 1
    _print_records(signer.domain, signer.records())
    return 0


def _keygen(args: argparse.Namespace, settings: Settings) -> int:
    from pbmserv.outbound.signing.records import dkim_record, dns_records

    ed25519 = bool(args.ed25519)
    prefix = "dkim_ed25519_" if ed25519 else "dkim_"
    path = args.key_file or (settings.dkim_ed25519_key_file if ed25519 else settings.dkim_key_file)
    if path is None:
        print(
            f"pbmserv: name the key file: --key-file PATH (or set {prefix}key_file)",
            file=sys.stderr,
        )
        return 2
    if ed25519:
        selector = args.selector or settings.dkim_ed25519_selector or ED25519_SELECTOR
        if selector.lower() == (settings.dkim_selector or "").lower():
            print(
                f"pbmserv: the RSA key has the selector {selector!r}: name another", file=sys.stderr
            )
            return 2
    else:
        selector = args.selector or settings.dkim_selector or "pbmserv"
    domain = (args.domain or signing_domain(settings)).lower()
    if path.exists():
        print(
            f"pbmserv: {path} exists; a new key would break the published record", file=sys.stderr
        )
        return EX_CANTCREAT
    group_id: int | None = None
    if args.key_group is not None:
        try:
            group_id = grp.getgrnam(args.key_group).gr_gid
        except KeyError:
            print(f"pbmserv: there is no group {args.key_group!r}", file=sys.stderr)
            return 2
    key = new_ed25519_key() if ed25519 else new_key(args.bits)
    try:
        _write_key(path, key, group_id)
    except OSError as error:
        print(f"pbmserv: cannot write {path}: {error.strerror}", file=sys.stderr)
        return EX_CANTCREAT
    if group_id is None:
        mode = "mode 0600, for this user alone; the server's user must read it"
    else:
        mode = f"mode 0640, group {args.key_group}: the server's user must be in the group"
    if ed25519:
        print(f"Wrote an Ed25519 key to {path} ({mode}).")
        print()
        # The RSA key's record, SPF and DMARC stay as published (`pbmserv dkim records`
        # prints them all once the key is set).
        _print_records(domain, [dkim_record(selector, domain, key)])
    else:
        print(f"Wrote a {args.bits}-bit RSA key to {path} ({mode}).")
        print()
        _print_records(domain, dns_records(selector, domain, key))
    print()
    variables = f"PBMSERV_{prefix.upper()}SELECTOR, PBMSERV_{prefix.upper()}KEY_FILE"
    print(f"Then set, in pbmserv.toml (or {variables}):")
    print(f'  {prefix}selector = "{selector}"')
    print(f'  {prefix}key_file = "{path}"')
    if args.domain:
        print(f'  dkim_domain = "{domain}"')
    if ed25519:
        print("Mail then carries two signatures, RSA's and Ed25519's (the RSA key stays).")
    return 0


def _write_key(path: Path, key: bytes, group_id: int | None) -> None:
    """Write the key, readable by no one else from the first byte (it is the server's signing
    secret); with a group, that group may read it too, given before a byte is written."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if group_id is not None:
            os.fchown(descriptor, -1, group_id)
            os.fchmod(descriptor, 0o640)
    except OSError:
        os.close(descriptor)
        path.unlink(missing_ok=True)  # an empty file would block the next try (O_EXCL)
        raise
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(key)


def _print_records(domain: str, records: list[DnsRecord]) -> None:
    print(
        f"Publish {'this DNS record' if len(records) == 1 else 'these DNS records'} for {domain}:"
    )
    for record in records:
        print()
        print(f"; {record.why}")
        print(record.zone_line())
