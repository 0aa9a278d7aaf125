"""Uniform picks among the legal actions: from given uniforms (`sample_legal`) or from each match's own stream
(`sample_legal_streams`, the envs' built-in random opponent)."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.support.jit import njit
from hollywood_gin_env.support.streams import random_below


@njit
def _count_legal(mask_row: np.ndarray) -> int:
    count = 0
    for a in range(mask_row.shape[0]):
        count += mask_row[a] != 0
    return count


@njit
def _nth_legal(mask_row: np.ndarray, k: int) -> int:
    """The k-th (from 0) legal action of one mask row."""
    for a in range(mask_row.shape[0]):
        if mask_row[a] != 0:
            if k == 0:
                return a
            k -= 1
    return -1


@njit
def _sample_legal(masks: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    for i in range(masks.shape[0]):
        count = _count_legal(masks[i])
        out[i] = _nth_legal(masks[i], min(int(uniforms[i] * count), count - 1)) if count else -1


def sample_legal(masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """actions[i] = a uniformly chosen legal action of masks[i] given uniforms[i] in [0, 1); -1 if none."""
    masks, uniforms = np.asarray(masks), np.asarray(uniforms)
    if masks.ndim != 2 or uniforms.shape != (masks.shape[0],):
        raise ValueError(
            f"sample_legal takes masks of shape (B, actions) and uniforms of shape (B,), got "
            f"{masks.shape} and {uniforms.shape}"
        )
    out = np.empty(masks.shape[0], dtype=np.int64)
    _sample_legal(masks, uniforms, out)
    return out


@njit
def sample_legal_streams(masks: np.ndarray, selected: np.ndarray, rng: np.ndarray, out: np.ndarray) -> None:
    """out[i] = a uniformly random legal action of each selected row, drawn from stream i; -1 if none."""
    for i in range(masks.shape[0]):
        if selected[i]:
            count = _count_legal(masks[i])
            out[i] = _nth_legal(masks[i], random_below(rng, i, count)) if count else -1
