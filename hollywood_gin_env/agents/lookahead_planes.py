"""What `expert` computes before it acts, as inputs for a policy network (`CardPolicy(lookahead_features=True)`).

A network can read the hand and the unseen cards, but learning what the next stock draw does to each possible
10-card hand (an exact meld-solver question over every unseen card) from those planes is slow. This kernel gives it
the answer, from the observation alone (as `expert` reads it: agents/_features.py), with expert's own functions:

- Four card planes for the 11 cards in question (the hand in the discard phase; in a draw or offer phase the hand
  plus the face-up card, i.e. what taking it would lead to, when taking it lowers the deadwood: the observation's
  take_effect flag), for each card c of them: the expected deadwood after
  throwing c, drawing one unseen card and throwing the best card, above the best such c (in tens of points); the
  chance of being able to knock then; the chance of gin then; and `expert.danger(c)`, the chance the opponent can
  meld c.
- Four numbers: the best of those expected deadwoods / 100; in a draw or offer phase, how much taking the face-up
  card beats drawing from the stock (the stock's expected deadwood minus the best above, in tens of points), and
  the chance of a knock and of gin after a stock draw (these two whether or not taking helps).

Everything is 0 where it does not apply (no face-up card, a hand that is not 10 or 11 cards, the match over).

`network_inputs` is the observation transform a policy network with `lookahead_features` reads: the observation
followed by these inputs. Whoever feeds the network calls it on its own kernel threads (`PolicyAgent`, the trainer's
rollout and opponent pool); the network itself is torch from input to logits.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents._features import card_masks, face_up_card, knock_limit, phase_of, popcount
from hollywood_gin_env.agents.expert import (
    DEFAULT_WEIGHTS,
    SCRATCH_SHAPE,
    danger,
    discard_lookaheads,
    hidden_card_prob,
    lookahead,
    lookahead_of,
)
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.observation import O_TAKE_EFFECT, OBS_SIZE
from hollywood_gin_env.engine.threads import KernelThreads, kernel_threads
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.support.jit import njit

#: Per-card planes: expected deadwood above the best (tens), P(knock next draw), P(gin next draw), danger.
LOOKAHEAD_PLANES = 4
#: Numbers: best expected deadwood / 100, taking's gain over the stock (tens), P(knock), P(gin) after a stock draw.
LOOKAHEAD_NUMBERS = 4
LOOKAHEAD_SIZE = LOOKAHEAD_PLANES * NUM_CARDS + LOOKAHEAD_NUMBERS
_NUMBERS = LOOKAHEAD_PLANES * NUM_CARDS


@njit
def _row(obs: np.ndarray, out: np.ndarray, scratch: np.ndarray) -> None:
    """out (zeroed, LOOKAHEAD_SIZE) = the lookahead inputs of one observation row."""
    if phase_of(obs) == col.PHASE_OVER:
        return
    hand, _, took, discarded, declined, unseen = card_masks(obs)
    limit = knock_limit(obs)
    held = popcount(hand)
    cards, face_up = hand, -1
    if held == 10:
        face_up = face_up_card(obs)
        if face_up < 0 or (hand >> face_up) & 1:
            return
        if obs[O_TAKE_EFFECT + 2] < 0.5:  # taking it would not lower the deadwood: no hand worth describing
            _, out[_NUMBERS + 3], out[_NUMBERS + 2] = lookahead(hand, unseen, limit, scratch)
            return
        cards = hand | (1 << face_up)
    elif held != 11:
        return
    n = discard_lookaheads(cards, unseen, limit, scratch)
    stock = 0.0
    if held == 10:  # the stock draw's lookahead is that of throwing the face-up card back
        stock, out[_NUMBERS + 3], out[_NUMBERS + 2] = lookahead_of(scratch, n, face_up)
    signals = discarded | declined
    base = hidden_card_prob(took, unseen)
    best = 1e18
    for c in range(NUM_CARDS):
        if (cards >> c) & 1:
            expected, gin, knock = lookahead_of(scratch, n, c)
            out[c] = expected
            out[NUM_CARDS + c] = knock
            out[2 * NUM_CARDS + c] = gin
            out[3 * NUM_CARDS + c] = danger(c, took, unseen, signals, base, DEFAULT_WEIGHTS)
            best = min(best, expected)
    for c in range(NUM_CARDS):
        if (cards >> c) & 1:
            out[c] = (out[c] - best) / 10.0
    out[_NUMBERS] = best / 100.0
    if held == 10:
        out[_NUMBERS + 1] = (stock - best) / 10.0


@njit
def lookahead_kernel(observations: np.ndarray, out: np.ndarray) -> None:
    """out[i] = the lookahead inputs of observation row i (`lookahead_planes` runs it over slices of the rows)."""
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    row = np.zeros(LOOKAHEAD_SIZE)
    for i in range(observations.shape[0]):
        row[:] = 0.0
        _row(observations[i], row, scratch)
        out[i] = row


#: Fewest rows a thread's slice gets: a row costs tens of microseconds of meld solving.
PLANES_GRAIN = 2


def lookahead_planes(observations: np.ndarray, threads: KernelThreads | None = None) -> np.ndarray:
    """float32 (B, LOOKAHEAD_SIZE): the module docstring's inputs for each observation row (B, OBS_SIZE), over
    slices of the rows on `threads` (default: the process's shared threads, as many as it may use CPUs)."""
    observations = np.ascontiguousarray(observations, dtype=np.float32)
    if observations.ndim != 2 or observations.shape[1] != OBS_SIZE:  # the kernel reads fixed offsets of each row
        raise ValueError(f"observations must have shape (B, {OBS_SIZE}), got {observations.shape}")
    out = np.zeros((observations.shape[0], LOOKAHEAD_SIZE), dtype=np.float32)
    threads = kernel_threads() if threads is None else threads
    threads.run(out.shape[0], lambda lo, hi: lookahead_kernel(observations[lo:hi], out[lo:hi]), PLANES_GRAIN)
    return out


def network_inputs(
    observations: np.ndarray, lookahead_features: bool, threads: KernelThreads | None = None
) -> np.ndarray:
    """A policy network's input rows for observation rows (B, OBS_SIZE): with `lookahead_features` the observation
    followed by `lookahead_planes` (on `threads`), else the observation itself."""
    if not lookahead_features:
        return observations
    return np.concatenate([observations, lookahead_planes(observations, threads)], axis=1)
