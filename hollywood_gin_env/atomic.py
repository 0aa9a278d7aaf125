"""Atomic file writes: write a temporary file beside the target, then rename it over the target."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from typing import IO


def atomic_write(path: str | os.PathLike, write: Callable[[IO[bytes]], object]) -> None:
    """Call write(f) on a temporary file in path's folder, then replace path with it (never a half file)."""
    folder = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{os.path.basename(path)}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write text (UTF-8) to path atomically."""
    atomic_write(path, lambda f: f.write(text.encode("utf-8")))
