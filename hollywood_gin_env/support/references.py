"""Code a user names by reference: `module:attr` and the names installed packages register as entry points.

`find_reference("mymodule:Factory", ...)` is the attribute `Factory` (dotted: `Outer.make`) of the module `mymodule`
(dotted: `pkg.nets`). Whether the module may be imported is the caller's to say: a reference the user typed may
import it (`allow_import=True`); one read from a file (a checkpoint, a training state, a saved match) may not, so a
file never makes the program run code it names, and the module must be imported already (`sys.modules`: by the
user's own code, or by `--import MODULE`); the error says so. `registered(group, name)` is what an installed package
registers under `name` in an entry-point group (`[project.entry-points."GROUP"]` of its pyproject.toml): installing
a package is the user's act, so loading one of its entry points may import it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import reprlib
import sys
from typing import Any

_DOTTED = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
#: `module:attr`, each a dotted Python name
REFERENCE = rf"({_DOTTED}):({_DOTTED})"
MAX_REFERENCE = 200  # characters of a reference; longer is no Python name anyone writes


class ReferenceLookupError(ValueError):
    """A reference that names nothing this process may use; the one-line message says what to do."""


def is_reference(text: object) -> bool:
    """True for text of the form `module:attr` (dotted Python names)."""
    return isinstance(text, str) and len(text) <= MAX_REFERENCE and re.fullmatch(REFERENCE, text) is not None


def find_reference(text: str, allow_import: bool, what: str) -> Any:
    """The attribute `module:attr` names; with allow_import False its module must be imported already (module
    docstring). `what` names the thing in messages ("network", "agent"). ReferenceLookupError in one line otherwise."""
    if not is_reference(text):
        raise ReferenceLookupError(f"{what} {reprlib.repr(text)} is not of the form MODULE:ATTRIBUTE (Python names)")
    module_name, _, attr = text.partition(":")
    module = sys.modules.get(module_name)
    if module is None and not allow_import:
        raise ReferenceLookupError(
            f"{what} {text!r}: module {module_name!r} is not imported, and a name read from a file never imports "
            f"code; pass --import {module_name} (or import it in your own code first)"
        )
    if module is None:
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ReferenceLookupError(f"{what} {text!r}: cannot import {module_name!r} ({error})") from None
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ReferenceLookupError(f"{what} {text!r}: {module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value


def registered(group: str, name: str) -> Any | None:
    """What an installed package registers under `name` in the entry-point group `group` (loaded: its module
    imported), or None if none does."""
    entry = _entry_points(group).get(name)
    if entry is None:
        return None
    try:
        return entry.load()
    except Exception as error:  # noqa: BLE001 (an installed package's import may raise anything: one line, named)
        raise ReferenceLookupError(f"entry point {name!r} of {group} ({entry.value}) fails to load: {error}") from None


def registered_names(group: str) -> list[str]:
    """The names installed packages register in the entry-point group `group`, sorted."""
    return sorted(_entry_points(group))


def _entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """name -> entry point of a group, as the installed packages declare them now."""
    return {entry.name: entry for entry in importlib.metadata.entry_points(group=group)}
