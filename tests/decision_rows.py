"""What the agent tests share: the (observation, mask) rows the player to act sees over batched matches."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_kernel
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules


def collect_states(rules: Rules, players: tuple, matches: int = 48, steps: int = 400, seed: int = 0):
    """(observations, masks) of the player to act over `steps` steps of `matches` batched matches, players[0] in
    seat 0; every action the players choose must be legal."""
    engine = Engine(matches, rules)
    engine.new_matches(seeds=np.arange(matches, dtype=np.uint64) + seed)
    obs = np.zeros((matches, OBS_SIZE), dtype=np.float32)
    masks = np.zeros((matches, NUM_ACTIONS), dtype=np.int8)
    seen_obs, seen_masks = [], []
    for _ in range(steps):
        active = ~engine.done
        if not active.any():
            break
        current = engine.current_player.copy()
        encode_kernel(current, active, engine.state.arrays(), engine.params, obs, masks)
        seen_obs.append(obs[active].copy())
        seen_masks.append(masks[active].copy())
        actions = np.zeros(matches, dtype=np.int64)
        for seat in (0, 1):
            rows = np.flatnonzero(active & (current == seat))
            actions[rows] = players[seat].act(obs[rows], masks[rows])
        engine.step(actions, active)
        assert not engine.illegal[active].any()
    return np.concatenate(seen_obs), np.concatenate(seen_masks)
