"""One line on stderr before numba compiles the engine's kernels, so a cold first run does not look hung.

numba caches compiled kernels on disk (`cache=True`): an index file `<module>.<kernel>-<line>.py<version>.nbi` per
kernel in the folder each dispatcher's public `stats.cache_path` names. A fresh install, an edited source file or a
cache folder of its own (NUMBA_CACHE_DIR) leaves no index newer than the kernel's source, and the first `Engine` then
spends 15-40 s compiling with nothing on screen. Looking for those files compiles nothing and imports nothing heavy.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numba

#: Said until a compile completes: a run stopped while compiling leaves the cache cold, and the next one compiles again.
MESSAGE = "hollywood-gin: compiling the engine's kernels, ~30 s (cached for later runs once done)"

_announced = False


def is_cached(kernel: Any) -> bool:
    """True if the kernel is compiled in this process or numba's cache folder holds an index of it newer than its
    source file."""
    if kernel.signatures:
        return True
    source = Path(kernel.py_func.__code__.co_filename)
    pattern = f"{source.stem}.{kernel.py_func.__qualname__}-*.nbi"
    indexes = Path(kernel.stats.cache_path).glob(pattern)
    return any(index.stat().st_mtime >= os.stat(source).st_mtime for index in indexes)


def entry_kernels() -> list[Any]:
    """The kernels every engine user compiles first: dealing, stepping and encoding observations."""
    from hollywood_gin_env.engine.kernels import new_match_kernel, step_kernel
    from hollywood_gin_env.engine.observation import encode_kernel

    return [new_match_kernel, step_kernel, encode_kernel]


def announce_first_compile() -> None:
    """Print the compile message to stderr once per process, only when an entry kernel is not cached (and nothing
    under NUMBA_DISABLE_JIT=1, which compiles nothing)."""
    global _announced
    if _announced or numba.config.DISABLE_JIT:
        return
    _announced = True
    if not all(map(is_cached, entry_kernels())):
        from tqdm import tqdm  # only now: the check above imports nothing heavy

        tqdm.write(MESSAGE, file=sys.stderr)  # on a line of its own, above any progress bar already drawn
