"""What taking the face-up card would do to a hand, computed with the exact meld solver, for policy networks.

A network sees the hand and the face-up card as planes; whether taking that card lowers the hand's deadwood is a
meld-solver question it learns only slowly (behaviour cloning on `expert` got the take/draw choice right 63% of the
time without these features). They are a pure function of the observation, so they add nothing a player may not
know.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit
from hollywood_gin_env.melds import count_bits, discard_deadwoods_mask, min_deadwood_mask
from hollywood_gin_env.observation import OBS_LAYOUT

TAKE_FEATURES = 3  # deadwood gained by taking (tens of points), deadwood after taking (/100), 1 if taking helps
_HAND, _FACE_UP = OBS_LAYOUT["hand"][0], OBS_LAYOUT["face_up"][0]
_HAND_CARDS = 10


@njit
def _take_features_kernel(obs: np.ndarray, out: np.ndarray) -> None:
    scratch = np.empty(52, dtype=np.int64)
    for i in range(obs.shape[0]):
        out[i, :] = 0.0
        hand, face = 0, -1
        for c in range(52):
            if obs[i, _HAND + c] > 0.5:
                hand |= 1 << c
            if obs[i, _FACE_UP + c] > 0.5:
                face = c
        if face < 0 or count_bits(hand) != _HAND_CARDS or (hand >> face) & 1:
            continue
        now = min_deadwood_mask(hand)
        discard_deadwoods_mask(hand | (1 << face), scratch)
        best = now
        for c in range(52):
            if c != face and (hand >> c) & 1 and scratch[c] < best:
                best = scratch[c]  # the taken card itself may not be discarded again (R9)
        out[i, 0] = (now - best) / 10.0
        out[i, 1] = best / 100.0
        out[i, 2] = 1.0 if best < now else 0.0


def take_features(observations: np.ndarray) -> np.ndarray:
    """float32[B, TAKE_FEATURES] for float32[B, OBS_SIZE] observations (zeros where there is nothing to take)."""
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    out = np.zeros((obs.shape[0], TAKE_FEATURES), dtype=np.float32)
    _take_features_kernel(obs, out)
    return out
