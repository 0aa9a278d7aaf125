"""Tests of the single-agent env "HollywoodGin-v1": the Gymnasium checker, rewards replayed on a `Game`,
seeding, fixed deals, illegal actions, episode modes, opponents and rendering."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import hollywood_gin_env  # noqa: F401  (registers HollywoodGin-v1)
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.observation import OBS_LAYOUT
from hollywood_gin_env.envs import HollywoodGinEnv
from hollywood_gin_env.rules.cards import card_name, parse_cards
from hollywood_gin_env.rules.options import Rules

SHORT = Rules(game_target=30)  # a match of a few hands


def random_legal(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


class LastLegal:
    """A deterministic opponent that records its actions: pass the upcard, take the discard, knock high."""

    def __init__(self) -> None:
        self.played: list[int] = []

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        actions = np.array([np.flatnonzero(m)[-1] for m in action_masks], dtype=np.int64)
        self.played.extend(actions.tolist())
        return actions


@pytest.mark.parametrize(
    "kwargs",
    [
        {"reward": "hand"},
        {"reward": "game"},
        {"reward": "match"},
        {"reward": "chance"},
        {"episode": "hand", "learner_seat": 1},
    ],
)
def test_check_env_passes_with_warnings_as_errors(kwargs, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("HollywoodGin-v1", **kwargs).unwrapped)


def expected_reward(events: list[dict], seat: int, reward: str) -> float:
    """The learner's reward for a slice of a Game's event log, worked out from the hand results."""
    counted = {"hand": "hand_result", "game": "game_close", "match": "match_end"}[reward]
    total = 0.0
    for e in events:
        if e["type"] == counted and e["winner"] >= 0:
            sign = 1.0 if e["winner"] == seat else -1.0
            total += sign * (e["points"] / 100.0 if reward == "hand" else 1.0)
    return total


def play_opponent(game: Game, seat: int, opponent: LastLegal) -> None:
    """Replay on the Game the opponent's moves the env made, up to the learner's turn."""
    while not game.done and game.current_player != seat:
        game.step(opponent.played.pop(0))


@pytest.mark.parametrize("reward", ["hand", "game", "match"])
def test_rewards_and_observations_equal_a_game_replay(reward):
    # The env's match is replayed action by action on a Game seeded alike; each step's reward is
    # the sum over the hands that ended in it (hand_result / game_close / match_end events).
    opponent = LastLegal()
    env = HollywoodGinEnv(opponent=opponent, rules=SHORT, reward=reward)
    rng = np.random.default_rng(5)
    obs, info = env.reset(seed=11)
    seat = info["learner_seat"]
    game = Game(SHORT, seed=11)
    play_opponent(game, seat, opponent)
    terminated, steps, rewards = False, 0, []
    while not terminated:
        np.testing.assert_array_equal(obs["observation"], game.observation(seat)["observation"])
        np.testing.assert_array_equal(obs["action_mask"], game.observation(seat)["action_mask"])
        action = random_legal(rng, obs["action_mask"])
        obs, r, terminated, truncated, info = env.step(action)
        start = len(game.events)
        game.step(action)
        play_opponent(game, seat, opponent)
        assert r == pytest.approx(expected_reward(game.events[start:], seat, reward))
        assert not truncated and info["learner_seat"] == seat
        rewards.append(r)
        steps += 1
    assert game.done and opponent.played == []
    assert any(rewards), "the match should have scored something"
    if reward == "match":
        assert rewards[-1] == (1.0 if game.winner == seat else -1.0)


def test_same_seed_gives_identical_rollouts():
    def rollout(seed: int) -> list:
        env = HollywoodGinEnv(rules=SHORT, episode="hand")
        rng, out = np.random.default_rng(0), []
        obs, _ = env.reset(seed=seed)
        for _ in range(300):
            obs, r, term, _, info = env.step(random_legal(rng, obs["action_mask"]))
            out.append((obs["observation"].tobytes(), r, term, info["learner_seat"]))
            if term:
                obs, _ = env.reset()
        return out

    assert rollout(3) == rollout(3)
    assert rollout(3) != rollout(4)


def test_reset_seed_then_unseeded_resets_repeat():
    env = HollywoodGinEnv()
    first = [env.reset(seed=9)[0]["observation"], env.reset()[0]["observation"], env.reset()[0]["observation"]]
    again = [env.reset(seed=9)[0]["observation"], env.reset()[0]["observation"], env.reset()[0]["observation"]]
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_fixed_deck_deals_as_rules_r3():
    # Dealer P1 (the opponent), learner P0 is the non-dealer: it gets d[0], d[2], ..., d[18]; upcard d[20].
    deck = np.random.default_rng(1).permutation(52)
    env = HollywoodGinEnv(learner_seat=0)
    obs, _ = env.reset(seed=2, options={"deck": deck.tolist(), "first_dealer": 1})
    hand = OBS_LAYOUT["hand"][0]
    face_up = OBS_LAYOUT["face_up"][0]
    assert sorted(np.flatnonzero(obs["observation"][hand : hand + 52])) == sorted(deck[0:20:2])
    assert np.flatnonzero(obs["observation"][face_up : face_up + 52]).tolist() == [deck[20]]
    assert np.flatnonzero(obs["action_mask"]).tolist() == [1, 2]  # take or pass the upcard


def test_fixed_deck_accepts_card_strings():
    deck = np.random.default_rng(7).permutation(52)
    env = HollywoodGinEnv()
    env.reset(options={"deck": [card_name(c) for c in deck]})
    assert env.engine.state.deck[0].tolist() == deck.tolist()
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"decks": deck})


def test_a_hand_the_opponent_ends_before_the_first_decision_is_scored_in_the_first_step():
    # The opponent (non-dealer) takes the upcard 2C and knocks at once, discarding KC:
    # AS 2S 3S | 4H 5H 6H | 7D 8D 9D, deadwood 2C = 2, before the learner ever acts. The learner
    # holds TS QS KS TH QH KH 5C 7C 9C JC: no meld, nothing to lay off, deadwood 60 + 31 = 91:
    # the knocker scores 91 - 2 = 89.
    opp = parse_cards("AS 2S 3S 4H 5H 6H 7D 8D 9D KC")
    learner = parse_cards("TS QS KS TH QH KH 5C 7C 9C JC")
    rest = [c for c in range(52) if c not in opp + learner + parse_cards("2C")]
    deck = [c for pair in zip(opp, learner, strict=True) for c in pair] + parse_cards("2C") + rest
    knock_kc = 55 + parse_cards("KC")[0]

    def knocker(observations, masks):
        return np.array([1 if masks[0, 1] else knock_kc])

    env = HollywoodGinEnv(opponent=knocker, learner_seat=1)
    obs, _ = env.reset(seed=0, options={"deck": deck, "first_dealer": 1})
    game = Game(seed=0, deck=deck, first_dealer=1)
    game.step(1)
    game.step(knock_kc)
    assert game.last_result["points"] == 89 and env.engine.state.match[0, col.M_HAND_NO] == 2
    # Hand 2: the winner (the opponent) deals, so the learner is offered the upcard first; taking it
    # leaves the learner to act, so this step's reward is the first hand's alone.
    _, r, terminated, _, _ = env.step(1)
    assert r == -0.89 and not terminated


def test_illegal_action_ends_the_episode_with_the_worst_reward():
    env = HollywoodGinEnv(reward="hand")
    obs, _ = env.reset(seed=0)
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    _, r, terminated, truncated, info = env.step(illegal)
    assert terminated and not truncated and info["illegal_action"]
    assert r == -(25 + 100) / 100
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)
    env.reset()  # a new match starts
    for reward, worst in (("game", -3.0), ("match", -1.0)):
        env = HollywoodGinEnv(reward=reward)
        env.reset(seed=0)
        assert env.step(999)[1] == worst


def test_illegal_action_raise_leaves_the_state_unchanged():
    env = HollywoodGinEnv(illegal_action="raise")
    obs, _ = env.reset(seed=0)
    before = env.engine.state.match.copy()
    with pytest.raises(ValueError, match="illegal action 100: legal actions are"):
        env.step(100)
    np.testing.assert_array_equal(env.engine.state.match, before)
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))


def test_step_before_reset_raises():
    with pytest.raises(gym.error.ResetNeeded):
        HollywoodGinEnv().step(0)


def test_hand_episodes_go_on_with_the_same_match():
    env = HollywoodGinEnv(episode="hand", rules=SHORT, learner_seat=0)
    rng = np.random.default_rng(2)
    obs, _ = env.reset(seed=1)
    hands = []
    for _ in range(4):
        terminated = False
        while not terminated:
            obs, r, terminated, _, _ = env.step(random_legal(rng, obs["action_mask"]))
        hand_no = int(env.engine.state.match[0, col.M_HAND_NO])
        obs, _ = env.reset()
        hands.append(hand_no)
    assert hands == sorted(hands) and len(set(hands)) == 4  # one hand per episode, same match


def test_learner_seat_fixed_or_random():
    env = HollywoodGinEnv(learner_seat=1)
    assert {env.reset(seed=s)[1]["learner_seat"] for s in range(8)} == {1}
    env = HollywoodGinEnv()
    assert {env.reset(seed=s)[1]["learner_seat"] for s in range(16)} == {0, 1}


def test_action_masks_matches_the_observation():
    env = HollywoodGinEnv()
    obs, info = env.reset(seed=3)
    np.testing.assert_array_equal(env.action_masks(), obs["action_mask"].astype(bool))
    np.testing.assert_array_equal(info["action_mask"], obs["action_mask"])


def test_opponent_arguments():
    class First:
        def act(self, observations, action_masks):
            return np.array([np.flatnonzero(m)[0] for m in action_masks])

    for opponent in (First(), First().act, "random", None):
        env = HollywoodGinEnv(opponent=opponent)
        obs, _ = env.reset(seed=0)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    with pytest.raises(ValueError, match="opponent=42"):
        HollywoodGinEnv(opponent=42)
    with pytest.raises(ValueError, match="reward='points'"):
        HollywoodGinEnv(reward="points")


def test_named_opponents_from_agents_and_reseeding():
    pytest.importorskip("hollywood_gin_env.agents")
    for name in ("greedy", "expert"):
        env = HollywoodGinEnv(opponent=name, episode="hand")
        obs, _ = env.reset(seed=0)
        rng, terminated = np.random.default_rng(0), False
        while not terminated:
            obs, _, terminated, _, info = env.step(random_legal(rng, obs["action_mask"]))
        assert not info["illegal_action"]

    class Spy:
        def __init__(self) -> None:
            self.seeds: list = []

        def act(self, observations, action_masks):
            return np.array([np.flatnonzero(m)[0] for m in action_masks])

        def reset(self, seed=None):
            self.seeds.append(seed)

    spy = Spy()
    env = HollywoodGinEnv(opponent=spy)
    env.reset(seed=12)
    env.reset()
    assert spy.seeds == [12]  # reseeded by a seeded reset only


def test_an_opponent_playing_illegally_raises():
    env = HollywoodGinEnv(opponent=lambda obs, masks: np.full(len(masks), 106), learner_seat=0)
    with pytest.raises(ValueError, match="opponent .* chose illegal action 106"):
        env.reset(seed=0, options={"first_dealer": 0})  # the opponent is the non-dealer: it acts first


def test_render_modes(capsys):
    env = HollywoodGinEnv(render_mode="ansi", learner_seat=0)
    env.reset(seed=0)
    text = env.render()
    assert text.startswith("Hand 1") and "(learner)" in text and "G3:" in text
    env = HollywoodGinEnv(render_mode="human")
    env.reset(seed=0)
    assert env.render() is None and "Hand 1" in capsys.readouterr().out
