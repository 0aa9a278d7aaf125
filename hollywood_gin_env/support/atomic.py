"""Atomic file writes: the bytes go to a temporary file beside the target, are synced, then renamed over it.

A reader, or a process killed mid-write, sees the previous file or the new one, never half of one. The temporary file
is `.<target>.<8 hex digits>.tmp` (`is_temp_name` recognises it and `tempfile.mkstemp`'s form, so leftovers of a
killed write can be found; `remove_temporaries` removes a file's) and gets mode 0666 less the umask, as `open` would
give the target. The rename replaces whatever the target path names, so the target must be a regular file or a new
path: a symlink, a device (`/dev/null`: run as root, a save there would replace it), a FIFO or a directory is
refused before anything is written (`WriteTargetError`). A write that fails on the disk raises `AtomicWriteError`
saying the previous file is intact.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat

from hollywood_gin_env.support.userfiles import describe_kind, shown

_TEMP_NAME = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")


class AtomicWriteError(OSError):
    """A write that failed on the disk; the message says whether the previous file is intact."""

    def __init__(self, path: str | os.PathLike, cause: OSError) -> None:
        after = f"the previous {os.path.basename(path)} is intact" if os.path.exists(path) else "nothing was written"
        super().__init__(cause.errno, f"could not write {shown(path)} ({cause.strerror or cause}); {after}")

    def __str__(self) -> str:
        return str(self.strerror)


class WriteTargetError(AtomicWriteError, ValueError):
    """The target is neither a regular file nor a new path; nothing was written (an OSError and a ValueError, so
    either kind of handler reports it in one line)."""

    def __init__(self, path: str | os.PathLike, kind: str) -> None:
        OSError.__init__(
            self,
            errno.EINVAL,
            f"refusing to write {shown(path)}: it is {kind}; a file is saved only to a regular file or a new path "
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
    """True if a file name is one of atomic_write's temporary files (left behind if a write was killed)."""
    return _TEMP_NAME.fullmatch(name) is not None


def remove_temporaries(path: str | os.PathLike) -> list[str]:
    """Remove the temporary files that killed writes of `path` left beside it (`is_temp_name`'s, for its name only,
    regular files only); the paths removed. Call it where no other process writes `path` (a run's lock, a save file
    a program has just taken)."""
    folder, name = os.path.split(os.path.abspath(path))
    removed = []
    with contextlib.suppress(OSError), os.scandir(folder) as entries:
        for entry in entries:
            match = _TEMP_NAME.fullmatch(entry.name)
            if match and match["target"] == name and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


def atomic_write(path: str | os.PathLike, data: bytes) -> None:
    """Replace the file at path with `data` atomically (module docstring)."""
    check_write_target(path)
    folder, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
    try:
        with open(temporary, "xb") as f:  # created exclusively, mode 0666 less the umask
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        if not isinstance(error, FileExistsError):  # a temporary file of that name is another write's
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        if isinstance(error, OSError):
            raise AtomicWriteError(path, error) from error
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text (UTF-8) to path atomically."""
    atomic_write(path, text.encode("utf-8"))
