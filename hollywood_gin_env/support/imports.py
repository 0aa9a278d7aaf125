"""Code a user names: `--import MODULE` on every program, `module:attr` references, and the names installed packages
register as entry points. The one resolver of references, for agents and networks alike.

Code is imported only because the user named it (a spec typed on a command line, in their own config or in their
own Python, `--import MODULE`), never because a file (a checkpoint, a training state, a saved match) names it.
`import_user_module` is the one import of a module a user named: its failure (not found, a syntax error, an exception
at import) is one line naming the module, never a traceback. `import_modules` is what every program does with its
`--import` list before it loads anything; it first puts the working directory on the module path, as `python -m`
does, so that `hollywood-gin evaluate --agents mine:Agent` finds a file mine.py in the folder it runs in whichever
way the program was started.

`find_reference("mymodule:Factory", ...)` is the attribute `Factory` (dotted through modules and classes:
`Outer.make`) of the module `mymodule` (dotted: `pkg.nets`). The caller says whether the module may be imported: a
reference the user typed may (`allow_import=True`); one read from a file may not, and then the module must be
imported already (`sys.modules`: by the user's own code, or by `--import MODULE`). That alone is no defence: every
module of the standard library is imported, so a file could name `os:abort` or `os:system`. So a reference resolves
only to code declared for its role (the caller's `declared`: for an agent, an agent class or a function marked
`@agent_factory`; for a network, a network class or a function marked `@network_factory`), and nothing is called,
not even a property or a module's `__getattr__`, before that check: the attribute path is read from the modules' and
classes' own namespaces. `declare(value, role)` is the mark those decorators set.

`registered(group, name)` is what an installed package registers under `name` in an entry-point group
(`[project.entry-points."GROUP"]` of its pyproject.toml): installing a package is the user's act, and registering a
name in the role's group declares it, so loading one may import the package, from a file too.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import re
import sys
import types
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any, TypeVar

from hollywood_gin_env.support.messages import escape_controls, shown_value

#: A dotted Python name ("mine", "pkg.agents"): a module's, or an attribute path's.
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
MAX_REFERENCE = 200  # characters of a reference; longer is no Python name anyone writes
_MISSING = object()
#: (role, id(value)) -> value: what `declare` marked (kept alive, so no other object ever takes its id).
_DECLARED: dict[tuple[str, int], object] = {}
_T = TypeVar("_T")
_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.MethodType)


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


def add_import_option(parser: argparse.ArgumentParser, what: str) -> None:
    """The `--import MODULE` option every program takes (repeatable, into `args.imports`); `what` says what it is for
    in this program."""
    parser.add_argument(
        "--import", dest="imports", action="append", default=[], metavar="MODULE",
        help=f"import this module first ({what}; repeatable)",
    )  # fmt: skip


def import_modules(names: Iterable[str], option: str = "--import") -> list[ModuleType]:
    """Import each module of a program's `--import` list, in order, after making the working directory importable;
    ValueError in one line naming the first that fails."""
    working_directory_importable()
    return [import_user_module(name, f"{option} {name}") for name in names]


def is_reference(text: object) -> bool:
    """True for text of the form `module:attr` (dotted Python names on both sides of one colon)."""
    if not isinstance(text, str) or len(text) > MAX_REFERENCE:
        return False
    module, sep, attr = text.partition(":")
    return bool(sep) and MODULE_NAME.fullmatch(module) is not None and MODULE_NAME.fullmatch(attr) is not None


def declare(value: _T, role: str) -> _T:
    """Mark `value` (a factory, a class) as code of `role` ("agent", "network") that a reference may name; returns
    it, so a decorator is `declare(function, role)` (on a staticmethod or a classmethod: its function)."""
    function = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    _DECLARED[(role, id(function))] = function
    return value


def is_declared(value: object, role: str) -> bool:
    """True if `declare(value, role)` marked `value` (for a classmethod: its function). Runs none of its code."""
    function = value.__func__ if isinstance(value, types.MethodType) else value
    return _DECLARED.get((role, id(function))) is function


def find_reference(text: str, what: str, allow_import: bool, declared: Callable[[Any], bool], declaration: str) -> Any:
    """The attribute `module:attr` names (module docstring), if `declared(attribute)`; `what` names it in messages
    ("agent 'mine:Agent'"), `declaration` says what is declared ("an Agent class or a function marked
    @agent_factory"). ValueError in one line otherwise, before anything the reference names is called."""
    if not is_reference(text):
        raise ValueError(f"{what}: not of the form MODULE:ATTRIBUTE (Python names, at most {MAX_REFERENCE} characters)")
    module_name, _, attr = text.partition(":")
    module = sys.modules.get(module_name)
    if module is None and not allow_import:
        raise ValueError(
            f"{what} (read from a file) names the module {module_name!r}, which is not imported: a name read from a "
            f"file never imports code; pass --import {module_name} (or import it in your own code first)"
        )
    if module is None:
        module = import_user_module(module_name, what)
    value = _attribute_path(module, attr, what, module_name)
    if not declared(value):
        raise ValueError(f"{what} names {_shown(value)}, which is not {declaration}")
    return value


def _attribute_path(module: ModuleType, attr: str, what: str, module_name: str) -> Any:
    """module.attr (dotted), each step read from a module's or a class's namespace (`inspect.getattr_static`: no
    property, descriptor or `__getattr__` runs); a staticmethod's function, a classmethod bound to its class."""
    value: Any = module
    for part in attr.split("."):
        if not isinstance(value, (ModuleType, type)):
            raise ValueError(f"{what}: {attr!r} goes through {_shown(value)}; a path goes through modules and classes")
        owner, value = value, inspect.getattr_static(value, part, _MISSING)
        if value is _MISSING:
            raise ValueError(f"{what}: the module {module_name!r} has no attribute {attr!r}")
        if isinstance(value, staticmethod):
            value = value.__func__
        elif isinstance(value, classmethod) and isinstance(value.__func__, types.FunctionType):
            value = types.MethodType(value.__func__, owner)
    return value


def _shown(value: object) -> str:
    """What a reference found, as a message names it without running its code (no repr): "the function
    mine.make", "the class mine.Agent", "the module os", else "a value of type int"."""
    if isinstance(value, ModuleType):
        return f"the module {escape_controls(str(value.__name__))}"
    if not isinstance(value, (type, *_FUNCTION_TYPES)):
        return f"a value of type {escape_controls(type(value).__name__)}"
    kind = "class" if isinstance(value, type) else "function"
    return f"the {kind} {escape_controls(f'{value.__module__}.{value.__qualname__}')}"


def registered(group: str, name: str) -> Any | None:
    """What an installed package registers under `name` in the entry-point group `group` (loaded: its module
    imported), or None if none does; ValueError in one line if it fails to load."""
    entry = _entry_points(group).get(name)
    if entry is None:
        return None
    try:
        return entry.load()
    except Exception as error:  # an installed package's import may raise anything: one line, named
        raise ValueError(
            f"entry point {name!r} of {group} ({entry.value}) fails to load: {first_line(error)}"
        ) from None


def registered_names(group: str) -> list[str]:
    """The names installed packages register in the entry-point group `group`, sorted."""
    return sorted(_entry_points(group))


def _entry_points(group: str) -> dict[str, Any]:
    """name -> entry point (importlib.metadata.EntryPoint) of a group, as the installed packages declare them."""
    from importlib.metadata import entry_points  # only when a name is no built-in: it scans every installed package

    return {entry.name: entry for entry in entry_points(group=group)}
