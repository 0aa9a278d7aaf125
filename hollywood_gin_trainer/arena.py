"""The arena: N matches in a `SelfPlayVectorEnv`, the learner against the pool, collected into a `RolloutStorage`.

The arena interface, shared with workers.py's `RemoteArena` (the same matches on Ray actors), so that a
`TrainingRun` only chooses which: `reset(seed)` deals fresh matches, `collect(model)` plays one rollout and returns
the learner's rows with their GAE advantages as a `Batch` on the run's device, `snapshot(policy, update)` freezes the
policy into the pool, `evaluate(model, jobs)` plays evaluation chunks, `timings` is the last rollout's
`RolloutTimings`, `hand_summary()`, `state_dict()`, `load_state_dict()` and `close()`.

In a "self" match the learner plays both seats and both seats' decisions are stored; against a frozen opponent
(a snapshot or a heuristic) only the learner's seat is. The same loop collects a teacher's decisions for the warm
start (`actor=`: the teacher plays every seat of every match). The engine runs on the CPU; the learner's and the
snapshots' forward passes run on the run's device, and each step's observations cross to it once, batched. Hand
statistics come from the env's step infos (hollywood_gin_env.engine.handstats), never from the engine's arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from hollywood_gin_env.agents import AgentProtocol, load_agent
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
from hollywood_gin_env.agents.masked import sample_masked
from hollywood_gin_env.agents.policy import PolicyAgent
from hollywood_gin_env.engine.handstats import HandCounts
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.evaluation.duplicate import ChunkJob, PairRecord, play_job
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_trainer.config import Config
from hollywood_gin_trainer.forward import RolloutForward
from hollywood_gin_trainer.pool import EXPERT, SELF, OpponentPool, kind_of_opponent
from hollywood_gin_trainer.ppo import ActorCritic, Batch
from hollywood_gin_trainer.privileged import expert_deal_scores, privileged_view
from hollywood_gin_trainer.rollout import RolloutStorage

MAX_HAND_POINTS = 1000.0  # far above any hand's score (a gin with 100 deadwood against it and every bonus)


@dataclass
class RolloutTimings:
    """Where the last rollout's time went (train.py logs it under time/, benchmarks/train.py reports it)."""

    forward_s: float = 0.0
    """seconds in the learner's forward passes (with Ray workers: the slowest worker's)"""
    worker_seconds: list[float] = field(default_factory=list)
    """each Ray worker's own seconds for its share of the rollout (empty in process)"""
    worker_rows: list[int] = field(default_factory=list)
    """the learner's decisions each Ray worker returned (empty in process)"""


