"""The one masked categorical over the 107 actions: what every sampler, log-probability and entropy goes through.

The trainer's learner (hollywood_gin_trainer/ppo.py), arena and opponent pool, `PolicyAgent` and the play program's
hints all use these functions, so an illegal action is excluded the same way everywhere: its logit is pushed to
MASKED_LOGIT, whose exp() is exactly 0 in float32, so it gets no probability, and 0 * log p stays 0 in the entropy.
Every function is torch only and runs on the device of its inputs.
"""

from __future__ import annotations

import torch

MASKED_LOGIT = -1e9


def mask_logits(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """Logits with every illegal action (masks False or 0) pushed to MASKED_LOGIT."""
    return logits.masked_fill(~masks.bool(), MASKED_LOGIT)


def masked_log_probs(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """log pi(a|s) of every action under the mask (illegal actions: about -1e9)."""
    return torch.log_softmax(mask_logits(logits, masks), dim=-1)


def masked_probs(logits: torch.Tensor, masks: torch.Tensor) -> torch.Tensor:
    """pi(a|s) of every action under the mask (illegal actions: exactly 0)."""
    return torch.softmax(mask_logits(logits, masks), dim=-1)


def entropy_of(log_probs: torch.Tensor) -> torch.Tensor:
    """Entropy per row of a masked distribution (illegal actions contribute exactly 0)."""
    return -(log_probs.exp() * log_probs).sum(-1)


def sample_masked(
    logits: torch.Tensor, masks: torch.Tensor, generator: torch.Generator | None = None, deterministic: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """(actions, their log-probabilities): one legal action per row, sampled from the masked softmax with
    `generator` (on the logits' device), or the most likely legal action when `deterministic`."""
    log_probs = masked_log_probs(logits, masks)
    if deterministic:  # the argmax of the raw logits: no rounding of the softmax can tie two actions
        actions = mask_logits(logits, masks).argmax(dim=1)
    else:
        actions = torch.multinomial(log_probs.exp(), 1, generator=generator).squeeze(1)
    return actions, log_probs.gather(1, actions[:, None]).squeeze(1)
