"""Code and docs name only files the repository has: every relative path a Python file or a Markdown document
names in backquotes or in a Markdown link, and every `NAME.md` named anywhere, is a file (or folder) of the checkout.

A path resolves against the naming file's folder, the repository root, the package (`agents/_features.py`) or
docs/, or as the tail of a file of the repository (`search.py`). Not checked: bare file names other than `.md` and
`.py` (`last.pt` is a file a program writes, not one of the repository), names with a placeholder segment
(`RUN_DIR/config.toml`), paths under runs/ (a user's own training runs), the training notebook
docs/TRAINING-ROUNDS.md, which only the history holds (docs/RESEARCH.md shows it with `git show`), and this file, whose
examples name missing paths.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEARCHED = (ROOT / "hollywood_gin_env", ROOT, ROOT / "docs")  # where a path may be written from, besides its file
EXTENSIONS = r"(?:py|md|toml|pt|png|txt|js|css|html|ya?ml|cfg|sh)"
SKIPPED_PREFIXES = ("runs/",)
SKIPPED_NAMES = ("TRAINING-ROUNDS.md",)
SKIPPED_FILES = ("tests/test_references.py",)  # this file names missing paths on purpose, to test the finder
_QUOTED = re.compile(r"`([\w.\-/]+)`")
_MARKDOWN_NAME = re.compile(r"(?<![\w/.:-])([\w.\-/]*[\w-]\.md)\b")
_LINK = re.compile(r"\]\(([^)\s#]+)")


def repository_files(root: Path = ROOT) -> list[str]:
    """The repository's files as git sees them (tracked, or new and not ignored), relative, with / separators."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    return [name for name in listed if (root / name).is_file()]


def looks_like_path(token: str, top_folders: set[str]) -> bool:
    """True for a token that names a repository path (see the module docstring for what is left out)."""
    if token.startswith(("/", "~")) or (token.startswith(".") and not token.startswith(("./", "../"))):
        return False
    if any(re.fullmatch(r"[A-Z_]+", part) for part in token.split("/")):
        return False
    if "/" not in token.rstrip("/"):
        return bool(re.fullmatch(r"[\w.\-]+\.(?:md|py)", token))
    return bool(re.fullmatch(rf"[\w.\-/]+\.{EXTENSIONS}", token)) or token.split("/")[0] in top_folders


def named_paths(text: str, markdown: bool, top_folders: set[str]) -> set[str]:
    """The paths a file's text names: backquoted paths, *.md names, and (in Markdown) link targets."""
    tokens = {t for t in _QUOTED.findall(text) if looks_like_path(t, top_folders)} | set(_MARKDOWN_NAME.findall(text))
    if markdown:
        tokens |= {t for t in _LINK.findall(text) if not re.match(r"[a-z]+:", t)}
    return {t for t in tokens if not t.startswith(SKIPPED_PREFIXES) and not t.endswith(SKIPPED_NAMES)}


def resolves(token: str, source: Path, root: Path, files: set[str]) -> bool:
    """True if the token names a file or folder of the repository, read from `source`."""
    path = token.rstrip("/")
    for base in (source.parent, *SEARCHED):
        candidate = (base / path).resolve()
        if candidate.is_relative_to(root) and candidate.relative_to(root).as_posix() in files:
            return True
        if candidate.is_dir() and any(f.startswith(candidate.relative_to(root).as_posix() + "/") for f in files):
            return True
    return any(f == path or f.endswith("/" + path) or f.startswith(path + "/") for f in files)


def stale_references(root: Path = ROOT) -> list[str]:
    """'FILE: PATH' for every path a .py or .md file of the repository names that the repository does not have."""
    files = repository_files(root)
    present, top_folders = set(files), {f.split("/")[0] for f in files if "/" in f} | {"shared"}
    stale = []
    for name in files:
        if not name.endswith((".py", ".md")) or name.startswith(SKIPPED_PREFIXES) or name.endswith(SKIPPED_NAMES):
            continue
        if name in SKIPPED_FILES:
            continue
        source = root / name
        text = source.read_text(encoding="utf-8")
        for token in sorted(named_paths(text, name.endswith(".md"), top_folders)):
            if not resolves(token, source, root.resolve(), present):
                stale.append(f"{name}: {token}")
    return stale


def test_reference_finder_flags_missing_files_only():
    """A backquoted path, a link and a bare *.md name that do not exist are flagged; existing ones are not."""
    text = (
        "See `docs/RULES.md`, `hollywood_gin_env/nowhere.py`, [notes](shared/RULES.md), DESIGN.md and "
        "`agents/_features.py`; `last.pt` and `RUN_DIR/config.toml` are not repository files; `runs/x/policy.pt`."
    )
    files = set(repository_files())
    top = {f.split("/")[0] for f in files if "/" in f} | {"shared"}
    tokens = named_paths(text, markdown=True, top_folders=top)
    assert tokens == {
        "docs/RULES.md",
        "hollywood_gin_env/nowhere.py",
        "shared/RULES.md",
        "DESIGN.md",
        "agents/_features.py",
    }
    missing = {t for t in tokens if not resolves(t, ROOT / "README.md", ROOT, files)}
    assert missing == {"hollywood_gin_env/nowhere.py", "shared/RULES.md", "DESIGN.md"}


def test_code_and_docs_name_only_files_the_repository_has():
    """No Python file or document points at a file the repository does not have (DESIGN.md, shared/, ...)."""
    assert len(repository_files()) > 50, "git lists the checkout's files"
    assert stale_references() == []
