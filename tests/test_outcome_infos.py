"""The outcome infos of the single env, the VectorEnv and PettingZoo: each ended hand (kind, knocker, winner, points,
turns) and the match winner under SelfPlayVectorEnv's keys, the learner's (or agent's) result beside them, checked
against a `Game` replaying the same match; Gymnasium's RecordEpisodeStatistics on both Gymnasium envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode, SyncVectorEnv

import hollywood_gin_env  # noqa: F401  (registers the env ids)
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.observation import OBS_LAYOUT
from hollywood_gin_env.envs import HollywoodGinEnv, HollywoodGinVectorEnv
from hollywood_gin_env.envs.outcomes import NO_OUTCOME
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.rules.scoring import KIND_GIN, KIND_KNOCK, KIND_NAMES, KIND_UNDERCUT

SHORT = Rules(game_target=30)
#: Almost every hand may knock at once, so a player that takes the upcard and knocks often ends a hand before the
#: other has decided anything in it, and one learner step then ends two hands.
EAGER = Rules(knock_limit=90, num_games=1, game_target=150)


class Eager:
    """A deterministic opponent that records its actions: knock when it may, else take the face-up card, else the
    first legal action."""

    def __init__(self) -> None:
        self.played: list[int] = []

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        actions = []
        for mask in action_masks:
            legal = np.flatnonzero(mask)
            knocks = legal[legal >= 55]
            actions.append(int(knocks[0]) if len(knocks) else 1 if mask[1] else int(legal[0]))
        self.played.extend(actions)
        return np.array(actions, dtype=np.int64)


def expected_outcome(events: list[dict], seat: int) -> dict:
    """The outcome infos a step should give, worked out from the slice of a Game's event log it played."""
    results = [e for e in events if e["type"] == "hand_result"]
    if not results:
        return dict(NO_OUTCOME)
    last = results[-1]
    ends = [e for e in events if e["type"] == "match_end"]
    match_winner = ends[0]["winner"] if ends else -1
    return {
        "hands_ended": len(results),
        "hand_over": True,
        "hand_kind": KIND_NAMES.index(last["kind"]),
        "hand_knocker": last["knocker"],
        "hand_winner": last["winner"],
        "hand_points": last["points"],
        "hand_turns": last["turns"],
        "match_winner": match_winner,
        "hand_result": 0 if last["winner"] < 0 else 1 if last["winner"] == seat else -1,
        "match_result": 0 if match_winner < 0 else 1 if match_winner == seat else -1,
    }


@pytest.mark.parametrize(
    "rules, episode",
    [(SHORT, "match"), (SHORT, "hand"), (EAGER, "match"), (EAGER, "hand")],
    ids=["short-match", "short-hands", "eager-match", "eager-hands"],
)
def test_single_env_infos_give_each_step_s_hands_as_the_game_log_does(rules, episode):
    """Every step's info names the hands it ended (the last one's kind, knocker, winner, points and turns, and how
    many), the match winner at its end, and the learner's result, exactly as a Game replaying the match logs them;
    a hand the opponent ends before the learner's first decision of an episode is reported by its first step."""
    opponent = Eager()
    env = HollywoodGinEnv(opponent=opponent, rules=rules, episode=episode)
    game = Game(rules, seed=3)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    assert {k: info[k] for k in NO_OUTCOME} == NO_OUTCOME
    seat, mark, most = info["learner_seat"], 0, 0
    while not game.done:
        while not game.done and game.current_player != seat:  # the opponent's moves before the learner's turn
            game.step(opponent.played.pop(0))
        if game.done:
            break
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, _, terminated, _, info = env.step(action)
        game.step(action)
        while not game.done and game.current_player != seat and opponent.played:
            game.step(opponent.played.pop(0))
        assert {k: info[k] for k in NO_OUTCOME} == expected_outcome(game.events[mark:], seat)
        assert all(type(info[k]) is type(v) for k, v in NO_OUTCOME.items())  # plain Python values
        mark, most = len(game.events), max(most, info["hands_ended"])
        if terminated and not game.done:  # a hand episode: the match goes on
            obs, info = env.reset()
    assert terminated and opponent.played == []
    assert most >= (2 if rules is EAGER else 1)  # EAGER: some step ended two hands


