"""Rollout workers on Ray (`train.workers = K > 1`): K actors collect each update's rollout; the learner learns.

`RemoteArena` takes the place of the run's in-process `Arena`, with the same interface (ppo.py's `Matches`): the
`env.num_envs` matches are split into K contiguous shares (worker k gets `num_envs // K` matches, one more for k <
`num_envs % K`), and worker k's match j is the run's match `first_k + j`, dealt with seed `train.seed + first_k +
j`, so the first deals are those of a one-worker run. Each worker (`RolloutWorker`, one Ray actor of one CPU, one
torch thread) holds an `Arena` on the CPU, its own `OpponentPool` (the frozen agents and a copy of every snapshot), a
CPU copy of the `ActorCritic` and its own random streams. A worker first imports the modules the program imported
(`--import`: the user's networks and agents, as the evaluator's Ray tasks do) and, for a new run, the modules the
user's config names (a MODULE:FACTORY network, a MODULE:FUNCTION advantage estimator), so it builds what the learner
built.

Seed rule of worker k (0-based) of matches dealt from seed s (`reset(s)`; the run's is `train.seed`): `sequence =
numpy.random.SeedSequence([s, k])`; its numpy `Generator` (opponents and seats of new matches) is
`numpy.random.default_rng(sequence)`, its torch `Generator` (action samples of the learner and of the snapshots) is
seeded with `int(sequence.generate_state(1, uint64)[0])`.

Each update (synchronous PPO): the learner puts its weights in Ray's object store once; every worker loads them,
plays `ppo.rollout_steps` steps with its `Arena` (`rollout_rows`), which computes GAE (bootstrapping with its copy)
and returns only
the learner's valid rows (obs, privileged views, masks, actions, log-probabilities, values, advantages, returns), with
its hand counts and its matches' results against snapshots. The learner concatenates the rows in worker order into
one `Batch` on its device. The learner's pool is the one record of results against snapshots: it adds every worker's
new results and sends the totals with the next weights, so every worker draws snapshots with the same priorities. A
snapshot is the policy after an update, which is exactly the weights of the next rollout: they travel once, with it.

The workers start (`start`: Ray started or joined, K actors) once the run is checked: a new run's after everything
its config names has loaded, a resumed run's after its whole file is checked, each worker's saved matches and streams
loaded here first into matches of its share's size (`check_worker_state`), so no worker starts for a file that will
be refused.

Faults: every wait on a worker has a timeout (`timeout`, seconds) and a late, dead or failing worker stops the run
with a `WorkerError` naming it; the run's last.safetensors stays as last saved (main.py saves before every
evaluation), so `--resume` continues from there. This module imports Ray only when a `RemoteArena` is made, so a
one-worker run never does.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.engine.handstats import HandCounts
from hollywood_gin_env.engine.threads import set_default_threads
from hollywood_gin_env.evaluation.duplicate import ChunkJob, PairRecord
from hollywood_gin_env.support.imports import import_modules
from hollywood_gin_trainer.arena import Arena
from hollywood_gin_trainer.config import Config, config_from_dict, import_config_modules
from hollywood_gin_trainer.pool import OpponentPool
from hollywood_gin_trainer.ppo import ActorCritic, Batch, actor_critic, policy_network

ROWS = tuple(f.name for f in dataclasses.fields(Batch))  # a rollout's rows, as they travel from a worker
DEFAULT_TIMEOUT = 600.0  # seconds a worker may take to answer (a rollout of the default recipe takes a few)


class WorkerError(RuntimeError):
    """A rollout worker died, failed or did not answer in time; the message names it."""


def shares(num_envs: int, workers: int) -> list[tuple[int, int]]:
    """(first match, number of matches) of each worker (module docstring)."""
    base, extra = divmod(num_envs, workers)
    sizes = [base + (k < extra) for k in range(workers)]
    firsts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(int)
    return [(int(first), size) for first, size in zip(firsts, sizes, strict=True)]


def worker_streams(seed: int, index: int) -> tuple[np.random.Generator, torch.Generator]:
    """Worker `index`'s numpy and torch generators, derived from the run's seed (module docstring's rule)."""
    sequence = np.random.SeedSequence([seed, index])
    torch_seed = int(sequence.generate_state(1, np.uint64)[0])
    return np.random.default_rng(sequence), torch.Generator().manual_seed(torch_seed)


class RolloutWorker:
    """One worker's matches, opponents, policy copy and streams; a Ray actor in a run, a plain object in tests."""

    def __init__(
        self,
        config_data: dict[str, Any],
        index: int,
        first_match: int,
        num_matches: int,
        allow_import: bool = True,
        imports: tuple[str, ...] = (),
    ) -> None:
        """Worker `index` of the run's config (as plain data), playing matches first_match.. (num_matches of them);
        `allow_import` as the learner's pool loads its agents and network (opponents.py, config.py); `imports` the
        program's `--import` modules, imported first."""
        import_modules(imports)
        if allow_import:  # a new run's config is the user's own: the modules it names are theirs to import
            import_config_modules(config_data)
        config = config_from_dict(config_data)
        # this actor's process is this worker's: one torch thread, and one kernel thread unless train.env_threads
        # says otherwise (K actors on all the cores would oversubscribe them)
        torch.set_num_threads(1)
        threads = 1 if config.train.env_threads is None else config.train.env_threads
        set_default_threads(threads)
        self.config, self.index, self.first_match = config, index, first_match
        self.model = actor_critic(config)
        seed = config.train.seed + index  # each worker's frozen agents draw their own streams (a `random` opponent)
        cpu = torch.device("cpu")
        self.pool = OpponentPool(config, cpu, threads, seed, allow_import)
        rng, generator = worker_streams(config.train.seed, index)
        policy = self.model.policy
        self.arena = Arena(config, policy, self.pool, rng, generator, num_envs=num_matches, num_threads=threads)

    def reset(self, seed: int) -> None:
        """Deal this worker's share of the matches dealt from `seed` and draw their opponents and seats, with the
        worker's streams of that seed (module docstring)."""
        self.arena.rng, self.arena.generator = worker_streams(seed, self.index)
        self.arena.reset(seed=seed + self.first_match)

    def rollout_rows(
        self, weights: dict[str, torch.Tensor], wins: np.ndarray, played: np.ndarray, snapshot_update: int | None
    ) -> dict[str, Any]:
        """One rollout with these weights (first frozen into the pool as `snapshot_update`'s snapshot, if given): the
        learner's rows as arrays (ROWS), the hand counts, the new results against snapshots, the times."""
        started = time.perf_counter()
        self.model.load_state_dict(weights)
        if snapshot_update is not None:
            self.pool.add(self.model.policy, snapshot_update)
        self.pool.wins[:], self.pool.played[:] = wins, played
        batch = self.arena.rollout_batch(self.model)
        return {
            **{name: getattr(batch, name).numpy() for name in ROWS},
            "hands": self.arena.stats,
            "matches": self.arena.matches,
            "new_wins": self.pool.wins - wins,
            "new_played": self.pool.played - played,
            "forward_s": self.arena.forward_s,
            "seconds": time.perf_counter() - started,
        }

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """This worker's matches and random streams, as arena.py's `state` (its pool is the learner's)."""
        arrays, data = self.arena.state()
        arrays["generator"] = self.arena.generator.get_state().numpy()
        return arrays, {**data, "numpy": self.arena.rng.bit_generator.state}

    def load_state(self, arrays: dict[str, np.ndarray], data: dict[str, Any], pool: dict[str, Any]) -> None:
        """Put back what `state` returned, and the learner's pool (`OpponentPool.contents`'s); ValueError naming what
        does not fit."""
        rng, generator = saved_streams(arrays, data, self.index)
        self.pool.restore(**pool)  # first: the arena's check bounds the snapshot slots by the pool's snapshots
        self.arena.load_state({k: v for k, v in arrays.items() if k != "generator"}, data)
        self.arena.rng, self.arena.generator = rng, generator

    def evaluate(self, weights: dict[str, torch.Tensor], jobs: list[ChunkJob]) -> list[PairRecord]:
        """Play evaluation chunks (hollywood_gin_env.evaluation.duplicate's, as evaluate.py's workers do) with the
        learner's greedy policy of these weights in seat A; the records in the jobs' order."""
        self.model.load_state_dict(weights)
        records = self.arena.evaluate(self.model, jobs)
        self.model.train()
        return records

    def where(self) -> tuple[str, int]:
        """(Ray node id, process id) of this worker, as an actor."""
        import os

        import ray

        return ray.get_runtime_context().get_node_id(), os.getpid()


def saved_streams(
    arrays: dict[str, np.ndarray], data: dict[str, Any], index: int
) -> tuple[np.random.Generator, torch.Generator]:
    """Worker `index`'s saved numpy and torch streams (`RolloutWorker.state`'s); ValueError unless they fit."""
    rng, generator = np.random.default_rng(), torch.Generator()
    try:
        rng.bit_generator.state = data["numpy"]
        generator.set_state(torch.from_numpy(arrays["generator"].copy()))
    except (KeyError, TypeError, ValueError, RuntimeError, OverflowError) as error:
        raise ValueError(f"rollout worker {index}'s saved random streams do not fit: {error}") from None
    return rng, generator


def share_arena(config: Config, pool: OpponentPool | None, num_matches: int) -> Arena:
    """Matches of one worker's share size in this process, with no rollout to speak of: what a worker's saved state
    is read into and checked against, before any worker starts. Its network is the learner's, on the meta device: the
    matches read only its `inputs` and `input_size`, so no weights are made and no random number is drawn."""
    with torch.random.fork_rng(devices=[]), torch.device("meta"):
        network = policy_network(config.network_spec())
    return Arena(config, network, pool, np.random.default_rng(), num_envs=num_matches, num_threads=1, steps=1)


def check_worker_state(
    config: Config, pool: OpponentPool, index: int, num_matches: int, arrays: dict[str, np.ndarray], data: Any
) -> None:
    """ValueError naming what does not fit unless worker `index`'s saved matches (`num_matches` of them, against
    the learner's `pool`) and streams load: the worker's own checks, made in this process."""
    saved_streams(arrays, data, index)
    share_arena(config, pool, num_matches).load_state({k: v for k, v in arrays.items() if k != "generator"}, data)


def _put_weights(model: ActorCritic):
    """The model's weights, on the CPU, in Ray's object store once (every worker reads the same object)."""
    import ray

    return ray.put({name: tensor.detach().cpu() for name, tensor in model.state_dict().items()})


class RemoteArena:
    """The run's matches on K Ray actors; `rollout_batch` returns the learner's batch (module docstring)."""

    remote = True

    def __init__(
        self,
        config: Config,
        pool: OpponentPool,
        device: torch.device | str = "cpu",
        ray_address: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        imports: tuple[str, ...] = (),
    ) -> None:
        """`imports`: the modules every worker imports first (the program's `--import`)."""
        self.config, self.pool, self.device, self.timeout = config, pool, torch.device(device), timeout
        self.ray_address, self.workers_count, self.imports = ray_address, config.train.workers, tuple(imports)
        self.started_ray, self.workers = False, []  # `start` starts them
        self.stats, self.matches, self.forward_s = HandCounts(), 0, 0.0
        self.worker_seconds: list[float] = []  # each worker's own seconds for its share of the last rollout
        self.worker_rows: list[int] = []  # the learner's decisions each worker returned
        self.snapshot_pending: int | None = None  # the update whose snapshot travels with the next weights

    def start(self) -> None:
        """Start Ray here (or join `ray_address`) and the K workers, unless they run (module docstring)."""
        if self.workers:
            return
        import ray

        from hollywood_gin_env.evaluation.ray_tasks import start_ray

        self.started_ray = start_ray(self.ray_address, self.workers_count, WorkerError, "train.workers")
        actor = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        data = self.config.to_dict()
        self.workers = [
            actor.remote(data, k, first, size, self.pool.allow_import, self.imports)
            for k, (first, size) in enumerate(shares(self.config.env.num_envs, self.workers_count))
        ]

    def specs(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """The dtype name and shape of each array `state` returns (worker k's under "k."), known without a worker."""
        generator = ("uint8", tuple(torch.Generator().get_state().shape))
        specs, by_size = {}, {}
        for k, (_, size) in enumerate(shares(self.config.env.num_envs, self.workers_count)):
            if size not in by_size:
                by_size[size] = share_arena(self.config, None, size).specs()
            specs |= {f"{k}.{name}": spec for name, spec in by_size[size].items()}
            specs[f"{k}.generator"] = generator
        return specs

    def _name(self, k: int) -> str:
        return f"rollout worker {k} of {self.workers_count}"

    def _get(self, refs: list, what: str) -> list:
        """ray.get of one call per worker, each within the timeout; a WorkerError naming the first that fails."""
        from hollywood_gin_env.evaluation.ray_tasks import ray_get

        deadline = time.monotonic() + self.timeout
        results = []
        for k, ref in enumerate(refs):
            name = self._name(k)
            late = (
                f"{name}: no answer to {what} within {self.timeout:g} s (a stuck worker, "
                "or a cluster with fewer free CPUs than train.workers?)"
            )
            died = f"{name} died during {what} ({{kind}}); the run stops"
            timeout = max(0.0, deadline - time.monotonic())
            results.append(ray_get(ref, timeout, WorkerError, f"{name} failed in {what}", late, died))
        return results

    def reset(self, seed: int) -> None:
        """Deal every worker's share of the matches dealt from `seed`, each with its streams of that seed."""
        self.start()
        self._get([w.reset.remote(seed) for w in self.workers], "reset")

    def snapshot(self, policy: torch.nn.Module, update: int) -> None:
        """Freeze the policy into the learner's pool, and send the learner's next weights (the same: a snapshot is
        taken after an update) to the workers as snapshot `update` too."""
        self.pool.add(policy, update)
        self.snapshot_pending = update

    def rollout_batch(self, model: ActorCritic) -> Batch:
        """Every worker's rollout with the model's weights, concatenated in worker order on the run's device."""
        self.start()
        weights = _put_weights(model)
        wins, played = self.pool.wins.copy(), self.pool.played.copy()
        refs = [w.rollout_rows.remote(weights, wins, played, self.snapshot_pending) for w in self.workers]
        results = self._get(refs, "rollout")
        self.snapshot_pending = None
        self.stats, self.matches = HandCounts(), 0
        for result in results:
            self.stats.merge(result["hands"])
            self.matches += result["matches"]
            self.pool.wins += result["new_wins"]
            self.pool.played += result["new_played"]
        self.forward_s = max(result["forward_s"] for result in results)
        self.worker_seconds = [result["seconds"] for result in results]
        self.worker_rows = [len(result["actions"]) for result in results]
        rows = {name: torch.from_numpy(np.concatenate([r[name] for r in results])).to(self.device) for name in ROWS}
        return Batch(**rows)

    def hand_summary(self) -> dict[str, float]:
        """The rates of the last rollout's hands (handstats' definitions), their number and matches."""
        return {**self.stats.rates(), "hands": float(self.stats.hands), "matches": float(self.matches)}

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Every worker's matches and streams (worker k's arrays under "k."), in worker order."""
        self.start()
        saved = self._get([w.state.remote() for w in self.workers], "state")
        arrays = {f"{k}.{name}": array for k, (part, _) in enumerate(saved) for name, array in part.items()}
        return arrays, {"workers": [data for _, data in saved]}

    def load_state(self, arrays: dict[str, np.ndarray], data: dict[str, Any]) -> None:
        """Restore every worker (after the run's pool, which each worker gets a copy of), each worker's state
        checked here first (`check_worker_state`): the workers start only for a state that loads."""
        saved = data.get("workers") if isinstance(data, dict) else None
        if not isinstance(saved, list) or len(saved) != self.workers_count:
            raise ValueError(f"arena.workers: the state of {self.workers_count} rollout workers (train.workers)")
        pool = self.pool.contents()
        parts = [
            {name[len(f"{k}.") :]: a for name, a in arrays.items() if name.startswith(f"{k}.")}
            for k in range(len(saved))
        ]
        sizes = [size for _, size in shares(self.config.env.num_envs, self.workers_count)]
        for k, (size, part, data_k) in enumerate(zip(sizes, parts, saved, strict=True)):
            check_worker_state(self.config, self.pool, k, size, part, data_k)
        self.start()
        calls = [
            w.load_state.remote(part, data_k, pool) for w, part, data_k in zip(self.workers, parts, saved, strict=True)
        ]
        self._get(calls, "load_state")

    def evaluate(self, model: ActorCritic, jobs: list[ChunkJob]) -> list[PairRecord]:
        """Evaluation chunks with the model's greedy policy in seat A, shared out over the workers (chunk j to
        worker j mod K); the records in the jobs' order (run.py's `evaluate` merges them)."""
        self.start()
        weights = _put_weights(model)
        shares_of = [jobs[k :: self.workers_count] for k in range(self.workers_count)]
        refs = [w.evaluate.remote(weights, share) for w, share in zip(self.workers, shares_of, strict=True)]
        played = self._get(refs, "evaluate")
        records: list[PairRecord] = [None] * len(jobs)  # type: ignore[list-item]
        for k, results in enumerate(played):
            records[k :: self.workers_count] = results
        return records

    def where(self) -> list[tuple[str, int]]:
        """(node id, process id) of every worker."""
        self.start()
        return self._get([w.where.remote() for w in self.workers], "where")

    def close(self) -> None:
        """Stop the workers (and a Ray this arena started), if they were started."""
        if not self.workers and not self.started_ray:
            return
        import ray

        for worker in self.workers:
            ray.kill(worker)
        self.workers = []
        if self.started_ray:
            ray.shutdown()
            self.started_ray = False
