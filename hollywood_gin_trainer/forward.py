"""The rollout's forward pass of the learner (`train.compile`): eager, or through `torch.compile`.

Compiled, the pass runs as inductor's fused kernels. On CUDA it runs as CUDA graphs (mode "reduce-overhead": one
launch replays the whole pass), which need fixed shapes: each step's rows are padded with zero rows to the arena's
match count, so one graph serves every step, and the padded rows' outputs are dropped. On the CPU the rows are not
padded (a padded row costs a CPU its full price) and the batch size is a dynamic dimension, compiled once. The
weights are read in place, so the compiled pass sees every update without being compiled again; only the rollout's
sampling pass is compiled (compiled, the PPO update's forward and backward passes ran slower on the CPU).
"""

from __future__ import annotations

import torch
from torch import nn


class RolloutForward:
    """(logits, values) of an ActorCritic on a batch of input rows, without gradients; eager unless `compiled`."""

    def __init__(self, compiled: bool, device: torch.device | str, rows: int, fixed_shape: bool | None = None) -> None:
        self.device = torch.device(device)
        self.compiled = compiled
        fixed = self.device.type == "cuda" if fixed_shape is None else fixed_shape  # CUDA graphs: one shape
        self.pad_to = rows if compiled and fixed else None
        self._model: nn.Module | None = None
        self._forward = None

    def __call__(
        self, model: nn.Module, obs: torch.Tensor, privileged: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """model(obs, privileged) for the rows given (compiled the first time this model is seen)."""
        with torch.no_grad():
            if not self.compiled:
                return model(obs, privileged)
            if self._model is not model:
                self._model, self._forward = model, self._compile(model)
            if self.pad_to is None:
                return self._forward(obs, privileged)
            rows = obs.shape[0]
            if self.device.type == "cuda":
                torch.compiler.cudagraph_mark_step_begin()  # the last replay's outputs were copied out below
            logits, values = self._forward(pad_rows(obs, self.pad_to), pad_rows(privileged, self.pad_to))
            return logits[:rows].clone(), values[:rows].clone()

    def _compile(self, model: nn.Module):
        if self.pad_to is None:
            return torch.compile(model, dynamic=True)
        return torch.compile(model, mode="reduce-overhead" if self.device.type == "cuda" else None, dynamic=False)


def pad_rows(rows: torch.Tensor, count: int) -> torch.Tensor:
    """`rows` followed by zero rows up to `count` rows in all (ValueError if it already has more)."""
    if rows.shape[0] > count:
        raise ValueError(f"{rows.shape[0]} rows: more than the {count} a fixed-shape batch holds")
    if rows.shape[0] == count:
        return rows
    return torch.cat([rows, rows.new_zeros((count - rows.shape[0], *rows.shape[1:]))])


def check_compiles(model: nn.Module, device: torch.device | str, rows: int, privileged_size: int) -> None:
    """Compile the model's rollout pass once, on two rows (torch specializes a batch of one), so that a machine
    where torch.compile cannot work (no C++ compiler, an unsupported device) says so when the run starts, not after
    its warm start."""
    obs = torch.zeros(2, model.policy.input_size, device=device)
    privileged = torch.zeros(2, privileged_size, device=device)
    try:
        RolloutForward(True, device, rows)(model, obs, privileged)
    except Exception as error:  # inductor raises many kinds; each means the same to the user
        reason = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise RuntimeError(
            f"train.compile=true: torch.compile failed on this machine ({type(error).__name__}: {reason:.200}); "
            "set train.compile=false"
        ) from error
