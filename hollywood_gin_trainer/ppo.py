"""One PPO update of the trainer, top to bottom (CleanRL's ppo.py, for two-player self-play).

Read in order: the config (`Config`, config.py: its defaults are the shipped recipe), what the update asks of the
matches it plays (`Matches`: one rollout as a batch, its figures; `RolloutMatches`: what the rollout loop plays step
by step), the network (`ActorCritic`), the setup (`make_learner`: the initial weights, seeded without touching the
process's random streams, and Adam), then one update (`update`):

1. the schedule: the annealed learning rate and entropy coefficient;
2. the rollout (`play_rollout`): `ppo.rollout_steps` steps of every match of the arena (arena.py: the matches, who
   sits where, the opponent pool of pool.py, the privileged view of privileged.py). Each step, the learner's rows are
   sampled from its masked policy, the frozen opponents' rows from theirs, the env steps every match, and each
   reward is credited to the decision it belongs to, which may be an earlier one (`credit_rows`);
3. the advantages (`estimate_advantages`): per-player GAE (`per_player_gae`) along each player's own decisions of a
   match, bootstrapped where the rollout cuts a chain, or the estimator `ppo.advantages` names (advantages.py);
4. the PPO epochs (`ppo_epochs`): shuffled minibatches of CleanRL's clipped surrogate, clipped value loss and
   entropy bonus, with the mask, a gradient step each, and the target-KL early stop;
5. logging (`log_update`, `log_evaluation`) under CleanRL's TensorBoard namespaces charts/, losses/, eval/ (and
   hands/, selfplay/, time/).

What wraps it: run.py's `TrainingRun` (the run's state: create, resume, save, snapshots, evaluations), main.py (the
program: the run directory, the evaluation schedule, Ctrl-C), workers.py (the same `rollout_batch` on Ray actors)
and warmstart.py (the same `play_rollout` with a teacher playing every seat). Everything here runs on the device of
the model and the batch; the engine and the kernels (support/jit.py's one numba setting) run on the CPU.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import torch
from torch import nn
from torch.utils.tensorboard import SummaryWriter

from hollywood_gin_env.agents.masked import entropy_of, masked_log_probs, sample_masked
from hollywood_gin_env.agents.networks import check_network_spec, check_protocol, find_network, network_tensors
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.support.jit import njit
from hollywood_gin_trainer.advantages import GAE, chain_advantages
from hollywood_gin_trainer.config import Config, PPOConfig
from hollywood_gin_trainer.privileged import privileged_view_size

if TYPE_CHECKING:
    from hollywood_gin_env.agents.base import AgentProtocol
    from hollywood_gin_env.engine.threads import KernelThreads
    from hollywood_gin_env.evaluation.duplicate import ChunkJob, PairRecord
    from hollywood_gin_trainer.forward import RolloutForward
    from hollywood_gin_trainer.pool import OpponentPool

CRITICS = ("player", "privileged")
PRIVILEGED_CRITIC_WIDTH = 256  # the privileged value head's hidden layers: it combines the two inputs, not adds them
#: Fewest matches a thread's slice of the credit and GAE kernels gets: a few nanoseconds a row each.
ROLLOUT_GRAIN = 256

# ------------------------------------------------------------------------------------------------ the matches


@runtime_checkable
class RolloutMatches(Protocol):
    """What the rollout loop (`play_rollout`, `bootstrap`) plays, step by step: the matches of this process and who
    sits where (arena.py's `Arena`)."""

    num_envs: int
    device: torch.device
    threads: KernelThreads
    generator: torch.Generator | None
    rollout: Rollout
    obs: dict[str, np.ndarray]
    players: np.ndarray
    forward: RolloutForward
    forward_s: float

    @property
    def next_step(self) -> int:
        """The env step the next `step` makes (the rollout's rows are counted from it)."""

    def clear_stats(self) -> None:
        """Start counting hands and matches afresh."""

    def learner_to_act(self) -> np.ndarray:
        """bool[N]: the matches where the learner is to act."""

    def inputs(self, observations: np.ndarray) -> np.ndarray:
        """The policy network's input rows of observation rows."""

    def privileged(self, seats: np.ndarray) -> np.ndarray:
        """The privileged view (privileged.py) of seats[i] in each match."""

    def observe(self, seats: np.ndarray) -> dict[str, np.ndarray]:
        """The env's observations of seats[i] in each match."""

    def opponents_act(self, rows: np.ndarray, obs: np.ndarray, masks: np.ndarray, actions: np.ndarray) -> None:
        """Write the frozen opponents' actions into `actions` where `rows` is set."""

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Step every match: (rewards[N, 2], terminations[N], decision_step[N, 2])."""


@runtime_checkable
class Matches(Protocol):
    """What an update (`update`) and the run (run.py) play: the run's matches, in this process (arena.py's `Arena`)
    or on Ray workers (workers.py's `RemoteArena`)."""

    remote: bool
    pool: OpponentPool
    forward_s: float

    def rollout_batch(self, model: ActorCritic) -> Batch:
        """One rollout of every match against the pool, its credit and GAE, as the learner's batch."""

    def hand_summary(self) -> dict[str, float]:
        """The rates of the last rollout's hands, their number and matches."""

    def reset(self, seed: int) -> None:
        """Fresh matches dealt from `seed`, and a fresh draw of opponents and seats."""

    def snapshot(self, policy: nn.Module, update: int) -> None:
        """Freeze the policy into the pool as update `update`'s snapshot."""

    def evaluate(self, model: ActorCritic, jobs: list[ChunkJob]) -> list[PairRecord]:
        """Evaluation chunks with the model's greedy policy in seat A; the records in the jobs' order."""

    def state(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """(arrays, plain data): everything needed to continue these matches exactly."""

    def load_state(self, arrays: dict[str, np.ndarray], data: dict[str, Any]) -> None:
        """Continue from what `state` returned; ValueError naming what does not fit."""

    def close(self) -> None:
        """Stop what runs the matches, if anything."""


# ------------------------------------------------------------------------------------------------ the network


class ActorCritic(nn.Module):
    """`policy` (the network a checkpoint holds: any network of the protocol, hollywood_gin_env/agents/networks.py)
    plus a value head on its `features`: a linear one (`critic="player"`), or a small MLP that also reads the
    privileged view (`critic="privileged"`, privileged.py)."""

    def __init__(
        self, network: dict[str, Any], critic: str = "player", stock_cards: int = 1, opponents: int = 1
    ) -> None:
        """`network` is the policy's spec ({"name", "kwargs"}: config.py's `network_spec`); `stock_cards` and
        `opponents` (the "who" columns: selfplay.opponents' entries) size a privileged critic's view
        (privileged.py)."""
        super().__init__()
        if critic not in CRITICS:
            raise ValueError(f"critic={critic!r}: expected one of {CRITICS}")
        self.network_spec = check_network_spec(network)
        self.policy = policy_network(self.network_spec)
        self.critic = critic
        size = self.policy.feature_size
        if critic == "privileged":  # two hidden layers: with many stock cards in view the head plays the hand forward
            width = PRIVILEGED_CRITIC_WIDTH
            self.value_head = nn.Sequential(
                nn.Linear(size + privileged_view_size(stock_cards, opponents), width),
                nn.ReLU(),
                nn.Linear(width, width),
                nn.ReLU(),
                nn.Linear(width, 1),
            )
        else:
            self.value_head = nn.Linear(size, 1)

    def forward(self, obs: torch.Tensor, privileged: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (B, 107), values (B,)); `privileged` (B, its view's size) is read by a privileged critic only."""
        features = self.policy.features(obs)
        return self.policy.head(obs, features), self._value(features, privileged)

    def value(self, obs: torch.Tensor, privileged: torch.Tensor | None = None) -> torch.Tensor:
        """V(obs) only."""
        return self._value(self.policy.features(obs), privileged)

    def _value(self, features: torch.Tensor, privileged: torch.Tensor | None) -> torch.Tensor:
        if self.critic == "privileged":
            if privileged is None:
                raise ValueError("a privileged critic needs the privileged view (privileged.py) of every row")
            features = torch.cat([features, privileged], dim=-1)
        return self.value_head(features).squeeze(-1)


# ------------------------------------------------------------------------------------------------ the setup


def make_learner(config: Config, device: torch.device) -> tuple[ActorCritic, torch.optim.Adam]:
    """The actor-critic a run of this checked config trains, on `device`, and its Adam. The initial weights come
    from `train.seed` in a forked torch stream: built on the CPU (the same weights on every device), and the
    process's own random state is left as it was."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.train.seed)
        model = actor_critic(config)
    model.to(device)
    return model, torch.optim.Adam(model.parameters(), lr=config.train.lr, eps=1e-5)


def actor_critic(config: Config) -> ActorCritic:
    """The actor-critic of a checked config (weights from torch's current random state)."""
    m = config.model
    return ActorCritic(config.network_spec(), m.critic, m.critic_stock_cards, len(config.selfplay.opponents))


def policy_network(spec: dict[str, Any]) -> nn.Module:
    """The network of a spec, its weights drawn from torch's current random state, so the value head's come next in
    the learner's seeded stream (`build_network` draws from a fork); checked on the meta device first, then against
    the protocol."""
    network_tensors(spec)  # resolved, bounded and of the protocol before anything is allocated
    network = find_network(spec["name"])(**spec["kwargs"])
    check_protocol(network, f"network {spec['name']!r}")
    return network


def schedule(config: Config, optimizer: torch.optim.Optimizer, update: int) -> tuple[float, float]:
    """Set the learning rate of `update` (1-based) on the optimizer; return (lr, entropy coefficient)."""
    train, ppo = config.train, config.ppo
    lr = train.lr * (1.0 - (update - 1) / train.updates) if train.anneal_lr else train.lr
    for group in optimizer.param_groups:
        group["lr"] = lr
    frac = (update - 1) / max(train.updates - 1, 1)
    return lr, ppo.ent_coef + (ppo.ent_coef_final - ppo.ent_coef) * frac


# ------------------------------------------------------------------------------------------------ 1. the rollout


class Rollout:
    """The buffers of one rollout, T steps x N matches: row (t, i) is the decision made at step t in match i, kept
    when the learner (or a teacher) made it (`valid`); a frozen opponent's decisions are not kept."""

    def __init__(self, steps: int, num_envs: int, input_size: int, stock_cards: int, opponents: int) -> None:
        shape = (steps, num_envs)
        self.steps, self.num_envs, self.first_step = steps, num_envs, 0
        self.obs = np.zeros((*shape, input_size), dtype=np.float32)  # the network's inputs
        self.privileged = np.zeros((*shape, privileged_view_size(stock_cards, opponents)), dtype=np.float32)
        self.masks = np.zeros((*shape, NUM_ACTIONS), dtype=np.bool_)
        self.actions = np.zeros(shape, dtype=np.int64)
        self.logprobs = np.zeros(shape, dtype=np.float32)
        self.values = np.zeros(shape, dtype=np.float32)
        self.rewards = np.zeros(shape, dtype=np.float32)
        self.dones = np.zeros(shape, dtype=np.bool_)
        self.valid = np.zeros(shape, dtype=np.bool_)
        self.players = np.zeros(shape, dtype=np.int64)
        self.bootstrap = np.zeros((num_envs, 2), dtype=np.float32)  # V of each seat's view at the rollout's end


def play_rollout(arena: RolloutMatches, model: ActorCritic | None, teacher: AgentProtocol | None = None) -> Rollout:
    """Play `arena.rollout.steps` steps of every match into the arena's rollout buffers: the learner's rows (or,
    given a `teacher` that plays every seat, the teacher's) with their rewards credited; `arena.forward_s` is the
    time in the learner's forward passes."""
    storage, device = arena.rollout, arena.device
    storage.rewards[:], storage.dones[:], storage.valid[:] = 0.0, False, False
    storage.first_step = arena.next_step
    arena.clear_stats()
    arena.forward_s = 0.0
    for t in range(storage.steps):
        obs, masks = arena.obs["observation"], arena.obs["action_mask"].astype(np.bool_)
        learner = arena.learner_to_act()
        rows = np.flatnonzero(learner)
        privileged = arena.privileged(arena.players)
        actions = np.zeros(arena.num_envs, dtype=np.int64)
        if teacher is not None:
            actions[rows] = teacher.act(obs[rows], masks[rows])
            storage.logprobs[t, rows] = storage.values[t, rows] = 0.0
            storage.obs[t, rows] = arena.inputs(obs[rows])
        elif rows.size:
            started = time.perf_counter()
            inputs = arena.inputs(obs[rows])
            logits, values = arena.forward(model, _on(inputs, device), _on(privileged[rows], device))
            with torch.no_grad():
                sampled, logprobs = sample_masked(logits, _on(masks[rows], device), arena.generator)
            actions[rows], storage.logprobs[t, rows] = sampled.cpu().numpy(), logprobs.cpu().numpy()
            storage.values[t, rows] = values.cpu().numpy()
            arena.forward_s += time.perf_counter() - started
            storage.obs[t, rows] = inputs
        arena.opponents_act(~learner, obs, masks, actions)
        storage.privileged[t], storage.masks[t], storage.actions[t] = privileged, masks, actions
        storage.valid[t], storage.players[t] = learner, arena.players
        rewards, terminations, decision_step = arena.step(actions)
        credit(storage, decision_step, rewards, terminations, arena.threads)
    storage.bootstrap[:] = bootstrap(arena, model) if model is not None else 0.0
    return storage


def bootstrap(arena: RolloutMatches, model: ActorCritic) -> np.ndarray:
    """V of each seat's view at the rollout's end (for the chains the rollout cuts)."""
    values = np.zeros((arena.num_envs, 2), dtype=np.float32)
    with torch.no_grad():
        for p in (0, 1):
            seat = np.full(arena.num_envs, p)
            view = arena.inputs(arena.observe(seat)["observation"])
            values[:, p] = model.value(_on(view, arena.device), _on(arena.privileged(seat), arena.device)).cpu()
    return values


def _on(array: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(array).to(device)


# ------------------------------------------------------------------------------------------------ 2. credit, GAE


def credit(
    storage: Rollout, decision_step: np.ndarray, rewards: np.ndarray, terminations: np.ndarray, threads: KernelThreads
) -> None:
    """Add a step's rewards[i, p] to p's latest decision row (`credit_rows`), over slices of the matches."""
    decision_step = np.ascontiguousarray(decision_step, dtype=np.int64)
    rewards, terminations = np.asarray(rewards, dtype=np.float32), np.asarray(terminations, dtype=np.bool_)
    buffers = (storage.rewards, storage.dones, storage.valid, storage.players)

    def work(lo: int, hi: int) -> None:  # the buffers' columns lo..hi are the matches lo..hi
        columns = tuple(buffer[:, lo:hi] for buffer in buffers)
        credit_rows(*columns, storage.first_step, decision_step[lo:hi], rewards[lo:hi], terminations[lo:hi])

    threads.run(storage.num_envs, work, ROLLOUT_GRAIN)


@njit
def credit_rows(rew_buf, done_buf, valid, players, first_step, decision_step, rewards, terminations) -> None:
    """rew_buf[row, i] += rewards[i, p] for p's latest decision row, `decision_step[i, p]` in env steps (the
    opponent's reply decides what your last decision was worth); learner rows only; done where the episode ended."""
    steps = rew_buf.shape[0]
    for i in range(decision_step.shape[0]):
        for p in range(2):
            row = decision_step[i, p] - first_step
            if row < 0 or row >= steps or not valid[row, i] or players[row, i] != p:
                continue  # before this rollout, no decision yet (-1), or a frozen opponent's decision
            rew_buf[row, i] += rewards[i, p]
            if terminations[i]:
                done_buf[row, i] = True


def advantages(storage: Rollout, gamma: float, lam: float, threads: KernelThreads) -> np.ndarray:
    """GAE of every valid row (0 elsewhere), over slices of the matches; returns are advantages + values."""
    out = np.zeros_like(storage.values)
    buffers = (storage.rewards, storage.values, storage.valid, storage.players, storage.dones)

    def work(lo: int, hi: int) -> None:  # the matches lo..hi: columns of the buffers, rows of bootstrap
        columns = tuple(buffer[:, lo:hi] for buffer in buffers)
        per_player_gae(*columns, storage.bootstrap[lo:hi], gamma, lam, out[:, lo:hi])

    threads.run(storage.num_envs, work, ROLLOUT_GRAIN)
    return out


@njit
def per_player_gae(rewards, values, valid, players, dones, bootstrap, gamma, lam, out) -> None:
    """Backward GAE along each (match, player) chain of valid rows; a chain the rollout cuts bootstraps from
    V(p's view at the end)."""
    steps, n = rewards.shape
    next_value = np.zeros((n, 2), dtype=np.float64)
    next_adv = np.zeros((n, 2), dtype=np.float64)
    has_next = np.zeros((n, 2), dtype=np.bool_)
    for t in range(steps - 1, -1, -1):
        for i in range(n):
            if not valid[t, i]:
                continue
            p = players[t, i]
            if dones[t, i]:
                follow, successor, successor_adv = 0.0, 0.0, 0.0
            elif has_next[i, p]:
                follow, successor, successor_adv = 1.0, next_value[i, p], next_adv[i, p]
            else:  # the chain leaves the rollout: bootstrap from p's view at its end
                follow, successor, successor_adv = 1.0, float(bootstrap[i, p]), 0.0
            delta = rewards[t, i] + gamma * successor * follow - values[t, i]
            advantage = delta + gamma * lam * follow * successor_adv
            out[t, i] = advantage
            next_value[i, p] = values[t, i]
            next_adv[i, p] = advantage
            has_next[i, p] = True


def estimate_advantages(storage: Rollout, config: PPOConfig, threads: KernelThreads) -> np.ndarray:
    """The advantages of every valid row (0 elsewhere) by `ppo.advantages`: per-player GAE ("gae"), or the user's
    estimator called along each player's chain of decisions (advantages.py)."""
    if config.advantages == GAE:
        return advantages(storage, config.gamma, config.gae_lambda, threads)
    return chain_advantages(storage, config)


def rollout_batch(arena: RolloutMatches, model: ActorCritic, config: PPOConfig) -> Batch:
    """One rollout of the arena's matches and its advantages, as the learner's batch on the arena's device."""
    storage = play_rollout(arena, model)
    estimated = estimate_advantages(storage, config, arena.threads)
    return Batch.from_rollout(storage, estimated, arena.device)


@dataclass
class Batch:
    """The learner's valid rows of a rollout, flattened, as tensors on the learner's device."""

    obs: torch.Tensor
    privileged: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor

    def __len__(self) -> int:
        return int(self.actions.shape[0])

    @classmethod
    def from_rollout(cls, storage: Rollout, advantages: np.ndarray, device: torch.device) -> Batch:
        """The valid rows of a rollout and their advantages, moved to `device` once."""
        valid = storage.valid

        def rows(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(array[valid])).to(device)

        arrays = (storage.obs, storage.privileged, storage.masks, storage.actions, storage.logprobs, storage.values)
        return cls(*map(rows, arrays), advantages=rows(advantages), returns=rows(advantages + storage.values))


# ------------------------------------------------------------------------------------------------ 3. PPO epochs


def ppo_epochs(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    config: PPOConfig,
    ent_coef: float,
    generator: torch.Generator,
) -> dict[str, float]:
    """Epochs of minibatch PPO on one rollout; stops early once approx KL passes target_kl. Returns the losses and
    `rows_trained`, the rows of every gradient step taken (a row once per epoch that reached it)."""
    size, stats = len(batch), {}
    clipfracs, stop, rows_trained = [], False, 0
    for _ in range(config.epochs):
        order = torch.randperm(size, generator=generator, device=batch.obs.device)
        for start in range(0, size, config.minibatch_size):
            idx = order[start : start + config.minibatch_size]
            stats = minibatch_step(model, optimizer, batch, idx, config, ent_coef)
            rows_trained += len(idx)
            clipfracs.append(stats["clipfrac"])
            if config.target_kl > 0 and stats["approx_kl"] > config.target_kl:
                stop = True
                break
        if stop:
            break
    variance = batch.returns.var(unbiased=False).item()
    unexplained = (batch.returns - batch.values).var(unbiased=False).item()
    stats["clipfrac"] = float(np.mean(clipfracs))
    stats["explained_variance"] = float("nan") if variance == 0 else 1.0 - unexplained / variance
    stats["early_stop"] = float(stop)
    stats["rows_trained"] = float(rows_trained)  # what the update's time bought (benchmarks/train.py)
    return stats


def minibatch_step(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    idx: torch.Tensor,
    config: PPOConfig,
    ent_coef: float,
) -> dict[str, float]:
    """One gradient step on the rows idx (its forward pass in bfloat16 where `config.bf16`); its statistics."""
    with torch.autocast(batch.obs.device.type, dtype=torch.bfloat16, enabled=config.bf16):
        loss, stats = ppo_loss(model, batch, idx, config, ent_coef)
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
    optimizer.step()
    return dict(zip(stats, torch.stack(list(stats.values())).tolist(), strict=True))  # one host sync


def ppo_loss(
    model: ActorCritic, batch: Batch, idx: torch.Tensor, config: PPOConfig, ent_coef: float
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """The clipped-surrogate loss of the rows idx and its statistics, as tensors (no host sync)."""
    logits, new_values = model(batch.obs[idx], batch.privileged[idx])
    log_probs = masked_log_probs(logits, batch.masks[idx])
    new_logprob = log_probs.gather(1, batch.actions[idx, None]).squeeze(1)
    entropy = entropy_of(log_probs).mean()
    log_ratio = new_logprob - batch.logprobs[idx]
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean()
        clipfrac = ((ratio - 1.0).abs() > config.clip_coef).float().mean()
    adv = batch.advantages[idx]
    if config.norm_adv and len(idx) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - config.clip_coef, 1 + config.clip_coef)).mean()
    returns, old_values = batch.returns[idx], batch.values[idx]
    if config.clip_vloss:
        clipped = old_values + (new_values - old_values).clamp(-config.clip_coef, config.clip_coef)
        value_loss = 0.5 * torch.max((new_values - returns) ** 2, (clipped - returns) ** 2).mean()
    else:
        value_loss = 0.5 * ((new_values - returns) ** 2).mean()
    loss = policy_loss - ent_coef * entropy + config.vf_coef * value_loss
    stats = {
        "policy_loss": policy_loss.detach(),
        "value_loss": value_loss.detach(),
        "entropy": entropy.detach(),
        "approx_kl": approx_kl,
        "clipfrac": clipfrac,
    }
    return loss, stats


# ------------------------------------------------------------------------------------------------ 4. logging

LOSS_KEYS = ("policy_loss", "value_loss", "entropy", "approx_kl", "clipfrac", "explained_variance", "early_stop")


def log_update(writer: SummaryWriter, step: int, figures: dict[str, float]) -> None:
    """One update's figures (`update`'s), each under its namespace; NaN (nothing to say yet) is left out."""
    for tag, value in figures.items():
        if value == value:
            writer.add_scalar(tag, value, step)


def log_evaluation(writer: SummaryWriter, step: int, results: dict[str, dict[str, Any]]) -> None:
    """An evaluation's figures against each opponent (evaluation.evaluate's summaries) under eval/."""
    for name, summary in results.items():
        low, high = summary["match_win_ci95"]
        figures = {
            "match_win_rate": summary["match_win_rate"],
            "match_win_low": low,
            "match_win_high": high,
            "points_per_hand": summary["points_per_hand"],
            "hand_win_rate": summary["hand_win_rate"],
        }
        for key, value in figures.items():
            writer.add_scalar(f"eval/{key}_vs_{name}", value, step)


# ------------------------------------------------------------------------------------------------ one update


def update(
    config: Config,
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    arena: Matches,
    number: int,
    generator: torch.Generator,
) -> dict[str, float]:
    """PPO update `number` (1-based) of the learner against the arena's matches: the schedule, the rollout with its
    credit and GAE, the epochs. Returns its figures by TensorBoard tag (`log_update` logs them)."""
    lr, ent_coef = schedule(config, optimizer, number)
    started = time.perf_counter()
    # the rollout, its credit and GAE (`rollout_batch`): here, or the same on Ray workers (workers.py), concatenated
    # in worker order
    batch = arena.rollout_batch(model)
    collected = time.perf_counter()
    losses = ppo_epochs(model, optimizer, batch, config.ppo, ent_coef, generator)
    done = time.perf_counter()
    return {
        "charts/SPS": len(batch) / (done - started),
        "charts/learning_rate": lr,
        "charts/ent_coef": ent_coef,
        "charts/update": number,
        "charts/decisions": len(batch),
        "charts/rows_trained": losses["rows_trained"],
        **{f"losses/{key}": losses[key] for key in LOSS_KEYS},
        **{f"hands/{key}": value for key, value in arena.hand_summary().items()},
        "selfplay/pool_size": len(arena.pool.snapshots),
        "selfplay/win_rate_vs_pool": arena.pool.win_rate(),
        "time/rollout_s": collected - started,
        "time/forward_s": arena.forward_s,
        "time/update_s": done - collected,
    }
