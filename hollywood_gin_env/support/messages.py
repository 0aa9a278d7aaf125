"""What the programs print for a user: what was typed or read with its control characters escaped, and how to
install an extra.

A file name, a checkpoint path, a saved match's opponent or a host may hold escape sequences (`ESC ] 0 ; title BEL`
retitles a terminal, `ESC [ 2 J` clears it), bidirectional overrides or a lone surrogate (an undecodable file name),
which a terminal would act on or fail to print. `escape_controls` writes each such character as Python writes it in
a string literal (`\\x1b`, `\\u202e`), so it shows and does nothing; `ArgumentParser` does so for every usage error,
which argparse prints with the arguments as typed ("unrecognized arguments: ...").

`install_hint` is the one command that adds an extra, for a user who installed the package or works in a checkout
alike (pip adds the extra's packages to the installed distribution, whichever way it was installed).
"""

from __future__ import annotations

import argparse
import reprlib
import unicodedata
from typing import NoReturn

#: Unicode categories a terminal may act on: controls, format characters (bidi overrides), surrogates, line breaks.
CONTROL_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
_SHORT_REPR = reprlib.Repr()
_SHORT_REPR.maxlevel = 3  # nested lists cost maxlist ** maxlevel items at most


def escape_controls(text: str, keep: str = "") -> str:
    """`text` with each control character (CONTROL_CATEGORIES) but those in `keep` written as an escape (`\\x1b`)."""
    return "".join(
        ascii(ch)[1:-1] if ch not in keep and unicodedata.category(ch) in CONTROL_CATEGORIES else ch for ch in text
    )


def shown_value(value: object, limit: int = 80) -> str:
    """A value from a file as a message shows it: its repr, cut short (reprlib, then to `limit` characters), whatever
    its size or depth, control characters escaped."""
    text = _SHORT_REPR.repr(value)
    return escape_controls(text if len(text) <= limit else text[: limit - 3] + "...")


def printable_message(text: str) -> str:
    """A message for the terminal: its line breaks and tabs kept, every other control character escaped."""
    return escape_controls(text, keep="\n\t")


def install_hint(extra: str) -> str:
    """How to install one of the package's extras: `python -m pip install "hollywood-gin[web]"`."""
    return f'python -m pip install "hollywood-gin[{extra}]"'


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, its error messages (which quote the arguments as typed) with control characters escaped."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and the escaped message to stderr and exit with status 2."""
        super().error(printable_message(message))
