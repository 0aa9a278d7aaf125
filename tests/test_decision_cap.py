"""The evaluator's decision cap: two agents that always take the face-up card play only dead hands (each ends at
MAX_HAND_TURNS without a score, A22), so a match that reaches the cap is stopped, counted as aborted (won by neither)
and reported, while real matches never come near the cap."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.agents import Agent, load_agent
from hollywood_gin_env.evaluation.duplicate import MAX_MATCH_DECISIONS, play_chunk
from hollywood_gin_env.evaluation.evaluate import format_report, match_wins, summarize_pair
from hollywood_gin_env.evaluation.stats import bradley_terry
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE


class AlwaysTake(Agent):
    """Takes the face-up card whenever it may, else discards its lowest legal card; never knocks, never draws."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        discards = action_masks[:, DISCARD_BASE:KNOCK_BASE].argmax(axis=1) + DISCARD_BASE
        fallback = action_masks.argmax(axis=1)
        any_discard = action_masks[:, DISCARD_BASE:KNOCK_BASE].any(axis=1)
        return np.where(action_masks[:, ACTION_TAKE] == 1, ACTION_TAKE, np.where(any_discard, discards, fallback))


def test_a_match_that_never_ends_is_aborted_at_the_cap_and_reported():
    """Without a cap this loop never ended (evaluate.py hung); now each match stops at the cap, won by neither."""
    record = play_chunk((AlwaysTake("take-a"), AlwaysTake("take-b")), 4, 1, 0, 4, max_decisions=3000)
    assert (record.matches, record.aborted, record.match_wins_a) == (4, 4, 0)
    assert sum(record.decisions) == 4 * 3000 and record.hands > 0 and record.scored_hands == 0
    summary = summarize_pair(record)
    assert summary["aborted_matches"] == 4
    report = {"matches_per_pair": 4, "seed": 1, "pairs": [summary], "ratings": []}
    assert "4 matches were stopped at the cap" in format_report(report)


@pytest.mark.slow  # many whole matches (about 7 s): CI's second command runs it
def test_real_matches_never_reach_the_cap():
    """Random play makes the longest matches (many dead hands); all of four take under half the default cap."""
    record = play_chunk((load_agent("random", seed=1), load_agent("random", seed=2)), 4, 5, 0, 4)
    assert record.aborted == 0 and record.matches == 4
    assert sum(record.decisions) < MAX_MATCH_DECISIONS / 2, record.decisions


def test_a_cap_below_one_is_refused():
    import pytest

    with pytest.raises(ValueError, match="max_decisions=0 is not allowed"):
        play_chunk((load_agent("greedy"), load_agent("greedy")), 2, 1, 0, 2, max_decisions=0)


def test_aborted_matches_are_won_by_neither_in_the_ratings():
    """Two identical always-take agents abort all 4 of their matches: the Bradley-Terry ratings see no win for
    either side and rate them equal (0 and 0), not as four wins for agent B."""
    record = play_chunk((AlwaysTake("take-a"), AlwaysTake("take-b")), 4, 1, 0, 4, max_decisions=3000)
    wins = match_wins(2, [(0, 1)], [summarize_pair(record)])
    assert wins.tolist() == [[0, 0], [0, 0]]
    ratings, _ = bradley_terry(wins)
    assert ratings.tolist() == [0.0, 0.0]


def test_the_ratings_count_each_sides_wins_beside_aborted_matches():
    """Of 10 matches, A won 5, B won 3 and 2 were aborted: wins[A, B] = 5, wins[B, A] = 3, and A rates higher."""
    pair = {"matches": 10, "match_wins_a": 5, "aborted_matches": 2}
    wins = match_wins(2, [(0, 1)], [pair])
    assert wins.tolist() == [[0, 5], [3, 0]]
    ratings, _ = bradley_terry(wins)
    assert ratings[0] > 0 > ratings[1]
