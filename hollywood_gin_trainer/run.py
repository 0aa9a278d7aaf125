"""`TrainingRun`: the one owner of a training run's state, around ppo.py's update.

A run holds the config (checked once), the actor-critic and its Adam (ppo.py's `make_learner`), the opponent pool,
the arena's matches, the progress counters, its two random streams and the device. `create(config)` makes one,
`resume(path)` restores one from its last training-state file, `save(path)` writes it (trainstate.py). main.py is a
loop over its steps: `start()` (the warm start), then per update `update(n)` (ppo.py's `update`) and `snapshot(n)`,
and now and then `evaluate()` and `record_evaluation(results)`. The arena plays the matches: an `arena.Arena` in
this process, or with `train.workers = K > 1` a `workers.RemoteArena` whose matches, opponents and streams live on
K Ray actors.

Constructing a run changes no process-wide state: torch's threads and the kernel threads' default are the program's
to set (main.py sets `train.torch_threads`); the initial weights come from a forked torch stream; every kernel the
run builds is given its thread count. Random streams, both seeded from `train.seed`: a numpy `Generator` (deals'
order of opponents and seats, the warm start's teacher matches) and a torch `Generator` on the device (action
samples, minibatch orders, the warm start's epochs).

Devices: the engine and the heuristics run on the CPU; the model, the snapshots, the sampling generator and every
tensor of the learner live on `device`; a step's observations cross to it once, batched, and its sampled actions
come back once.
"""

from __future__ import annotations

import copy
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.agents.checkpoint import load_network, save_checkpoint
from hollywood_gin_env.agents.loading import policy_file
from hollywood_gin_env.engine.threads import check_num_threads, threads_beside
from hollywood_gin_env.evaluation.duplicate import PairRecord, pair_jobs
from hollywood_gin_env.evaluation.evaluate import summarize_pair
from hollywood_gin_trainer import trainstate
from hollywood_gin_trainer.arena import Arena
from hollywood_gin_trainer.config import Config, TrainConfig, network_difference
from hollywood_gin_trainer.forward import check_compiles
from hollywood_gin_trainer.pool import OpponentPool
from hollywood_gin_trainer.ppo import Matches, make_learner, update
from hollywood_gin_trainer.privileged import privileged_view_size
from hollywood_gin_trainer.trainstate import Progress
from hollywood_gin_trainer.warmstart import Cloning, clone, clones, collect_teacher


def env_threads_of(train: TrainConfig) -> int:
    """`train.env_threads`, or where it is absent the CPUs this process may use less torch's `train.torch_threads`
    (at least one): torch's threads spin on their CPUs after each forward pass, so kernels there slow both."""
    if train.env_threads is None:
        return threads_beside(train.torch_threads)
    return check_num_threads(train.env_threads, "train.env_threads")


def resolve_device(name: str) -> torch.device:
    """The torch device of a name ("cpu", "cuda", "cuda:1", ...); ValueError in one line if it is not usable."""
    try:
        device = torch.device(name)
    except RuntimeError as error:
        raise ValueError(f"--device {name!r} is not a torch device name ({error}); use cpu or cuda") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: torch sees no CUDA device; use --device cpu")
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"--device {name}: only cpu and cuda are supported")
    return device


def init_weights(spec: str, network: dict[str, Any]) -> dict[str, torch.Tensor]:
    """The policy weights of `warmstart.init` ("bot" or "checkpoint:PATH"); ValueError in one line naming the spec
    unless its network is `network` (the run's [model]: the same name and arguments), naming the difference."""
    try:
        policy, metadata = load_network(policy_file(spec))
    except (ValueError, FileNotFoundError) as error:
        raise type(error)(f"warmstart.init={spec}: {error}") from None
    differ = network_difference(metadata["network"], network)
    if differ:
        raise ValueError(f"warmstart.init={spec}: its network differs from [model]'s: {differ}")
    return policy.state_dict()


def check_saves(network: torch.nn.Module, spec: dict[str, Any]) -> None:
    """ValueError in one line, before anything trains, unless a checkpoint of this network can be written as `spec`
    names it: the checks of the run's every save (save_checkpoint's: tensors the named network would not load,
    weights out of a checkpoint's bounds), made on a temporary file."""
    with tempfile.TemporaryDirectory(prefix="hollywood-gin-") as folder:
        path = Path(folder) / "network.safetensors"
        try:
            save_checkpoint(path, network, spec)
        except ValueError as error:
            message = str(error).replace(f"{path}: ", "").removesuffix("; nothing written")
            raise ValueError(f"[model]: the network cannot be saved as named: {message}") from None


