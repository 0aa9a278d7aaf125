"""Numba kernels of the environment layer: rewards, opponent turns, seats and the built-in random opponent.

No rule lives here: the kernels read what the engine wrote (state.match, state.last_step,
state.last_hand) and the legal masks it keeps. Each loops over N matches, so the env's Python side
stays O(1) numpy calls a step.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import overflow_ok
from hollywood_gin_env.engine.handstats import hands_closed
from hollywood_gin_env.engine.kernels import step_kernel
from hollywood_gin_env.engine.sampling import sample_legal_streams
from hollywood_gin_env.engine.state import named
from hollywood_gin_env.engine.threads import sliced
from hollywood_gin_env.rules.bits import count_bits
from hollywood_gin_env.rules.win_chance import CHANCE_SAMPLES, HAND_POINTS, undo_hand, win_chance
from hollywood_gin_env.support.jit import njit
from hollywood_gin_env.support.streams import random_below

#: Fewest matches a thread's slice gets: crediting costs well under a microsecond a match (more with "chance").
CREDIT_GRAIN = 256
#: The built-in opponent's turns run the engine step and the sampler, a few microseconds a match.
OPPONENT_GRAIN = 64
REWARD_MODES = ("hand", "game", "match", "chance")
EPISODE_MODES = ("match", "hand")
REWARD_HAND, REWARD_GAME, REWARD_MATCH, REWARD_CHANCE = (
    REWARD_MODES.index(m) for m in ("hand", "game", "match", "chance")
)
#: reward="hand" pays a hand's points divided by this.
POINTS_PER_REWARD = 100.0
#: reward="chance" pays this times the hand's change in the match-win chance, so a match adds up to about ±1.
CHANCE_PER_REWARD = 2.0

_SEED_MUL = np.uint64(0xD1342543DE82EF95)
_SEED_ADD = np.uint64(0x2545F4914F6CDD1D)


def env_stream_seeds(seeds: np.ndarray) -> np.ndarray:
    """The env's own per-match random state (seats, random opponent) derived from the match seeds."""
    return np.asarray(seeds, dtype=np.uint64) * _SEED_MUL + _SEED_ADD


@njit
def draw_seats(selected, fixed_seat, rng, seats) -> None:
    """Each selected match's learner seat: fixed_seat, or a fair coin from its env stream if fixed_seat < 0."""
    for i in range(seats.shape[0]):
        if selected[i]:
            seats[i] = fixed_seat if fixed_seat >= 0 else random_below(rng, i, 2)


@njit
def mark_illegal(actions, legal, selected, illegal) -> int:
    """illegal[i]: the action of selected match i is not one of its legal actions; returns how many."""
    count = 0
    for i in range(legal.shape[0]):
        a = actions[i]
        illegal[i] = selected[i] and (a < 0 or a >= legal.shape[1] or legal[i, a] == 0)
        count += illegal[i]
    return count


@njit
def begin_step(actions, legal, illegal, playing, pending, rewards, ended) -> int:
    """Start a learner step in every match: flag illegal actions (playing = the others), move the
    rewards earned before the learner's first decision into rewards, clear ended; returns the
    number of illegal actions."""
    count = 0
    for i in range(legal.shape[0]):
        a = actions[i]
        bad = a < 0 or a >= legal.shape[1] or legal[i, a] == 0
        illegal[i] = bad
        playing[i] = not bad
        count += bad
        rewards[i] = pending[i]
        pending[i] = 0.0
        ended[i] = False
    return count


@njit
def end_step(match, illegal, worst, rewards, ended, carry, hand_counts) -> None:
    """Finish a learner step: illegal actions end their episode at the worst reward; carry[i] marks a
    hand episode that ended while its match goes on (the next reset deals on); hand_counts[i] is (the
    hands match i has ended, how many of them since the last call), from (the former count, anything)."""
    for i in range(match.shape[0]):
        if illegal[i]:
            rewards[i] = worst
            ended[i] = True
        carry[i] = ended[i] and not illegal[i] and match[i, col.M_PHASE] != col.PHASE_OVER
        closed = hands_closed(match, i)
        hand_counts[i, 1] = closed - hand_counts[i, 0]
        hand_counts[i, 0] = closed


@njit
def chance_change(sheet, last_hand, player, params) -> float:
    """How much the hand in last_hand changed `player`'s chance to win the match (win_chance after minus before)."""
    after = win_chance(sheet, player, params, HAND_POINTS, CHANCE_SAMPLES)
    before = (sheet[0].copy(), sheet[1].copy(), sheet[2].copy(), sheet[3].copy(), sheet[4].copy())
    undo_hand(
        before, last_hand[col.R_WINNER], last_hand[col.R_POINTS], last_hand[col.R_CREDITED], last_hand[col.R_CLOSED]
    )
    return after - win_chance(before, player, params, HAND_POINTS, CHANCE_SAMPLES)


