"""Reading a file a user names (a config, a saved match, a checkpoint, a JSON file): a regular file only, bounded.

A path on a command line may name a device (`/dev/zero` never ends, and its size reads 0), a FIFO (opening one for
reading waits for a writer), a directory, or a file far larger than anything this program writes. `open_user_file`
refuses all but a regular file within a byte limit: it checks the path before opening it (opening a device can
act on it), opens it without blocking (a FIFO swapped in meanwhile cannot hang), then checks the opened file itself,
so what is read is what was checked. `read_user_file` reads such a file whole, never more than the limit. Every
refusal is a `UserFileError` (a ValueError) in one line naming the path (its control characters escaped, so the
message is safe to print) and what is allowed; a missing path is a FileNotFoundError saying so.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from hollywood_gin_env.support.messages import escape_controls

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


class UserFileError(ValueError):
    """A file a user named cannot be read as asked; the one-line message says why and what is allowed."""


def shown(path: str | os.PathLike) -> str:
    """A path as a message prints it: control characters escaped (hollywood_gin_env.support.messages)."""
    return escape_controls(os.fspath(path))


def describe_kind(mode: int) -> str:
    """What a file of this st_mode is, in words ("a regular file", "a character device", ...)."""
    for test, name in _KINDS:
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def format_bytes(count: int) -> str:
    """A byte count in words: 512 bytes, 3.0 MiB, 1.0 GiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift:
            return f"{count / (1 << shift):.1f} {unit}"
    return f"{count} bytes"


def open_user_file(path: str | os.PathLike, limit: int, what: str) -> BinaryIO:
    """The regular file at path, opened for binary reading, if it holds at most `limit` bytes (module docstring).

    `what` names the file for messages ("config file", "checkpoint file", "saved match").
    """
    _check(path, _stat(path, os.stat, what), limit, what)  # before opening: opening a device or FIFO acts on it
    try:
        descriptor = os.open(path, _OPEN_FLAGS)
    except OSError as error:
        raise _os_error(path, error, what) from None
    try:
        _check(path, os.fstat(descriptor), limit, what)  # the file opened, in case the path changed meanwhile
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_user_file(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of the regular file at path, refused unread if it holds more than `limit` (module docstring)."""
    with open_user_file(path, limit, what) as f:
        data = f.read(limit + 1)  # never more than the limit, even if the file grew since it was checked
    if len(data) > limit:
        raise UserFileError(f"{what} {shown(path)} holds more than {format_bytes(limit)}; at most that is read")
    return data


def _stat(path: str | os.PathLike, call, what: str) -> os.stat_result:
    try:
        return call(path)
    except OSError as error:
        raise _os_error(path, error, what) from None


def _check(path: str | os.PathLike, info: os.stat_result, limit: int, what: str) -> None:
    """UserFileError unless info is a regular file of at most `limit` bytes."""
    if not stat.S_ISREG(info.st_mode):
        raise UserFileError(
            f"{what} {shown(path)} is {describe_kind(info.st_mode)}, not a regular file; "
            "give the path of a regular file"
        )
    if info.st_size > limit:
        raise UserFileError(
            f"{what} {shown(path)} is {format_bytes(info.st_size)}; a {what} is at most {format_bytes(limit)} "
            "(refused unread)"
        )


def _os_error(path: str | os.PathLike, error: OSError, what: str) -> OSError:
    """The error to raise for an OSError on path: FileNotFoundError for a missing file, else UserFileError."""
    if isinstance(error, (FileNotFoundError, NotADirectoryError)):
        return FileNotFoundError(f"{what} not found: {shown(path)}")
    return UserFileError(f"cannot read {what} {shown(path)}: {error.strerror or error}")
