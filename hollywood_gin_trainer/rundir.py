"""The run directory: one run at a time, no finished run overwritten by accident, no leftovers of its own.

- `RunLock(run_dir)`: filelock's lock on `run_dir/.run.lock`, taken without waiting (`with RunLock(d): ...`, or
  `acquire()` / `release()`). It is an operating-system lock (flock), so the system drops it when its process ends,
  however it ends: a run killed with SIGKILL leaves nothing to clean. A second process is refused in one line.
- `make_run_dir(run_dir)`: creates the directory; a file standing at that path is refused in one line.
- `check_run_dir(run_dir, new_run, overwrite)`: everything a run's directory is refused for, checked without touching
  it (nothing created, nothing removed), so a program can refuse it before it builds the run.
- `check_fresh(run_dir, overwrite)`: a new run refuses a directory that holds a run (RUN_FILES) unless `overwrite`.
- `clean_own_temps(run_dir)`: removes the temporary files that killed atomic writes of the run's own files left in
  run_dir itself (not in its subfolders, never another file); call it holding the lock, after the arguments are
  checked.

Every refusal is a `RunDirError` (a ValueError) with a one-line message naming the directory and what to do.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from filelock import FileLock, Timeout

from hollywood_gin_env.support.atomic import check_write_target, is_temp_name
from hollywood_gin_env.support.messages import escape_controls

LOCK_NAME = ".run.lock"
LAST, BEST, POLICY, CONFIG = "last.safetensors", "best.safetensors", "policy.safetensors", "config.toml"
#: Files that mean a directory holds a run (written by main.py).
RUN_FILES = (LAST, BEST, POLICY, CONFIG)


class RunDirError(ValueError):
    """A run directory cannot be used as asked; the message says why and what to do."""


class RunLock:
    """The lock of one run directory (module docstring); a context manager."""

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self._lock = FileLock(self.path, timeout=0, thread_local=False)

    def acquire(self) -> RunLock:
        """Take the lock (creating the directory if needed); RunDirError if another process holds it."""
        make_run_dir(self.run_dir)
        try:
            self._lock.acquire()
        except Timeout:
            raise RunDirError(
                f"{_shown(self.run_dir)} is in use by another run (it holds {_shown(self.path)}); wait for that run "
                "to end, or use another --run-dir"
            ) from None
        except OSError as error:
            raise RunDirError(f"cannot lock {_shown(self.path)}: {error.strerror or error}") from None
        return self

    def release(self) -> None:
        """Let the lock go (another run may take the directory)."""
        self._lock.release()

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def make_run_dir(run_dir: str | os.PathLike) -> None:
    """Create run_dir (and its parents) if needed; RunDirError if a file stands there or it cannot be made."""
    try:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _not_a_directory(run_dir) from None
    except OSError as error:
        raise RunDirError(f"cannot create the run directory {_shown(run_dir)}: {error.strerror or error}") from None


def check_run_dir(run_dir: str | os.PathLike, new_run: bool, overwrite: bool) -> list[str]:
    """The run files a new run's `overwrite` will remove from run_dir; RunDirError (WriteTargetError) if a file stands
    at run_dir, a run file there is no regular file (refused now, not at the first save hours in), or a new run finds
    a run there without `overwrite`. Touches nothing: a directory not there yet stays so."""
    if os.path.lexists(run_dir) and not os.path.isdir(run_dir):
        raise _not_a_directory(run_dir)
    if not os.path.isdir(run_dir):
        return []
    for name in RUN_FILES:
        check_write_target(Path(run_dir) / name)
    return check_fresh(run_dir, overwrite) if new_run else []


def check_fresh(run_dir: str | os.PathLike, overwrite: bool) -> list[str]:
    """The run files already in run_dir (none for a new or empty directory); RunDirError if there are any and
    not overwrite. Nothing is deleted here."""
    found = [name for name in RUN_FILES if os.path.lexists(Path(run_dir) / name)]
    if found and not overwrite:
        raise RunDirError(
            f"{_shown(run_dir)} already holds a run ({', '.join(found)}): continue it with --resume "
            f"{_shown(run_dir)}, choose another --run-dir, or pass --overwrite to start a new run there"
        )
    return found


def clean_own_temps(run_dir: str | os.PathLike) -> list[Path]:
    """Remove what killed atomic writes of RUN_FILES left in run_dir (module docstring); the paths removed."""
    removed = []
    for entry in os.scandir(run_dir):
        own = any(entry.name.startswith(f".{name}.") for name in RUN_FILES)
        if own and is_temp_name(entry.name) and entry.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
    return removed


def _not_a_directory(run_dir: str | os.PathLike) -> RunDirError:
    return RunDirError(
        f"run directory {_shown(run_dir)} is not a directory (a file stands at that path); choose another --run-dir"
    )


def _shown(path: str | os.PathLike) -> str:
    return escape_controls(os.fspath(path))
