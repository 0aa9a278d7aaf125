"""The environments take actions and seeds only in the forms they document, and a refusal changes nothing.

Actions: the batched envs take an integer array (or list of ints, or an integer tensor) of shape (N,), the single env
one integer; floats, bools, strings and other shapes are refused naming the dtype or shape, never cast. Seeds: every
public seeding entry (Game, the three envs, PettingZoo, load_agent, round_robin) takes 0..2**64-1 and refuses
anything else naming the value, so 2**64 never deals like 0 and True never seeds an agent.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv, SelfPlayVectorEnv, pettingzoo
from hollywood_gin_env.envs.spaces import MAX_NUM_ENVS, check_num_envs
from hollywood_gin_env.evaluation.evaluate import round_robin
from hollywood_gin_env.support.streams import check_seed


def first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


# --- actions: integers of the right shape, never cast ---------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: HollywoodGinVectorEnv(8),
        lambda: SelfPlayVectorEnv(8),
    ],
    ids=["vector", "selfplay"],
)
@pytest.mark.parametrize(
    "actions, error, text",
    [
        (np.full(8, 1.7), TypeError, "got dtype float64"),
        (np.full(8, 1.0), TypeError, "got dtype float64"),
        (np.full(8, np.nan), TypeError, "got dtype float64"),
        (np.ones(8, dtype=bool), TypeError, "got dtype bool"),
        (np.array(["1"] * 8), TypeError, "got dtype <U1"),
        (np.ones((8, 1), dtype=np.int64), ValueError, r"shape \(8,\).*got shape \(8, 1\)"),
        (np.ones((2, 4), dtype=np.int64), ValueError, r"got shape \(2, 4\)"),
        (np.ones(7, dtype=np.int64), ValueError, r"got shape \(7,\)"),
        (np.int64(1), ValueError, r"got shape \(\)"),
        ([1.0] * 8, TypeError, "type float"),
    ],
)
def test_batched_envs_refuse_what_is_not_an_integer_array_of_shape_n(make, actions, error, text):
    """Nothing is cast (1.7 would play as 1): the error names the dtype or shape, and the state stays unchanged."""
    env = make()
    env.reset(seed=0)
    before = env.engine.state.match.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy cast warning either
        with pytest.raises(error, match=text):
            env.step(actions)
    np.testing.assert_array_equal(env.engine.state.match, before)


def test_batched_envs_take_integer_arrays_and_lists_of_ints():
    for dtype in (np.int64, np.int32, np.uint8):
        vec = HollywoodGinVectorEnv(3)
        obs, _ = vec.reset(seed=0)
        actions = np.array([first_legal(m) for m in obs["action_mask"]], dtype=dtype)
        _, _, terminations, _, infos = vec.step(actions)
        assert not infos["illegal_action"].any() and not terminations.any()
    vec.step([first_legal(m) for m in vec.action_masks()])


def test_the_single_env_takes_integers_and_refuses_floats():
    """A float action id (even 1.0) is a TypeError, as in the batched envs, not an illegal action ending the episode."""
    env = HollywoodGinEnv()
    obs, _ = env.reset(seed=0)
    with pytest.raises(TypeError, match="integer action id"):
        env.step(float(first_legal(obs["action_mask"])))
    for wrap in (np.int64, lambda a: np.array([a]), int):
        obs, _, terminated, _, info = env.step(wrap(first_legal(obs["action_mask"])))
        assert not info["illegal_action"]
        if terminated:
            obs, _ = env.reset()


def test_array_likes_such_as_tensors_follow_the_same_rule():
    torch = pytest.importorskip("torch")
    vec = HollywoodGinVectorEnv(3)
    obs, _ = vec.reset(seed=0)
    _, _, _, _, infos = vec.step(torch.tensor([first_legal(m) for m in obs["action_mask"]]))
    assert not infos["illegal_action"].any()
    with pytest.raises(TypeError, match="got dtype float32"):
        vec.step(torch.ones(3))
    with pytest.raises(TypeError, match="got a bool"):
        vec.step([1, True, 1])
    env = HollywoodGinEnv()
    obs, _ = env.reset(seed=0)
    _, _, _, _, info = env.step(torch.tensor(first_legal(obs["action_mask"])))
    assert not info["illegal_action"]
    with pytest.raises(TypeError, match="integer action id"):
        env.step(torch.tensor(1.0))


# --- seeds: 0..2**64-1 at every public entry ------------------------------------------------------------------

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
def test_the_largest_seed_works(entry):
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


# --- reset options: the first dealer as Game takes it -------------------------------------------------------

RESETS = {
    "single env": lambda: HollywoodGinEnv(),
    "vector env": lambda: HollywoodGinVectorEnv(3),
    "self-play env": lambda: SelfPlayVectorEnv(3),
    "pettingzoo": lambda: pettingzoo.env(),
}


def engine_of(env):
    """The engine under an env or its wrappers (SelfPlayVectorEnv has no wrappers)."""
    return getattr(env, "unwrapped", env).engine


@pytest.mark.parametrize("entry", list(RESETS))
@pytest.mark.parametrize("dealer", [True, np.bool_(True), 1.7, 1.0, np.float64(0.0), "1", 2, -1])
def test_reset_refuses_a_first_dealer_that_game_refuses(entry, dealer):
    """options["first_dealer"] is refused exactly when `Game(first_dealer=...)` refuses it, in the same words: True,
    1.7 and "1" are no dealers (never cast to one), and a refused reset leaves the matches as they were."""
    with pytest.raises(ValueError, match="is not allowed: use 0, 1 or None") as game_error:
        Game(first_dealer=dealer)
    env = RESETS[entry]()
    env.reset(seed=0)
    before = engine_of(env).state.match.copy()
    with pytest.raises(ValueError) as env_error:
        env.reset(options={"first_dealer": dealer})
    assert str(env_error.value) == "options['first_dealer']" + str(game_error.value).removeprefix("first_dealer")
    np.testing.assert_array_equal(engine_of(env).state.match, before)


@pytest.mark.parametrize("dealers", [[0, 1], [0, 1, 2], [0, True, 1], np.zeros((3, 1), dtype=np.int64)])
def test_batched_reset_refuses_first_dealers_of_the_wrong_count_or_kind(dealers):
    """One first dealer per match: another count, or a bad value among them, is refused naming it."""
    with pytest.raises(ValueError, match=r"options\['first_dealer'\].*(must be 0, 1 or 3 of them|is not allowed)"):
        HollywoodGinVectorEnv(3).reset(options={"first_dealer": dealers})


@pytest.mark.parametrize("entry", list(RESETS))
def test_reset_takes_0_1_numpy_integers_and_one_dealer_per_match(entry):
    """0, 1 and numpy integers deal as asked; the batched envs also take one value per match, None rows random."""
    env = RESETS[entry]()
    for dealer in (0, 1, np.int64(1), np.uint8(0)):
        env.reset(seed=0, options={"first_dealer": dealer})
        assert (engine_of(env).state.match[:, col.M_DEALER] == dealer).all()
    if getattr(env, "num_envs", 1) > 1:
        env.reset(seed=0, options={"first_dealer": [1, None, np.int64(0)]})
        assert env.engine.state.match[[0, 2], col.M_DEALER].tolist() == [1, 0]


# --- num_envs: bounded by what one process should hold ------------------------------------------------------


@pytest.mark.parametrize("make", [HollywoodGinVectorEnv, SelfPlayVectorEnv], ids=["vector", "selfplay"])
@pytest.mark.parametrize("num_envs", [0, -1, MAX_NUM_ENVS + 1, 10**6, 2**4000, True, 8.0, "8", None])
def test_vector_envs_refuse_num_envs_outside_1_to_the_bound(make, num_envs):
    """num_envs is an integer from 1 to MAX_NUM_ENVS: anything else is one line naming the value and the bound, before
    any array is allocated (10**6 matches would take about 15 GB)."""
    with pytest.raises(ValueError) as info:
        make(num_envs)
    message = str(info.value)
    assert message.startswith("num_envs=") and f"{MAX_NUM_ENVS:,}" in message and len(message) < 200, message


def test_make_vec_refuses_num_envs_beyond_the_bound_and_takes_the_bound_s_neighbours():
    """gymnasium.make_vec passes num_envs through to the same check; small counts still build."""
    import gymnasium as gym

    with pytest.raises(ValueError, match=f"num_envs={MAX_NUM_ENVS + 1} is not allowed"):
        gym.make_vec("HollywoodGin-v1", num_envs=MAX_NUM_ENVS + 1, vectorization_mode="vector_entry_point")
    assert check_num_envs(MAX_NUM_ENVS) == MAX_NUM_ENVS and check_num_envs(np.int64(1)) == 1
    assert SelfPlayVectorEnv(np.int32(2)).num_envs == 2
