"""The outcome infos of the learner envs and PettingZoo: the hand a step ended, the match it ended, and the result.

The seat fields are `SelfPlayVectorEnv`'s (`engine.handstats.ended_hands` and `match_winner`); `hand_result` and
`match_result` add the same outcome from one player's side (the learner's, or a PettingZoo agent's), so "the learner
won" is `match_result == 1` whichever seat it held. docs/ENVIRONMENTS.md, "Outcome infos", is the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.handstats import HAND_FIELDS, ended_hands
from hollywood_gin_env.engine.state import EngineState

#: Every outcome key and its value where a step ended nothing (no hand ended and the match goes on).
NO_OUTCOME: dict[str, Any] = {
    "hands_ended": 0,
    "hand_over": False,
    **dict.fromkeys(HAND_FIELDS, -1),
    "match_winner": -1,
    "hand_result": 0,
    "match_result": 0,
}


def outcomes(state: EngineState, hands_ended: np.ndarray, players: np.ndarray) -> dict[str, np.ndarray]:
    """Each match's outcome infos after a step that ended `hands_ended[i]` hands, from `players[i]`'s side.

    The hand fields describe the last hand ended (its match's `last_hand`), `match_winner` is the series winner where
    the match is over (-1 while it goes on), and the results are 1 (players[i] won), -1 (lost) or 0 (nothing ended,
    or a dead hand).
    """
    hands = ended_hands(state, hands_ended > 0)
    winner = state.match[:, col.M_WINNER].copy()
    return {
        "hands_ended": np.asarray(hands_ended, dtype=np.int64).copy(),
        **hands,
        "match_winner": winner,
        "hand_result": result_of(hands["hand_winner"], players),
        "match_result": result_of(winner, players),
    }


def result_of(winner: np.ndarray, players: np.ndarray) -> np.ndarray:
    """int64: 1 where players won, -1 where the other player did, 0 where nobody did (winner -1)."""
    return np.where(winner < 0, 0, np.where(winner == players, 1, -1)).astype(np.int64)


def outcome_of(outcome: dict[str, np.ndarray], i: int) -> dict[str, Any]:
    """Match i's outcome infos as Python values (a single env's info)."""
    return {key: values[i].item() for key, values in outcome.items()}


def no_outcomes(n: int) -> dict[str, np.ndarray]:
    """NO_OUTCOME for n matches: arrays of the dtypes `outcomes` returns."""
    return {key: np.full(n, value, dtype=type(value)) for key, value in NO_OUTCOME.items()}


def cleared(outcome: dict[str, np.ndarray], rows: np.ndarray) -> dict[str, np.ndarray]:
    """A copy of `outcome` with NO_OUTCOME in the given rows (episodes that started again since)."""
    return {key: np.where(rows, NO_OUTCOME[key], values) for key, values in outcome.items()}
