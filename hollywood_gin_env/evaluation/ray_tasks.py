"""The chunks of `evaluate_pairs` as Ray tasks: `evaluate.py --workers K [--ray-address ADDRESS]`.

Each chunk (`ChunkJob`) is one task (one CPU) that imports the job's modules (a program's `--import`), builds its
agents from their spec strings, reseeds them for the chunk and plays it exactly as the in-process path does, torch
on the job's `torch_threads`, so the merged totals are the same. A `module:attr` spec resolves on the worker as in the
driver: a local Ray's workers have the driver's working directory and PYTHONPATH on their module path, so the user's
module is found there too.
No torch module crosses: a `checkpoint:PATH` file is read once here and its bytes are put in Ray's
object store; each task writes them to a private temporary file and loads them with the library's one
checkpoint reader, which validates them as it would any file, so the path need not exist on the workers'
nodes. The package itself must be installed on every node (docs/SCALING.md).

Faults: at most `workers` chunks are out at a time; each must answer within `chunk_timeout` seconds of
being sent, or the evaluation stops with an EvaluationError that names the chunk. Ray reruns a chunk
whose worker died up to `max_retries` times; an exception inside a chunk is not retried (it would fail
again) and stops the evaluation with one line naming the chunk. On any exit, Ctrl-C included, the
chunks still out are cancelled, and a Ray this module started is shut down.

`start_ray` and `ray_get` are the package's one way to start or join Ray and to turn a failed, late or lost Ray
call into one line; the trainer's rollout workers (hollywood_gin_trainer/workers.py) use them too.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import socket
import tempfile
import time
from collections.abc import Callable, Iterator
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayError, RayTaskError

from hollywood_gin_env.agents import CHECKPOINT_PREFIX, AgentProtocol, load_agent, parse_agent_arg
from hollywood_gin_env.agents.torch_threads import torch_threads_for
from hollywood_gin_env.evaluation.duplicate import (
    ChunkJob,
    EvaluationError,
    PairRecord,
    Schedule,
    check_local_workers,
    play_job,
)
from hollywood_gin_env.support.imports import import_modules
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_env.support.tensorfile import MAX_FILE_BYTES
from hollywood_gin_env.support.userfiles import read_user_file


def _plain(spec: str) -> str:
    """The spec of a NAME=SPEC (the spec itself otherwise), trimmed."""
    return parse_agent_arg(spec.strip())[1].strip()


def _is_checkpoint(spec: object) -> bool:
    return isinstance(spec, str) and _plain(spec).lower().startswith(CHECKPOINT_PREFIX)


def _worker_agent(spec: str, name: str, blob: bytes | None, job: ChunkJob) -> AgentProtocol:
    """The agent of a spec, inside a task; a checkpoint comes as the file's bytes (validated by the reader)."""
    options = {"num_threads": job.env_threads, "torch_threads": job.torch_threads, "rules": job.rules}
    if blob is None:
        agent = load_agent(spec, **options)
    else:
        with tempfile.TemporaryDirectory(prefix="hollywood-gin-") as folder:
            path = os.path.join(folder, "checkpoint.safetensors")
            with open(path, "wb") as file:
                file.write(blob)
            try:
                agent = load_agent(CHECKPOINT_PREFIX + path, **options)
            except ValueError as error:  # name the file the user gave, not this copy of it
                raise ValueError(str(error).replace(path, _plain(spec)[len(CHECKPOINT_PREFIX) :])) from None
    agent.name = name
    return agent


@ray.remote(num_cpus=1)
def _play_chunk_task(job: ChunkJob, blob_a: bytes | None, blob_b: bytes | None) -> PairRecord:
    """Play one chunk on a worker (its arguments' object refs arrive resolved)."""
    import_modules(job.imports)
    if job.env_threads is None:  # a task holds one of Ray's CPUs: all of the machine's would oversubscribe it
        job = dataclasses.replace(job, env_threads=1)
    blobs = (blob_a, blob_b)
    agents = tuple(_worker_agent(s, n, b, job) for s, n, b in zip(job.specs, job.names, blobs, strict=True))
    with torch_threads_for(job.torch_threads):
        return play_job(job, agents)


def _put_checkpoint(spec: str) -> ray.ObjectRef:
    """A checkpoint file's bytes in the object store (read once; the workers validate them as they load)."""
    path = _plain(spec)[len(CHECKPOINT_PREFIX) :]
    return ray.put(read_user_file(path, MAX_FILE_BYTES, "checkpoint file"))  # a regular file, bounded


def _check_specs(job: ChunkJob, schedule: Schedule) -> None:
    """ValueError for an agent given as an object: a worker can only build agents from spec strings."""
    for spec in job.specs:
        if not isinstance(spec, str):
            raise ValueError(
                f"workers={schedule.workers}: agent {shown_value(spec)} is an object; Ray workers build agents "
                f"from spec strings (random, greedy, expert, bot, checkpoint:PATH, module:attr, ...)"
            )


def check_reachable(address: str, timeout: float = 10.0) -> None:
    """EvaluationError unless something listens at a HOST:PORT address ("auto" and others are left to Ray).

    Ray's own connect retries for minutes, printing as it goes, when nothing listens there.
    """
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise EvaluationError(
            f"cannot reach the Ray cluster at {address}: {error.strerror or error} (started "
            "with `ray start --head`? the address it printed, HOST:6379)"
        ) from None