@pytest.mark.nojit
def test_a_hand_ended_before_the_learner_s_first_decision_is_the_first_step_s():
    """The opponent takes the upcard and knocks before the learner acts (89 points, the scenario of test_env's
    first-decision test): the reset's info shows nothing, the first step names that hand as the opponent's."""
    from hollywood_gin_env.rules.cards import parse_cards

    opp = parse_cards("AS 2S 3S 4H 5H 6H 7D 8D 9D KC")
    learner = parse_cards("TS QS KS TH QH KH 5C 7C 9C JC")
    rest = [c for c in range(52) if c not in opp + learner + parse_cards("2C")]
    deck = [c for pair in zip(opp, learner, strict=True) for c in pair] + parse_cards("2C") + rest
    knock_kc = 55 + parse_cards("KC")[0]
    env = HollywoodGinEnv(opponent=lambda o, m: np.array([1 if m[0, 1] else knock_kc]), learner_seat=1)
    _, info = env.reset(seed=0, options={"deck": deck, "first_dealer": 1})
    assert not info["hand_over"] and info["hands_ended"] == 0
    _, reward, _, _, info = env.step(1)
    assert reward == -0.89
    assert info["hands_ended"] == 1 and info["hand_kind"] == KIND_KNOCK and info["hand_knocker"] == 0
    assert info["hand_winner"] == 0 and info["hand_points"] == 89 and info["hand_result"] == -1
    assert info["match_winner"] == -1 and info["match_result"] == 0


def test_vector_env_outcomes_equal_single_envs_and_episode_ends_go_to_final_info():
    """The VectorEnv's outcome keys equal those of single envs under SyncVectorEnv (same values, dtypes and `_key`
    masks); where an episode ends they are in final_info, and the returned infos of that match show the new
    episode's (nothing ended yet)."""
    n = 4
    vec = HollywoodGinVectorEnv(n, rules=EAGER, reward="match", episode="hand")
    sync = SyncVectorEnv(
        [lambda: HollywoodGinEnv(rules=EAGER, reward="match", episode="hand")] * n,
        autoreset_mode=AutoresetMode.SAME_STEP,
    )
    obs, infos = vec.reset(seed=1)
    sync.reset(seed=1)
    assert set(NO_OUTCOME) <= set(infos) and all(infos[f"_{k}"].all() for k in NO_OUTCOME)
    rng, ends = np.random.default_rng(0), 0
    for _ in range(400):
        actions = np.argmax(rng.random(obs["action_mask"].shape) * obs["action_mask"], axis=1)
        obs, _, terminations, _, infos = vec.step(actions)
        _, _, _, _, s_infos = sync.step(actions)
        for key in NO_OUTCOME:
            for got, want in ((infos, s_infos), (infos.get("final_info"), s_infos.get("final_info"))):
                if want is None:
                    assert got is None
                    continue
                assert got[key].dtype == want[key].dtype, key
                np.testing.assert_array_equal(got[key], want[key], err_msg=key)
                np.testing.assert_array_equal(got[f"_{key}"], want[f"_{key}"], err_msg=key)
        if terminations.any():
            final = infos["final_info"]
            assert (final["hand_over"] == terminations).all() and (final["_hand_over"] == terminations).all()
            assert not infos["hand_over"][terminations].any()  # the new episodes have ended nothing yet
            ends += int(terminations.sum())
    assert ends > n


