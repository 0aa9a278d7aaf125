"""The warm start: behaviour cloning on a heuristic's decisions, before PPO.

A randomly initialised policy plays almost at random, and about 97% of random hands end dead, so PPO would see
almost no reward. The teacher (`expert` by default) plays both seats of every match in the arena; the policy learns
its decisions by cross-entropy on the masked logits, and the value head regresses on the discounted returns of those
matches (GAE with lambda = 1 on zero values), so PPO starts with a sensible critic too. Both steps draw only from
the run's own random streams, so the same seed gives the same warm start.
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


def collect_teacher(
    config: Config,
    network: nn.Module,
    rng: np.random.Generator,
    num_threads: int | None = None,
    progress: Callable[[int], None] = lambda n: None,
) -> dict[str, np.ndarray]:
    """The teacher's decisions: the input rows of `network` (its `inputs` of the observations), privileged views,
    masks, actions and discounted returns, in arrays of `warmstart.decisions` rows made once (what the warm start
    holds: config.py's MAX_WARMSTART_DECISIONS); its matches' kernels on `num_threads` threads; progress(n) after each
    round with the decisions collected in it."""
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


def clone(
    model: ActorCritic,
    data: dict[str, np.ndarray],
    config: Config,
    generator: torch.Generator,
    log: Callable[[int, dict[str, float]], None],
    device: torch.device,
) -> dict[str, float]:
    """Epochs of cross-entropy on the teacher's actions plus the value regression, on `device`; log(epoch, stats)
    after each epoch."""
    w = config.warmstart
    obs, privileged, masks, actions, returns = (torch.from_numpy(data[key]).to(device) for key in (*KEYS, "returns"))
    optimizer = torch.optim.Adam(model.parameters(), lr=w.lr)
    size = len(actions)
    steps = w.epochs * -(-size // w.minibatch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / steps)
    stats: dict[str, float] = {}
    for epoch in range(w.epochs):
        order = torch.randperm(size, generator=generator, device=device)
        totals = torch.zeros(3, dtype=torch.float64, device=device)
        for start in range(0, size, w.minibatch_size):
            idx = order[start : start + w.minibatch_size]
            logits, values = model(obs[idx], privileged[idx])
            log_probs = masked_log_probs(logits, masks[idx])
            policy_loss = -log_probs.gather(1, actions[idx, None]).mean()
            value_loss = 0.5 * ((values - returns[idx]) ** 2).mean()
            loss = policy_loss + w.value_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.ppo.max_grad_norm)
            optimizer.step()
            schedule.step()
            accuracy = (log_probs.argmax(1) == actions[idx]).float().mean()
            batch_stats = [policy_loss.detach(), value_loss.detach(), accuracy]
            totals += torch.stack(batch_stats).double() * len(idx)
        stats = dict(zip(("policy_loss", "value_loss", "accuracy"), (totals / size).tolist(), strict=True))
        log(epoch, stats)
    return stats