def start_ray(
    address: str | None, workers: int, error: type[Exception] = EvaluationError, name: str = "workers"
) -> bool:
    """Join the cluster at `address` ("auto": the one running on this machine), or start a new local Ray with the
    machine's cores even where a cluster already runs here, for at most the workers this machine holds
    (duplicate.py's `local_workers_bound`: `error` naming `name` for more); nothing if this process already has Ray.
    True if this call started it; `error` in one line if it cannot."""
    if ray.is_initialized():
        return False
    if not address:
        try:
            check_local_workers(workers, name)
        except ValueError as too_many:
            raise error(str(too_many)) from None
    # "local": a new Ray, never one already running here
    local = {"address": "local", "num_cpus": max(os.cpu_count() or 1, workers)}
    options = {"address": address} if address else local
    try:
        if address:
            check_reachable(address)
        ray.init(**options, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    except EvaluationError as unreachable:
        raise error(str(unreachable)) from None
    except (ConnectionError, RuntimeError, ValueError) as failure:
        where = f"join the Ray cluster at {address}" if address else "start a local Ray"
        hint = ""
        if address and os.environ.get("RAY_AUTH_MODE") is None:
            hint = " (a cluster of `ray start` wants its token: set RAY_AUTH_MODE=token, docs/SCALING.md)"
        reason = str(failure).splitlines()[0] if str(failure) else repr(failure)
        raise error(f"cannot {where}: {reason}{hint}") from None
    return True


def ray_get(ref: ray.ObjectRef, timeout: float, error: type[Exception], failed: str, late: str, died: str) -> Any:
    """ray.get(ref) within `timeout` seconds; a failure raised as `error` in one line: "{failed}: Type: its first
    line" for an exception inside the call, "{failed}: Type: message" for one in the constructor of the actor called
    (Ray reports its traceback, whose last line that is), `late` when no answer came in time, `died` (with "{kind}",
    the Ray error's type) when its worker or node died."""
    try:
        return ray.get(ref, timeout=timeout)
    except RayTaskError as task_error:
        cause = task_error.cause if isinstance(task_error.cause, BaseException) else task_error
        lines = str(cause).strip().splitlines() or [""]
        raise error(f"{failed}: {type(cause).__name__}: {lines[0]}") from None
    except GetTimeoutError:
        raise error(late) from None
    except RayActorError as lost:
        if not lost.actor_init_failed:  # the worker or its node died (more often than Ray may retry)
            raise error(died.format(kind=type(lost).__name__)) from None
        raise error(f"{failed}: {(str(lost).strip().splitlines() or [''])[-1]}") from None
    except RayError as lost:  # the worker or its node died (more often than Ray may retry)
        raise error(died.format(kind=type(lost).__name__)) from None


@contextlib.contextmanager
def ray_session(schedule: Schedule) -> Iterator[None]:
    """Ray while the block runs: the one already started, the cluster at `ray_address`, or a local one."""
    started = start_ray(schedule.ray_address, schedule.workers)
    try:
        yield
    finally:
        if started:
            ray.shutdown()


def _result(ref: ray.ObjectRef, job: ChunkJob, schedule: Schedule) -> PairRecord:
    """The finished chunk's totals, or one EvaluationError line naming the chunk."""
    name, timeout = job.describe(), schedule.chunk_timeout
    return ray_get(
        ref,
        timeout,
        EvaluationError,
        failed=f"{name} failed",
        late=f"{name}: no result within {timeout:g} s",
        died=f"{name}: its worker died ({{kind}}) after {schedule.max_retries} retries",
    )


def _overdue(pending: dict[ray.ObjectRef, tuple[ChunkJob, float]], schedule: Schedule) -> EvaluationError:
    """The error naming the oldest chunk still out."""
    job, _ = min(pending.values(), key=lambda item: item[1])
    return EvaluationError(
        f"{job.describe()} gave no result within {schedule.chunk_timeout:g} s of being sent "
        "(a stuck worker, or a cluster with fewer free CPUs than --workers?)"
    )


def play_on_ray(
    jobs: Iterator[ChunkJob], schedule: Schedule, on_result: Callable[[ChunkJob, PairRecord], object]
) -> None:
    """Run the jobs as Ray tasks, `schedule.workers` at a time; `on_result(job, record)` as each one finishes."""
    task = _play_chunk_task.options(
        num_cpus=schedule.task_cpus, max_retries=schedule.max_retries, retry_exceptions=False
    )
    pending: dict[ray.ObjectRef, tuple[ChunkJob, float]] = {}
    with ray_session(schedule):
        try:
            blobs: dict[str, ray.ObjectRef] = {}
            for job in jobs:
                _check_specs(job, schedule)
                for spec in job.specs:
                    if _is_checkpoint(spec) and spec not in blobs:
                        blobs[spec] = _put_checkpoint(spec)
                _drain(pending, schedule, on_result, until=schedule.workers - 1)
                pending[task.remote(job, *(blobs.get(spec) for spec in job.specs))] = (job, time.monotonic())
            _drain(pending, schedule, on_result, until=0)
        finally:
            for ref in pending:  # Ctrl-C, a failed or overdue chunk: stop the others too
                with contextlib.suppress(RayError, ConnectionError):  # a lost cluster has nothing left to cancel
                    ray.cancel(ref, force=True)


def _drain(
    pending: dict[ray.ObjectRef, tuple[ChunkJob, float]],
    schedule: Schedule,
    on_result: Callable[[ChunkJob, PairRecord], object],
    until: int,
) -> None:
    """Collect finished chunks until at most `until` are out; an overdue chunk stops the evaluation."""
    while len(pending) > until:
        oldest = min(sent for _, sent in pending.values())
        wait = max(0.0, oldest + schedule.chunk_timeout - time.monotonic())
        done, _ = ray.wait(list(pending), num_returns=1, timeout=wait)
        if not done:
            raise _overdue(pending, schedule)
        job, _ = pending.pop(done[0])
        on_result(job, _result(done[0], job, schedule))
