"""`TrainingRun`: the one owner of a training run's state.

A run holds the config (checked once), the rules and the policy config (built once), the actor-critic and its
optimizer, the opponent pool, the arena's matches and rollout buffers, the progress counters, every random stream
and the device. `create(config)` makes one, `resume(path)` restores one from a `last.pt`, `save(path)` writes it
atomically (`state_dict()` / `load_state_dict()` underneath). train.py is a flat loop over its steps:
`start()` (the warm start), then per update `schedule`, `collect`, `learn`, and now and then `snapshot`,
`evaluate` and `save`. The arena plays the matches: an `arena.Arena` in this process, or with
`train.workers = K > 1` a `workers.RemoteArena` whose matches, opponents and streams live on K Ray actors;
both have the same interface (arena.py), and `timings` is the last rollout's `RolloutTimings`.

Devices: the engine and the heuristics run on the CPU; the model, the snapshots, the sampling generator and every
tensor of the learner live on `device`; a step's observations cross to it once, batched, and its sampled actions
come back once.

Random streams, all seeded from `train.seed`: the global torch stream (the network's initial weights), a numpy
`Generator` (deals' order of opponents and seats, the warm start's teacher matches) and a torch `Generator` on the
device (action samples, minibatch orders, the warm start's epochs).
"""

from __future__ import annotations

import os
import random
import sys
from dataclasses import asdict
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.agents.checkpoint import save_checkpoint
from hollywood_gin_env.engine.threads import check_num_threads, set_default_threads, threads_beside
from hollywood_gin_env.evaluation.duplicate import PairRecord, pair_jobs
from hollywood_gin_env.evaluation.evaluate import summarize_pair
from hollywood_gin_trainer.arena import Arena, RolloutTimings
from hollywood_gin_trainer.config import Config, TrainConfig
from hollywood_gin_trainer.forward import check_compiles
from hollywood_gin_trainer.pool import OpponentPool
from hollywood_gin_trainer.ppo import ActorCritic, Batch, ppo_update
from hollywood_gin_trainer.privileged import privileged_view_size
from hollywood_gin_trainer.trainstate import (
    TRAIN_KEY,
    Progress,
    capture_rng,
    check_training_state,
    load_training,
    policy_metadata,
    restore_rng,
    save_training_file,
)
from hollywood_gin_trainer.warmstart import clone, collect_teacher


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


