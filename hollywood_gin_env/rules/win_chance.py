"""A player's chance to win the match from a Hollywood score sheet: the potential of reward="chance".

`win_chance` plays the rest of the series out many times on the sheet alone (scoring.enter_hand, the one
implementation of R32-R37), with each hand won by either player with even odds and worth a number of points drawn
from `HAND_POINTS`. Every estimate uses the same `CHANCE_SAMPLES` random streams, so the chance is a fixed function
of the sheet: the differences between two sheets one hand apart are not sampling noise, and rewards that are its
differences add up over a match to exactly the match result (1 won, 0 lost) minus the chance at the first deal.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.rules.options import P_NUM_GAMES, P_SERIES_WINNER, SERIES_WINNER_NET_POINTS
from hollywood_gin_env.rules.scoring import MAX_GAMES, enter_hand, majority_winner, series_result
from hollywood_gin_env.support.jit import njit
from hollywood_gin_env.support.streams import random_below

#: Points of a won hand at the default rules, as 100 quantiles (the 0.5th, 1.5th, ... 99.5th percentiles) of 13,308
#: hands `expert` played against itself (`scripts/hand_points.py` measures them again).
HAND_POINTS = np.array(
    [
        1,
        1,
        2,
        2,
        2,
        3,
        3,
        3,
        4,
        4,
        4,
        5,
        5,
        5,
        5,
        6,
        6,
        6,
        6,
        7,
        7,
        7,
        7,
        8,
        8,
        8,
        8,
        9,
        9,
        9,
        9,
        10,
        10,
        10,
        10,
        10,
        11,
        11,
        11,
        11,
        12,
        12,
        12,
        12,
        12,
        13,
        13,
        13,
        13,
        14,
        14,
        14,
        15,
        15,
        15,
        16,
        16,
        16,
        16,
        17,
        17,
        17,
        17,
        18,
        18,
        18,
        18,
        19,
        19,
        19,
        20,
        20,
        21,
        21,
        22,
        23,
        23,
        24,
        25,
        25,
        26,
        26,
        27,
        28,
        29,
        30,
        31,
        33,
        35,
        36,
        38,
        39,
        40,
        42,
        44,
        46,
        48,
        51,
        55,
        64,
    ],
    dtype=np.int64,
)
#: How many series each estimate plays out (its standard error is at most 0.5 / sqrt(CHANCE_SAMPLES)).
CHANCE_SAMPLES = 128
#: A series played out stops after this many hands (none at the default rules comes near it).
MAX_HANDS = 400
_STREAM_SEED = np.uint64(0x5EED0FC4A9CE5EED)


@njit
def settled_winner(game_winner, game_net, params) -> int:
    """The series winner once no later hand can change it (two games won under "two_games"), else -1."""
    if params[P_SERIES_WINNER] == SERIES_WINNER_NET_POINTS:
        return series_result(game_winner, game_net, params)
    return majority_winner(game_winner, params[P_NUM_GAMES])  # the series may be played on (R37), its winner known


@njit
def _play_out(totals, entries, game_winner, game_net, hand_wins, params, points, rng) -> int:
    """Play one series out on the sheet (changed in place) with random hands; return its winner (-1: unfinished)."""
    for _ in range(MAX_HANDS):
        winner = random_below(rng, 0, 2)
        _, closed = enter_hand(
            totals,
            entries,
            game_winner,
            game_net,
            hand_wins,
            winner,
            points[random_below(rng, 0, points.shape[0])],
            params,
        )
        if closed:
            result = settled_winner(game_winner, game_net, params)
            if result >= 0:
                return result
    return -1


@njit
def win_chance(sheet, player, params, points, samples) -> float:
    """The chance that `player` wins the series from sheet = (totals, entries, game_winner, game_net, hand_wins)
    (1 or 0 once its winner is settled)."""
    totals, entries, game_winner, game_net, hand_wins = sheet
    settled = settled_winner(game_winner, game_net, params)
    if settled >= 0:
        return 1.0 if settled == player else 0.0
    t, e, w, net, h = totals.copy(), entries.copy(), game_winner.copy(), game_net.copy(), hand_wins.copy()
    rng = np.zeros(1, dtype=np.uint64)
    wins = 0
    for sample in range(samples):
        for g in range(MAX_GAMES):  # element loops: numba's slice copies cost more than a play-out's hands
            w[g], net[g] = game_winner[g], game_net[g]
            for p in range(2):
                t[g, p], e[g, p] = totals[g, p], entries[g, p]
        h[0], h[1] = hand_wins[0], hand_wins[1]
        rng[0] = _STREAM_SEED + np.uint64(sample)  # splitmix64 streams one apart are unrelated
        wins += _play_out(t, e, w, net, h, params, points, rng) == player
    return wins / samples


@njit
def undo_hand(sheet, winner, points, credited, closed) -> None:
    """Take one won hand back off sheet = (totals, entries, game_winner, game_net, hand_wins): the sheet as it was
    before scoring.enter_hand entered it."""
    totals, entries, game_winner, game_net, hand_wins = sheet
    hand_wins[winner] -= 1
    for g in range(totals.shape[0]):
        if (credited >> g) & 1:
            totals[g, winner] -= points
            entries[g, winner] -= 1
        if (closed >> g) & 1:
            game_winner[g], game_net[g] = -1, 0
