"""What the tests of human play share: the E1 deal and its knocker's seat, and `python play.py` in a pseudo-terminal
(pexpect)."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from hollywood_gin_env.engine.game import Game
from tests.subprocess_signals import default_sigint

ROOT = Path(__file__).resolve().parents[1]
CARD = re.compile(r"\b[A2-9TJQK][SHDC]\b")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = "\n> "
# E1 of RULES.md: the non-dealer holds 3H 4H 5H, 8C 8D 8S, JS QS KS and 9D; the upcard is 2C; the dealer holds:
BOT_CARDS = "6H 8H AD 2D 3D 7C 7D 5S 9S KH"
E1_DECK = (
    "3H 6H 4H 8H 5H AD 8C 2D 8D 3D 8S 7C JS 7D QS 5S KS 9S 9D KH 2C AS 2S 3S 4S 6S 7S TS AH 2H 7H 9H TH "
    "JH QH 4D 5D 6D TD JD QD KD AC 3C 4C 5C 6C 9C TC JC QC KC"
)
E1_SEAT = str(1 - Game(seed=0, deck=E1_DECK).dealer)  # the human is E1's non-dealer, who knocks
FIRST_WAIT = 300  # a cold numba cache compiles the kernels on the first start


def spawn(cwd: Path, *args: str, columns: int = 200):
    """play.py with plain output in a 50-line pseudo-terminal `columns` wide (pexpect: the test extra)."""
    import pexpect

    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    return pexpect.spawn(
        sys.executable,
        [str(ROOT / "play.py"), "--no-color", *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, columns),
        preexec_fn=default_sigint,
    )


def screen(child, pattern: str = PROMPT, timeout: int = 60) -> str:
    """The text shown up to the next `pattern`, without escape codes."""
    child.expect_exact(pattern, timeout=timeout)
    return ANSI.sub("", child.before).replace("\r\n", "\n")


def leave(child, expected: str) -> None:
    """Ctrl-D at the prompt: `expected` is shown, then "Bye.", and the program exits with status 0."""
    import pexpect

    child.sendeof()
    screen(child, expected)
    if "Save the match" in expected:
        child.sendeof()
    screen(child, "Bye.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