def test_vector_record_episode_statistics_records_returns_lengths_and_outcomes():
    """gymnasium.wrappers.vector.RecordEpisodeStatistics over the VectorEnv: at each episode end `infos["episode"]`
    holds its return and length, and final_info its outcome (a match: the winner, the learner's ±1 as the return)."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    n = 6
    make = {"rules": EAGER, "reward": "match", "vectorization_mode": "vector_entry_point"}
    envs = RecordEpisodeStatistics(gym.make_vec("HollywoodGin-v1", num_envs=n, **make))
    obs, _ = envs.reset(seed=0)
    returns, lengths = np.zeros(n), np.zeros(n, dtype=np.int64)
    rng, ended = np.random.default_rng(0), 0
    while ended < 2 * n:
        actions = np.argmax(rng.random(obs["action_mask"].shape) * obs["action_mask"], axis=1)
        obs, rewards, terminations, truncations, infos = envs.step(actions)
        returns += rewards
        lengths += 1
        if not terminations.any():
            assert "episode" not in infos
            continue
        done = terminations
        np.testing.assert_array_equal(infos["_episode"], done)
        np.testing.assert_allclose(infos["episode"]["r"][done], returns[done])
        np.testing.assert_array_equal(infos["episode"]["l"][done], lengths[done])
        final = infos["final_info"]
        assert final["_match_result"][done].all() and (final["match_winner"][done] >= 0).all()
        np.testing.assert_array_equal(final["match_result"][done], returns[done])  # reward="match": ±1 at the end
        won = final["match_winner"][done] == final["learner_seat"][done]
        np.testing.assert_array_equal(final["match_result"][done] == 1, won)
        returns[done], lengths[done] = 0.0, 0
        ended += int(done.sum())


def test_single_env_record_episode_statistics_records_the_episode_and_its_outcome():
    """gymnasium.wrappers.RecordEpisodeStatistics over the single env: the last step's info holds the episode's return
    and length beside the match's outcome."""
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("HollywoodGin-v1", rules=EAGER, reward="match"))
    obs, _ = env.reset(seed=2)
    rng, total, steps, terminated = np.random.default_rng(1), 0.0, 0, False
    while not terminated:
        obs, reward, terminated, _, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        total, steps = total + reward, steps + 1
    assert info["episode"]["r"] == total and info["episode"]["l"] == steps
    assert info["match_result"] == total and info["match_winner"] in (0, 1) and info["hand_over"]
    assert info["hand_kind"] in (KIND_KNOCK, KIND_UNDERCUT, KIND_GIN)


# --- PettingZoo ---------------------------------------------------------------------------------------------------


def test_pettingzoo_hand_episodes_end_each_hand_and_reset_goes_on_with_the_match():
    """episode="hand": each hand terminates both agents, with the hand's outcome in both infos (the seats alike,
    each agent's own result); reset() deals on in the same match, a seeded reset starts a new one, and the match's
    last hand is followed by a new match."""
    pytest.importorskip("pettingzoo")
    from hollywood_gin_env.envs.pettingzoo import env

    aec = env(rules=Rules(knock_limit=90, num_games=1, game_target=60), episode="hand", reward="hand")
    aec.reset(seed=4)
    hand_numbers, match_ends, rng = [], 0, np.random.default_rng(0)
    for _ in range(12):
        ended: dict[str, dict] = {}
        returns = dict.fromkeys(aec.possible_agents, 0.0)
        for agent in aec.agent_iter():
            observation, reward, termination, truncation, info = aec.last()
            returns[agent] += reward
            if termination or truncation:
                ended[agent] = info
                aec.step(None)
                continue
            aec.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
        a, b = ended["player_0"], ended["player_1"]
        assert a["hand_over"] and a["hands_ended"] == 1
        assert {k: v for k, v in a.items() if "result" not in k} == {k: v for k, v in b.items() if "result" not in k}
        assert a["hand_result"] == -b["hand_result"] and a["match_result"] == -b["match_result"]
        assert a["hand_result"] * a["hand_points"] / 100 == pytest.approx(returns["player_0"])
        match_ends += a["match_winner"] >= 0
        aec.reset()
        hand_numbers.append(hand_number(aec.observe(aec.agent_selection)["observation"]))
    assert match_ends >= 1 and hand_numbers.count(1) == match_ends  # a match's end: the next reset deals a new one
    assert hand_numbers[0] == 2  # the first reset went on with the first match
    aec.reset(seed=4)
    assert hand_number(aec.observe(aec.agent_selection)["observation"]) == 1


def hand_number(observation: np.ndarray) -> int:
    """The hands dealt in the match so far, from an observation's hand_number block (hands / 50)."""
    return round(float(observation[OBS_LAYOUT["hand_number"][0]]) * 50)
