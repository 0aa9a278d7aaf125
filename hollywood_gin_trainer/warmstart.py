"""The warm start: behaviour cloning on a heuristic's decisions, before PPO.

A randomly initialised policy plays almost at random, and about 97% of random hands end dead, so PPO would see
almost no reward. The teacher (`expert` by default) plays both seats of every match in the arena; the policy learns
its decisions by cross-entropy on the masked logits, and the value head regresses on the discounted returns of those
matches (GAE with lambda = 1 on zero values), so PPO starts with a sensible critic too. Both steps draw only from
the run's own random streams, so the same seed gives the same warm start.

A warm start stops between two of its steps (a round of the teacher's matches, a minibatch of the cloning) when it is
asked to (`stop()`), and keeps what a resumed one needs to end as an unbroken one would (`Cloning`: the cloning's
Adam, the epoch and minibatch reached, the torch generator's state at the epoch's start). The teacher's decisions are
not kept: they are a function of the config alone, so a resumed warm start collects the same ones again (about a
quarter of the recipe's warm start, measured) instead of writing 5.96 KB a decision to disk (7.2 GB for the recipe's
1.2M; docs/TRAINING.md, "Stopping in the warm start").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents import ExpertAgent, load_agent
from hollywood_gin_env.agents.masked import masked_log_probs
from hollywood_gin_trainer.arena import Arena
from hollywood_gin_trainer.config import Config
from hollywood_gin_trainer.ppo import ActorCritic, advantages, play_rollout

TEACHER_STEPS = 128  # steps per collection round; long rounds cut fewer return chains
TEACHER_SEED_OFFSET = 17  # the teacher's matches are dealt from seed * 1_000_003 + 17: apart from PPO's deals
KEYS = ("obs", "privileged", "masks", "actions")  # a rollout's rows the cloning reads, then the returns


def clones(config: Config) -> bool:
    """True if a run of this config starts with the cloning (a teacher and decisions, no `warmstart.init`)."""
    w = config.warmstart
    return not w.init and w.teacher != "none" and w.decisions > 0


def collect_teacher(
    config: Config,
    network: nn.Module,
    rng: np.random.Generator,
    num_threads: int | None = None,
    progress: Callable[[int], None] = lambda n: None,
    stop: Callable[[], bool] = lambda: False,
) -> dict[str, np.ndarray] | None:
    """The teacher's decisions: the input rows of `network` (its `inputs` of the observations), privileged views,
    masks, actions and discounted returns, in arrays of `warmstart.decisions` rows made once (what the warm start
    holds: config.py's MAX_WARMSTART_DECISIONS); its matches' kernels on `num_threads` threads; progress(n) after each
    round with the decisions collected in it. None if stop() held after a round that left decisions to collect."""
    w = config.warmstart
    arena = Arena(config, network, None, rng, num_threads=num_threads, steps=TEACHER_STEPS)
    arena.reset(seed=config.train.seed * 1_000_003 + TEACHER_SEED_OFFSET)
    count = arena.threads.num_threads
    weights = np.array(w.teacher_weights)
    teacher = ExpertAgent(weights, count) if w.teacher_weights else load_agent(w.teacher, num_threads=count)
    storage = arena.rollout
    data = {key: np.empty((w.decisions, *getattr(storage, key).shape[2:]), getattr(storage, key).dtype) for key in KEYS}
    data["returns"] = np.empty(w.decisions, dtype=np.float32)
    collected = 0
    while collected < w.decisions:
        if collected and stop():
            return None
        play_rollout(arena, None, teacher)
        returns = advantages(storage, config.ppo.gamma, 1.0, arena.threads)  # values are 0: advantages are returns
        count = min(int(storage.valid.sum()), w.decisions - collected)
        rows = slice(collected, collected + count)
        for key in KEYS:
            data[key][rows] = getattr(storage, key)[storage.valid][:count]
        data["returns"][rows] = returns[storage.valid][:count]
        progress(count)
        collected += count
    return data


class Cloning:
    """The cloning where it stands (module docstring): its Adam, `epoch` (epochs done), `batch` (minibatches done of
    the next), `totals` (that epoch's summed losses and hits so far, float64 on the device) and `epoch_start` (the
    torch generator's state when that epoch drew its minibatch order; None before it did)."""

    def __init__(self, model: ActorCritic, config: Config) -> None:
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.warmstart.lr)
        self.epoch, self.batch = 0, 0
        self.totals = torch.zeros(3, dtype=torch.float64, device=next(model.parameters()).device)
        self.epoch_start: torch.Tensor | None = None

    def rows_done(self, size: int, config: Config) -> int:
        """Decisions cloned over every epoch (what the cloning's progress bar shows)."""
        return self.epoch * size + min(size, self.batch * config.warmstart.minibatch_size)


def clone(
    model: ActorCritic,
    data: dict[str, np.ndarray],
    config: Config,
    generator: torch.Generator,
    log: Callable[[int, dict[str, float]], None],
    device: torch.device,
    cloning: Cloning | None = None,
    stop: Callable[[], bool] = lambda: False,
    progress: Callable[[int], None] = lambda n: None,
) -> bool:
    """Epochs of cross-entropy on the teacher's actions plus the value regression, on `device`, from where `cloning`
    stands (default: a fresh one); progress(rows) after each minibatch, log(epoch, stats) after each epoch. False if
    it stopped before a minibatch because stop() held (`cloning` then holds where), True once every epoch is done."""
    w = config.warmstart
    cloning = Cloning(model, config) if cloning is None else cloning
    columns = [torch.from_numpy(data[key]).to(device) for key in (*KEYS, "returns")]
    size = len(columns[0])
    batches = -(-size // w.minibatch_size)
    steps = w.epochs * batches
    while cloning.epoch < w.epochs:
        if cloning.epoch_start is None:
            cloning.epoch_start = generator.get_state()
        else:  # a resumed epoch: its order drawn again from the same state
            generator.set_state(cloning.epoch_start)
        order = torch.randperm(size, generator=generator, device=device)
        for batch in range(cloning.batch, batches):
            if stop():
                return False
            idx = order[batch * w.minibatch_size : (batch + 1) * w.minibatch_size]
            lr = w.lr * (1.0 - (cloning.epoch * batches + batch) / steps)  # linear decay to 0 over every step
            cloning.totals += _step(model, cloning.optimizer, lr, config, [column[idx] for column in columns])
            cloning.batch = batch + 1
            progress(len(idx))
        stats = dict(zip(("policy_loss", "value_loss", "accuracy"), (cloning.totals / size).tolist(), strict=True))
        cloning.epoch, cloning.batch, cloning.epoch_start = cloning.epoch + 1, 0, None
        cloning.totals = torch.zeros_like(cloning.totals)
        log(cloning.epoch - 1, stats)
    return True


def _step(
    model: ActorCritic, optimizer: torch.optim.Optimizer, lr: float, config: Config, rows: list[torch.Tensor]
) -> torch.Tensor:
    """One gradient step of the cloning at learning rate `lr` on a minibatch's rows (KEYS' and the returns); its
    summed losses and hits (float64)."""
    obs, privileged, masks, actions, returns = rows
    logits, values = model(obs, privileged)
    log_probs = masked_log_probs(logits, masks)
    policy_loss = -log_probs.gather(1, actions[:, None]).mean()
    value_loss = 0.5 * ((values - returns) ** 2).mean()
    loss = policy_loss + config.warmstart.value_coef * value_loss
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), config.ppo.max_grad_norm)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    accuracy = (log_probs.argmax(1) == actions).float().mean()
    return torch.stack([policy_loss.detach(), value_loss.detach(), accuracy]).double() * len(actions)