class TrainingRun:
    """Everything one training run is made of (module docstring). Make one with `create` or `resume`."""

    def __init__(
        self,
        config: Config,
        device: torch.device | str = "cpu",
        commit: str = "unknown",
        ray_address: str | None = None,
        allow_import: bool = True,
        imports: tuple[str, ...] = (),
    ) -> None:
        """A run of a checked config (`create` and `resume` make one); `allow_import=False` where the config was read
        from a training state: the agents it names load as a file's (hollywood_gin_trainer/opponents.py).
        `imports`: the modules the program imported (`--import`), which Ray workers import too."""
        if ray_address and config.train.workers == 1:
            raise ValueError(
                f"--ray-address {ray_address}: train.workers is 1 (every match in this process); "
                "set train.workers=K > 1 to train with Ray workers"
            )
        self.config, self.device, self.commit = config, torch.device(device), commit
        seed = config.train.seed
        self.env_threads = env_threads_of(config.train)
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.model, self.optimizer = make_learner(config, self.device)
        self.network_spec = self.model.network_spec  # checked once, by the model
        check_saves(self.model.policy, self.network_spec)  # refused now, not at the first save after the warm start
        if config.train.compile:  # fails here, not after the warm start, where torch.compile cannot work
            privileged = privileged_view_size(config.model.critic_stock_cards, len(config.selfplay.opponents))
            check_compiles(self.model, self.device, config.env.num_envs, privileged)
        self.pool = OpponentPool(config, self.device, self.env_threads, seed, allow_import)
        self.arena: Matches
        if config.train.workers > 1:  # the matches live on Ray actors (workers.py); only then is Ray imported
            from hollywood_gin_trainer.workers import RemoteArena

            self.arena = RemoteArena(config, self.pool, self.device, ray_address, imports=imports)
        else:
            policy, pool, device = self.model.policy, self.pool, self.device
            self.arena = Arena(config, policy, pool, self.rng, self.generator, device, num_threads=self.env_threads)
        self.progress = Progress()
        self.started = False  # the warm start is done and the arena dealt
        self.init: dict[str, torch.Tensor] | None = None  # warmstart.init's weights, for start() (create reads them)
        self.cloning = Cloning(self.model, config) if clones(config) else None  # until the warm start is done

    @classmethod
    def create(
        cls,
        config: Config,
        device: torch.device | str = "cpu",
        commit: str = "unknown",
        ray_address: str | None = None,
        imports: tuple[str, ...] = (),
    ) -> TrainingRun:
        """A new run of a checked config; `start()` runs its warm start (or takes `warmstart.init`'s weights, read
        and checked here, so a bad file stops the run before anything trains) and deals its matches."""
        run = cls(config, device, commit, ray_address, imports=imports)
        try:
            run.init = init_weights(config.warmstart.init, run.network_spec) if config.warmstart.init else None
            if run.arena.remote:  # its workers start once everything else is checked
                run.arena.start()
        except BaseException:
            run.close()
            raise
        return run

    @classmethod
    def resume(
        cls,
        path: str | os.PathLike,
        device: torch.device | str = "cpu",
        commit: str = "unknown",
        ray_address: str | None = None,
        imports: tuple[str, ...] = (),
    ) -> TrainingRun:
        """The run saved in a training-state file, ready to continue exactly; ValueError in one line naming the
        file and the damaged value otherwise. The network and agents the file names resolve only among those known
        (`imports`: the modules `--import` imported)."""
        config, metadata = trainstate.read_config(path)
        run = cls(config, device, commit, ray_address, allow_import=False, imports=imports)  # the config is the file's
        try:
            trainstate.load(path, run, metadata)  # the whole file checked before any worker starts
            if run.arena.remote:
                run.arena.start()
        except BaseException:
            run.close()
            raise
        run.started = run.cloning is None  # else saved in its warm start, which `start()` continues
        return run

    def start(self, log=None, show_progress: bool = False, stop: Callable[[], bool] = lambda: False) -> bool:
        """The warm start (if configured; `warmstart.init`'s weights instead where given), then fresh matches for
        PPO; log(epoch, stats) after each cloning epoch. True once started; False if stop() held between two steps
        of the warm start: the run is not started, and `save` keeps its cloning where it stands (warmstart.py)."""
        if self.config.warmstart.init:
            self.model.policy.load_state_dict(self.init)
        elif self.cloning is not None:
            decisions = self._warm_start(log, show_progress, stop)
            if decisions is None:
                return False
            self.progress.global_step, self.cloning = decisions, None
        self.arena.reset(seed=self.config.train.seed)
        self.started = True
        return True

    def _warm_start(self, log, show_progress: bool, stop: Callable[[], bool]) -> int | None:
        """The teacher's decisions collected, then cloned from where `cloning` stands; their number, or None if
        stopped. The teacher's matches draw from a copy of the run's numpy stream, which moves on only once the warm
        start is done: a stopped one is saved with the stream it began with and collects the same decisions again."""
        from tqdm import tqdm

        w, cloning = self.config.warmstart, self.cloning
        bars = {"disable": not show_progress, "dynamic_ncols": True, "file": sys.stderr}
        rng = copy.deepcopy(self.rng)
        with tqdm(
            total=w.decisions, desc=f"warm start: {w.teacher}", unit=" decisions", unit_scale=True, **bars
        ) as bar:
            data = collect_teacher(
                self.config, self.model.policy, rng, self.env_threads, progress=bar.update, stop=stop
            )
        if data is None:
            return None
        size, config = len(data["actions"]), self.config
        total, done = w.epochs * size, cloning.rows_done(size, config)
        desc = "warm start: cloning"  # every epoch's decisions: the bar moves with each minibatch
        with tqdm(total=total, initial=done, desc=desc, unit=" decisions", unit_scale=True, **bars) as bar:
            on_epoch = log if log is not None else lambda epoch, stats: None
            if not clone(self.model, data, config, self.generator, on_epoch, self.device, cloning, stop, bar.update):
                return None
        self.rng.bit_generator.state = rng.bit_generator.state
        return size

    def update(self, number: int) -> dict[str, float]:
        """PPO update `number` (ppo.py's `update`), counted in the progress; its figures by TensorBoard tag."""
        figures = update(self.config, self.model, self.optimizer, self.arena, number, self.generator)
        self.progress.update = number
        self.progress.global_step += int(figures["charts/decisions"])
        return figures

    def snapshot(self, update: int) -> bool:
        """Freeze the policy into the pool if `update` is a snapshot update (never for a pool nobody draws from);
        True if it did."""
        if update % self.config.selfplay.snapshot_every or not self.pool.lineup.draws_snapshots():
            return False
        self.arena.snapshot(self.model.policy, update)
        return True

    def evaluate(self) -> dict[str, dict[str, Any]]:
        """Duplicate-deal matches of the greedy policy against each eval opponent, on evaluate.py's path: the chunks
        of hollywood_gin_env.evaluation.duplicate (each opponent its own pair), played by the arena (here, or on the
        rollout workers when train.workers > 1; the same results either way); the summaries by opponent label."""
        e = self.config.eval
        threads = self.config.train.env_threads if self.arena.remote else self.env_threads  # a worker's: its own
        rules, labels = self.config.make_rules(), self.config.eval_labels()
        pairs = [(("learner", spec), ("learner", label)) for spec, label in zip(e.opponents, labels, strict=True)]
        jobs = [
            job
            for specs, names in pairs
            for job in pair_jobs(specs, names, e.matches, e.seed, rules, env_threads=threads)
        ]
        try:
            played = self.arena.evaluate(self.model, jobs)
        finally:
            self.model.train()
        records = {label: PairRecord("learner", label) for label in labels}
        for job, record in zip(jobs, played, strict=True):
            records[job.names[1]].merge(record)
        return {label: summarize_pair(record) for label, record in records.items()}

    def record_evaluation(self, results: dict[str, dict[str, Any]]) -> bool:
        """Add an evaluation's headline figures to the progress history; True if it is the best so far (the lower
        95% bound against the first eval opponent)."""
        return self.progress.record(results, self.config.eval_labels()[0])

    def save(self, path: str | os.PathLike) -> None:
        """Write the training state atomically: a policy file (load_agent plays it) with the run's state inside."""
        trainstate.save(path, self)

    def save_policy(self, path: str | os.PathLike) -> None:
        """Write the policy alone (best, policy) with what it records about how it was made."""
        training = trainstate.policy_record(self.config, self.progress, self.commit)
        rules = self.config.make_rules().to_dict()
        save_checkpoint(path, self.model.policy, self.network_spec, deterministic=True, rules=rules, training=training)

    def close(self) -> None:
        """Stop the run's rollout workers, if it has any (Ray also stops them when this process exits)."""
        self.arena.close()
