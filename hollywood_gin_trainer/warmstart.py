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

from hollywood_gin_env.agents import ExpertAgent, load_agent
from hollywood_gin_env.agents.masked import masked_log_probs
from hollywood_gin_env.engine.observation import OBS_SIZE
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_trainer.arena import Arena
from hollywood_gin_trainer.config import Config
from hollywood_gin_trainer.ppo import ActorCritic
from hollywood_gin_trainer.rollout import RolloutStorage

TEACHER_STEPS = 128  # steps per collection round; long rounds cut fewer return chains
TEACHER_SEED_OFFSET = 17  # the teacher's matches are dealt from seed * 1_000_003 + 17: apart from PPO's deals


def collect_teacher(
    config: Config, rules: Rules, rng: np.random.Generator, progress: Callable[[int], None] = lambda n: None
) -> dict[str, np.ndarray]:
    """The teacher's decisions: obs, privileged views, masks, actions and discounted returns, flattened; progress(n)
    after each round with the decisions collected in it."""
    w = config.warmstart
    env = config.env
    stock_cards = config.model.critic_stock_cards
    arena = Arena(
        env.num_envs,
        rules,
        env.reward,
        pool=None,
        episode=env.episode,
        stock_cards=stock_cards,
        playout=config.model.critic_playout,
        rng=rng,
    )
    arena.reset(seed=config.train.seed * 1_000_003 + TEACHER_SEED_OFFSET)
    teacher = ExpertAgent(np.array(w.teacher_weights)) if w.teacher_weights else load_agent(w.teacher)
    storage = RolloutStorage(TEACHER_STEPS, config.env.num_envs, OBS_SIZE, NUM_ACTIONS, stock_cards)
    keys = ["obs", "privileged", "masks", "actions", "returns"]
    parts: dict[str, list[np.ndarray]] = {key: [] for key in keys}
    collected = 0
    while collected < w.decisions:
        arena.play(storage, None, actor=teacher)
        returns = storage.advantages(config.ppo.gamma, 1.0)  # values are 0: advantages are the returns
        valid = storage.valid
        arrays = {
            "obs": storage.obs,
            "privileged": storage.privileged,
            "masks": storage.masks,
            "actions": storage.actions,
            "returns": returns,
        }
        for key in keys:
            parts[key].append(arrays[key][valid])
        count = int(valid.sum())
        progress(min(count, w.decisions - collected))
        collected += count
    return {key: np.concatenate(value)[: w.decisions] for key, value in parts.items()}


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
    obs = torch.from_numpy(model.policy.prepare(data["obs"])).to(device)  # the teacher's rows, as network inputs
    privileged, masks = (torch.from_numpy(data[key]).to(device) for key in ("privileged", "masks"))
    actions = torch.from_numpy(data["actions"]).to(device)
    returns = torch.from_numpy(data["returns"].astype(np.float32)).to(device)
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
