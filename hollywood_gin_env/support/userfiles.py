"""Reading a file a user names (a config, a saved match, a checkpoint): a regular file only, bounded.

A path on a command line may name a device (`/dev/zero` never ends, and its size reads 0), a FIFO (opening one for
reading waits for a writer), a directory, or a file far larger than anything this program writes. `open_user_file`
opens the path without blocking and checks the opened file itself (so what is read is what was checked): a regular
file of at most `limit` bytes, else a one-line `UserFileError` (a ValueError) naming the path, its control
characters escaped, and what is allowed; so is a read that fails (`/proc/self/mem` is a regular file whose reads
fail). A missing path is a FileNotFoundError saying so.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO

from hollywood_gin_env.support.messages import escape_controls

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
_KINDS = (
    (stat.S_ISREG, "a regular file"),
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
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def format_bytes(count: int) -> str:
    """A byte count in words: 512 bytes, 3.0 MiB, 1.0 GiB."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if count >= 1 << shift:
            return f"{count / (1 << shift):.1f} {unit}"
    return f"{count} bytes"


def check_user_file(path: str | os.PathLike, info: os.stat_result, limit: int, what: str) -> None:
    """UserFileError unless `info` (path's stat) is a regular file of at most `limit` bytes; `what` names the file
    ("config file", "checkpoint file", "saved match")."""
    if not stat.S_ISREG(info.st_mode):
        kind = describe_kind(info.st_mode)
        raise UserFileError(f"{what} {shown(path)} is {kind}, not a regular file; give the path of a regular file")
    if info.st_size > limit:
        raise UserFileError(
            f"{what} {shown(path)} is {info.st_size:,} bytes; a {what} is at most {format_bytes(limit)} "
            "(refused unread)"
        )


def open_user_file(path: str | os.PathLike, limit: int, what: str) -> BinaryIO:
    """The regular file at path, opened for binary reading, if it holds at most `limit` bytes (module docstring)."""
    try:
        descriptor = os.open(path, _OPEN_FLAGS)  # without blocking: a FIFO would wait for a writer
    except (FileNotFoundError, NotADirectoryError):
        raise FileNotFoundError(f"{what} not found: {shown(path)}") from None
    except OSError as error:
        raise UserFileError(f"cannot read {what} {shown(path)}: {error.strerror or error}") from None
    try:
        check_user_file(path, os.fstat(descriptor), limit, what)
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_user_file(path: str | os.PathLike, limit: int, what: str) -> bytes:
    """The bytes of the regular file at path, refused unread if it holds more than `limit` (module docstring)."""
    with open_user_file(path, limit, what) as f:
        data = read_opened(f, limit + 1, path, what)  # never more than the limit, even if the file grew
    if len(data) > limit:
        raise UserFileError(f"{what} {shown(path)} holds more than {format_bytes(limit)}; at most that is read")
    return data


def read_opened(file: BinaryIO, size: int, path: str | os.PathLike, what: str) -> bytes:
    """At most `size` bytes of a file open_user_file opened; UserFileError if reading fails (a regular file that
    cannot be read, such as /proc/self/mem: EIO)."""
    try:
        return file.read(size)
    except OSError as error:
        raise UserFileError(f"cannot read {what} {shown(path)}: {error.strerror or error}") from None
