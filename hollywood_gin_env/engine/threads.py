"""The batched kernels on N threads in one process: contiguous slices of the matches (or rows), one per thread.

Every kernel of the rollout (the engine step, the encoder, the heuristics, the lookahead planes, the play-outs) is
`nogil` numba that loops over independent matches, and each match keeps its own random stream. So a kernel called
on the rows lo..hi of its arrays (numpy views, no copy) computes exactly what the whole call computes for those
rows, and splitting a batch into slices that run on several threads gives bit-identical results for every thread
count. `KernelThreads.run(n, work, grain)` calls `work(lo, hi)` once per slice: the calling thread takes the first
slice, a persistent `concurrent.futures.ThreadPoolExecutor` the others, and `run` returns when all are done.

Why Python threads and not numba's `parallel=True` with `prange`: the threads reuse the compiled kernels as
they are (prange recompiles every kernel and needs a threading layer: the default "workqueue" aborts the process
when two Python threads launch parallel kernels at once, as an evaluator and a trainer's arena may, and its
thread count is capped by NUMBA_NUM_THREADS at import); the split is plain and deterministic; NUMBA_DISABLE_JIT=1
runs the same code; and the threads work in Ray workers and beside torch's own threads. What it costs is a few
microseconds of Python per slice (slicing the arrays, a future); `grain` keeps slices large enough to pay for
that (benchmarks/README.md, "Threads").

One knob, `num_threads` (the envs' `num_threads=`, evaluate.py's `--env-threads`, the trainer's
`train.env_threads`): default every CPU this process may use (`os.sched_getaffinity`) but one, at least one, or the
count a program set with `set_default_threads` (as torch.set_num_threads does for torch). Why not every CPU: a
learner's torch threads share the process (or the machine) with the kernels, and after each forward pass they
spin-wait on their CPUs; a kernel thread on such a CPU slows both. The trainer leaves torch its `train.torch_threads`
(`threads_beside`). On the 2-CPU machines this project measures on, one kernel thread was the fastest count for the
default recipe (benchmarks/README.md, "Threads"). Objects keep the count, not the threads: `kernel_threads(num_threads)`
hands out one shared `KernelThreads` per count for the process, so a pickled agent or env (Ray) carries an int. A
`run` nested inside another's slice runs inline, so kernels that call kernels never deadlock.
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import numpy as np

from hollywood_gin_env.support.messages import shown_value

MAX_THREADS = 1024
_THREAD_PREFIX = "hollywood-gin-kernel"


class _Inside(threading.local):
    depth = 0  # > 0 while this thread runs a slice: a run inside it goes inline


_inside = _Inside()


def available_cpus() -> int:
    """The CPUs this process may use (its affinity mask; all CPUs where the OS has no such call)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


_default: list[int | None] = [None]  # set_default_threads' count; None: threads_beside(1)


def set_default_threads(num_threads: int | None) -> None:
    """The count that `num_threads=None` means from now on in this process (None: `available_cpus()` again), as
    torch.set_num_threads sets torch's: a program (a trainer, a benchmark) sets it once, before building its envs."""
    _default[0] = None if num_threads is None else check_num_threads(num_threads)


def threads_beside(busy: int) -> int:
    """Kernel threads for the CPUs this process may use less `busy` of them (a learner's torch threads), at least 1."""
    return max(1, available_cpus() - busy)


def default_threads() -> int:
    """The count `num_threads=None` means: `set_default_threads`'s, else every CPU this process may use but one."""
    return threads_beside(1) if _default[0] is None else _default[0]


def check_num_threads(value: object, name: str = "num_threads") -> int:
    """value as a thread count (None: `default_threads()`); ValueError naming `name` unless an int in 1..1024."""
    if value is None:
        return default_threads()
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_THREADS:
        raise ValueError(
            f"{name}={shown_value(value)} is not allowed: use an integer from 1 to {MAX_THREADS} "
            f"(default: {default_threads()}: the CPUs this process may use but one, unless set_default_threads "
            "changed it)"
        )
    return int(value)


def slice_bounds(n: int, parts: int) -> list[tuple[int, int]]:
    """`parts` contiguous (lo, hi) slices covering 0..n, their sizes differing by at most one (larger first)."""
    size, extra = divmod(n, parts)
    bounds, lo = [], 0
    for k in range(parts):
        hi = lo + size + (k < extra)
        bounds.append((lo, hi))
        lo = hi
    return bounds


