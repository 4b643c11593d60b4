"""What the mail processes of `serve` load (issue 52: memory per child no higher than before).
The listener, processing and delivery import the server and build its command line; the
heavy libraries only some work needs stay out until that work comes: networkx (pairing a
Swiss round), the robots' search (the robots' process), dkimpy, dnspython and OpenSSL's
bindings (signing, with a DKIM key set, and `pbmserv dkim`), the web view's stack."""

from __future__ import annotations

import json
import subprocess
import sys

LOADED_BY_A_MAIL_PROCESS = """
import json, sys
from pbmserv.cli.main import build_parser
import pbmserv.runtime.worker, pbmserv.runtime.processor, pbmserv.outbound.delivery
from pbmserv.config import Settings
from pbmserv.outbound.signing import signer_of
build_parser()
assert signer_of(Settings()) is None
print(json.dumps(sorted(sys.modules)))
"""

#: Loaded only by the work that needs them.
HEAVY = ("networkx", "dkim", "dns", "cryptography", "starlette", "uvicorn", "nacl")
#: The robots' search (runtime.robot_runner loads it in the robots' process).
ROBOTS = "pbmserv.robots"


def test_a_mail_process_loads_no_library_only_some_work_needs() -> None:
    found = subprocess.run(
        [sys.executable, "-c", LOADED_BY_A_MAIL_PROCESS],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    loaded = json.loads(found.stdout)
    heavy = sorted({name.split(".")[0] for name in loaded} & set(HEAVY))
    assert heavy == []
    assert ROBOTS not in loaded


def test_the_libraries_load_when_their_work_comes() -> None:
    """The lazy imports still work: a key made and a signature written, a round paired."""
    script = """
import sys
from pbmserv.outbound.signing import DkimSigner, dns_records, new_key
key = new_key(1024)
signed = DkimSigner("s", "example.org", key).sign(b"From: a@example.org\\n\\nhi\\n")
assert signed.startswith(b"DKIM-Signature:") and dns_records("s", "example.org", key)
from pbmserv.tournaments.matching import best_matching
print(sorted(m for m in ("dkim", "cryptography", "networkx") if m in sys.modules))
"""
    found = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert found.stdout.strip() == "['cryptography', 'dkim']"
