"""Issue 20, item 7 (seeds): a seed outside 0..2**64-1 is refused at every public seeding entry, naming the value.

Before, seeds at or above 2**64 dealt like seed mod 2**64 (so 2**64 and 0 dealt alike), and True seeded agents.
"""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env import pettingzoo
from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv, SelfPlayVectorEnv
from hollywood_gin_env.evaluate import round_robin
from hollywood_gin_env.game import Game
from hollywood_gin_env.sampling import check_seed

TOP = 2**64 - 1
ENTRIES = {
    "Game": lambda seed: Game(seed=seed),
    "single env": lambda seed: HollywoodGinEnv().reset(seed=seed),
    "vector env": lambda seed: HollywoodGinVectorEnv(3).reset(seed=seed),
    "self-play env": lambda seed: SelfPlayVectorEnv(3).reset(seed=seed),
    "pettingzoo": lambda seed: pettingzoo.env().reset(seed=seed),
    "load_agent random": lambda seed: load_agent("random", seed=seed),
    "load_agent expert": lambda seed: load_agent("expert", seed=seed),
    "round_robin": lambda seed: round_robin(["random", "greedy"], 2, seed=seed, progress=False),
}


@pytest.mark.parametrize("entry", list(ENTRIES))
@pytest.mark.parametrize("seed", [2**64, 2**70, -1, True, 1.5, "7"])
def test_seeds_outside_0_to_2_64_minus_1_are_refused(entry, seed):
    with pytest.raises(ValueError, match=r"seed.*0\.\.2\*\*64-1|seed.*not allowed"):
        ENTRIES[entry](seed)


@pytest.mark.parametrize("entry", ["Game", "single env", "pettingzoo", "load_agent random", "load_agent expert"])
def test_the_largest_seed_still_works(entry):
    ENTRIES[entry](TOP)
    if entry != "single env":  # gymnasium's own seeding takes Python ints only
        ENTRIES[entry](np.uint64(TOP))


def test_batched_envs_refuse_a_seed_whose_last_match_would_pass_2_64():
    """Match i is seeded with seed + i: with 3 matches the largest integer seed is 2**64 - 3."""
    for make in (lambda: HollywoodGinVectorEnv(3), lambda: SelfPlayVectorEnv(3)):
        make().reset(seed=TOP - 2)
        with pytest.raises(ValueError, match="2\\*\\*64-1"):
            make().reset(seed=TOP - 1)
        with pytest.raises(ValueError, match="2\\*\\*64-1"):
            make().reset(seed=[0, 1, 2**64])


def test_a_refused_seed_leaves_the_single_env_as_it_was():
    env = HollywoodGinEnv()
    obs, _ = env.reset(seed=5)
    state = env.np_random.bit_generator.state
    with pytest.raises(ValueError):
        env.reset(seed=2**64)
    assert env.np_random.bit_generator.state == state


def test_check_seed_names_the_argument():
    assert check_seed(TOP) == TOP
    with pytest.raises(ValueError, match="train.seed=-3"):
        check_seed(-3, "train.seed")
