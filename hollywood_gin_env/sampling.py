"""Uniform sampling of legal actions from masks: one numba pass over the batch."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit


@njit
def _sample_legal(masks: np.ndarray, uniforms: np.ndarray, out: np.ndarray) -> None:
    for i in range(masks.shape[0]):
        count = 0
        for a in range(masks.shape[1]):
            count += masks[i, a] != 0
        pick = min(int(uniforms[i] * count), count - 1)
        out[i] = -1
        for a in range(masks.shape[1]):
            if masks[i, a] != 0:
                if pick == 0:
                    out[i] = a
                    break
                pick -= 1


def sample_legal(masks: np.ndarray, uniforms: np.ndarray) -> np.ndarray:
    """actions[i] = a uniformly chosen legal action of masks[i] given uniforms[i] in [0, 1); -1 if none."""
    out = np.empty(masks.shape[0], dtype=np.int64)
    _sample_legal(masks, uniforms, out)
    return out
