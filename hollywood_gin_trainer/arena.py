"""The arena: the training matches in a `SelfPlayVectorEnv`, who sits where, and what the rollout reads each step.

`Arena(config, network, pool, rng, generator)` holds `env.num_envs` matches (or a Ray worker's share), each match's
opponent (its code in `selfplay.opponents`, opponents.py's `Lineup`, with a snapshot's slot), the learner's seat, the
observations to act on, and the buffers of one rollout (ppo.py's `Rollout`, as wide as the learner's network's
`input_size`). It is both of ppo.py's partners: `RolloutMatches`, which ppo.py's `play_rollout` plays step by step
through `learner_to_act`, `inputs` (the learner's network's own observation transform, its `inputs`: the card
network's adds the lookahead planes), `privileged`, `opponents_act` and `step`;
and `Matches`, what an update and the run ask of the run's matches (`rollout_batch`, `hand_summary`, `evaluate`,
`state`...). In a self-play match the learner plays both seats and both seats' decisions are kept; against a frozen
opponent (a snapshot or an agent) only the learner's seat is. The engine runs on the CPU; the learner's and the
snapshots' forward passes run on the run's device. Hand statistics come from the env's step infos
(hollywood_gin_env.engine.handstats), never from the engine's arrays. workers.py's `RemoteArena` is the same matches
on Ray actors (a `Matches` too); `remote` tells the two apart.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS
from hollywood_gin_env.agents.policy import PolicyAgent
from hollywood_gin_env.engine.handstats import HandCounts
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.evaluation.duplicate import ChunkJob, PairRecord, play_job
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_trainer.config import Config
from hollywood_gin_trainer.forward import RolloutForward
from hollywood_gin_trainer.opponents import Lineup
from hollywood_gin_trainer.pool import NO_SLOT, OpponentPool
from hollywood_gin_trainer.ppo import ActorCritic, Batch, Rollout, rollout_batch
from hollywood_gin_trainer.privileged import expert_deal_scores, privileged_view

MAX_HAND_POINTS = 1000.0  # far above any hand's score (a gin with 100 deadwood against it and every bonus)


class Arena:
    """The training matches and who sits where, in this process (module docstring)."""

    remote = False

    def __init__(
        self,
        config: Config,
        network: nn.Module,
        pool: OpponentPool | None,
        rng: np.random.Generator,
        generator: torch.Generator | None = None,
        device: torch.device | str = "cpu",
        num_envs: int | None = None,
        num_threads: int | None = None,
        steps: int | None = None,
    ) -> None:
        """`num_envs` of the config's matches (default: env.num_envs), their kernels on `num_threads` threads
        (default: train.env_threads; None there: the process's default), `steps` a rollout (default:
        ppo.rollout_steps); `network` is the learner's (its `inputs` make the rollout's input rows, `input_size`
        wide); `rng` draws seats and opponents, `generator` samples actions."""
        env, model = config.env, config.model
        self.config, self.num_envs = config, env.num_envs if num_envs is None else num_envs
        threads = config.train.env_threads if num_threads is None else num_threads
        rules = config.make_rules()
        self.env = SelfPlayVectorEnv(self.num_envs, rules, reward=env.reward, episode=env.episode, num_threads=threads)
        self.threads = self.env.threads  # every kernel of the rollout runs on these
        self.device = torch.device(device)
        self.forward = RolloutForward(config.train.compile, self.device, self.num_envs)  # the learner's
        self.rng, self.generator, self.pool = rng, generator, pool
        self.network, self.stock_cards = network, model.critic_stock_cards
        self.lineup = Lineup.of(config.selfplay.opponents)
        steps = steps or config.ppo.rollout_steps
        self.rollout = Rollout(steps, self.num_envs, network.input_size, self.stock_cards, self.lineup.size)
        self.kind = np.full(self.num_envs, self.lineup.self_code, dtype=np.int64)  # each match's opponent's code
        self.slot = np.full(self.num_envs, NO_SLOT, dtype=np.int64)
        self.learner_seat = np.zeros(self.num_envs, dtype=np.int64)
        self.deal = np.zeros(self.num_envs)  # seat 0's score in `expert`'s play-out of each match's deal
        self.obs: dict[str, np.ndarray] = {}
        self.players = np.zeros(self.num_envs, dtype=np.int64)
        self.stats, self.matches, self.forward_s = HandCounts(), 0, 0.0

    def reset(self, seed: int) -> None:
        """Fresh matches (match i seeded with seed + i) and a fresh draw of opponents and seats."""
        self.obs, infos = self.env.reset(seed=seed)
        self.players = infos["current_player"]
        every = np.ones(self.num_envs, dtype=np.bool_)
        self._play_deals_out(every)
        self._assign(every)

    def rollout_batch(self, model: ActorCritic) -> Batch:
        """One rollout against the pool as the learner's batch (ppo.py's `rollout_batch`)."""
        return rollout_batch(self, model, self.config.ppo)

    @property
    def next_step(self) -> int:
        """The env step the next `step` makes."""
        return self.env.next_step

    def observe(self, seats: np.ndarray) -> dict[str, np.ndarray]:
        """The env's observations of seats[i] in each match."""
        return self.env.observe(seats)

    def learner_to_act(self) -> np.ndarray:
        """bool[N]: the matches where the learner is to act (both seats of a self-play match)."""
        return self.lineup.is_self(self.kind) | (self.players == self.learner_seat)

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        """The learner's network's input rows of observation rows (its `inputs`, on the arena's threads)."""
        return np.ascontiguousarray(self.network.inputs(observations, self.threads), dtype=np.float32)

    def privileged(self, seats: np.ndarray) -> np.ndarray:
        """The privileged view (privileged.py) of seats[i] in each match."""
        engine, size = self.env.engine, self.lineup.size
        return privileged_view(engine, seats, self.kind, self.deal, self.stock_cards, size, self.threads)

    def opponents_act(self, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> None:
        """Write the frozen opponents' actions into `actions` where `rows` (bool[N]) is set."""
        if rows.any():
            actions[rows] = self.pool.act(self.kind[rows], self.slot[rows], obs[rows], masks[rows], self.generator)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step every match; new opponents and seats where a match ended, play-outs where a hand was dealt. Returns
        (rewards[N, 2], terminations[N], decision_step[N, 2]): what the rollout credits to which decision."""
        self.obs, rewards, terminations, _, infos = self.env.step(actions)
        self.stats.add_infos(infos)
        winner = infos["match_winner"]
        ended = winner >= 0
        if ended.any():
            self.matches += int(ended.sum())
            against = ended & self.lineup.is_snapshot(self.kind)
            if against.any():
                self.pool.record(self.slot[against], winner[against] == self.learner_seat[against])
            self._assign(ended)
        self.players = infos["current_player"]
        self._play_deals_out(infos["hand_over"])  # every ended hand's match holds a new deal now
        return rewards, terminations, infos["decision_step"]

    def _assign(self, rows: np.ndarray) -> None:
        count = int(rows.sum())
        if count:
            if self.pool is None:
                self.kind[rows], self.slot[rows] = self.lineup.self_code, NO_SLOT
            else:
                self.kind[rows], self.slot[rows] = self.pool.draw(count, self.rng)
            self.learner_seat[rows] = self.rng.integers(0, 2, size=count)

    def _play_deals_out(self, rows: np.ndarray) -> None:
        """Refresh `deal` where a hand was just dealt (only for a critic that sees the play-out)."""
        if self.config.model.critic_playout and rows.any():
            which = np.flatnonzero(rows)
            self.deal[which] = expert_deal_scores(self.env.engine, which, DEFAULT_WEIGHTS, self.threads)

    def clear_stats(self) -> None:
        """Start counting hands and matches afresh."""
        self.stats, self.matches = HandCounts(), 0

    def hand_summary(self) -> dict[str, float]:
        """The rates of the hands ended since `clear_stats` (handstats' definitions), their number and matches."""
        return {**self.stats.rates(), "hands": float(self.stats.hands), "matches": float(self.matches)}

    def snapshot(self, policy: torch.nn.Module, update: int) -> None:
        """Freeze the policy into the pool as update `update`'s snapshot."""
        self.pool.add(policy, update)

    def evaluate(self, model: ActorCritic, jobs: list[ChunkJob]) -> list[PairRecord]:
        """Evaluation chunks (hollywood_gin_env.evaluation.duplicate's, as evaluate.py plays them) with the model's
        greedy policy in seat A and in seat B the pool's evaluation opponent of the job's label (loaded once per
        run), played here; the records in the jobs' order."""
        count = self.threads.num_threads
        learner = PolicyAgent(model.policy, deterministic=True, name="learner", num_threads=count)
        return [play_job(job, (learner, self.pool.evaluators[job.names[1]])) for job in jobs]

    def close(self) -> None:
        """Nothing to stop: the matches live in this process."""

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """(arrays, plain data): everything needed to continue these matches exactly (the env's state, the seats)."""
        env_state = self.env.state_dict()
        arrays = {f"engine.{name}": array for name, array in env_state["engine"].items()}
        arrays.update(decision_step=env_state["decision_step"], kind=self.kind, slot=self.slot)
        arrays.update(learner_seat=self.learner_seat, deal=self.deal)
        return arrays, {"step": env_state["step"], "opponents": list(self.lineup.specs)}

    def specs(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        """The dtype name and shape of each array `state` returns: what a saved state of these matches holds."""
        return {name: (array.dtype.name, array.shape) for name, array in self.state()[0].items()}

    def load_state(self, arrays: dict[str, np.ndarray], data: dict[str, Any]) -> None:
        """Continue from what `state` returned (arrays of its names, dtypes and shapes); ValueError naming a value
        out of its range, the arena left as it was. The observations to act on are encoded again."""
        lineup, saved = self.lineup, data.get("opponents") if isinstance(data, dict) else None
        if saved != list(lineup.specs):
            raise ValueError(
                f"arena.opponents={shown_value(saved)}: the matches were drawn against other "
                f"opponents than the run's selfplay.opponents {list(lineup.specs)}"
            )
        snapshots = 0 if self.pool is None else len(self.pool.snapshots)
        kind, slot = arrays["kind"], arrays["slot"]
        _check_range("arena.kind", kind, lineup.lowest_code, lineup.size - 1)
        _check_range("arena.slot", slot, NO_SLOT, snapshots - 1)
        if (lineup.is_snapshot(kind) != (slot != NO_SLOT)).any():
            raise ValueError("arena.slot: a match has a snapshot's slot exactly when its opponent is a snapshot")
        _check_range("arena.learner_seat", arrays["learner_seat"], 0, 1)
        _check_range("arena.deal", arrays["deal"], -MAX_HAND_POINTS, MAX_HAND_POINTS)
        engine = {name.removeprefix("engine."): array for name, array in arrays.items() if name.startswith("engine.")}
        self.env.load_state_dict({"engine": engine, "decision_step": arrays["decision_step"], "step": data["step"]})
        self.players = self.env.current_player
        self.obs = self.env.observe(self.players)
        self.kind, self.slot = kind.copy(), slot.copy()
        self.learner_seat, self.deal = arrays["learner_seat"].copy(), arrays["deal"].copy()


def _check_range(name: str, values: np.ndarray, low: float, high: float) -> None:
    """ValueError naming the array unless every value is finite and lies in low..high."""
    if values.size and not (np.isfinite(values).all() and values.min() >= low and values.max() <= high):
        raise ValueError(
            f"{name}: values must be finite and lie in {low:g}..{high:g}, found {values.min()}..{values.max()}"
        )