class Arena:
    """The training matches and who sits where, in this process (module docstring: the arena interface)."""

    def __init__(
        self,
        num_envs: int,
        rules: Rules,
        reward: str,
        pool: OpponentPool | None,
        episode: str = "match",
        device: torch.device | str = "cpu",
        stock_cards: int = 1,
        playout: bool = False,
        rng: np.random.Generator | None = None,
        generator: torch.Generator | None = None,
        steps: int = 1,
        gae: tuple[float, float] = (1.0, 1.0),
        num_threads: int | None = None,
        compiled: bool = False,
    ) -> None:
        self.env = SelfPlayVectorEnv(num_envs, rules, reward=reward, episode=episode, num_threads=num_threads)
        self.threads = (
            self.env.threads
        )  # every kernel of the rollout runs on these (hollywood_gin_env/engine/threads.py)
        self.device = torch.device(device)
        self.num_envs = num_envs
        self.forward = RolloutForward(compiled, self.device, num_envs)  # the learner's (train.compile)
        self.rng, self.generator = rng, generator  # seats and new opponents; action samples (the run's streams)
        self.steps, self.gae = steps, gae  # a PPO rollout's steps per match; (gamma, lambda) of its advantages
        self.storage: RolloutStorage | None = None  # made by the first `collect`, for the model's input rows
        self.timings = RolloutTimings()
        self.stock_cards = stock_cards  # the privileged view's (privileged.py)
        self.playout = playout  # play each deal out with `expert` for the privileged view
        self.deal = np.zeros(num_envs)  # seat 0's score in that play-out of each match's current deal
        self.pool = pool
        self.opponent = np.full(num_envs, SELF, dtype=np.int64)
        self.learner_seat = np.zeros(num_envs, dtype=np.int64)
        self.obs: dict[str, np.ndarray] = {}
        self.players = np.zeros(num_envs, dtype=np.int64)
        self.stats = HandCounts()
        self.matches = 0  # matches finished since the last `clear_stats`

    @classmethod
    def for_config(
        cls,
        config: Config,
        pool: OpponentPool,
        rng: np.random.Generator,
        generator: torch.Generator,
        device: torch.device | str = "cpu",
        num_envs: int | None = None,
        num_threads: int | None = None,
    ) -> Arena:
        """The arena of a run of this config (or of `num_envs` of its matches: a rollout worker's share), its kernels
        on `num_threads` threads (default: train.env_threads; None there: the process's default)."""
        env, model, ppo = config.env, config.model, config.ppo
        return cls(
            env.num_envs if num_envs is None else num_envs,
            config.make_rules(),
            env.reward,
            pool,
            env.episode,
            device,
            model.critic_stock_cards,
            model.critic_playout,
            rng,
            generator,
            ppo.rollout_steps,
            (ppo.gamma, ppo.gae_lambda),
            config.train.env_threads if num_threads is None else num_threads,
            config.train.compile,
        )

    def reset(self, seed: int) -> None:
        """Fresh matches (match i seeded with seed + i) and a fresh draw of opponents and seats."""
        self.obs, infos = self.env.reset(seed=seed)
        self.players = infos["current_player"]
        self._play_deals_out(np.ones(self.num_envs, dtype=np.bool_))
        self._assign(np.ones(self.num_envs, dtype=np.bool_))

    def clear_stats(self) -> None:
        """Start counting hands and matches afresh."""
        self.stats, self.matches = HandCounts(), 0

    def hand_summary(self) -> dict[str, float]:
        """The rates of the hands ended since `clear_stats` (handstats' definitions), their number and matches."""
        return {**self.stats.rates(), "hands": float(self.stats.hands), "matches": float(self.matches)}

    def _assign(self, rows: np.ndarray) -> None:
        count = int(rows.sum())
        if count:
            self.opponent[rows] = self.pool.draw(count, self.rng) if self.pool is not None else SELF
            self.learner_seat[rows] = self.rng.integers(0, 2, size=count)

    def collect(self, model: ActorCritic) -> Batch:
        """One rollout of `steps` steps in every match against the pool: the learner's rows and their advantages
        (GAE per player), on the device."""
        if self.storage is None:
            self.storage = RolloutStorage(
                self.steps, self.num_envs, model.policy.input_size, NUM_ACTIONS, self.stock_cards, self.threads
            )
        self.clear_stats()
        self.play(self.storage, model)
        advantages = self.storage.advantages(*self.gae)
        return Batch.from_rollout(self.storage, advantages, self.device)

    def play(self, storage: RolloutStorage, model: ActorCritic | None, actor: AgentProtocol | None = None) -> None:
        """Play storage.steps steps in every match; the learner's rows (or, given an `actor` playing every seat, the
        actor's) go to storage."""
        generator = self.generator
        if model is not None:  # the learner's lookahead inputs (`policy.prepare`) on the arena's kernel threads
            model.policy.threads = self.threads
        storage.clear(self.env.next_step)
        forward_s = 0.0  # time in the learner's forward passes (the rest: env, opponents, bookkeeping)
        for t in range(storage.steps):
            learner = (self.opponent == SELF) | (self.players == self.learner_seat)
            actions = np.zeros(self.num_envs, dtype=np.int64)
            obs, masks = self.obs["observation"], self.obs["action_mask"].astype(np.bool_)
            privileged = self._privileged(self.players)
            rows = np.flatnonzero(learner)
            if actor is not None:
                actions[rows] = actor.act(obs[rows], masks[rows])
                storage.logprobs[t, rows] = 0.0
                storage.values[t, rows] = 0.0
                storage.obs[t] = obs
            elif rows.size:
                started = time.perf_counter()
                inputs = model.policy.prepare(obs[rows])
                actions[rows], storage.logprobs[t, rows], storage.values[t, rows] = self._sample(
                    model, inputs, privileged[rows], masks[rows], generator
                )
                forward_s += time.perf_counter() - started
                storage.obs[t, rows] = inputs  # only the learner's rows are ever read back
            self._opponents_act(~learner, obs, masks, actions, generator)
            storage.privileged[t], storage.masks[t], storage.actions[t] = privileged, masks, actions
            storage.valid[t], storage.players[t] = learner, self.players
            self._step(storage, actions)
        storage.bootstrap[:] = self._bootstrap(model) if model is not None else 0.0
        self.timings = RolloutTimings(forward_s)

    def _opponents_act(self, rows_mask, obs, masks, actions, generator) -> None:
        for opponent in np.unique(self.opponent[rows_mask]):
            rows = np.flatnonzero(rows_mask & (self.opponent == opponent))
            actions[rows] = self.pool.act(int(opponent), obs[rows], masks[rows], generator)

    def _step(self, storage: RolloutStorage, actions: np.ndarray) -> None:
        self.obs, rewards, terminations, _, infos = self.env.step(actions)
        self.stats.add_infos(infos)
        winner = infos["match_winner"]
        ended = winner >= 0
        storage.credit(infos["decision_step"], rewards, terminations)
        if ended.any():
            self.matches += int(ended.sum())
            if self.pool is not None:
                self.pool.record(self.opponent[ended], winner[ended] == self.learner_seat[ended])
            self._assign(ended)
        self.players = infos["current_player"]
        self._play_deals_out(infos["hand_over"])  # every ended hand's match holds a new deal now

    def _play_deals_out(self, rows_mask: np.ndarray) -> None:
        """Refresh `deal` where a hand was just dealt (only with `playout`)."""
        if self.playout and rows_mask.any():
            rows = np.flatnonzero(rows_mask)
            self.deal[rows] = expert_deal_scores(self.env.engine, rows, DEFAULT_WEIGHTS, self.threads)

    def _bootstrap(self, model: ActorCritic) -> np.ndarray:
        """V of each seat's view at the rollout's end (for chains cut by it)."""
        values = np.zeros((self.num_envs, 2), dtype=np.float32)
        with torch.no_grad():
            for p in (0, 1):
                seat = np.full(self.num_envs, p)
                view = torch.from_numpy(model.policy.prepare(self.env.observe(seat)["observation"])).to(self.device)
                privileged = torch.from_numpy(self._privileged(seat)).to(self.device)
                values[:, p] = model.value(view, privileged).cpu().numpy()
        return values

    def _privileged(self, seats: np.ndarray) -> np.ndarray:
        """The privileged view (privileged.py) of seats[i] in each match."""
        kinds = kind_of_opponent(self.opponent)
        return privileged_view(self.env.engine, seats, kinds, self.deal, self.stock_cards, self.threads)

    def _sample(
        self,
        model: ActorCritic,
        obs: np.ndarray,
        privileged: np.ndarray,
        masks: np.ndarray,
        generator: torch.Generator,
    ):
        """(actions, log-probabilities, values) of the learner on a batch of input rows, sampled on the device."""
        logits, values = self.forward(
            model, torch.from_numpy(obs).to(self.device), torch.from_numpy(privileged).to(self.device)
        )
        with torch.no_grad():
            actions, chosen = sample_masked(logits, torch.from_numpy(masks).to(self.device), generator)
        return actions.cpu().numpy(), chosen.cpu().numpy(), values.cpu().numpy()

    def snapshot(self, policy: torch.nn.Module, update: int) -> None:
        """Freeze the policy into the pool as update `update`'s snapshot."""
        self.pool.add(policy, update)

    def evaluate(self, model: ActorCritic, jobs: list[ChunkJob]) -> list[PairRecord]:
        """Evaluation chunks (hollywood_gin_env.evaluation.duplicate's, as evaluate.py plays them) with the model's
        greedy policy in seat A, played here; the records in the jobs' order."""
        count = self.threads.num_threads
        learner = PolicyAgent(model.policy, deterministic=True, name="learner", num_threads=count)
        opponents = {name: load_agent(name, num_threads=count) for name in dict.fromkeys(job.specs[1] for job in jobs)}
        return [play_job(job, (learner, opponents[job.specs[1]])) for job in jobs]

    def close(self) -> None:
        """Nothing to stop: the matches live in this process."""

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue these matches exactly (the env's state, the seats), as tensors."""
        env_state = self.env.state_dict()
        engine = {name: _to_tensor(array) for name, array in env_state["engine"].items()}
        return {
            "engine": engine,
            "decision_step": torch.from_numpy(env_state["decision_step"]),
            "step": env_state["step"],
            "opponent": torch.from_numpy(self.opponent.copy()),
            "learner_seat": torch.from_numpy(self.learner_seat.copy()),
            "deal": torch.from_numpy(self.deal.copy()),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` saved; the observations to act on are encoded again from the engine."""
        dtypes = {name: array.dtype for name, array in self.env.state_dict()["engine"].items()}
        saved = state["engine"]
        if not isinstance(saved, dict) or set(saved) != set(dtypes):
            found = sorted(saved) if isinstance(saved, dict) else type(saved).__name__
            raise ValueError(f"arena.engine: expected the engine fields {sorted(dtypes)}, found {found}")
        opponent = _seat_array("arena.opponent", state["opponent"], self.num_envs, -1, self._last_opponent_id())
        learner_seat = _seat_array("arena.learner_seat", state["learner_seat"], self.num_envs, 0, 1)
        deal = _deal_array(state.get("deal"), self.num_envs)
        engine = {name: _from_tensor(tensor, dtypes[name]) for name, tensor in saved.items()}
        self.env.load_state_dict(
            {"engine": engine, "decision_step": state["decision_step"].numpy(), "step": state["step"]}
        )
        self.players = self.env.current_player
        self.obs = self.env.observe(self.players)
        self.opponent, self.learner_seat, self.deal = opponent, learner_seat, deal

    def _last_opponent_id(self) -> int:
        """The largest opponent id a match may hold: a heuristic, or one of the pool's snapshots."""
        return EXPERT if self.pool is None else EXPERT + len(self.pool.snapshots)


def _seat_array(field: str, tensor: Any, n: int, low: int, high: int) -> np.ndarray:
    """int64[n] of a saved tensor whose values lie in low..high; ValueError naming the field otherwise."""
    if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.int64 or tuple(tensor.shape) != (n,):
        raise ValueError(f"{field}: expected an int64 tensor of shape ({n},), found {tensor!r:.80}")
    array = tensor.numpy().copy()
    if array.size and (array.min() < low or array.max() > high):
        raise ValueError(f"{field}: values must lie in {low}..{high}, found {array.min()}..{array.max()}")
    return array


def _deal_array(tensor: Any, n: int) -> np.ndarray:
    """float64[n] of the saved deals' play-out scores (zeros in a state saved before they were kept); ValueError
    naming the field otherwise."""
    if tensor is None:
        return np.zeros(n)
    if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.float64 or tuple(tensor.shape) != (n,):
        raise ValueError(f"arena.deal: expected a float64 tensor of shape ({n},), found {tensor!r:.80}")
    array = tensor.numpy().copy()
    if not np.isfinite(array).all() or np.abs(array).max(initial=0.0) > MAX_HAND_POINTS:
        raise ValueError(f"arena.deal: values must be finite and within ±{MAX_HAND_POINTS} points")
    return array


def _to_tensor(array: np.ndarray) -> torch.Tensor:
    """numpy -> tensor for weights_only checkpoints (uint64 travels as its int64 bit pattern)."""
    return torch.from_numpy(array.view(np.int64) if array.dtype == np.uint64 else array.copy())


def _from_tensor(tensor: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    array = tensor.numpy()
    return array.view(np.uint64) if dtype == np.uint64 else array.astype(dtype, copy=False)
