"""The keys behind the signatures: the settings that ask for Ed25519 beside RSA (and refuse it
alone, half set, or under RSA's selector), the signer they make (each key file read once, again
when it changes, refused when it holds the wrong kind of key), and `pbmserv dkim keygen
--ed25519` and `dkim records`, which print what to publish."""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import ed25519

from pbmserv.cli.dkim import run_dkim
from pbmserv.cli.main import build_parser
from pbmserv.config import ConfigError, Settings, load_settings
from pbmserv.outbound.signing import (
    SigningError,
    new_ed25519_key,
    new_key,
    public_key_record,
    signer_of,
)
from pbmserv.outbound.signing.keys import private_key
from tests.outbound.signing_checks import DOMAIN, split_signatures, verified

SERVER = f"pbmserv@{DOMAIN}"
BOTH = {
    "PBMSERV_DKIM_SELECTOR": "pbmserv",
    "PBMSERV_DKIM_KEY_FILE": "/etc/pbmserv/dkim.pem",
    "PBMSERV_DKIM_ED25519_SELECTOR": "pbmserv-ed25519",
    "PBMSERV_DKIM_ED25519_KEY_FILE": "/etc/pbmserv/dkim-ed25519.pem",
}
MAIL = b"From: pbmserv@games.example.org\nTo: bob@example.org\nSubject: board 1\n\nMove 2.\n"


def test_the_environment_names_the_ed25519_selector_and_key() -> None:
    settings = load_settings(environ=BOTH)
    assert settings.dkim_ed25519_selector == "pbmserv-ed25519"
    assert settings.dkim_ed25519_key_file == Path("/etc/pbmserv/dkim-ed25519.pem")


@pytest.mark.parametrize(
    ("left_out", "changed", "said"),
    [
        ("PBMSERV_DKIM_ED25519_KEY_FILE", {}, "both"),
        ("PBMSERV_DKIM_ED25519_SELECTOR", {}, "both"),
        ("PBMSERV_DKIM_SELECTOR", {}, "beside RSA"),
        ("PBMSERV_DKIM_KEY_FILE", {}, "beside RSA"),
        (None, {"PBMSERV_DKIM_ED25519_SELECTOR": "PBMSERV"}, "differ"),
    ],
)
def test_ed25519_signs_beside_rsa_under_a_selector_of_its_own(
    left_out: str | None, changed: dict[str, str], said: str
) -> None:
    environ = {name: value for name, value in BOTH.items() if name != left_out} | changed
    with pytest.raises(ConfigError, match=said):
        load_settings(environ=environ)


def keyed(tmp_path: Path, rsa_pem: bytes, ed25519_pem: bytes | None) -> Settings:
    (tmp_path / "rsa.pem").write_bytes(rsa_pem)
    changes: dict[str, object] = {}
    if ed25519_pem is not None:
        (tmp_path / "ed25519.pem").write_bytes(ed25519_pem)
        changes = {
            "dkim_ed25519_selector": "pbmserv-ed25519",
            "dkim_ed25519_key_file": tmp_path / "ed25519.pem",
        }
    return Settings(
        address=SERVER, dkim_selector="pbmserv", dkim_key_file=tmp_path / "rsa.pem", **changes
    )  # type: ignore[arg-type]


def test_the_signer_signs_with_both_keys_rsa_on_top(tmp_path: Path) -> None:
    keys = {"pbmserv": new_key(), "pbmserv-ed25519": new_ed25519_key()}
    signer = signer_of(keyed(tmp_path, keys["pbmserv"], keys["pbmserv-ed25519"]))
    assert signer is not None
    signed = signer.sign(MAIL)
    [first, second], _ = split_signatures(signed)
    assert b"a=rsa-sha256;" in first and b"s=pbmserv;" in first
    assert b"a=ed25519-sha256;" in second and b"s=pbmserv-ed25519;" in second
    assert verified(signed, keys) == [True, True]
    # RSA alone where no Ed25519 key is set.
    (tmp_path / "alone").mkdir()
    alone = signer_of(keyed(tmp_path / "alone", keys["pbmserv"], None))
    assert alone is not None and len(split_signatures(alone.sign(MAIL))[0]) == 1


