"""Randomness shared by the engine and the env: per-match splitmix64 streams and uniform legal-action picks."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit

_GAMMA = np.uint64(0x9E3779B97F4A7C15)


@njit
def random_below(rng: np.ndarray, i: int, n: int) -> int:
    """A random integer in [0, n) from stream i of rng (uint64 splitmix64 states, advanced in place)."""
    z = rng[i] + _GAMMA
    rng[i] = z
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return int((z >> np.uint64(11)) % np.uint64(n))


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
