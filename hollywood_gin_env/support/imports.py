"""Importing the code a user names: `--import MODULE` on every program, and the module of a `module:attr` spec.

Code is imported only because the user named it (a spec typed on a command line or in their own code, `--import`),
never because a file names it. `import_user_module` is the one import of a module a user named: its failure (not
found, a syntax error, an exception at import) is one line naming the module, never a traceback.
`import_modules` is what every program does with its `--import` list before it loads anything; it first puts the
working directory on the module path, as `python -m` does, so that `hollywood-gin evaluate --agents mine:Agent` finds
a file mine.py in the folder it runs in whichever way the program was started.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable
from types import ModuleType

from hollywood_gin_env.support.messages import shown_value

#: A dotted Python module name ("mine", "pkg.agents").
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")


def first_line(error: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__


def import_user_module(name: str, what: str) -> ModuleType:
    """The module `name` (a dotted name), imported; ValueError in one line starting with `what` (who named it) if it
    is not a module name or its import fails."""
    if not isinstance(name, str) or not MODULE_NAME.fullmatch(name):
        raise ValueError(f"{what}: {shown_value(name)} is not a Python module name (dotted words: mine, pkg.agents)")
    try:
        return importlib.import_module(name)
    except Exception as error:  # anything the user's module raises at import is theirs to see, in one line
        raise ValueError(f"{what}: cannot import the module {shown_value(name)}: {first_line(error)}") from None


def working_directory_importable() -> None:
    """Put the working directory at the end of the module path unless it is there already (`python -m` has it
    first; a console script has its own folder instead). At the end: a file there never hides an installed module."""
    here = os.getcwd()
    if "" not in sys.path and here not in sys.path:
        sys.path.append(here)


def import_modules(names: Iterable[str], option: str = "--import") -> list[ModuleType]:
    """Import each module of a program's `--import` list, in order, after making the working directory importable;
    ValueError in one line naming the first that fails."""
    working_directory_importable()
    return [import_user_module(name, f"{option} {name}") for name in names]