class TrainingRun:
    """Everything one training run is made of (module docstring). Make one with `create` or `resume`."""

    def __init__(
        self,
        config: Config,
        device: torch.device | str = "cpu",
        commit: str = "unknown",
        ray_address: str | None = None,
    ) -> None:
        if ray_address and config.train.workers == 1:
            raise ValueError(
                f"--ray-address {ray_address}: train.workers is 1 (every match in this process); "
                "set train.workers=K > 1 to train with Ray workers"
            )
        self.config = config
        self.device = torch.device(device)
        self.commit = commit
        self.rules = config.make_rules()
        seed = config.train.seed
        torch.set_num_threads(config.train.torch_threads)
        # the rollout's kernel threads; made the process default too, as torch's are, so that what the run builds
        # without being told (the warm start's teacher matches) takes as many
        self.env_threads = env_threads_of(config.train)
        set_default_threads(self.env_threads)
        random.seed(seed)
        np.random.seed(seed)
        torch.manual_seed(seed)  # the initial weights: built on the CPU, so the same on every device
        self.rng = np.random.default_rng(seed)
        self.generator = torch.Generator(device=self.device).manual_seed(seed)
        self.model = ActorCritic.for_config(config)
        self.policy_config = self.model.policy_config  # checked once, by the model
        self.model.to(self.device)
        if config.train.compile:  # fails here, not after the warm start, where torch.compile cannot work
            check_compiles(
                self.model, self.device, config.env.num_envs, privileged_view_size(config.model.critic_stock_cards)
            )
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.train.lr, eps=1e-5)
        self.pool = OpponentPool(config.selfplay, self.policy_config, self.device, self.env_threads)
        if config.train.workers > 1:  # the matches live on Ray actors (workers.py); only then is Ray imported
            from hollywood_gin_trainer.workers import RemoteArena

            self.arena = RemoteArena(config, self.pool, self.device, ray_address)
        else:
            self.arena = Arena.for_config(
                config, self.pool, self.rng, self.generator, self.device, num_threads=self.env_threads
            )
        self.progress = Progress()
        self.started = False  # the warm start is done and the arena dealt

    @classmethod
    def create(
        cls, config: Config, device: torch.device | str = "cpu", commit: str = "unknown", ray_address: str | None = None
    ) -> TrainingRun:
        """A new run of a checked config; `start()` runs its warm start and deals its matches."""
        return cls(config, device, commit, ray_address)

    @classmethod
    def resume(
        cls,
        path: str | os.PathLike,
        device: torch.device | str = "cpu",
        commit: str = "unknown",
        ray_address: str | None = None,
    ) -> TrainingRun:
        """The run saved in a last.pt (or a run directory's last.pt), ready to continue exactly."""
        config, saved = load_training(path)
        run = cls(config, device, commit, ray_address)
        try:
            run.load_state_dict(saved)
        except (KeyError, TypeError, AttributeError, RuntimeError, IndexError) as error:
            run.close()  # a part missing, of the wrong kind or shape: the file is not what save() wrote
            detail = " ".join(str(error).split())  # torch's messages span lines
            raise ValueError(f"{path}: the training state is damaged ({type(error).__name__}: {detail})") from None
        except ValueError as error:
            run.close()
            raise ValueError(f"{path}: {error}") from None
        return run

    def start(self, log=None, show_progress: bool = False) -> None:
        """The warm start (if configured), then fresh matches for PPO. log(epoch, stats) after each cloning epoch."""
        w = self.config.warmstart
        if w.teacher != "none" and w.decisions > 0:
            self.progress.global_step = self._warm_start(log, show_progress)
        self.arena.reset(seed=self.config.train.seed)
        self.started = True

    def _warm_start(self, log, show_progress: bool) -> int:
        from tqdm import tqdm

        w = self.config.warmstart
        with tqdm(
            total=w.decisions,
            desc=f"warm start: {w.teacher} decisions",
            unit=" decisions",
            unit_scale=True,
            disable=not show_progress,
            dynamic_ncols=True,
            file=sys.stderr,
        ) as bar:
            data = collect_teacher(self.config, self.rules, self.rng, progress=bar.update)
        with tqdm(
            total=w.epochs,
            desc="warm start: cloning",
            unit=" epoch",
            disable=not show_progress,
            dynamic_ncols=True,
            file=sys.stderr,
        ) as bar:

            def on_epoch(epoch: int, stats: dict[str, float]) -> None:
                bar.update(1)
                if log is not None:
                    log(epoch, stats)

            clone(self.model, data, self.config, self.generator, on_epoch, self.device)
        return len(data["actions"])

    def schedule(self, update: int) -> tuple[float, float]:
        """Set the learning rate of `update` (1-based) on the optimizer; return (lr, entropy coefficient)."""
        train, ppo = self.config.train, self.config.ppo
        updates = train.updates
        lr = train.lr * (1.0 - (update - 1) / updates) if train.anneal_lr else train.lr
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        frac = (update - 1) / max(updates - 1, 1)
        return lr, ppo.ent_coef + (ppo.ent_coef_final - ppo.ent_coef) * frac

    def collect(self) -> Batch:
        """One rollout of every match against the pool, as a batch of the learner's decisions on the device."""
        return self.arena.collect(self.model)

    @property
    def timings(self) -> RolloutTimings:
        """Where the last rollout's time went."""
        return self.arena.timings

    def learn(self, batch: Batch, ent_coef: float) -> dict[str, float]:
        """PPO's epochs on a batch; the losses."""
        losses = ppo_update(self.model, self.optimizer, batch, self.config.ppo, ent_coef, self.generator)
        self.progress.global_step += len(batch)
        return losses

    def snapshot(self, update: int) -> bool:
        """Freeze the policy into the pool if `update` is a snapshot update; True if it did."""
        if update % self.config.selfplay.snapshot_every:
            return False
        self.arena.snapshot(self.model.policy, update)
        return True

    def evaluate(self) -> dict[str, dict[str, Any]]:
        """Duplicate-deal matches of the greedy policy against each eval opponent, on evaluate.py's path: the chunks
        of hollywood_gin_env.evaluation.duplicate (each opponent its own pair), played by the arena (here, or on the
        rollout workers when train.workers > 1; the same results either way)."""
        e = self.config.eval
        config_threads = self.config.train.env_threads  # None: each arena's own (a Ray worker's: 1)
        jobs = [
            job
            for name in e.opponents
            for job in pair_jobs(
                ("learner", name), ("learner", name), e.matches, e.seed, self.rules, env_threads=config_threads
            )
        ]
        try:
            played = self.arena.evaluate(self.model, jobs)
        finally:
            self.model.train()
        records = {name: PairRecord("learner", name) for name in e.opponents}
        for job, record in zip(jobs, played, strict=True):
            records[job.specs[1]].merge(record)
        return {name: summarize_pair(record) for name, record in records.items()}

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue exactly, as checkpoint-safe data (the "train" key of last.pt)."""
        return {
            "config": self.config.to_dict(),
            "progress": asdict(self.progress),
            "device": self.device.type,
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "pool": self.pool.state_dict(),
            "arena": self.arena.state_dict(),
            "rng": capture_rng(self.rng, self.generator),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Put back what `state_dict` returned (for a run of the same config); checked first, in one line."""
        check_training_state(state, self.model, self.optimizer)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.pool.load_state_dict(state["pool"])
        self.arena.load_state_dict(state["arena"])
        self.progress = Progress(**state["progress"])
        saved_device = state.get("device", "cpu")
        if saved_device == self.device.type:
            restore_rng(state["rng"], self.rng, self.generator)
        else:  # a CPU generator's state does not fit a CUDA one: same run, but not bit-exact
            restore_rng({**state["rng"], "generator": None}, self.rng, None)
            self.generator.manual_seed(self.config.train.seed + self.progress.update)
            print(
                f"resuming on {self.device.type} a run saved on {saved_device}: action samples reseeded",
                file=sys.stderr,
            )
        self.started = True

    def save(self, path: str | os.PathLike) -> None:
        """Write last.pt atomically: the run's state."""
        save_training_file(path, {TRAIN_KEY: self.state_dict()})

    def close(self) -> None:
        """Stop the run's rollout workers, if it has any (Ray also stops them when this process exits)."""
        self.arena.close()

    def save_policy(self, path: str | os.PathLike) -> None:
        """Write the policy alone (best.pt, policy.pt) with what it records about how it was made."""
        save_checkpoint(
            path, self.model.policy, self.policy_config, **policy_metadata(self.config, self.progress, self.commit)
        )
