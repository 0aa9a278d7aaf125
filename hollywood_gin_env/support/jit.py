"""The one place that configures numba: `njit` with on-disk caching (NUMBA_DISABLE_JIT=1 runs plain Python)."""

from __future__ import annotations

import numba

njit = numba.njit(cache=True, nogil=True)

#: For small helpers that take the state tuple: inlining lets numba drop the per-call reference counting
#: of every array in the tuple, which otherwise costs more than the helper's own work.
njit_inline = numba.njit(cache=True, nogil=True, inline="always")
