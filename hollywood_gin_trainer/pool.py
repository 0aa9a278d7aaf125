"""The opponent pool: the learner itself, frozen past snapshots, and frozen agents, each drawn with its weight.

Each new match draws its opponent from `selfplay.opponents` (opponents.py's `Lineup`: the map's entries in order are
the codes everything uses: the draw, the privileged view's one-hot, the arena's saved matches): "self" (the current
policy in both seats, both seats train), "snapshots" (a frozen past snapshot: a "snapshots" draw plays "self" while
the pool is empty) or an agent any spec names (`expert`, `greedy`, `bot`, `checkpoint:PATH`, ...: loaded once, here,
and never trained). The pool also holds the evaluation opponents (`eval.opponents`), loaded once too, apart from the
training ones (an evaluation reseeds its agents; the training opponents' streams stay the training's).
A snapshot is a frozen copy of the policy added every `snapshot_every` updates (the run's network built from its spec,
`[model]`'s, with the policy's weights loaded: the one way a snapshot is made, from the learner or from a training
state's tensors); the pool keeps the newest `pool_size` in slots 0..pool_size-1, and a match against one also records
its slot. Which snapshot: prioritised fictitious self-play, weight (1 - w + 0.05) ** priority_exponent where w is
the learner's win rate against it in training matches (a snapshot never played counts w = 0.5), so the snapshots
that still beat the learner are met most. Frozen opponents sample from their policy (they are not trained on), on the
run's device.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.loading import parse_agent_arg, policy_file
from hollywood_gin_env.agents.masked import sample_masked
from hollywood_gin_env.agents.networks import build_network
from hollywood_gin_env.engine.threads import kernel_threads
from hollywood_gin_trainer.config import Config
from hollywood_gin_trainer.opponents import Lineup, entry_seed, load_opponent

PRIORITY_FLOOR = 0.05
NO_SLOT = -1  # the slot of a match whose opponent is not a snapshot


class OpponentPool:
    """The snapshots and the frozen agents the learner's matches are drawn against, and the evaluation opponents
    (module docstring)."""

    def __init__(
        self,
        config: Config,
        device: torch.device,
        num_threads: int | None,
        seed: int | None = None,
        allow_import: bool = True,
    ) -> None:
        """`seed` seeds each frozen opponent's own stream (an agent that draws, `random` or a sampling checkpoint, is
        then reproducible); `allow_import=False` for a config read from a training state (opponents.py)."""
        self.config = config.selfplay
        self.lineup = Lineup.of(config.selfplay.opponents)
        self.network = config.network_spec()  # what a snapshot is built as
        self.device = device
        self.allow_import = allow_import  # what a Ray worker's own pool is told too
        self.threads = kernel_threads(num_threads)  # the frozen agents' and the snapshots' `inputs` kernels
        count = self.threads.num_threads
        self.agents = {
            code: load_opponent("selfplay.opponents", spec, entry_seed(seed, code), count, allow_import)
            for code, spec in self.lineup.agents()
        }
        self.digests = {spec: digest for _, spec in self.lineup.agents() if (digest := file_digest(spec))}
        labels = config.eval_labels()
        self.evaluators = {
            label: load_opponent("eval.opponents", spec, None, count, allow_import)
            for label, spec in zip(labels, config.eval.opponents, strict=True)
        }
        self.snapshots: list[nn.Module] = []
        self.updates: list[int] = []  # the update each slot's snapshot was taken at
        self.wins = np.zeros(self.config.pool_size)  # learner wins and matches against each slot
        self.played = np.zeros(self.config.pool_size)
        self.next_slot = 0

    def add(self, policy: nn.Module, update: int) -> None:
        """Freeze a copy of the policy into the pool (replacing the oldest snapshot when full)."""
        frozen = self.frozen(policy.state_dict())
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
        """The run's network with a copy of these weights, on the pool's device, never trained."""
        frozen = build_network(self.network)
        frozen.load_state_dict(weights)
        return frozen.to(self.device).eval().requires_grad_(False)

    def draw(self, count: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(Opponent codes, snapshot slots or NO_SLOT) for `count` new matches."""
        lineup = self.lineup
        kinds = rng.choice(lineup.size, size=count, p=lineup.probabilities()).astype(np.int64)
        slots = np.full(count, NO_SLOT, dtype=np.int64)
        snapshot_rows = lineup.is_snapshot(kinds)
        if not self.snapshots:
            kinds[snapshot_rows] = lineup.self_code
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
        """The frozen opponents' actions for rows whose opponents are codes kinds[i] (slots[i] for a snapshot): each
        frozen agent's in code order, then each snapshot's in slot order, sampled from its masked policy with
        `generator`."""
        actions = np.zeros(len(kinds), dtype=np.int64)
        for code, agent in self.agents.items():
            rows = np.flatnonzero(kinds == code)
            if rows.size:
                actions[rows] = agent.act(obs[rows], masks[rows])
        against = self.lineup.is_snapshot(kinds)
        for slot in np.unique(slots[against]):
            rows = np.flatnonzero(against & (slots == slot))
            snapshot = self.snapshots[slot]
            with torch.no_grad():
                inputs = np.ascontiguousarray(snapshot.inputs(obs[rows], self.threads), dtype=np.float32)
                logits = snapshot(torch.from_numpy(inputs).to(self.device))
                sampled, _ = sample_masked(logits, torch.from_numpy(masks[rows]).to(self.device), generator)
            actions[rows] = sampled.cpu().numpy()
        return actions


def file_digest(text: str) -> str | None:
    """SHA-256 of the file a policy spec (`bot`, `checkpoint:PATH`, NAME=SPEC of one) is read from; None for any
    other spec."""
    path = policy_file(parse_agent_arg(text)[1])
    if path is None:
        return None
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
