"""The run directory's safety: one run at a time, no finished run overwritten by accident, no leftovers.

- `RunLock(run_dir)`: a lock file (`.run.lock`, JSON with the pid, the host and the process's start time) created
  with O_EXCL while a run uses the directory, removed when it ends (`with RunLock(d): ...`, or `acquire()` /
  `release()`). A lock whose process is gone (same host, pid dead, or the pid reused by a later process) is stale
  and taken over; a lock from another host, or unreadable and recent, is respected, and the error says how to
  remove it by hand.
- `make_run_dir(run_dir)`: creates the directory; a file standing at that path is refused in one line.
- `check_fresh(run_dir, overwrite)`: a new run refuses a directory that holds a run (last.pt, best.pt, policy.pt,
  config.toml) unless `overwrite`.
- `clean_stale_temps(run_dir)`: removes the temporary files of interrupted atomic writes
(hollywood_gin_env/support/atomic.py
  names them so); call it holding the lock, so no live write is touched.

Every refusal is a `RunDirError` (a ValueError) with a one-line message naming the directory and what to do.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import time
from pathlib import Path
from typing import Any

from hollywood_gin_env.support.atomic import is_temp_name
from hollywood_gin_env.support.userfiles import UserFileError, read_user_file

LOCK_NAME = ".run.lock"
#: Files that mean a directory holds a run (written by train.py).
RUN_FILES = ("last.pt", "best.pt", "policy.pt", "config.toml")
#: An unreadable lock (its writer died between creating and filling it) counts as stale once this old.
UNREADABLE_STALE_SECONDS = 30.0
#: A lock file is a line of JSON; anything larger is not one.
MAX_LOCK_BYTES = 4096


class RunDirError(ValueError):
    """A run directory cannot be used as asked; the message says why and what to do."""


class RunLock:
    """The lock of one run directory (module docstring); a context manager."""

    def __init__(self, run_dir: str | os.PathLike) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / LOCK_NAME
        self.took_over: int | None = None  # the pid of a stale lock this one replaced
        self._text: str | None = None  # what this lock wrote (a token makes it unique)

    def acquire(self) -> RunLock:
        """Take the lock (creating the directory if needed); RunDirError if a live run holds it."""
        make_run_dir(self.run_dir)
        for _ in range(3):  # a stale lock is removed, then created afresh; racing takers retry
            try:
                descriptor = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            except FileExistsError:
                self._remove_if_stale()
                continue
            self._text = json.dumps(_this_process())
            with os.fdopen(descriptor, "w") as f:
                f.write(self._text)
            return self
        raise RunDirError(f"could not lock {self.run_dir}: its lock file {self.path} keeps changing")

    def release(self) -> None:
        """Remove the lock file if it is still this lock's (another process may have judged it stale)."""
        if self._text is not None:
            _unlink_if_holds(self.path, self._text)
            self._text = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()

    def _remove_if_stale(self) -> None:
        """Remove the existing lock file if its process is gone; RunDirError if it may still be running."""
        try:
            modified, text = os.stat(self.path).st_mtime, _read_lock(self.path)
        except FileNotFoundError:
            return  # released meanwhile: try again
        holder = _parse(text)
        if not _is_stale(holder, modified):
            raise RunDirError(
                f"{self.run_dir} is in use by {_describe(holder)} (lock file {self.path}); wait for "
                "that run to end, use another --run-dir, or remove the lock file if no run uses the "
                "directory"
            )
        if _unlink_if_holds(self.path, text):  # still the stale one, not a newer lock
            self.took_over = holder.get("pid") if holder else None


def make_run_dir(run_dir: str | os.PathLike) -> None:
    """Create run_dir (and its parents) if needed; RunDirError if a file stands there or it cannot be made."""
    try:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise RunDirError(
            f"run directory {run_dir} is not a directory (a file stands at that path); choose another --run-dir"
        ) from None
    except OSError as error:
        raise RunDirError(f"cannot create the run directory {run_dir}: {error.strerror or error}") from None


def check_fresh(run_dir: str | os.PathLike, overwrite: bool) -> list[str]:
    """The run files already in run_dir (none for a new or empty directory); RunDirError if there are any and
    not overwrite. Nothing is deleted: with overwrite the new run writes over them as it goes."""
    found = [name for name in RUN_FILES if (Path(run_dir) / name).exists()]
    if found and not overwrite:
        raise RunDirError(
            f"{run_dir} already holds a run ({', '.join(found)}): continue it with --resume {run_dir}, "
            "choose another --run-dir, or pass --overwrite to start a new run there"
        )
    return found


def clean_stale_temps(run_dir: str | os.PathLike) -> list[Path]:
    """Remove the temporary files of interrupted atomic writes in run_dir and its subfolders; the paths removed."""
    removed = []
    for folder, _, names in os.walk(run_dir):
        for name in names:
            if is_temp_name(name):
                path = Path(folder) / name
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                    removed.append(path)
    return removed


def _this_process() -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "start": _start_time(os.getpid()),
        "since": time.strftime("%Y-%m-%d %H:%M:%S"),
        "token": secrets.token_hex(8),
    }


def _unlink_if_holds(path: Path, text: str) -> bool:
    """Remove path if it holds exactly text; True if removed. (Between the read and the unlink another process
    could replace the file: that window is microseconds, and only a stale lock's takers race in it.)"""
    with contextlib.suppress(FileNotFoundError):
        if _read_lock(path) == text:
            path.unlink()
            return True
    return False


def _read_lock(path: Path) -> str:
    """The lock file's text; RunDirError if something other than a small regular file stands there (a FIFO
    would block the read)."""
    try:
        return read_user_file(path, MAX_LOCK_BYTES, "lock file").decode("utf-8", errors="replace")
    except UserFileError as error:
        raise RunDirError(f"{error}; remove it if no run uses {path.parent}") from None


def _parse(text: str) -> dict[str, Any] | None:
    """The lock's JSON, or None if it is not a lock (unreadable, half written)."""
    with contextlib.suppress(ValueError):
        data = json.loads(text)
        if isinstance(data, dict) and isinstance(data.get("pid"), int) and not isinstance(data["pid"], bool):
            return data
    return None


def _is_stale(holder: dict[str, Any] | None, modified: float) -> bool:
    """True if the lock's process surely is gone (see the module docstring)."""
    if holder is None:
        return time.time() - modified > UNREADABLE_STALE_SECONDS
    if holder.get("host") != socket.gethostname():
        return False  # its pid means nothing here
    pid = holder["pid"]
    if pid <= 0 or not _alive(pid):
        return True
    start = holder.get("start")
    return start is not None and _start_time(pid) not in (None, start)  # the pid now names a later process


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    except OverflowError:
        return False
    return True


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux /proc), to tell a reused pid; None elsewhere."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])  # field 22; the name in parentheses may hold spaces


def _describe(holder: dict[str, Any] | None) -> str:
    if holder is None:
        return "a run whose lock file is unreadable"
    since = f", since {holder['since']}" if holder.get("since") else ""
    return f"pid {holder['pid']} on {holder.get('host')}{since}"
