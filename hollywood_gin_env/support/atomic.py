"""Atomic file writes: write a temporary file beside the target, then rename it over the target.

The temporary file is named `.<target>.atomic-<8 hex digits>.tmp` (`is_temp_name` recognises it, and the
`tempfile.mkstemp` form `.<target>.<8 characters>.tmp`), so a directory's leftovers of interrupted writes can be found
and removed (hollywood_gin_trainer/rundir.py). It is created with mode 0666 less the umask, as `open` would create the
file itself. A write that fails on the disk (a full disk, say) leaves the previous file as it was and raises
`AtomicWriteError`, whose one-line message says so.

The rename replaces whatever the target path names, so the target must be a regular file or a new path: a symlink,
a device (`/dev/null`), a FIFO or a directory there is refused before anything is written (`WriteTargetError`,
`check_write_target`); otherwise a save to `/dev/null` run as root would replace the machine's `/dev/null`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable
from typing import IO, Any

from hollywood_gin_env.support.userfiles import describe_kind

#: The temporary names of atomic_write, and the tempfile.mkstemp form a run directory may also hold.
_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.(atomic-[0-9a-f]{8}|[a-z0-9_]{8})\.tmp")
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)


class AtomicWriteError(OSError):
    """A write that failed on the disk; the message says whether the previous file is intact."""

    def __init__(self, path: str | os.PathLike, cause: OSError) -> None:
        name = os.path.basename(path)
        after = f"the previous {name} is intact" if os.path.exists(path) else "nothing was written"
        super().__init__(cause.errno, f"could not write {path} ({cause.strerror or cause}); {after}")

    def __str__(self) -> str:
        return str(self.strerror)


class WriteTargetError(AtomicWriteError, ValueError):
    """The target of a write is neither a regular file nor a new path; nothing was written. (An OSError like any
    failed write, and a ValueError like any refused argument, so either kind of handler reports it in one line.)"""

    def __init__(self, path: str | os.PathLike, kind: str) -> None:
        OSError.__init__(
            self,
            errno.EINVAL,
            f"refusing to write {path}: it is {kind}; a file is saved only to a regular file or a new path "
            "(nothing was written)",
        )


def check_write_target(path: str | os.PathLike) -> None:
    """WriteTargetError unless path is a regular file (not a symlink) or does not exist yet."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise AtomicWriteError(path, error) from None
    if not stat.S_ISREG(mode):
        raise WriteTargetError(path, describe_kind(mode))


def is_temp_name(name: str) -> bool:
    """True if a file name is one of atomic_write's temporary files (left behind if a write was interrupted)."""
    return _TEMP_NAME.fullmatch(name) is not None


def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], object]) -> None:
    """Call write(f) on a temporary file in path's folder, then replace path with it (never a half file)."""
    check_write_target(path)
    folder = os.path.dirname(os.path.abspath(path))
    temporary, handle = _create_temporary(folder, os.path.basename(path))
    recorder = None
    try:
        with os.fdopen(handle, "wb") as f:
            recorder = _DiskErrors(f)
            write(recorder)  # type: ignore[arg-type]
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        cause = error if isinstance(error, OSError) else recorder.error if recorder is not None else None
        if cause is not None and isinstance(error, (OSError, RuntimeError)):
            raise AtomicWriteError(path, cause) from error
        raise
    _sync_folder(folder)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text (UTF-8) to path atomically."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))


def _create_temporary(folder: str, name: str) -> tuple[str, int]:
    """(path, descriptor) of a new temporary file for `name` in folder, created exclusively (mode 0666 - umask)."""
    while True:
        temporary = os.path.join(folder, f".{name}.atomic-{secrets.token_hex(4)}.tmp")
        try:
            return temporary, os.open(temporary, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue


class _DiskErrors:
    """The temporary file as `write` sees it, remembering the OSError of a failed write: torch.save re-raises it
    as a RuntimeError that does not say the disk is full."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.error: OSError | None = None

    def write(self, data: Any) -> int:
        """Write data, noting an OSError on the way out."""
        try:
            return self._file.write(data)
        except OSError as error:
            self.error = error
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def _sync_folder(folder: str) -> None:
    """Make the rename durable (fsync the folder) where the platform allows it."""
    with contextlib.suppress(OSError, AttributeError):
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
