"""The PPO learner: the policy network of hollywood_gin_env.agents.policy with a value head on its torso, the masked
categorical (hollywood_gin_env/agents/masked.py), and the clipped-surrogate update (CleanRL's ppo.py, with the mask
in sampling, log-probabilities and entropy). Everything here runs on the device of the model and the batch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from hollywood_gin_env.agents.masked import entropy_of, masked_log_probs
from hollywood_gin_env.agents.policy import build_policy, check_policy_config
from hollywood_gin_trainer.config import Config, PPOConfig
from hollywood_gin_trainer.privileged import privileged_view_size

CRITICS = ("player", "privileged")
PRIVILEGED_CRITIC_WIDTH = 256  # the privileged value head's hidden layers: it combines the two inputs, not adds them


class ActorCritic(nn.Module):
    """`policy` (the network a checkpoint holds) plus a value head on its torso's features: a linear one
    (`critic="player"`), or a small MLP that also reads the privileged view (`critic="privileged"`, privileged.py)."""

    def __init__(
        self,
        policy_config: dict[str, Any],
        critic: str = "player",
        stock_cards: int = 1,
    ) -> None:
        super().__init__()
        if critic not in CRITICS:
            raise ValueError(f"critic={critic!r}: expected one of {CRITICS}")
        self.policy_config = check_policy_config(dict(policy_config))
        self.policy = build_policy(self.policy_config)
        self.critic = critic
        size = self.policy.feature_size
        if critic == "privileged":
            # Two hidden layers: with many stock cards in view the head plays the hand forward, not just adds terms.
            self.value_head = nn.Sequential(
                nn.Linear(size + privileged_view_size(stock_cards), PRIVILEGED_CRITIC_WIDTH),
                nn.ReLU(),
                nn.Linear(PRIVILEGED_CRITIC_WIDTH, PRIVILEGED_CRITIC_WIDTH),
                nn.ReLU(),
                nn.Linear(PRIVILEGED_CRITIC_WIDTH, 1),
            )
        else:
            self.value_head = nn.Linear(size, 1)

    @classmethod
    def for_config(cls, config: Config) -> ActorCritic:
        """The actor-critic a run of this checked config trains."""
        m = config.model
        return cls(config.policy_config(), m.critic, m.critic_stock_cards)

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
    def from_rollout(cls, storage: Any, advantages: np.ndarray, device: torch.device) -> Batch:
        """The valid rows of a RolloutStorage and their advantages, moved to `device` once."""
        valid = storage.valid

        def rows(array: np.ndarray) -> torch.Tensor:
            return torch.from_numpy(np.ascontiguousarray(array[valid])).to(device)

        return cls(
            obs=rows(storage.obs),
            privileged=rows(storage.privileged),
            masks=rows(storage.masks),
            actions=rows(storage.actions),
            logprobs=rows(storage.logprobs),
            values=rows(storage.values),
            advantages=rows(advantages),
            returns=rows(advantages + storage.values),
        )


def ppo_update(
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
            stats = _minibatch_step(model, optimizer, batch, idx, config, ent_coef)
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


def _minibatch_step(
    model: ActorCritic,
    optimizer: torch.optim.Optimizer,
    batch: Batch,
    idx: torch.Tensor,
    config: PPOConfig,
    ent_coef: float,
) -> dict[str, float]:
    """One gradient step on the rows idx (its forward pass in bfloat16 where `config.bf16`)."""
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
