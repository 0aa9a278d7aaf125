"""One line on stderr before numba compiles the engine's kernels, so a cold first run does not look hung.

numba caches compiled kernels on disk (`cache=True`); a fresh checkout, an edited source file or a new numba
version leaves that cache cold, and the first `Engine` then spends 15-40 s compiling with nothing on screen.
Checking for a cold cache only reads the small index file numba keeps per kernel: no compiling, no import of
anything heavy.
"""

from __future__ import annotations

import sys
from typing import Any

#: Said until a compile completes: a run stopped while compiling leaves the cache cold, and the next one compiles again.
MESSAGE = "hollywood-gin: compiling the engine's kernels, ~30 s (cached for later runs once done)"

_announced = False


def _cache_is_cold(dispatcher: Any) -> bool:
    """True if numba holds no fresh on-disk compilation of the kernel (no index, or one for other source)."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    if cache_file is None:  # NUMBA_DISABLE_JIT=1 (plain Python) or caching off: nothing will be compiled
        return False
    try:
        # numba's own freshness test: an empty index means a missing, stale (source changed) or foreign file.
        return not cache_file._load_index()
    except Exception:  # a private numba API: if it changes, stay silent rather than fail or mislead
        return False


def entry_kernels() -> list[Any]:
    """The kernels every engine user compiles first: dealing, stepping and encoding observations."""
    from hollywood_gin_env.engine.kernels import new_match_kernel, step_kernel
    from hollywood_gin_env.engine.observation import encode_kernel

    return [new_match_kernel, step_kernel, encode_kernel]


def cold_cache() -> bool:
    """True if any entry kernel has not been compiled into numba's disk cache yet (and not in this process)."""
    return any(not getattr(kernel, "signatures", None) and _cache_is_cold(kernel) for kernel in entry_kernels())


def announce_first_compile() -> None:
    """Print the compile message to stderr once per process, and only when the kernel cache is cold."""
    global _announced
    if _announced:
        return
    _announced = True
    if cold_cache():
        from tqdm import tqdm  # only now: the check above imports nothing heavy

        tqdm.write(MESSAGE, file=sys.stderr)  # on a line of its own, above any progress bar already drawn
