"""The import rules of the package and the trainer: the contracts of pyproject.toml's [tool.importlinter] hold (the
layers, one folder each, import only downwards; the library never imports the trainer; the rules, the display and
the engine import neither gymnasium nor torch; no cycle among a package's modules; private modules stay inside their
package), and no module reaches into another's private names (what import-linter does not check).

The private-name check reads every `import` and `from ... import` with `ast`, at module level and inside functions
alike, relative imports resolved, and every `m._x` on an imported project module.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("hollywood_gin_env", "hollywood_gin_trainer", "agents")  # the library, the trainer, the root alias
SCRIPTS = ("train.py", "evaluate.py", "play.py", "scripts", "benchmarks")  # programs: they import, nothing imports them


def project_modules(root: Path, packages: tuple[str, ...] = PACKAGES) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package's __init__) of every module of the packages under root."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def imported_names(path: Path, name: str, is_package: bool) -> list[tuple[str, str | None]]:
    """(module, imported name or None) of every import statement of a file, relative ones resolved."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found += [(base, alias.name) for alias in node.names]
    return found


def _target(module: str, name: str | None, known: dict) -> str | None:
    """The project module an import reaches: module.name if that is one, else the longest known prefix."""
    target = f"{module}.{name}" if name and f"{module}.{name}" in known else module
    while target and target not in known:
        target = target.rpartition(".")[0]
    return target or None


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_reaches(path: Path, name: str, is_package: bool, known: dict) -> list[str]:
    """Where a file uses another module's private name: `from m import _x` of a non-module `_x`, a private module
    imported from outside the package that holds it, or `m._x` on an imported project module."""
    problems = []
    aliases = {}  # local name -> project module, for attribute uses
    for module, item in imported_names(path, name, is_package):
        target = _target(module, item, known)
        if target is None:
            continue
        full = f"{module}.{item}" if item and f"{module}.{item}" in known else module
        parts = full.split(".")
        private = [k for k, part in enumerate(parts) if _is_private(part)]
        if private and not (name + ".").startswith(".".join(parts[: private[0]]) + "."):
            problems.append(f"{name} imports the private module {full}")
        if item and f"{module}.{item}" not in known and _is_private(item) and target != name:
            problems.append(f"{name} imports the private name {item} of {module}")
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if f"{node.module}.{alias.name}" in known:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in known and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _is_private(node.attr):
            module = aliases.get(node.value.id)
            if module is not None and module != name:
                problems.append(f"{name} uses {module}.{node.attr}")
    return problems


def test_private_reaches_are_found(tmp_path):
    """The private-name check flags each way of reaching in, and passes a package's own private module."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_inner.py").write_text("_secret = 1\n")
    (package / "core.py").write_text("_hidden = 2\n")
    (package / "user.py").write_text(
        "from pkg import _inner\nfrom pkg.core import _hidden\nfrom pkg import core as c\nx = c._hidden\n"
    )
    (tmp_path / "outside.py").write_text("from pkg._inner import _secret\n")
    known = project_modules(tmp_path, ("pkg",))
    assert private_reaches(package / "user.py", "pkg.user", False, known) == [
        "pkg.user imports the private name _hidden of pkg.core",
        "pkg.user uses pkg.core._hidden",
    ]
    assert private_reaches(tmp_path / "outside.py", "outside", False, known) == [
        "outside imports the private module pkg._inner",
        "outside imports the private name _secret of pkg._inner",
    ]


def test_no_module_reaches_into_another_modules_private_names():
    """The library, the trainer and the programs use only public names of the project's modules."""
    known = project_modules(ROOT)
    files = [(name, path, is_package) for name, (path, is_package) in known.items()]
    for entry in SCRIPTS:
        for path in [ROOT / entry] if entry.endswith(".py") else sorted((ROOT / entry).glob("*.py")):
            files.append((path.relative_to(ROOT).with_suffix("").as_posix(), path, False))
    problems = [p for name, path, is_package in files for p in private_reaches(path, name, is_package, known)]
    assert problems == []


def test_the_import_contracts_hold():
    """`lint-imports` (CI runs it too) keeps every contract of pyproject.toml: nothing imports a layer above it."""
    command = shutil.which("lint-imports")
    assert command, "lint-imports is missing: it comes with the [test] extra (import-linter)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}  # this tree
    done = subprocess.run([command, "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "5 kept, 0 broken" in done.stdout


def test_no_test_module_imports_another():
    """Shared test helpers live in conftest.py or a helper module (tests/play_helpers.py, ...), never in a test module
    that another imports: each test module stands alone."""
    reaches = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for module, item in imported_names(path, f"tests.{path.stem}", False):
            target = f"{module}.{item}" if module == "tests" and item else module
            if target.startswith("tests.test_") and target != f"tests.{path.stem}":
                reaches.append(f"{path.name} imports {target}")
    assert reaches == []
