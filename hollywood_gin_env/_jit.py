"""The one place that configures numba: `njit` with on-disk caching (NUMBA_DISABLE_JIT=1 runs plain Python)."""

from __future__ import annotations

import numba

njit = numba.njit(cache=True, nogil=True)
