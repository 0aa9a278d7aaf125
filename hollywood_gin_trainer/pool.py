"""The opponent pool: the learner itself, frozen past snapshots, the heuristics as fixed anchors, and a target.

Each new match draws its opponent, an `Opponent`: SELF (the current policy in both seats, both seats train), a
SNAPSHOT, EXPERT, GREEDY or the TARGET (`selfplay.target`: any agent load_agent builds, loaded once and never
trained; hollywood-gin exploit's only opponent), with the configured weights (a snapshot draw falls back to SELF while
the pool is empty).
The numbering is the one everything uses: the draw, the privileged view's one-hot (privileged.py), the arena's saved
matches. A snapshot is a frozen copy of the policy added every `snapshot_every` updates; the pool keeps the newest
`pool_size` in slots 0..pool_size-1, and a match against one also records its slot. Which snapshot: prioritised
fictitious self-play, weight (1 - w + 0.05) ** priority_exponent where w is the learner's win rate against it in
training matches (a snapshot never played counts w = 0.5), so the snapshots that still beat the learner are met
most. Frozen opponents sample from their policy (they are not trained on), on the run's device.
"""

from __future__ import annotations

import hashlib
from enum import IntEnum
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.base import AgentProtocol
from hollywood_gin_env.agents.loading import policy_file
from hollywood_gin_env.agents.lookahead_planes import network_inputs
from hollywood_gin_env.agents.masked import sample_masked
from hollywood_gin_env.agents.policy import build_policy
from hollywood_gin_env.engine.threads import kernel_threads
from hollywood_gin_env.evaluation.evaluate import parse_agent_arg
from hollywood_gin_trainer.config import SelfPlayConfig

PRIORITY_FLOOR = 0.05
NO_SLOT = -1  # the slot of a match whose opponent is not a snapshot


class Opponent(IntEnum):
    """Who a match's learner plays; the order of `[selfplay]`'s weights and of the privileged view's one-hot."""

    SELF = 0
    SNAPSHOT = 1
    EXPERT = 2
    GREEDY = 3
    TARGET = 4


HEURISTICS = (Opponent.GREEDY, Opponent.EXPERT)  # played by the agents of their names


