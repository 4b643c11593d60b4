"""The issue's Chameleon figures in one run: apply cost at 7x7 and 26x26, then mail throughput
(bench/mail_throughput.py).

Run ``python bench/games/chameleon.py``; it prints one line for each.
"""

from __future__ import annotations

import runpy
from pathlib import Path

HERE = Path(__file__).resolve().parent

if __name__ == "__main__":
    runpy.run_path(str(HERE / "chameleon_apply.py"), run_name="__main__")
    runpy.run_path(str(HERE.parent / "mail_throughput.py"), run_name="__main__")
