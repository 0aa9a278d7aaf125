"""The outcome infos of the learner envs and PettingZoo: the hand a step ended, the match it ended, and the result.

The seat fields are `SelfPlayVectorEnv`'s (the columns of `engine.handstats.HAND_FIELDS` and `match_winner`);
`hand_result` and `match_result` add the same outcome from one player's side (the learner's, or a PettingZoo
agent's), so "the learner won" is `match_result == 1` whichever seat it held. One kernel fills a table of every key
for every match, which the VectorEnv hands out as arrays and the single env as Python values. docs/ENVIRONMENTS.md,
"Infos", is the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.handstats import HAND_FIELDS
from hollywood_gin_env.engine.state import EngineState
from hollywood_gin_env.support.jit import njit, njit_inline

#: Every outcome key and its value where a step ended nothing (no hand ended and the match goes on).
NO_OUTCOME: dict[str, Any] = {
    "hands_ended": 0,
    "hand_over": False,
    **dict.fromkeys(HAND_FIELDS, -1),
    "match_winner": -1,
    "hand_result": 0,
    "match_result": 0,
}
#: The outcome keys, in the row order of `outcome_table`'s table.
KEYS = tuple(NO_OUTCOME)
_HANDS_ENDED, _HAND_OVER, _FIRST_FIELD = KEYS.index("hands_ended"), KEYS.index("hand_over"), KEYS.index("hand_kind")
_HAND_WINNER, _MATCH_WINNER = KEYS.index("hand_winner"), KEYS.index("match_winner")
_HAND_RESULT, _MATCH_RESULT = KEYS.index("hand_result"), KEYS.index("match_result")
_HAND_COLUMNS = np.array(list(HAND_FIELDS.values()), dtype=np.int64)  # last_hand's columns, in KEYS's order
_NO_COLUMN = np.array([int(value) for value in NO_OUTCOME.values()], dtype=np.int64)[:, None]


@njit
def _fill(match, last_hand, hands_ended, players, hand_columns, table) -> None:
    """table[k, i] = KEYS[k] of match i after a step that ended hands_ended[i] hands, from players[i]'s side."""
    n = table.shape[1]
    for k in range(hand_columns.shape[0]):  # row by row: 4 times as fast as match by match
        column = hand_columns[k]
        for i in range(n):
            table[_FIRST_FIELD + k, i] = last_hand[i, column] if hands_ended[i] > 0 else -1
    for i in range(n):
        table[_HANDS_ENDED, i] = hands_ended[i]
        table[_HAND_OVER, i] = 1 if hands_ended[i] > 0 else 0
        table[_MATCH_WINNER, i] = match[i, col.M_WINNER]
        table[_HAND_RESULT, i] = _result(table[_HAND_WINNER, i], players[i])
        table[_MATCH_RESULT, i] = _result(match[i, col.M_WINNER], players[i])


@njit_inline
def _result(winner: int, player: int) -> int:
    """1 if player won, -1 if the other player did, 0 if nobody did (winner -1)."""
    return 0 if winner < 0 else 1 if winner == player else -1


def outcome_table(state: EngineState, hands_ended: np.ndarray, players: np.ndarray) -> np.ndarray:
    """int64[len(KEYS), N]: each match's outcome after a step that ended `hands_ended[i]` hands, from `players[i]`'s
    side. The hand fields describe the last hand ended (its match's `last_hand`), `match_winner` is the series winner
    where the match is over (-1 while it goes on), and the results are 1 (won), -1 (lost) or 0 (nothing ended, or a
    dead hand)."""
    table = np.empty((len(KEYS), hands_ended.shape[0]), dtype=np.int64)
    _fill(state.match, state.last_hand, hands_ended, players, _HAND_COLUMNS, table)
    return table


def outcome_arrays(table: np.ndarray) -> dict[str, np.ndarray]:
    """The table as one array per key (`hand_over` bool, the others int64), as a vector env's infos hold them."""
    arrays = dict(zip(KEYS, table, strict=True))
    arrays["hand_over"] = arrays["hand_over"].astype(np.bool_)
    return arrays


def outcome_values(table: np.ndarray, i: int) -> dict[str, Any]:
    """Match i's outcome as Python values (`hand_over` a bool), as a single env's info holds them."""
    values = dict(zip(KEYS, table[:, i].tolist(), strict=True))
    values["hand_over"] = bool(values["hand_over"])
    return values


def no_outcome_table(n: int) -> np.ndarray:
    """The outcome table of n matches that ended nothing (NO_OUTCOME in every column)."""
    return np.repeat(_NO_COLUMN, n, axis=1)


def clear(table: np.ndarray, matches: np.ndarray) -> None:
    """Write NO_OUTCOME into the columns of the given matches (bool[N]): episodes that started again since."""
    table[:, matches] = _NO_COLUMN