class OpponentPool:
    """The snapshots and the heuristics the learner's matches are drawn against (module docstring)."""

    def __init__(
        self,
        config: SelfPlayConfig,
        policy_config: dict[str, Any],
        device: torch.device,
        num_threads: int | None,
        seed: int | None = None,
    ) -> None:
        """`seed` resets the target (an agent that draws, `random` or a sampling checkpoint, is then reproducible)."""
        self.config = config
        self.policy_config = policy_config  # checked once, by the run
        self.device = device
        self.threads = kernel_threads(num_threads)  # the heuristics' and the snapshots' lookahead kernels
        count = self.threads.num_threads
        self.heuristics = {kind: load_agent(kind.name.lower(), num_threads=count) for kind in HEURISTICS}
        self.target = load_target(config.target, seed, count) if config.target else None
        self.target_digest = target_digest(config.target)  # a resumed run checks it plays the same target
        self.snapshots: list[nn.Module] = []
        self.updates: list[int] = []  # the update each slot's snapshot was taken at
        self.wins = np.zeros(config.pool_size)  # learner wins and matches against each slot
        self.played = np.zeros(config.pool_size)
        self.next_slot = 0

    def add(self, policy: nn.Module, update: int) -> None:
        """Freeze a copy of the policy into the pool (replacing the oldest snapshot when full)."""
        frozen = self.frozen({name: tensor.detach().clone() for name, tensor in policy.state_dict().items()})
        slot = self.next_slot
        if slot == len(self.snapshots):
            self.snapshots.append(frozen)
            self.updates.append(update)
        else:
            self.snapshots[slot], self.updates[slot] = frozen, update
        self.wins[slot] = self.played[slot] = 0.0
        self.next_slot = (slot + 1) % self.config.pool_size

    def contents(self) -> dict[str, Any]:
        """What `restore` takes: the snapshots' weights, the updates they were taken at, the counts, the next slot."""
        weights = [snapshot.state_dict() for snapshot in self.snapshots]
        counts = {"wins": self.wins.copy(), "played": self.played.copy()}
        return {"weights": weights, "updates": list(self.updates), **counts, "next_slot": self.next_slot}

    def restore(
        self,
        weights: list[dict[str, torch.Tensor]],
        updates: list[int],
        wins: np.ndarray,
        played: np.ndarray,
        next_slot: int,
    ) -> None:
        """Put back what `contents` returned (checked by the caller: trainstate.py for a file)."""
        self.snapshots = [self.frozen(snapshot) for snapshot in weights]
        self.updates, self.next_slot = list(updates), next_slot
        self.wins, self.played = np.array(wins, dtype=np.float64), np.array(played, dtype=np.float64)

    def frozen(self, weights: dict[str, torch.Tensor]) -> nn.Module:
        """A policy made of these weights (taken, not copied) that is never trained."""
        with torch.device("meta"):
            frozen = build_policy(self.policy_config)
        frozen.load_state_dict(weights, assign=True)
        return frozen.to(self.device).eval().requires_grad_(False)

    def draw(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(Opponent kinds, snapshot slots or NO_SLOT) for `count` new matches."""
        c = self.config
        weights = [c.self_weight, c.snapshot_weight, c.expert_weight, c.greedy_weight, c.target_weight]
        weights = np.array(weights, dtype=np.float64)  # a trailing 0 leaves the draws of the first four as they were
        kinds = rng.choice(len(Opponent), size=count, p=weights / weights.sum()).astype(np.int64)
        slots = np.full(count, NO_SLOT, dtype=np.int64)
        snapshot_rows = kinds == Opponent.SNAPSHOT
        if not self.snapshots:
            kinds[snapshot_rows] = Opponent.SELF
        elif snapshot_rows.any():
            slots[snapshot_rows] = rng.choice(len(self.snapshots), size=int(snapshot_rows.sum()), p=self.priorities())
        return kinds, slots

    def priorities(self) -> np.ndarray:
        """The probability of drawing each snapshot (module docstring)."""
        k = len(self.snapshots)
        win = np.where(self.played[:k] > 0, self.wins[:k] / np.maximum(self.played[:k], 1), 0.5)
        weights = (1.0 - win + PRIORITY_FLOOR) ** self.config.priority_exponent
        return weights / weights.sum()

    def record(self, slots: np.ndarray, learner_won: np.ndarray) -> None:
        """Count finished training matches against the snapshots in these slots."""
        np.add.at(self.played, slots, 1.0)
        np.add.at(self.wins, slots, learner_won.astype(np.float64))

    def win_rate(self) -> float:
        """The learner's win rate over all recorded matches against the current snapshots (nan if none)."""
        played = self.played.sum()
        return float(self.wins.sum() / played) if played else float("nan")

    def act(
        self, kinds: np.ndarray, slots: np.ndarray, obs: np.ndarray, masks: np.ndarray, generator: torch.Generator
    ) -> np.ndarray:
        """The frozen opponents' actions for rows whose opponents are kinds[i] (slots[i] for a snapshot): the
        heuristics' and the target's, then each snapshot's in slot order, sampled from its masked policy with
        `generator`."""
        actions = np.zeros(len(kinds), dtype=np.int64)
        agents = {**self.heuristics, Opponent.TARGET: self.target} if self.target else self.heuristics
        for kind, agent in agents.items():
            rows = np.flatnonzero(kinds == kind)
            if rows.size:
                actions[rows] = agent.act(obs[rows], masks[rows])
        for slot in np.unique(slots[kinds == Opponent.SNAPSHOT]):
            rows = np.flatnonzero((kinds == Opponent.SNAPSHOT) & (slots == slot))
            snapshot = self.snapshots[slot]
            with torch.no_grad():
                inputs = network_inputs(obs[rows], snapshot.lookahead_features, self.threads)
                logits = snapshot(torch.from_numpy(inputs).to(self.device))
                sampled, _ = sample_masked(logits, torch.from_numpy(masks[rows]).to(self.device), generator)
            actions[rows] = sampled.cpu().numpy()
        return actions


def load_target(text: str, seed: int | None, num_threads: int) -> AgentProtocol:
    """The target agent of `selfplay.target` (a spec or NAME=SPEC), frozen: a policy's weights never need a gradient."""
    _, spec = parse_agent_arg(text)
    agent = load_agent(spec, seed=seed, num_threads=num_threads)
    policy = getattr(agent, "policy", None)
    if isinstance(policy, nn.Module):
        policy.eval().requires_grad_(False)
    return agent


def target_digest(text: str) -> str | None:
    """SHA-256 of the file a policy target (`bot`, `checkpoint:PATH`) is read from; None for a heuristic or none."""
    _, spec = parse_agent_arg(text) if text else (None, "")
    path = policy_file(spec)
    if path is None:
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
