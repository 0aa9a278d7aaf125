"""Torch's threads while an agent acts: one count, the same for the programs and the Python API.

torch starts a thread per core for every matrix product. The policies here are small and act beside the engine's
kernel threads, so on a small, busy machine those threads mostly wait on each other (benchmarks/README.md,
"Torch threads"). Every agent that runs torch therefore acts on `DEFAULT_TORCH_THREADS` threads unless told
otherwise, whoever built it: `load_agent(..., torch_threads=N)`, the evaluator's `Schedule(torch_threads=N)` (`evaluate
--threads N`), the envs' `torch_threads=`. `torch_threads_for(count)` sets torch's count for a block and restores it
after, so the count holds while the agent acts and nowhere else (a trainer's own count for its updates stays its
own). torch keeps the count per calling thread (OpenMP), so it is set in the thread that acts. This module never
imports torch: where torch is not imported, nothing runs on it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from hollywood_gin_env.support.messages import shown_value

#: The torch threads an agent acts on unless told: `evaluate --threads`' default, and the Python API's.
DEFAULT_TORCH_THREADS = 1
#: Torch threads a process may be asked for (each takes an OpenMP thread's memory).
MAX_TORCH_THREADS = 256


def check_torch_threads(value: object, name: str = "torch_threads") -> int:
    """value as a torch thread count (None: DEFAULT_TORCH_THREADS); ValueError naming `name` unless an int in
    1..MAX_TORCH_THREADS."""
    if value is None:
        return DEFAULT_TORCH_THREADS
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TORCH_THREADS:
        raise ValueError(
            f"{name}={shown_value(value)} is not allowed: use an integer from 1 to {MAX_TORCH_THREADS} "
            f"(default: {DEFAULT_TORCH_THREADS})"
        )
    return value


@contextlib.contextmanager
def torch_threads_for(count: int | None) -> Iterator[None]:
    """Run the block with torch on `count` threads in this thread, then restore torch's count; None, or torch not
    imported: leave torch as it is."""
    torch = sys.modules.get("torch")
    if count is None or torch is None:
        yield
        return
    before = torch.get_num_threads()
    if before == count:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)
