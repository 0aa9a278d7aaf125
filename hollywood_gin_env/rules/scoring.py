"""Hand scoring (R22-R25) and the Hollywood score sheet (R31-R39): small numba functions on one match.

The sheet of match i is totals[i, g, p], entries[i, g, p] (hands credited, "boxes"),
game_winner[i, g] (-1 while game g is open) and game_net[i, g] (the winner's net under R39).
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.rules.options import (
    ENTRY_WIN_COUNT,
    P_BOX_BONUS,
    P_BOXES_TO_TARGET,
    P_ENTRY_RULE,
    P_GAME_BONUS,
    P_GAME_TARGET,
    P_GIN_BONUS,
    P_NUM_GAMES,
    P_SERIES_END,
    P_SERIES_WINNER,
    P_SHUTOUT,
    P_UNDERCUT_BONUS,
    P_UNDERCUT_ON_TIE,
    SERIES_END_WHEN_DECIDED,
    SERIES_WINNER_NET_POINTS,
    SHUTOUT_DOUBLE,
    SHUTOUT_FLAT_100,
)
from hollywood_gin_env.support.jit import njit

# Kinds of hand result.
KIND_NONE = 0
KIND_KNOCK = 1
KIND_UNDERCUT = 2
KIND_GIN = 3
KIND_DEAD = 4
KIND_NAMES = ("none", "knock", "undercut", "gin", "dead")

MAX_GAMES = 3
#: shutout_rule="flat_100": a shutout game's net gains this many points (A15).
FLAT_SHUTOUT_BONUS = 100


@njit
def hand_score(knocker_deadwood: int, defender_deadwood: int, params: np.ndarray) -> tuple[int, bool, int]:
    """(kind, knocker_wins, points) of a showdown with deadwoods k and d (R22-R24)."""
    k, d = knocker_deadwood, defender_deadwood
    if k == 0:
        return KIND_GIN, True, params[P_GIN_BONUS] + d
    if k < d or (k == d and params[P_UNDERCUT_ON_TIE] == 0):
        return KIND_KNOCK, True, d - k
    return KIND_UNDERCUT, False, params[P_UNDERCUT_BONUS] + (k - d)


@njit
def _lowest_open(game_winner: np.ndarray, num_games: int) -> int:
    """Index of the lowest open game, or -1 when all are closed."""
    for g in range(num_games):
        if game_winner[g] < 0:
            return g
    return -1


@njit
def credited_games(
    entries: np.ndarray, game_winner: np.ndarray, hand_wins: int, player: int, params: np.ndarray
) -> int:
    """Bit mask of the games a win by `player` is entered in (R32 cascade, or A12 win_count).

    entries[g, p] and hand_wins (the player's wins this series, this one included) are read
    before the hand's entries are made.
    """
    num_games = params[P_NUM_GAMES]
    if params[P_ENTRY_RULE] == ENTRY_WIN_COUNT:  # win n goes to games 1..n that are still open
        mask = 0
        for g in range(min(hand_wins, num_games)):
            if game_winner[g] < 0:
                mask |= 1 << g
        return mask
    lowest = _lowest_open(game_winner, num_games)
    if lowest < 0:
        return 0
    mask = 1 << lowest
    for g in range(lowest + 1, num_games):
        if game_winner[g] < 0 and entries[g - 1, player] > 0:
            mask |= 1 << g
    return mask


@njit
def _game_net(totals: np.ndarray, entries: np.ndarray, winner: int, params: np.ndarray) -> int:
    """Net points of a closed game to its winner (R39)."""
    loser = 1 - winner
    box = params[P_BOX_BONUS]
    net = totals[winner] + params[P_GAME_BONUS] + box * entries[winner] - totals[loser] - box * entries[loser]
    if entries[loser] == 0:
        if params[P_SHUTOUT] == SHUTOUT_DOUBLE:
            net *= 2
        elif params[P_SHUTOUT] == SHUTOUT_FLAT_100:
            net += FLAT_SHUTOUT_BONUS
    return net


@njit
def enter_hand(
    totals: np.ndarray,
    entries: np.ndarray,
    game_winner: np.ndarray,
    game_net: np.ndarray,
    hand_wins: np.ndarray,
    player: int,
    points: int,
    params: np.ndarray,
) -> tuple[int, int]:
    """Enter a won hand on one match's sheet (R32-R35); return (credited games, games closed) masks."""
    hand_wins[player] += 1
    credited = credited_games(entries, game_winner, hand_wins[player], player, params)
    closed = 0
    for g in range(params[P_NUM_GAMES]):
        if (credited >> g) & 1:
            totals[g, player] += points
            entries[g, player] += 1
    for g in range(params[P_NUM_GAMES]):
        if (credited >> g) & 1:
            score = totals[g, player] + params[P_BOXES_TO_TARGET] * params[P_BOX_BONUS] * entries[g, player]
            if score >= params[P_GAME_TARGET]:
                game_winner[g] = player
                game_net[g] = _game_net(totals[g], entries[g], player, params)
                closed |= 1 << g
    return credited, closed


@njit
def majority_winner(game_winner: np.ndarray, num_games: int) -> int:
    """The player who has won more than half of the games (R37: two of three decide the series), else -1."""
    for player in range(2):
        won = 0
        for g in range(num_games):
            won += game_winner[g] == player
        if won * 2 > num_games:
            return player
    return -1


@njit
def series_result(game_winner: np.ndarray, game_net: np.ndarray, params: np.ndarray) -> int:
    """The series winner (0 or 1) once the series is over (R37), else -1."""
    num_games = params[P_NUM_GAMES]
    wins = np.zeros(2, dtype=np.int64)
    net = np.zeros(2, dtype=np.int64)
    open_games = 0
    for g in range(num_games):
        if game_winner[g] < 0:
            open_games += 1
        else:
            wins[game_winner[g]] += 1
            net[game_winner[g]] += game_net[g]
    decided = majority_winner(game_winner, num_games) >= 0
    if open_games > 0 and not (params[P_SERIES_END] == SERIES_END_WHEN_DECIDED and decided):
        return -1
    if params[P_SERIES_WINNER] == SERIES_WINNER_NET_POINTS and net[0] != net[1]:
        return 0 if net[0] > net[1] else 1
    return 0 if wins[0] > wins[1] else 1