@njit
def credit(last_step, last_hand, match, sheet, params, seats, active, mode, hand_episodes, rewards, ended) -> None:
    """After an engine step: add seats[i]'s reward for it to rewards[i] and flag the episode ends.

    sheet = (totals, entries, game_winner, game_net, hand_wins), the state's score sheet (read by reward="chance").
    """
    totals, entries, game_winner, game_net, hand_wins = sheet
    for i in range(last_step.shape[0]):
        if not active[i]:
            continue
        if last_step[i, col.S_HAND_OVER] == 1:
            winner = last_hand[i, col.R_WINNER]
            if winner >= 0:
                sign = 1.0 if winner == seats[i] else -1.0
                if mode == REWARD_HAND:
                    rewards[i] += sign * last_hand[i, col.R_POINTS] / POINTS_PER_REWARD
                elif mode == REWARD_GAME:
                    rewards[i] += sign * count_bits(last_hand[i, col.R_CLOSED])
                elif mode == REWARD_CHANCE:
                    match_sheet = (totals[i], entries[i], game_winner[i], game_net[i], hand_wins[i])
                    rewards[i] += CHANCE_PER_REWARD * chance_change(match_sheet, last_hand[i], seats[i], params)
            if hand_episodes:
                ended[i] = True
        if last_step[i, col.S_DONE_NOW] == 1:
            ended[i] = True
            if mode == REWARD_MATCH:
                rewards[i] += 1.0 if match[i, col.M_WINNER] == seats[i] else -1.0


@njit
def opponent_turns(match, seats, active, ended, need) -> int:
    """need[i]: match i is active, its episode goes on and the opponent (not seats[i]) is to act."""
    count = 0
    for i in range(match.shape[0]):
        need[i] = (
            active[i]
            and not ended[i]
            and match[i, col.M_PHASE] != col.PHASE_OVER
            and match[i, col.M_PLAYER] != seats[i]
        )
        count += need[i]
    return count


@njit
def random_opponent_turns(
    arrays, params, seats, active, ended, rewards, mode, hand_episodes, need, rng, actions
) -> None:
    """The built-in random opponent's turns: the loop of `LearnerMatches._play_opponent` in one kernel call.

    From Python each turn would cost four kernel calls, and each call unpacks its arrays (the state's
    seventeen for the engine step) again: for one match that costs more than the turn's work.
    """
    s = named(arrays)
    while opponent_turns(s.match, seats, active, ended, need):
        sample_legal_streams(s.legal, need, rng, actions)
        step_kernel(actions, need, params, arrays)
        sheet = (s.totals, s.entries, s.game_winner, s.game_net, s.hand_wins)
        credit(s.last_step, s.last_hand, s.match, sheet, params, seats, need, mode, hand_episodes, rewards, ended)


def credit_rows(engine, seats, active, mode, hand_episodes, rewards, ended) -> None:
    """`credit` after a step of `engine` (an engine.Engine), over its threads' slices of the matches."""
    s = engine.state
    if engine.threads.whole(engine.num_matches, CREDIT_GRAIN):
        credit(
            s.last_step,
            s.last_hand,
            s.match,
            s.sheet(),
            engine.params,
            seats,
            active,
            mode,
            hand_episodes,
            rewards,
            ended,
        )
        return
    per_step = (s.last_step, s.last_hand, s.match)

    def work(lo: int, hi: int) -> None:
        step, sheet, *per_match = sliced(lo, hi, per_step, s.sheet(), seats, active, rewards, ended)
        seats_, active_, rewards_, ended_ = per_match
        credit(*step, sheet, engine.params, seats_, active_, mode, hand_episodes, rewards_, ended_)

    engine.threads.run(engine.num_matches, work, CREDIT_GRAIN)


def random_opponent_rows(engine, seats, active, ended, rewards, mode, hand_episodes, need, rng, actions) -> None:
    """`random_opponent_turns` in `engine`'s matches, over its threads' slices (each plays its matches out)."""
    if engine.threads.whole(engine.num_matches, OPPONENT_GRAIN):
        with overflow_ok():
            random_opponent_turns(
                engine.arrays, engine.params, seats, active, ended, rewards, mode, hand_episodes, need, rng, actions
            )
        return

    def work(lo: int, hi: int) -> None:
        arrays, *per_match = sliced(lo, hi, engine.arrays, seats, active, ended, rewards)
        scratch = sliced(lo, hi, need, rng, actions)
        with overflow_ok():  # numpy's error state is per thread
            random_opponent_turns(arrays, engine.params, *per_match, mode, hand_episodes, *scratch)

    engine.threads.run(engine.num_matches, work, OPPONENT_GRAIN)
