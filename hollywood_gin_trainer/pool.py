"""The opponent pool: the learner itself, frozen past snapshots, and the heuristics as fixed anchors.

Each new match draws its opponent: "self" (the current policy in both seats, both seats train), a snapshot, `expert`
or `greedy`, with the configured weights (a snapshot draw falls back to self while the pool is empty). A snapshot is
a frozen copy of the policy added every `snapshot_every` updates; the pool keeps the newest `pool_size`. Which
snapshot: prioritised fictitious self-play, weight (1 - w + 0.05) ** priority_exponent where w is the learner's win
rate against it in training matches (a snapshot never played counts w = 0.5), so the snapshots that still beat the
learner are met most. Frozen opponents sample from their policy (they are not trained on), on the run's device.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.masked import sample_masked
from hollywood_gin_env.agents.policy import build_policy, expected_shapes
from hollywood_gin_env.engine.threads import kernel_threads
from hollywood_gin_trainer.config import SelfPlayConfig
from hollywood_gin_trainer.trainstate import check_weights

SELF, GREEDY, EXPERT = -1, 0, 1
FIRST_SNAPSHOT = 2
NAMES = {SELF: "self", GREEDY: "greedy", EXPERT: "expert"}
PRIORITY_FLOOR = 0.05


def kind_of_opponent(ids: np.ndarray) -> np.ndarray:
    """The privileged view's opponent kind (privileged.py) of each opponent id: 0 self, 1 a snapshot, 2 expert,
    3 greedy."""
    return np.select([ids == SELF, ids == EXPERT, ids == GREEDY], [0, 2, 3], default=1).astype(np.int64)


class OpponentPool:
    """Opponent ids: SELF (-1), GREEDY (0), EXPERT (1), snapshot slot k (2 + k)."""

    def __init__(
        self,
        config: SelfPlayConfig,
        policy_config: dict[str, Any],
        device: torch.device,
        num_threads: int | None = None,
    ) -> None:
        self.config = config
        self.policy_config = policy_config  # checked once, by the run
        self.device = device
        self.threads = kernel_threads(
            num_threads
        )  # the heuristics' and the snapshots' lookahead kernels (train.env_threads)
        count = self.threads.num_threads
        self.heuristics = {
            GREEDY: load_agent("greedy", num_threads=count),
            EXPERT: load_agent("expert", num_threads=count),
        }
        self.snapshots: list[nn.Module] = []
        self.updates: list[int] = []  # the update each slot's snapshot was taken at
        self.wins = np.zeros(config.pool_size)  # learner wins and matches against each slot
        self.played = np.zeros(config.pool_size)
        self.next_slot = 0

    def add(self, policy: nn.Module, update: int) -> None:
        """Freeze a copy of the policy into the pool (replacing the oldest snapshot when full)."""
        frozen = self._frozen(policy.state_dict())
        slot = self.next_slot
        if slot == len(self.snapshots):
            self.snapshots.append(frozen)
            self.updates.append(update)
        else:
            self.snapshots[slot], self.updates[slot] = frozen, update
        self.wins[slot] = self.played[slot] = 0.0
        self.next_slot = (slot + 1) % self.config.pool_size

    def _frozen(self, weights: dict[str, torch.Tensor]) -> nn.Module:
        """A policy with these weights that is never trained."""
        frozen = build_policy(self.policy_config).to(self.device)
        frozen.load_state_dict(weights)
        frozen.threads = self.threads  # `prepare`'s lookahead kernels
        return frozen.eval().requires_grad_(False)

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """Opponent ids for `count` new matches."""
        c = self.config
        weights = np.array([c.self_weight, c.snapshot_weight, c.expert_weight, c.greedy_weight], dtype=np.float64)
        kinds = rng.choice(4, size=count, p=weights / weights.sum())
        ids = np.select([kinds == 0, kinds == 2, kinds == 3], [SELF, EXPERT, GREEDY], default=FIRST_SNAPSHOT)
        snapshot_rows = ids == FIRST_SNAPSHOT
        if not self.snapshots:
            ids[snapshot_rows] = SELF
        elif snapshot_rows.any():
            ids[snapshot_rows] = FIRST_SNAPSHOT + rng.choice(
                len(self.snapshots), size=int(snapshot_rows.sum()), p=self.snapshot_weights()
            )
        return ids.astype(np.int64)

    def snapshot_weights(self) -> np.ndarray:
        """The probability of drawing each snapshot (module docstring)."""
        k = len(self.snapshots)
        win = np.where(self.played[:k] > 0, self.wins[:k] / np.maximum(self.played[:k], 1), 0.5)
        weights = (1.0 - win + PRIORITY_FLOOR) ** self.config.priority_exponent
        return weights / weights.sum()

    def record(self, opponents: np.ndarray, learner_won: np.ndarray) -> None:
        """Count finished training matches against snapshots."""
        for opponent, won in zip(opponents, learner_won, strict=True):
            if opponent >= FIRST_SNAPSHOT:
                self.played[opponent - FIRST_SNAPSHOT] += 1
                self.wins[opponent - FIRST_SNAPSHOT] += bool(won)

    def win_rate(self) -> float:
        """The learner's win rate over all recorded matches against the current snapshots (nan if none)."""
        played = self.played.sum()
        return float(self.wins.sum() / played) if played else float("nan")

    def act(self, opponent: int, obs: np.ndarray, masks: np.ndarray, generator: torch.Generator) -> np.ndarray:
        """The opponent's actions for its rows (snapshots sample their masked policy with the trainer's generator)."""
        if opponent in self.heuristics:
            return self.heuristics[opponent].act(obs, masks)
        with torch.no_grad():
            snapshot = self.snapshots[opponent - FIRST_SNAPSHOT]
            logits = snapshot(torch.from_numpy(snapshot.prepare(obs)).to(self.device))
            actions, _ = sample_masked(logits, torch.from_numpy(masks).to(self.device), generator)
        return actions.cpu().numpy()

    def state_dict(self) -> dict[str, Any]:
        """Plain data and tensors (for the training checkpoint)."""
        return {
            "snapshots": [s.state_dict() for s in self.snapshots],
            "updates": list(self.updates),
            "wins": torch.from_numpy(self.wins.copy()),
            "played": torch.from_numpy(self.played.copy()),
            "next_slot": self.next_slot,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what `state_dict` saved; ValueError naming the field (the pool unchanged) if it is not what a pool
        of this config saves. The snapshot count is checked before any snapshot is built."""
        size = self.config.pool_size
        snapshots, updates = state["snapshots"], state["updates"]
        if not isinstance(snapshots, list) or not isinstance(updates, list) or len(snapshots) != len(updates):
            raise ValueError("pool.snapshots, pool.updates: expected two lists of the same length")
        if len(snapshots) > size:
            raise ValueError(f"pool.snapshots: {len(snapshots):,} snapshots, but selfplay.pool_size is {size}")
        if not all(_is_count(update) for update in updates):
            raise ValueError(f"pool.updates: expected non-negative ints, found {updates!r:.200}")
        wins, played = _counts(state["wins"], "pool.wins", size), _counts(state["played"], "pool.played", size)
        if (wins > played).any():
            raise ValueError("pool.wins: more wins than matches played against a snapshot")
        next_slot = state["next_slot"]
        # a pool that is not yet full fills its slots in order: the next one is the first empty one
        allowed = range(size) if len(snapshots) == size else range(len(snapshots), len(snapshots) + 1)
        if not _is_count(next_slot) or next_slot not in allowed:
            raise ValueError(
                f"pool.next_slot={next_slot!r}: with {len(snapshots)} of {size} snapshots it must be an int in "
                f"{allowed.start}..{allowed.stop - 1}"
            )
        shapes = expected_shapes(self.policy_config)
        for k, weights in enumerate(snapshots):
            check_weights(weights, shapes, f"pool.snapshots[{k}]", "the run's policy")
        self.snapshots = [self._frozen(weights) for weights in snapshots]
        self.updates = [int(update) for update in updates]
        self.wins, self.played, self.next_slot = wins, played, int(next_slot)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _counts(value: object, name: str, size: int) -> np.ndarray:
    """A saved float64 tensor of `size` finite, non-negative counts, as a new numpy array; ValueError naming it."""
    if not isinstance(value, torch.Tensor) or value.dtype != torch.float64 or tuple(value.shape) != (size,):
        found = f"{value.dtype} {tuple(value.shape)}" if isinstance(value, torch.Tensor) else type(value).__name__
        raise ValueError(f"{name}: expected a float64 tensor of shape ({size},) (selfplay.pool_size), found {found}")
    array = value.numpy().copy()  # a copy: a stride-0 or shared view becomes an array of its own
    if not np.isfinite(array).all() or (array < 0).any():
        raise ValueError(f"{name}: values must be finite and non-negative")
    return array