def sliced(lo: int, hi: int, *values: Any) -> tuple:
    """The rows lo..hi (views) of each value: an array, or a tuple of arrays (an `EngineState.arrays()`), all of
    one length. All the rows: the values themselves, at once (a single env's step makes several kernel calls)."""
    first = values[0]
    if lo == 0 and hi == len(first[0] if type(first) is tuple else first):
        return values
    return tuple(tuple(a[lo:hi] for a in v) if type(v) is tuple else v[lo:hi] for v in values)


class KernelThreads:
    """`num_threads` threads (the caller's plus num_threads - 1 persistent ones) over slices of a batch."""

    def __init__(self, num_threads: int | None = None) -> None:
        self.num_threads = check_num_threads(num_threads)
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.closed = False

    def whole(self, n: int, grain: int = 1) -> bool:
        """True when `run(n, work, grain)` would make one slice on the calling thread: callers on a hot path (a
        single env's step) then call their kernel on the whole arrays, without a closure or slicing."""
        return n < 2 * grain or self.num_threads == 1 or _inside.depth > 0

    def run(self, n: int, work: Callable[[int, int], Any], grain: int = 1) -> list[Any]:
        """[work(lo, hi) for each slice] over rows 0..n, in slice order; slices of at least `grain` rows.

        The first slice runs on the calling thread. An exception in any slice (KeyboardInterrupt included) is
        raised here once every slice already running has returned, and the slices not yet started are dropped,
        so no thread still writes the caller's arrays when it sees the error.
        """
        if self.whole(n, grain):  # one slice: no thread, no bookkeeping
            return [work(0, n)] if n > 0 else []
        bounds = slice_bounds(n, min(self.num_threads, n // max(grain, 1)))
        executor = self._start()
        futures = [executor.submit(_in_slice, work, lo, hi) for lo, hi in bounds[1:]]
        try:
            first = _in_slice(work, *bounds[0])
        except BaseException:
            _drain(futures)
            raise
        try:
            wait(futures)
        except BaseException:  # Ctrl-C while waiting: drop what has not started, let the running slices finish
            _drain(futures)
            raise
        return [first, *(future.result() for future in futures)]

    def _start(self) -> ThreadPoolExecutor:
        with self._lock:
            if self.closed:
                raise RuntimeError(
                    f"this KernelThreads({self.num_threads}) was closed; use threads.kernel_threads() again"
                )
            if self._executor is None:
                self._executor = ThreadPoolExecutor(self.num_threads - 1, thread_name_prefix=_THREAD_PREFIX)
            return self._executor

    def close(self) -> None:
        """Stop the threads (slices already queued are dropped, running ones finish first)."""
        with self._lock:
            self.closed = True
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=True, cancel_futures=True)

    def __reduce__(self) -> tuple:
        """Pickled (Ray, deepcopy) as its count: the copy is that process's shared `KernelThreads` of as many
        threads."""
        return kernel_threads, (self.num_threads,)

    def __repr__(self) -> str:
        return f"KernelThreads(num_threads={self.num_threads})"


def _in_slice(work: Callable[[int, int], Any], lo: int, hi: int) -> Any:
    """work(lo, hi), marked so that a kernel it runs that asks for threads runs inline."""
    _inside.depth += 1
    try:
        return work(lo, hi)
    finally:
        _inside.depth -= 1


def _drain(futures: list[Future]) -> None:
    """Cancel the futures not started and wait (uninterruptibly) for the running ones."""
    for future in futures:
        future.cancel()
    while True:
        try:
            wait(futures)
            return
        except KeyboardInterrupt:  # a second Ctrl-C: the running slices still write the caller's arrays
            continue


_shared: dict[int, KernelThreads] = {}
_shared_lock = threading.Lock()


def kernel_threads(num_threads: int | None = None) -> KernelThreads:
    """The process's shared `KernelThreads` of `num_threads` threads (None: `default_threads()`), started on first
    use."""
    count = check_num_threads(num_threads)
    with _shared_lock:
        found = _shared.get(count)
        if found is None or found.closed:
            found = _shared[count] = KernelThreads(count)
        return found


def shutdown() -> None:
    """Close every shared `KernelThreads` (its threads exit); a later `kernel_threads()` starts a fresh one."""
    with _shared_lock:
        every = list(_shared.values())
        _shared.clear()
    for each in every:
        each.close()


def kernel_threads_alive() -> list[threading.Thread]:
    """The live threads of every `KernelThreads` (for tests and leak checks)."""
    return [t for t in threading.enumerate() if t.name.startswith(_THREAD_PREFIX)]


atexit.register(shutdown)
