"""The warm start: behaviour cloning on a heuristic's decisions, before PPO.

A randomly initialised policy plays almost at random, and about 97% of random hands end dead, so PPO would see
almost no reward. The teacher (`expert` by default) plays both seats of every match in the arena; the policy learns
its decisions by cross-entropy on the masked logits, and the value head regresses on the discounted returns of those
matches (GAE with lambda = 1 on zero values), so PPO starts with a sensible critic too.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from agents.arena import Arena
from agents.config import Config
from agents.ppo import ActorCritic, masked_log_probs
from agents.rollout import RolloutStorage
from hollywood_gin_env.agents import ExpertAgent, load_agent
from hollywood_gin_env.observation import OBS_SIZE
from hollywood_gin_env.state import NUM_ACTIONS

TEACHER_STEPS = 128  # steps per collection round; long rounds cut fewer return chains


def collect_teacher(config: Config, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The teacher's decisions: obs, masks, actions and discounted returns, flattened."""
    w = config.warmstart
    env = config.env
    arena = Arena(env.num_envs, config.make_rules(), env.reward, env.match_bonus, pool=None, episode=env.episode)
    arena.reset(seed=config.train.seed * 1_000_003 + 17, rng=rng)
    teacher = ExpertAgent(np.array(w.teacher_weights)) if w.teacher_weights else load_agent(w.teacher)
    storage = RolloutStorage(TEACHER_STEPS, config.env.num_envs, OBS_SIZE, NUM_ACTIONS)
    parts: dict[str, list[np.ndarray]] = {"obs": [], "masks": [], "actions": [], "returns": []}
    collected = 0
    while collected < w.decisions:
        arena.collect(storage, None, torch.Generator(), rng, actor=teacher)
        returns = storage.advantages(config.ppo.gamma, 1.0)  # values are 0: advantages are the returns
        valid = storage.valid
        for key, array in (("obs", storage.obs), ("masks", storage.masks), ("actions", storage.actions),
                           ("returns", returns)):  # fmt: skip
            parts[key].append(array[valid])
        collected += int(valid.sum())
    return {key: np.concatenate(value)[: w.decisions] for key, value in parts.items()}


def clone(model: ActorCritic, data: dict[str, np.ndarray], config: Config, generator: torch.Generator,
          log: Callable[[int, dict[str, float]], None]) -> dict[str, float]:  # fmt: skip
    """Epochs of cross-entropy on the teacher's actions plus the value regression; log(epoch, stats) after each."""
    w = config.warmstart
    obs, masks = torch.from_numpy(data["obs"]), torch.from_numpy(data["masks"])
    actions, returns = torch.from_numpy(data["actions"]), torch.from_numpy(data["returns"].astype(np.float32))
    optimizer = torch.optim.Adam(model.parameters(), lr=w.lr)
    size = len(actions)
    steps = w.epochs * -(-size // w.minibatch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda k: 1.0 - k / steps)
    stats: dict[str, float] = {}
    for epoch in range(w.epochs):
        order = torch.randperm(size, generator=generator)
        totals = np.zeros(3)
        for start in range(0, size, w.minibatch_size):
            idx = order[start : start + w.minibatch_size]
            logits, values = model(obs[idx])
            log_probs = masked_log_probs(logits, masks[idx])
            policy_loss = -log_probs.gather(1, actions[idx, None]).mean()
            value_loss = 0.5 * ((values - returns[idx]) ** 2).mean()
            optimizer.zero_grad()
            (policy_loss + w.value_coef * value_loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.ppo.max_grad_norm)
            optimizer.step()
            schedule.step()
            accuracy = (log_probs.argmax(1) == actions[idx]).float().mean()
            totals += np.array([policy_loss.item(), value_loss.item(), accuracy.item()]) * len(idx)
        stats = dict(zip(("policy_loss", "value_loss", "accuracy"), (totals / size).tolist(), strict=True))
        log(epoch, stats)
    return stats
