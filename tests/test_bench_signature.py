"""The node-count signature of ``c4engine bench``, pinned.

``bench`` searches fixed positions to a fixed depth, so its node total changes
when, and only when, the search changes: a commit that claims to change nothing
is checked by one number.  The README and docs/figures.md state the number; this test holds the
command to it, so a change of the search cannot slip through unnoticed, and a
deliberate one updates them and :data:`BENCH_SIGNATURE` together.
"""

from __future__ import annotations

import re
import subprocess
import sys

BENCH_SIGNATURE = 2957918
UPDATE = ("the search changed the `c4engine bench` signature: if that is intended, update "
          "BENCH_SIGNATURE in tests/test_bench_signature.py and the signature stated in README.md and "
          "docs/figures.md to the new number, on purpose, in the commit that changes the search")


def nodes_searched(output: str) -> int:
    found = re.findall(r"^Nodes searched *: (\d+)$", output, re.MULTILINE)
    assert len(found) == 1, output
    return int(found[0])


def test_bench_command_prints_the_documented_signature() -> None:
    done = subprocess.run([sys.executable, "-m", "c4engine", "bench"], capture_output=True, text=True,
                          timeout=300, check=True)
    assert nodes_searched(done.stdout) == BENCH_SIGNATURE, UPDATE


def test_protocol_bench_without_the_book_gives_the_same_signature() -> None:
    """protocol.md: the protocol's ``bench`` searches with the engine's options; with the
    defaults and ``OwnBook false`` it is ``c4engine bench``."""
    done = subprocess.run([sys.executable, "-m", "c4engine"], input="setoption name OwnBook value false\nbench\n",
                          capture_output=True, text=True, timeout=300, check=True)
    assert nodes_searched(done.stdout) == BENCH_SIGNATURE, UPDATE
