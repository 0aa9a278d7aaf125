"""`expert` playing hands out in the engine, one compiled loop per match: `search.rollout_scores`' fast path.

`rollout_scores` steps a batch of matches from Python: every decision costs an encoder call, an `act` call and an
engine step over the batch, tens of microseconds of Python each. Its play-outs are small batches (the trainer's
critic plays out only the deals just dealt, about a tenth of the matches a step), so that Python cost was a third of
the play-outs' time and ran on one thread whatever the kernel threads. Here each match is played to its hand's end
inside one kernel: the same encoder (`encode_match`), the same expert decision (`expert_row`) and the same engine
step (`step_match`) as the batched path, in the same order for that match, so the scores and the matches' states are
bit-identical to it (only `last_step` differs: here it holds each match's own last step). The matches are
independent, so slices of them run on the kernel threads with one dispatch per slice.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit
from hollywood_gin_env.agents.expert import SCRATCH_SHAPE, expert_row
from hollywood_gin_env.engine import overflow_ok
from hollywood_gin_env.kernels import step_match
from hollywood_gin_env.observation import OBS_SIZE, encode_match
from hollywood_gin_env.state import (
    M_PHASE,
    M_PLAYER,
    NUM_ACTIONS,
    PHASE_OVER,
    R_POINTS,
    R_WINNER,
    S_HAND_OVER,
    named,
)
from hollywood_gin_env.threads import KernelThreads, sliced

#: Fewest matches a thread's slice gets: a hand's play-out costs about a millisecond.
PLAYOUT_GRAIN = 1


@njit
def expert_playout_kernel(arrays, params, weights, seats, over, values, max_steps: int) -> None:
    """Each match i not `over` and not finished: `expert` (weights) plays both seats until the hand ends (at most
    max_steps decisions); then values[i] = the hand's points for seats[i] (won +, lost -, dead 0), over[i] = True."""
    s = named(arrays)
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    for i in range(s.match.shape[0]):
        for _ in range(max_steps):
            if over[i] or s.match[i, M_PHASE] == PHASE_OVER:
                break
            player = s.match[i, M_PLAYER]
            encode_match(i, player, s, params, obs)
            for a in range(NUM_ACTIONS):
                mask[a] = s.legal[i, a]  # the mask of the player to act, as the encoder writes it
            step_match(i, expert_row(obs, mask, weights, scratch), True, s, params)
            if s.last_step[i, S_HAND_OVER] == 1:
                winner = s.last_hand[i, R_WINNER]
                sign = 1.0 if winner == seats[i] else (0.0 if winner < 0 else -1.0)
                values[i] = sign * s.last_hand[i, R_POINTS]
                over[i] = True


def expert_playouts(
    threads: KernelThreads,
    arrays: tuple,
    params: np.ndarray,
    weights: np.ndarray,
    seats: np.ndarray,
    over: np.ndarray,
    values: np.ndarray,
    max_steps: int,
) -> None:
    """`expert_playout_kernel` over slices of the matches in `arrays` (an `EngineState.arrays()`) on `threads`."""

    def work(lo: int, hi: int) -> None:
        with overflow_ok():  # numpy's error state is per thread
            arrays_, *per_match = sliced(lo, hi, arrays, seats, over, values)
            expert_playout_kernel(arrays_, params, weights, *per_match, max_steps)

    threads.run(seats.shape[0], work, PLAYOUT_GRAIN)
