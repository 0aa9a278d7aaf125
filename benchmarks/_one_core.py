"""What the one-core benchmarks share: one thread per numeric library (set on import, before numpy loads) and
`pin_one_core()`. Import it first: `import _one_core` (the benchmarks run as scripts, with this folder on sys.path)."""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "1")


def pin_one_core() -> None:
    """Run on a single CPU where the OS allows it."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
