"""The arena: N matches in a `SelfPlayVectorEnv`, the learner against the pool, collected into a `RolloutStorage`.

In a "self" match the learner plays both seats and both seats' decisions are stored; against a frozen opponent
(a snapshot or a heuristic) only the learner's seat is. The same loop collects a teacher's decisions for the warm
start (`actor=`: the teacher plays every seat of every match).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from agents.pool import SELF, OpponentPool
from agents.ppo import ActorCritic, masked_log_probs
from agents.rollout import RolloutStorage
from hollywood_gin_env.agents import AgentProtocol
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.scoring import KIND_DEAD, KIND_GIN, KIND_KNOCK, KIND_UNDERCUT
from hollywood_gin_env.state import R_KIND, R_TURNS, S_HAND_OVER, EngineState

HAND_KINDS = {"dead": KIND_DEAD, "gin": KIND_GIN, "knock": KIND_KNOCK, "undercut": KIND_UNDERCUT}


class Arena:
    """The training matches and who sits where; `collect` fills a rollout."""

    def __init__(self, num_envs: int, rules: Rules, reward: str, match_bonus: float, pool: OpponentPool | None,
                 episode: str = "match") -> None:  # fmt: skip
        self.env = SelfPlayVectorEnv(num_envs, rules, reward=reward, episode=episode)
        self.num_envs = num_envs
        self.match_bonus = match_bonus
        self.pool = pool
        self.opponent = np.full(num_envs, SELF, dtype=np.int64)
        self.learner_seat = np.zeros(num_envs, dtype=np.int64)
        self.obs: dict[str, np.ndarray] = {}
        self.players = np.zeros(num_envs, dtype=np.int64)
        self.stats = _HandStats()
        self.forward_s = 0.0

    def reset(self, seed: int, rng: np.random.Generator) -> None:
        """Fresh matches (match i seeded with seed + i) and a fresh draw of opponents and seats."""
        self.obs, infos = self.env.reset(seed=seed)
        self.players = infos["current_player"]
        self._assign(np.ones(self.num_envs, dtype=np.bool_), rng)

    def _assign(self, rows: np.ndarray, rng: np.random.Generator) -> None:
        count = int(rows.sum())
        if count:
            self.opponent[rows] = self.pool.draw(count, rng) if self.pool is not None else SELF
            self.learner_seat[rows] = rng.integers(0, 2, size=count)

    def collect(self, storage: RolloutStorage, model: ActorCritic | None, generator: torch.Generator,
                rng: np.random.Generator, actor: AgentProtocol | None = None) -> None:  # fmt: skip
        """Play storage.steps steps in every match; the learner's rows (or the actor's) go to storage."""
        storage.clear(self.env.next_step)
        self.forward_s = 0.0  # time in the learner's forward passes (the rest: env, opponents, bookkeeping)
        for t in range(storage.steps):
            learner = (self.opponent == SELF) | (self.players == self.learner_seat)
            actions = np.zeros(self.num_envs, dtype=np.int64)
            obs, masks = self.obs["observation"], self.obs["action_mask"].astype(np.bool_)
            rows = np.flatnonzero(learner)
            if actor is not None:
                actions[rows] = actor.act(obs[rows], masks[rows])
                storage.logprobs[t, rows] = 0.0
                storage.values[t, rows] = 0.0
            elif rows.size:
                started = time.perf_counter()
                actions[rows], storage.logprobs[t, rows], storage.values[t, rows] = _sample(
                    model, obs[rows], masks[rows], generator
                )
                self.forward_s += time.perf_counter() - started
            self._opponents_act(~learner, obs, masks, actions, generator)
            storage.obs[t], storage.masks[t], storage.actions[t] = obs, masks, actions
            storage.valid[t], storage.players[t] = learner, self.players
            self._step(storage, actions, rng)
        storage.bootstrap[:] = self._bootstrap(model) if model is not None else 0.0

    def _opponents_act(self, rows_mask, obs, masks, actions, generator) -> None:
        for opponent in np.unique(self.opponent[rows_mask]):
            rows = np.flatnonzero(rows_mask & (self.opponent == opponent))
            actions[rows] = self.pool.act(int(opponent), obs[rows], masks[rows], generator)

    def _step(self, storage: RolloutStorage, actions: np.ndarray, rng: np.random.Generator) -> None:
        self.obs, rewards, terminations, _, infos = self.env.step(actions)
        self.stats.add(self.env.engine.state)
        winner = infos["match_winner"]
        ended = winner >= 0
        if self.match_bonus and ended.any():
            sign = np.where(winner == 0, 1.0, -1.0)[ended]
            rewards[ended, 0] += sign * self.match_bonus
            rewards[ended, 1] -= sign * self.match_bonus
        storage.credit(infos["decision_step"], rewards, terminations)
        if ended.any():
            self.stats.matches += int(ended.sum())
            if self.pool is not None:
                self.pool.record(self.opponent[ended], winner[ended] == self.learner_seat[ended])
            self._assign(ended, rng)
        self.players = infos["current_player"]

    def _bootstrap(self, model: ActorCritic) -> np.ndarray:
        """V of each seat's view at the rollout's end (for chains cut by it)."""
        values = np.zeros((self.num_envs, 2), dtype=np.float32)
        with torch.no_grad():
            for p in (0, 1):
                view = self.env.observe(np.full(self.num_envs, p))
                values[:, p] = model.value(torch.from_numpy(view["observation"])).numpy()
        return values

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue these matches exactly (the env's state, the seats), as tensors."""
        env_state = self.env.state_dict()
        engine = {name: _to_tensor(array) for name, array in env_state["engine"].items()}
        return {"engine": engine, "decision_step": torch.from_numpy(env_state["decision_step"]),
                "step": env_state["step"], "opponent": torch.from_numpy(self.opponent.copy()),
                "learner_seat": torch.from_numpy(self.learner_seat.copy())}  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` saved; the observations to act on are encoded again from the engine."""
        dtypes = {name: array.dtype for name, array in self.env.engine.state._asdict().items()}
        engine = {name: _from_tensor(tensor, dtypes[name]) for name, tensor in state["engine"].items()}
        self.env.load_state_dict({"engine": engine, "decision_step": state["decision_step"].numpy(),
                                  "step": state["step"]})  # fmt: skip
        self.players = self.env.engine.current_player.copy()
        self.obs = self.env.observe(self.players)
        self.opponent = state["opponent"].numpy().copy()
        self.learner_seat = state["learner_seat"].numpy().copy()


def _sample(model: ActorCritic, obs: np.ndarray, masks: np.ndarray, generator: torch.Generator):
    """(actions, log-probabilities, values) of the learner on a batch of rows."""
    with torch.no_grad():
        logits, values = model(torch.from_numpy(obs))
        log_probs = masked_log_probs(logits, torch.from_numpy(masks))
        actions = torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(1)
        chosen = log_probs.gather(1, actions[:, None]).squeeze(1)
    return actions.numpy(), chosen.numpy(), values.numpy()


def _to_tensor(array: np.ndarray) -> torch.Tensor:
    """numpy -> tensor for weights_only checkpoints (uint64 travels as its int64 bit pattern)."""
    return torch.from_numpy(array.view(np.int64) if array.dtype == np.uint64 else array.copy())


def _from_tensor(tensor: torch.Tensor, dtype: np.dtype) -> np.ndarray:
    array = tensor.numpy()
    return array.view(np.uint64) if dtype == np.uint64 else array.astype(dtype, copy=False)


class _HandStats:
    """Counts of the hands that ended during collection (a match's final hand is reset with the match, so not seen)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Zero every count."""
        self.hands, self.turns, self.matches = 0, 0, 0
        self.kinds = dict.fromkeys(HAND_KINDS, 0)

    def add(self, state: EngineState) -> None:
        """Count the hands that the last step ended."""
        over = state.last_step[:, S_HAND_OVER] == 1
        if over.any():
            kinds = state.last_hand[over, R_KIND]
            self.hands += int(over.sum())
            self.turns += int(state.last_hand[over, R_TURNS].sum())
            for name, code in HAND_KINDS.items():
                self.kinds[name] += int((kinds == code).sum())

    def summary(self) -> dict[str, float]:
        """Rates per hand and the mean hand length in draws."""
        n = max(self.hands, 1)
        out = {f"{name}_rate": count / n for name, count in self.kinds.items()}
        out["hand_length"] = self.turns / n
        out["hands"] = float(self.hands)
        return out
