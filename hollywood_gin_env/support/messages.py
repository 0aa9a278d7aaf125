"""What the programs print for a user: what was typed or read with its control characters escaped, and how to
install an extra.

A file name, a checkpoint path, a saved match's opponent or a host may hold escape sequences (`ESC ] 0 ; title BEL`
retitles a terminal, `ESC [ 2 J` clears it), bidirectional overrides or a lone surrogate (an undecodable file name),
which a terminal would act on or fail to print. `escape_controls` writes each such character as Python writes it in
a string literal (`\\x1b`, `\\u202e`), so it shows and does nothing; `ArgumentParser` does so for every usage error,
which argparse prints with the arguments as typed ("unrecognized arguments: ...").

A value a message echoes (a field of a file, an argument) is shown by `shown_value`: its repr, cut to about
SHOWN_CHARS characters (a 16 MB string, a 10,000-entry shape, a 5,000-digit number each read in a line), its
control characters escaped; `shown_text` shows text so, unquoted.

`install_hint` is the one command that adds an extra, for a user who installed the package or works in a checkout
alike (pip adds the extra's packages to the installed distribution, whichever way it was installed); an extra with
torch takes torch's CPU build, as the README's set-up does.
"""

from __future__ import annotations

import argparse
import math
import reprlib
import unicodedata
from typing import NoReturn

#: Unicode categories a terminal may act on: controls, format characters (bidi overrides), surrogates, line breaks.
CONTROL_CATEGORIES = ("Cc", "Cf", "Cs", "Zl", "Zp")
#: The extras that bring torch, and where its CPU build is (README, "torch, CPU build"): nothing here needs CUDA.
TORCH_EXTRAS = ("torch", "train", "test")
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
#: About how many characters of a value a message echoes: enough to recognise it.
SHOWN_CHARS = 80
#: Integers longer than this are echoed by their size (printing one costs time, and past 4,300 digits Python refuses).
SHOWN_DIGITS = 40


class _BoundedRepr(reprlib.Repr):
    """reprlib's bounded repr (each container's first entries, strings cut) that shows a long integer by its size."""

    def __init__(self) -> None:
        super().__init__()
        self.maxstring = self.maxother = self.maxlong = SHOWN_CHARS
        self.maxlevel = 3

    def repr_int(self, x: int, level: int) -> str:
        digits = math.floor(abs(x).bit_length() * math.log10(2)) + 1
        if digits > SHOWN_DIGITS:
            return f"<{'a negative' if x < 0 else 'an'} integer of about {digits:,} digits>"
        return repr(x)


_SHOWN = _BoundedRepr()


def escape_controls(text: str, keep: str = "") -> str:
    """`text` with each control character (CONTROL_CATEGORIES) but those in `keep` written as an escape (`\\x1b`)."""
    return "".join(
        ascii(ch)[1:-1] if ch not in keep and unicodedata.category(ch) in CONTROL_CATEGORIES else ch for ch in text
    )


def printable_message(text: str) -> str:
    """A message for the terminal: its line breaks and tabs kept, every other control character escaped."""
    return escape_controls(text, keep="\n\t")


def shown_value(value: object, limit: int = SHOWN_CHARS) -> str:
    """repr(value) as a message echoes it: about `limit` characters at most, control characters escaped."""
    text = _SHOWN.repr(value)
    if len(text) > limit + 20:  # reprlib bounds each part; a container of many parts is cut here
        text = text[:limit] + "..."
    return escape_controls(text)


def shown_text(text: str) -> str:
    """Text as a message echoes it, unquoted: about SHOWN_CHARS characters at most, control characters escaped."""
    cut = text[:SHOWN_CHARS] + "..." if len(text) > SHOWN_CHARS + 20 else text
    return escape_controls(cut)


def install_hint(extra: str) -> str:
    """How to install one of the package's extras: `python -m pip install "hollywood-gin[web]"`; for an extra with
    torch, its CPU build (the README's route: PyPI's Linux torch is the CUDA build, several GB of nvidia packages)."""
    command = f'python -m pip install "hollywood-gin[{extra}]"'
    return f"{command} --extra-index-url {CPU_TORCH_INDEX}" if extra in TORCH_EXTRAS else command


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser, its error messages (which quote the arguments as typed) with control characters escaped."""

    def error(self, message: str) -> NoReturn:
        """Print the usage and the escaped message to stderr and exit with status 2."""
        super().error(printable_message(message))
