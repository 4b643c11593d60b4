"""The spool: outgoing mail written as maildir-style ``.eml`` files (tmp, then renamed into new),
the embedded default when there is no relay; the files are the server's alone (0600)."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

from pbmserv.outbound.delivery_items import DELIVERED, Claimed, Outcome, describe_error
from pbmserv.private_files import open_private_for_writing, private_folder

log = logging.getLogger("pbmserv.delivery")


# --- the spool -----------------------------------------------------------------------------------


def spool_file_name(item_id: int, message_id: str) -> str:
    digest = hashlib.sha1(message_id.encode()).hexdigest()[:10]
    return f"{item_id:010d}-{digest}.eml"


def write_spool(spool: Path, item: Claimed) -> Path:
    """Write one message maildir-style (tmp, then rename into new): never half a file."""
    private_folder(spool / "tmp")
    private_folder(spool / "new")
    name = spool_file_name(item.id, item.message_id)
    temporary = spool / "tmp" / name
    with open(open_private_for_writing(temporary), "wb") as handle:
        handle.write(item.raw)
        handle.flush()
        os.fsync(handle.fileno())
    final = spool / "new" / name
    os.replace(temporary, final)
    return final


def spool_one(spool: Path, item: Claimed) -> Outcome:
    try:
        write_spool(spool, item)
    except OSError as error:  # a full disk or a permission: try again later
        return Outcome(describe_error(error))
    except Exception as error:  # anything else is this message's own fault
        return Outcome(describe_error(error), permanent=True)
    return DELIVERED
