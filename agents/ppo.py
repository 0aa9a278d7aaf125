"""The PPO learner: the policy network of hollywood_gin_env.agents.policy with a value head on its torso, the masked
categorical, and the clipped-surrogate update (CleanRL's ppo.py, with the mask in sampling, log-probabilities and
entropy)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.config import PPOConfig
from hollywood_gin_env.agents.policy import build_policy, check_policy_config

MASKED_LOGIT = -1e9  # exp() of it is exactly 0: an illegal action gets no probability, and 0 * log p stays 0


def mask_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits with every illegal action pushed to MASKED_LOGIT."""
    return logits.masked_fill(~masks, MASKED_LOGIT)


def sample_masked(logits: torch.Tensor, masks: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One legal action per row, sampled from the masked softmax."""
    probs = torch.softmax(mask_logits(logits, masks), dim=-1)
    return torch.multinomial(probs, 1, generator=generator).squeeze(1)


def masked_log_probs(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """log pi(a|s) of every action under the mask (illegal actions: about -1e9)."""
    return torch.log_softmax(mask_logits(logits, masks), dim=-1)


def entropy_of(log_probs: torch.Tensor) -> torch.Tensor:
    """Entropy per row of a masked distribution (illegal actions contribute exactly 0)."""
    return -(log_probs.exp() * log_probs).sum(-1)


class ActorCritic(nn.Module):
    """`policy` (the network a checkpoint holds) plus a value head on its torso's features."""

    def __init__(self, policy_config: dict[str, Any]) -> None:
        super().__init__()
        self.policy_config = check_policy_config(dict(policy_config))
        self.policy = build_policy(self.policy_config)
        self.value_head = nn.Linear(self.policy.feature_size, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(logits (B, 107), values (B,))."""
        features = self.policy.features(obs)
        return self.policy.head(obs, features), self.value_head(features).squeeze(-1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """V(obs) only."""
        return self.value_head(self.policy.features(obs)).squeeze(-1)


@dataclass
class Batch:
    """The learner's valid rows of a rollout, flattened, as tensors."""

    obs: torch.Tensor
    masks: torch.Tensor
    actions: torch.Tensor
    logprobs: torch.Tensor
    values: torch.Tensor
    advantages: torch.Tensor
    returns: torch.Tensor

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def ppo_update(model: ActorCritic, optimizer: torch.optim.Optimizer, batch: Batch, config: PPOConfig,
               ent_coef: float, generator: torch.Generator) -> dict[str, float]:  # fmt: skip
    """Epochs of minibatch PPO on one rollout; stops early once approx KL passes target_kl. Returns the losses."""
    size, stats = len(batch), {}
    clipfracs, stop = [], False
    for _ in range(config.epochs):
        order = torch.randperm(size, generator=generator)
        for start in range(0, size, config.minibatch_size):
            idx = order[start : start + config.minibatch_size]
            stats = _minibatch_step(model, optimizer, batch, idx, config, ent_coef)
            clipfracs.append(stats["clipfrac"])
            if config.target_kl > 0 and stats["approx_kl"] > config.target_kl:
                stop = True
                break
        if stop:
            break
    values, returns = batch.values.numpy(), batch.returns.numpy()
    variance = np.var(returns)
    stats["clipfrac"] = float(np.mean(clipfracs))
    stats["explained_variance"] = float("nan") if variance == 0 else float(1 - np.var(returns - values) / variance)
    stats["early_stop"] = float(stop)
    return stats


def _minibatch_step(model: ActorCritic, optimizer: torch.optim.Optimizer, batch: Batch, idx: torch.Tensor,
                    config: PPOConfig, ent_coef: float) -> dict[str, float]:  # fmt: skip
    """One gradient step on the rows idx."""
    logits, new_values = model(batch.obs[idx])
    log_probs = masked_log_probs(logits, batch.masks[idx])
    new_logprob = log_probs.gather(1, batch.actions[idx, None]).squeeze(1)
    entropy = entropy_of(log_probs).mean()
    log_ratio = new_logprob - batch.logprobs[idx]
    ratio = log_ratio.exp()
    with torch.no_grad():
        approx_kl = ((ratio - 1) - log_ratio).mean().item()
        clipfrac = ((ratio - 1.0).abs() > config.clip_coef).float().mean().item()
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
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), config.max_grad_norm)
    optimizer.step()
    return {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(), "entropy": entropy.item(),
            "approx_kl": approx_kl, "clipfrac": clipfrac}  # fmt: skip
