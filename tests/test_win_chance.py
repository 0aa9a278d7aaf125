"""The match-win chance (hollywood_gin_env.rules.win_chance) and reward="chance" in every front end.

The chance is checked against an exact count where one exists (a single game to a target: a small recursion over
the two totals), and the reward against sheets kept here with scoring.enter_hand from each hand's result, so neither
the engine's sheet nor `undo_hand` is trusted by the reward tests.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.envs import HollywoodGinEnv, SelfPlayVectorEnv
from hollywood_gin_env.envs.batch import CHANCE_PER_REWARD
from hollywood_gin_env.envs.spaces import worst_reward
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.rules.scoring import enter_hand, series_result
from hollywood_gin_env.rules.win_chance import CHANCE_SAMPLES, HAND_POINTS, undo_hand, win_chance

A, B = 0, 1


class Sheet:
    """One match's score sheet under `rules`, kept with scoring.enter_hand."""

    def __init__(self, rules: Rules) -> None:
        self.params = rules.to_params()
        self.totals = np.zeros((3, 2), dtype=np.int64)
        self.entries = np.zeros((3, 2), dtype=np.int64)
        self.game_winner = np.full(3, -1, dtype=np.int64)
        self.game_net = np.zeros(3, dtype=np.int64)
        self.hand_wins = np.zeros(2, dtype=np.int64)

    def win(self, player: int, points: int) -> tuple[int, int]:
        """Enter a won hand; (credited, closed) masks."""
        return enter_hand(
            self.totals, self.entries, self.game_winner, self.game_net, self.hand_wins, player, points, self.params
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        """Copies of (totals, entries, game_winner, game_net, hand_wins), the sheet as win_chance takes it."""
        return tuple(a.copy() for a in (self.totals, self.entries, self.game_winner, self.game_net, self.hand_wins))

    def chance(self, player: int, samples: int = CHANCE_SAMPLES) -> float:
        return win_chance(self.arrays(), player, self.params, HAND_POINTS, samples)

    def over(self) -> int:
        """The series winner once the series is over (R37), else -1."""
        return series_result(self.game_winner, self.game_net, self.params)

    def games_won(self) -> list[int]:
        return [int((self.game_winner == p).sum()) for p in (A, B)]


def random_sheet(rng: np.random.Generator, rules: Rules, hands: int) -> Sheet:
    """A sheet after up to `hands` random won hands (fewer if the series ends)."""
    sheet = Sheet(rules)
    for _ in range(hands):
        if sheet.over() >= 0:
            break
        sheet.win(int(rng.integers(2)), int(rng.choice(HAND_POINTS)))
    return sheet


def exact_one_game_chance(target: int, a: int, b: int) -> float:
    """A's exact chance to reach `target` first from totals (a, b): even odds a hand, points drawn from HAND_POINTS."""
    points = [int(p) for p in HAND_POINTS]

    @cache
    def chance(x: int, y: int) -> float:
        a_wins = sum(1.0 if x + p >= target else chance(x + p, y) for p in points)
        b_wins = sum(0.0 if y + p >= target else chance(x, y + p) for p in points)
        return 0.5 * (a_wins + b_wins) / len(points)

    return chance(a, b)


@pytest.mark.parametrize("totals", [(0, 0), (30, 10), (10, 45), (49, 0)])
def test_the_chance_of_one_game_equals_the_exact_count(totals):
    rules = Rules(num_games=1, game_target=50)
    sheet = Sheet(rules)
    sheet.totals[0] = totals
    exact = exact_one_game_chance(50, *totals)
    estimate = sheet.chance(A, samples=40_000)  # standard error under 0.0025
    assert estimate == pytest.approx(exact, abs=0.015)


@pytest.mark.parametrize("rules", [Rules(), Rules(hollywood_series_end="when_decided"), Rules(num_games=1)])
def test_the_two_players_chances_add_to_one_and_two_games_won_are_certain(rules):
    # Under the default rules the series is played on after a player has won two games (R37): its winner is
    # known, so the chance is already 1 (a play-out of the third game alone must not be read as the match).
    rng = np.random.default_rng(0)
    settled = 0
    for _ in range(80):
        sheet = random_sheet(rng, rules, int(rng.integers(0, 25)))
        chances = sheet.chance(A), sheet.chance(B)
        assert chances[0] + chances[1] == 1.0  # the same play-outs, read for each player, all of them finished
        for player in (A, B):
            if sheet.games_won()[player] * 2 > rules.num_games:
                settled += 1
                assert chances[player] == 1.0
    assert settled > 0, "some random sheets should have a series winner"


def test_under_net_points_the_series_is_not_settled_by_two_games():
    rules = Rules(series_winner_rule="net_points", game_target=30)
    sheet = Sheet(rules)
    sheet.win(A, 30)  # A's first win closes G1 only (net 30)
    sheet.win(A, 30)  # and the second closes G2 (net 30): under two_games the series would be A's
    # B can still win G3 by more than 60 (a hand's points are entered in full past the target, R33)
    assert sheet.games_won() == [2, 0] and sheet.over() < 0
    assert 0.0 < sheet.chance(A) < 1.0
    assert sheet.chance(A) + sheet.chance(B) == 1.0


def test_the_chance_is_a_fixed_function_of_the_sheet():
    sheet = random_sheet(np.random.default_rng(3), Rules(), 4)
    assert sheet.chance(A) == sheet.chance(A)
    assert 0.0 < sheet.chance(A) < 1.0


def test_a_hand_won_is_worth_more_than_its_points():
    # What the "chance" reward teaches and points/100 does not: at the first deal a 1-point win moves the chance
    # by more than half as much as a 64-point one (points/100 would pay it 1/64 as much).
    start = Sheet(Rules()).chance(A)
    gains = {}
    for points in (1, 64):
        sheet = Sheet(Rules())
        sheet.win(A, points)
        gains[points] = sheet.chance(A) - start
    assert gains[1] > 0.0 and gains[1] > 0.5 * gains[64]


@pytest.mark.parametrize("rules", [Rules(), Rules(hollywood_entry_rule="win_count"), Rules(num_games=1)])
def test_undo_hand_restores_the_sheet_before_the_hand(rules):
    rng = np.random.default_rng(1)
    for _ in range(40):
        sheet = random_sheet(rng, rules, int(rng.integers(0, 12)))
        if sheet.over() >= 0:
            continue
        before = sheet.arrays()
        winner, points = int(rng.integers(2)), int(rng.choice(HAND_POINTS))
        credited, closed = sheet.win(winner, points)
        undone = sheet.arrays()
        undo_hand(undone, winner, points, credited, closed)
        for array, original in zip(undone, before, strict=True):
            np.testing.assert_array_equal(array, original)


def hand_results(game: Game, start: int) -> list[tuple[int, int]]:
    """(winner, points) of the scored hands among game.events[start:]."""
    return [(e["winner"], e["points"]) for e in game.events[start:] if e["type"] == "hand_result" and e["winner"] >= 0]


def chance_reward(sheet: Sheet, results: list[tuple[int, int]], seat: int) -> float:
    """The "chance" reward of these hands to `seat`, entering them on `sheet`."""
    total = 0.0
    for winner, points in results:
        before = sheet.chance(seat)
        sheet.win(winner, points)
        total += CHANCE_PER_REWARD * (sheet.chance(seat) - before)
    return total


class Recorder:
    """An opponent that plays a random legal action and records it, so a `Game` can replay the match."""

    def __init__(self) -> None:
        self.rng, self.played = np.random.default_rng(9), []

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        actions = np.array([self.rng.choice(np.flatnonzero(m)) for m in action_masks], dtype=np.int64)
        self.played.extend(actions.tolist())
        return actions


def test_the_gymnasium_env_pays_each_hand_its_change_in_the_chance():
    # The env's match is replayed on a Game seeded alike; every step's reward is the change in the learner's
    # chance over the hands that ended in it, worked out on a sheet of our own from the Game's hand results.
    rules, opponent = Rules(game_target=40), Recorder()
    env = HollywoodGinEnv(opponent=opponent, rules=rules, reward="chance")
    obs, info = env.reset(seed=4)
    seat, sheet, game = info["learner_seat"], Sheet(rules), Game(rules, seed=4)

    def replay_opponent() -> None:
        while not game.done and game.current_player != seat:
            game.step(opponent.played.pop(0))

    replay_opponent()
    rng, terminated, total, scored = np.random.default_rng(2), False, 0.0, 0
    while not terminated:
        action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, reward, terminated, _, _ = env.step(action)
        start = len(game.events)
        game.step(action)
        replay_opponent()
        results = hand_results(game, start)
        scored += len(results)
        assert reward == pytest.approx(chance_reward(sheet, results, seat), abs=1e-6)
        total += reward
    assert game.done and scored > 1
    assert total == pytest.approx(CHANCE_PER_REWARD * ((game.winner == seat) - Sheet(rules).chance(seat)), abs=1e-5)


@pytest.mark.slow  # whole self-play series (15-20 s): CI's second command runs it
def test_self_play_rewards_follow_the_chance_hand_by_hand():
    rules = Rules(game_target=40)
    n = 8
    env = SelfPlayVectorEnv(n, rules, reward="chance")
    obs, _ = env.reset(seed=6)
    sheets = [Sheet(rules) for _ in range(n)]
    rng, finished = np.random.default_rng(0), 0
    while finished < 2 * n:
        actions = np.argmax(rng.random(obs["action_mask"].shape) * obs["action_mask"], axis=1)
        obs, rewards, _, _, info = env.step(actions)
        np.testing.assert_array_equal(rewards[:, 1], -rewards[:, 0])
        for i in range(n):
            expected = 0.0
            if info["hand_over"][i] and info["hand_winner"][i] >= 0:
                results = [(int(info["hand_winner"][i]), int(info["hand_points"][i]))]
                expected = chance_reward(sheets[i], results, A)
            assert rewards[i, 0] == pytest.approx(expected, abs=1e-6)
            if info["match_winner"][i] >= 0:
                assert sheets[i].over() == info["match_winner"][i]
                sheets[i], finished = Sheet(rules), finished + 1


def test_the_pettingzoo_env_pays_the_chance_and_sums_to_the_result():
    pytest.importorskip("pettingzoo")
    from hollywood_gin_env.envs.pettingzoo import env

    rules = Rules(game_target=40)
    aec = env(rules=rules, reward="chance")
    aec.reset(seed=5)
    rng, totals = np.random.default_rng(0), {"player_0": 0.0, "player_1": 0.0}
    for agent in aec.agent_iter():
        _, reward, termination, truncation, _ = aec.last()
        totals[agent] += reward
        if termination or truncation:
            aec.step(None)
            continue
        legal = np.flatnonzero(aec.observe(agent)["action_mask"])
        aec.step(int(rng.choice(legal)))
    winner = aec.unwrapped._engine.state.match[0, col.M_WINNER]
    start = Sheet(rules).chance(A)
    assert totals["player_0"] == pytest.approx(CHANCE_PER_REWARD * ((winner == A) - start), abs=1e-9)
    assert totals["player_1"] == pytest.approx(-totals["player_0"])


def test_the_worst_reward_is_below_any_hand():
    assert worst_reward(Rules(), "chance") == -CHANCE_PER_REWARD