def test_a_key_file_holding_the_other_kind_of_key_keeps_mail_waiting(tmp_path: Path) -> None:
    rsa_pem = new_key(1024)
    with pytest.raises(SigningError, match="not an Ed25519 key"):
        signer_of(keyed(tmp_path, rsa_pem, rsa_pem))
    with pytest.raises(SigningError, match="not an RSA key"):
        signer_of(keyed(tmp_path, new_ed25519_key(), None))
    settings = keyed(tmp_path, rsa_pem, new_ed25519_key())
    (tmp_path / "ed25519.pem").unlink()
    with pytest.raises(SigningError, match="cannot read the DKIM key"):
        signer_of(settings)


def test_a_key_file_is_read_again_once_it_changes(tmp_path: Path) -> None:
    settings = keyed(tmp_path, new_key(1024), new_ed25519_key())
    first = signer_of(settings)
    assert first is not None and signer_of(settings) == first
    new = new_ed25519_key()
    path = tmp_path / "ed25519.pem"
    path.write_bytes(new)
    stamp = path.stat().st_mtime_ns + 1_000_000_000
    os.utime(path, ns=(stamp, stamp))  # a new key, however quickly it came
    second = signer_of(settings)
    assert second is not None and second.ed25519_key_pem == new
    # Each key is loaded as OpenSSL's object once, whoever asks.
    assert private_key(new) is private_key(new)


def dkim_command(settings: Settings, *args: str) -> int:
    return run_dkim(build_parser().parse_args(["dkim", *args]), settings)


def zone_records(printed: str) -> dict[str, str]:
    """The printed zone lines, name to value (the quoted strings joined)."""
    found = {}
    for line in printed.splitlines():
        if " 3600 IN TXT " in line:
            name, strings = line.split(" 3600 IN TXT ", 1)
            found[name.rstrip(".")] = "".join(strings.split('"')[1::2])
    return found


def test_keygen_makes_an_ed25519_key_and_prints_its_record(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rsa_file, ed25519_file = tmp_path / "dkim.pem", tmp_path / "dkim-ed25519.pem"
    settings = Settings(address=SERVER)
    assert dkim_command(settings, "keygen", "--key-file", str(rsa_file), "--bits", "1024") == 0
    capsys.readouterr()
    made = dkim_command(settings, "keygen", "--ed25519", "--key-file", str(ed25519_file))
    assert made == 0
    printed = capsys.readouterr().out
    assert ed25519_file.stat().st_mode & 0o777 == 0o600
    key = private_key(ed25519_file.read_bytes())
    assert isinstance(key, ed25519.Ed25519PrivateKey)
    # The one new record: k=ed25519 and the 32 raw bytes of the public key (RFC 8463).
    records = zone_records(printed)
    assert list(records) == [f"pbmserv-ed25519._domainkey.{DOMAIN}"]
    [value] = records.values()
    assert value == public_key_record(ed25519_file.read_bytes())
    assert re.fullmatch(r"v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=", value)
    assert len(base64.b64decode(value.rpartition("p=")[2])) == 32
    assert '  dkim_ed25519_selector = "pbmserv-ed25519"' in printed
    assert f'  dkim_ed25519_key_file = "{ed25519_file}"' in printed
    # Configured as it says, `dkim records` prints both keys' records, then SPF and DMARC.
    both = Settings(
        address=SERVER,
        dkim_selector="pbmserv",
        dkim_key_file=rsa_file,
        dkim_ed25519_selector="pbmserv-ed25519",
        dkim_ed25519_key_file=ed25519_file,
    )
    assert dkim_command(both, "records") == 0
    records = zone_records(capsys.readouterr().out)
    assert list(records) == [
        f"pbmserv._domainkey.{DOMAIN}",
        f"pbmserv-ed25519._domainkey.{DOMAIN}",
        DOMAIN,
        f"_dmarc.{DOMAIN}",
    ]
    assert records[f"pbmserv._domainkey.{DOMAIN}"] == public_key_record(rsa_file.read_bytes())
    assert records[f"pbmserv-ed25519._domainkey.{DOMAIN}"] == value
    signer = signer_of(both)
    assert signer is not None
    keys = {"pbmserv": rsa_file.read_bytes(), "pbmserv-ed25519": ed25519_file.read_bytes()}
    assert verified(signer.sign(MAIL), keys) == [True, True]


def test_keygen_never_gives_ed25519_the_rsa_keys_selector(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = Settings(address=SERVER, dkim_selector="pbmserv")
    path = tmp_path / "dkim-ed25519.pem"
    args = ("keygen", "--ed25519", "--selector", "pbmserv", "--key-file", str(path))
    assert dkim_command(settings, *args) == 2
    assert "name another" in capsys.readouterr().err and not path.exists()
