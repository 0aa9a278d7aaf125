"""The front ends (Game, the single env, the VectorEnv, the self-play env, PettingZoo) share one seeding path, one
illegal-action message, one option validator and one notion of an illegal action."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv, SelfPlayVectorEnv
from hollywood_gin_env.envs.pettingzoo import raw_env
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.support.streams import match_seeds


def first_deal(engine, i: int = 0) -> tuple[list[int], int]:
    """The deck order and the dealer of match i's current deal."""
    return engine.state.deck[i].tolist(), int(engine.state.match[i, col.M_DEALER])


def deals_of_every_front_end(seed: int) -> dict[str, tuple[list[int], int]]:
    game = Game(seed=seed)
    single = HollywoodGinEnv(learner_seat=0)
    single.reset(seed=seed)
    vector = HollywoodGinVectorEnv(3, learner_seat=0)
    vector.reset(seed=seed - 2)  # match 2 is seeded with seed
    selfplay = SelfPlayVectorEnv(2)
    selfplay.reset(seed=seed)
    aec = raw_env()
    aec.reset(seed=seed)
    return {
        "game": first_deal(game._engine),
        "single": first_deal(single.engine),
        "vector": first_deal(vector.engine, 2),
        "selfplay": first_deal(selfplay.engine),
        "pettingzoo": first_deal(aec._engine),
    }


@pytest.mark.parametrize("seed", [2, 17, 2**63 + 5])
def test_every_front_end_deals_the_same_cards_for_the_same_seed(seed):
    """The learner seat is fixed so no front end draws more from the match stream before dealing."""
    deals = deals_of_every_front_end(seed)
    assert len({str(d) for d in deals.values()}) == 1, deals
    other = Game(seed=seed + 1)
    assert first_deal(other._engine) != deals["game"], "different seeds must deal differently"


def test_seeds_are_non_negative_integers_everywhere():
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ValueError, match="seed"):
            match_seeds(bad, 1)
    with pytest.raises(ValueError, match="seed=-1"):
        Game(seed=-1)
    with pytest.raises(ValueError, match="seed"):
        SelfPlayVectorEnv(2).reset(seed=[1, 2.5])
    with pytest.raises(ValueError, match=r"0\.\.2\*\*64-1"):  # refused, not reduced mod 2**64
        match_seeds(2**64 + 3, 2)
    assert match_seeds(2**64 - 2, 2).tolist() == [2**64 - 2, 2**64 - 1]


def illegal_messages(action: int) -> list[str]:
    """The message each front end gives for the same illegal action in the same position."""
    messages = []
    game = Game(seed=4, first_dealer=0)
    with pytest.raises(ValueError) as info:
        game.step(action)
    messages.append(str(info.value))
    single = HollywoodGinEnv(illegal_action="raise", learner_seat=1)
    single.reset(seed=4, options={"first_dealer": 0})
    with pytest.raises(ValueError) as info:
        single.step(action)
    messages.append(str(info.value))
    selfplay = SelfPlayVectorEnv(1)
    selfplay.reset(seed=4, options={"first_dealer": 0})
    with pytest.raises(ValueError) as info:
        selfplay.step(np.array([action]))
    messages.append(str(info.value).replace(" in match 0", ""))
    aec = raw_env()
    aec.reset(seed=4, options={"first_dealer": 0})
    with pytest.raises(ValueError) as info:
        aec.step(action)
    messages.append(str(info.value).replace(" for player_1", ""))
    return messages


@pytest.mark.parametrize("action", [0, 50, 106, NUM_ACTIONS, -3])
def test_one_illegal_action_message_naming_the_value(action):
    """Game, the single env (raise mode), self-play and PettingZoo: the same text, naming the value passed."""
    messages = illegal_messages(action)
    assert len(set(messages)) == 1, messages
    assert messages[0].startswith(f"illegal action {action}: legal actions are 1 (take face-up card), 2 (pass)")


def test_illegal_action_in_raise_mode_names_the_value_not_minus_one():
    env = HollywoodGinEnv(illegal_action="raise")
    env.reset(seed=0)
    for value in (NUM_ACTIONS, 10**30, -7):
        with pytest.raises(ValueError, match=f"illegal action {value}:"):
            env.step(value)
    vec = HollywoodGinVectorEnv(2, illegal_action="raise")
    vec.reset(seed=0)
    with pytest.raises(ValueError, match=f"illegal action {2**64 - 1} in match 0"):
        vec.step(np.array([2**64 - 1, 1], dtype=np.uint64))


@pytest.mark.parametrize("value", [1.0, 1.7, True, "1", None, np.float32(2.0), np.array([1, 2])])
def test_every_front_end_refuses_a_non_integer_action_alike(value):
    """A value that is no integer action id is a TypeError/ValueError everywhere, never a cast or an 'illegal'."""
    single = HollywoodGinEnv()
    single.reset(seed=1)
    with pytest.raises((TypeError, ValueError)):
        single.step(value)
    aec = raw_env()
    aec.reset(seed=1)
    with pytest.raises((TypeError, ValueError)):
        aec.step(value)
    game = Game(seed=1)
    with pytest.raises(ValueError):
        game.step(value)
    assert game.legal_actions() == [1, 2] and len(game.events) == 2, "a refused action changed the game"


def test_integer_ids_outside_the_mask_are_illegal_in_every_front_end():
    """-1, 107 and a masked-out id: illegal (single env: ends the episode; the others: ValueError), never a crash."""
    for action in (-1, NUM_ACTIONS, 60):
        single = HollywoodGinEnv()
        single.reset(seed=2)
        _, reward, terminated, _, info = single.step(action)
        assert terminated and info["illegal_action"] and reward < -1
        vec = HollywoodGinVectorEnv(2)
        vec.reset(seed=2)
        _, rewards, terminations, _, infos = vec.step(np.array([action, action]))
        assert terminations.all() and infos["final_info"]["illegal_action"].all()
        aec = raw_env()
        aec.reset(seed=2)
        before = aec._engine.state.match.copy()
        with pytest.raises(ValueError, match=f"illegal action {action} for player_"):
            aec.step(action)
        np.testing.assert_array_equal(aec._engine.state.match, before)


def test_one_option_validator():
    """Env arguments are checked like rule options: by kind too (True is not seat 1), naming the allowed values."""
    with pytest.raises(ValueError, match=r"learner_seat=True is not allowed: allowed values are None, 0, 1"):
        HollywoodGinEnv(learner_seat=True)
    with pytest.raises(ValueError, match=r"reward='points' is not allowed: allowed values are 'hand', 'game'"):
        SelfPlayVectorEnv(2, reward="points")
    with pytest.raises(ValueError, match=r"episode='set' is not allowed"):
        SelfPlayVectorEnv(2, episode="set")
    with pytest.raises(ValueError, match=r"reward='x' is not allowed"):
        raw_env(reward="x")
    with pytest.raises(ValueError, match=r"rule dealer_rule='x' is not allowed: allowed values are 'winner_deals'"):
        Rules(dealer_rule="x")
    gym.make("HollywoodGin-v1", learner_seat=np.int64(1))  # numpy integers are integers
