"""sb3-contrib's MaskablePPO trains on HollywoodGin-v1 (masks through `action_masks()`) without error."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks  # noqa: E402

import hollywood_gin_env  # noqa: E402, F401  (registers HollywoodGin-v1)


@pytest.mark.slow  # MaskablePPO trains (about 6 s): CI's second command runs it
def test_maskable_ppo_trains_a_few_thousand_steps():
    torch.set_num_threads(1)
    env = gym.make("HollywoodGin-v1", reward="hand", episode="hand")
    model = MaskablePPO("MultiInputPolicy", env, n_steps=1024, batch_size=256, n_epochs=2, seed=0, device="cpu")
    model.learn(total_timesteps=3000)
    assert model.num_timesteps >= 3000
    vec_env = model.get_env()
    obs = vec_env.reset()
    masks = get_action_masks(vec_env)
    np.testing.assert_array_equal(masks[0], obs["action_mask"][0].astype(bool))
    for _ in range(50):  # the trained policy only ever picks legal actions
        action, _ = model.predict(obs, action_masks=get_action_masks(vec_env), deterministic=True)
        assert obs["action_mask"][0, action[0]] == 1
        obs, _, _, _ = vec_env.step(action)
