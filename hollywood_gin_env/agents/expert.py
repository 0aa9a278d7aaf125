"""`ExpertAgent`: one-step lookahead through the exact meld solver, discard safety from card tracking, and a
knock-or-hold-for-gin rule, batched in one numba kernel.

It reads from the observation only: its hand, the discard pile (dead cards), the cards the opponent took
(known to be in their hand), discarded and declined, the unseen cards, the stock size and the turn.

- Hand value V(H) of 10 cards: the expected deadwood after the next draw and best discard (every unseen
  card is equally likely to be the next stock card; the meld solver scores each), blended with the
  deadwood now (`W_LOOKAHEAD`), minus a credit for the chance of being able to knock after that draw.
- Discard: the legal card c minimising V(hand - c) + danger(c) * (`W_DANGER` + `W_DANGER_AGE` * draws),
  where danger(c) is the chance the opponent can meld c: a set with two of its rank or a run with two
  neighbours, each card held with probability 1 if they took it, hidden/unseen otherwise, 0 if dead
  (in the pile or in our hand); discounted (`W_SIGNAL`) next to cards they threw or declined.
- Draw: takes the face-up card only if that lowers its deadwood and the best hand it then keeps beats the
  expected stock draw (estimated from the same lookahead) by `W_TAKE_MARGIN`.
- Knock: always goes gin. Holds a knock of at most `W_GIN_HOLD` deadwood for gin while at least
  `W_GIN_OUTS` of the unseen cards would give gin next draw and `W_GIN_STOCK` cards remain in the stock
  (the opponent then has little time, and their knock would likely be undercut); otherwise knocks at once.
  Refusing knocks for undercut risk (a deadwood bar falling with the hand's age and the opponent's
  visible melds) was measured: it lost against greedy in every form tried and did not help in self-play.

The weights were tuned with evaluate.py against greedy (docs/EVALUATION.md).
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents._features import (
    card_masks,
    card_value,
    check_hand_sizes,
    dw_after,
    face_up_card,
    first_legal,
    knock_limit,
    neighbours_in,
    phase_of,
    popcount,
    rediscard_allowed,
    stock_size,
    turns,
)
from hollywood_gin_env.agents.base import Agent
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.threads import kernel_threads, sliced
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.melds import BIG, discard_deadwoods_mask, min_deadwood_mask, pair_discard_deadwoods_mask
from hollywood_gin_env.support.jit import njit

# Weights (index -> meaning); `ExpertAgent(weights=...)` overrides DEFAULT_WEIGHTS.
W_LOOKAHEAD = 0  # weight of the expected deadwood after the next draw (1 - it: the deadwood now)
W_KNOCK_CHANCE = 1  # deadwood points credited per unit of P(able to knock after the next draw)
W_DANGER = 2  # deadwood points charged per unit of a discard's meld danger ...
W_DANGER_AGE = 3  # ... plus this per draw made in the hand
W_SIGNAL = 4  # danger factor for a card next to one the opponent threw or declined
W_TAKE_MARGIN = 5  # how much lower V must be after taking the face-up card than after a stock draw
W_GIN_HOLD = 6  # hold a knock of at most this deadwood for gin ...
W_GIN_OUTS = 7  # ... while at least this fraction of unseen cards gives gin next draw ...
W_GIN_STOCK = 8  # ... and the stock holds at least this many cards
NUM_WEIGHTS = 9
DEFAULT_WEIGHTS = np.array([1.0, 25.0, 2.0, 0.1, 0.5, 0.0, 2.0, 0.05, 8.0])
#: Fewest rows a thread's slice gets: a decision costs tens of microseconds of meld solving.
EXPERT_GRAIN = 2
#: Rows of the expert's integer working array (`new_scratch`): a card vector for the meld solver; then, per card
#: c of an 11-card hand (`discard_lookaheads`), the deadwood of the hand less c, less c and the best other card,
#: less c after drawing an unseen card, and the sums over the unseen cards of lookahead's three figures.
S_CARDS, S_NOW, S_NINE, S_DRAWN, S_TOTAL, S_GIN, S_KNOCK = range(7)
SCRATCH_SHAPE = (S_KNOCK + 1, 52)


def new_scratch() -> np.ndarray:
    """A working array for the functions below (one per thread: they write to it); compiled kernels make theirs
    with np.zeros(SCRATCH_SHAPE, dtype=np.int64)."""
    return np.zeros(SCRATCH_SHAPE, dtype=np.int64)


@njit
def lookahead(hand: int, unseen: int, limit: int, scratch: np.ndarray) -> tuple[float, float, float]:
    """(expected deadwood after the next stock draw and best discard, P(gin then), P(knock then)) of 10 cards."""
    cards = scratch[S_CARDS]
    now = min_deadwood_mask(hand)
    discard_deadwoods_mask(hand, cards)
    nine = cards.min()
    total, gin, knock, n = 0.0, 0.0, 0.0, 0
    for u in range(52):
        if not (unseen >> u) & 1:
            continue
        if neighbours_in(u, hand) > 0:
            discard_deadwoods_mask(hand | (1 << u), cards)
            after = min(now, cards.min())
        else:  # u melds with nothing: it is thrown back, or kept in place of the worst card
            after = min(now, nine + card_value(u))
        total += after
        gin += after == 0
        knock += after <= limit
        n += 1
    if n == 0:
        return float(now), 0.0, 0.0
    return total / n, gin / n, knock / n


@njit
def discard_lookaheads(cards: int, unseen: int, limit: int, scratch: np.ndarray) -> int:
    """`lookahead(cards - c)` for every card c of `cards` at once, kept in scratch (read it with `lookahead_of`);
    returns the number of unseen cards.

    Per unseen card u, one pass of the meld solver over cards + u gives, for every c, the best hand after throwing
    c, drawing u and throwing the best card (`pair_discard_deadwoods_mask`), where `lookahead` per c solved each
    cards - c + u apart: the same integers, summed in the same order, so the same figures to the last bit.
    """
    now, nine, drawn = scratch[S_NOW], scratch[S_NINE], scratch[S_DRAWN]
    discard_deadwoods_mask(cards, now)
    pair_discard_deadwoods_mask(cards, nine)
    scratch[S_TOTAL:] = 0
    n = 0
    for u in range(52):
        if not (unseen >> u) & 1:
            continue
        n += 1
        solved = False
        for c in range(52):
            if not (cards >> c) & 1:
                continue
            if neighbours_in(u, cards & ~(1 << c)) > 0:
                if not solved:
                    pair_discard_deadwoods_mask(cards | (1 << u), drawn)
                    solved = True
                after = min(now[c], drawn[c])
            else:  # as in lookahead: u is thrown back, or kept in place of the worst card
                after = min(now[c], nine[c] + card_value(u))
            scratch[S_TOTAL, c] += after
            scratch[S_GIN, c] += after == 0
            scratch[S_KNOCK, c] += after <= limit
    return n


@njit
def lookahead_of(scratch: np.ndarray, n: int, card: int) -> tuple[float, float, float]:
    """`lookahead(cards - card)` from what `discard_lookaheads(cards, ...)` (returning n) left in scratch."""
    if n == 0:
        return float(scratch[S_NOW, card]), 0.0, 0.0
    return scratch[S_TOTAL, card] / n, scratch[S_GIN, card] / n, scratch[S_KNOCK, card] / n


@njit
def hidden_card_prob(took: int, unseen: int) -> float:
    """Chance the opponent holds a given unseen card: its hidden cards (10 less those it took) over the unseen."""
    return (10 - popcount(took)) / max(popcount(unseen), 1)


@njit
def held_prob(card: int, took: int, unseen: int, base: float) -> float:
    """Chance the opponent holds `card`: 1 if they took it, `base` if it is unseen, else 0 (dead)."""
    if (took >> card) & 1:
        return 1.0
    return base if (unseen >> card) & 1 else 0.0


@njit
def danger(card: int, took: int, unseen: int, signals: int, base: float, w: np.ndarray) -> float:
    """Chance the opponent can meld `card`: a set with two of its rank, or a run with two neighbours."""
    rank, suit = card % 13, card // 13
    p = np.zeros(3)
    k = 0
    for s in range(4):
        if s != suit:
            p[k] = held_prob(s * 13 + rank, took, unseen, base)
            k += 1
    set_p = p[0] * p[1] + p[0] * p[2] + p[1] * p[2] - 2 * p[0] * p[1] * p[2]
    near = np.zeros(5)  # ranks - 2 .. + 2 of the suit
    for d in range(-2, 3):
        if d != 0 and 0 <= rank + d < 13:
            near[d + 2] = held_prob(card + d, took, unseen, base)
    run_p = 1.0 - (1.0 - near[0] * near[1]) * (1.0 - near[1] * near[3]) * (1.0 - near[3] * near[4])
    scale = w[W_SIGNAL] if neighbours_in(card, signals) > 0 else 1.0
    return scale * (1.0 - (1.0 - set_p) * (1.0 - run_p))


@njit
def discard_scores(hand11: int, obs: np.ndarray, masks: tuple, w: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """scores[c] = V(hand11 - c) + the danger cost of throwing c, for each card c of hand11 (lower is better; the
    other cards 1e18), and discard_lookaheads' figures of hand11 left in scratch."""
    took, unseen, signals = masks
    base = hidden_card_prob(took, unseen)
    weight = w[W_DANGER] + w[W_DANGER_AGE] * turns(obs)
    n = discard_lookaheads(hand11, unseen, knock_limit(obs), scratch)
    scores = np.full(52, 1e18)
    for c in range(52):
        if (hand11 >> c) & 1:
            expected, _, knock = lookahead_of(scratch, n, c)
            blend = (1.0 - w[W_LOOKAHEAD]) * scratch[S_NOW, c] + w[W_LOOKAHEAD] * expected
            value = blend - w[W_KNOCK_CHANCE] * knock  # V(hand11 - c): see the module docstring
            scores[c] = value + weight * danger(c, took, unseen, signals, base, w) - 0.01 * card_value(c)
    return scores


@njit
def best_discard(obs: np.ndarray, mask: np.ndarray, hand: int, masks: tuple, w, scratch) -> int:
    """The card with the lowest discard score among those the mask lets go (discard or knock)."""
    scores = discard_scores(hand, obs, masks, w, scratch)
    best, best_score = -1, 1e18
    for c in range(52):
        if (mask[DISCARD_BASE + c] or mask[KNOCK_BASE + c]) and scores[c] < best_score:
            best, best_score = c, scores[c]
    return best


@njit
def best_knock(obs: np.ndarray, mask: np.ndarray) -> tuple[int, int]:
    """(card, deadwood) of the legal knock leaving the lowest deadwood; (-1, BIG) if none."""
    best, best_dw = -1, BIG
    for c in range(52):
        if mask[KNOCK_BASE + c] and dw_after(obs, c) < best_dw:
            best, best_dw = c, dw_after(obs, c)
    return best, best_dw


@njit
def hold_for_gin(deadwood: int, hand: int, card: int, unseen: int, obs: np.ndarray, w, scratch) -> bool:
    """True to pass up a knock with `deadwood` and play on for gin (module docstring)."""
    if deadwood == 0 or deadwood > w[W_GIN_HOLD] or stock_size(obs) < w[W_GIN_STOCK]:
        return False
    _, gin, _ = lookahead(hand & ~(1 << card), unseen, knock_limit(obs), scratch)
    return gin >= w[W_GIN_OUTS]


@njit
def discard_phase(obs: np.ndarray, mask: np.ndarray, w: np.ndarray, scratch: np.ndarray) -> int:
    """Knock (or go gin), or discard the best card."""
    hand, pile, took, discarded, declined, unseen = card_masks(obs)
    card, deadwood = best_knock(obs, mask)
    if card >= 0 and not hold_for_gin(deadwood, hand, card, unseen, obs, w, scratch):
        return KNOCK_BASE + card
    choice = best_discard(obs, mask, hand, (took, unseen, discarded | declined), w, scratch)
    if choice >= 0 and mask[DISCARD_BASE + choice]:
        return DISCARD_BASE + choice
    return KNOCK_BASE + card if card >= 0 else first_legal(mask)


@njit
def wants_face_up(obs: np.ndarray, card: int, w: np.ndarray, scratch: np.ndarray) -> bool:
    """True if taking the face-up card lowers the deadwood and beats the expected stock draw."""
    hand, pile, took, discarded, declined, unseen = card_masks(obs)
    now = min_deadwood_mask(hand)
    full = hand | (1 << card)
    after = scratch[S_CARDS]
    discard_deadwoods_mask(full, after)
    if not rediscard_allowed(obs):
        after[card] = BIG
    if after.min() >= now:
        return False
    scores = discard_scores(full, obs, (took, unseen, discarded | declined), w, scratch)
    # the stock draw's lookahead is that of full less the face-up card, which discard_scores has just computed
    expected, _, knock = lookahead_of(scratch, popcount(unseen), card)
    stock = expected + w[W_LOOKAHEAD] * (expected - now) - w[W_KNOCK_CHANCE] * knock
    taken = 1e18
    for c in range(52):
        if (hand >> c) & 1:
            taken = min(taken, scores[c])
    return taken < stock - w[W_TAKE_MARGIN]


@njit
def expert_row(obs: np.ndarray, mask: np.ndarray, w: np.ndarray, scratch: np.ndarray) -> int:
    """The expert's action for one observation row."""
    phase = phase_of(obs)
    if phase == col.PHASE_DISCARD:
        return discard_phase(obs, mask, w, scratch)
    if phase == col.PHASE_LAST_DISCARD:  # taking is offered only when it allows a knock
        return ACTION_TAKE if mask[ACTION_TAKE] else ACTION_PASS
    card = face_up_card(obs)
    if mask[ACTION_TAKE] and card >= 0 and wants_face_up(obs, card, w, scratch):
        return ACTION_TAKE
    if mask[ACTION_DRAW_STOCK]:
        return ACTION_DRAW_STOCK
    return ACTION_PASS if mask[ACTION_PASS] else first_legal(mask)


@njit
def expert_kernel(observations: np.ndarray, masks: np.ndarray, w: np.ndarray, out: np.ndarray) -> None:
    """out[i] = the expert's action for row i."""
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    for i in range(observations.shape[0]):
        out[i] = expert_row(observations[i], masks[i], w, scratch)


def check_weights(weights: object) -> np.ndarray:
    """The expert's weights as a float64 array of NUM_WEIGHTS finite numbers; ValueError naming what is wrong."""
    try:
        array = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise ValueError(f"weights must be {NUM_WEIGHTS} finite numbers ({error})") from None
    if array.shape != (NUM_WEIGHTS,):
        raise ValueError(f"weights must be {NUM_WEIGHTS} finite numbers, got shape {array.shape}")
    bad = [(i, float(w)) for i, w in enumerate(array) if not np.isfinite(w)]
    if bad:
        i, w = bad[0]
        raise ValueError(f"weights[{i}]={w} is not allowed: every weight must be a finite number")
    return array


class ExpertAgent(Agent):
    """The strongest shipped heuristic (module docstring); deterministic."""

    name = "expert"

    def __init__(self, weights: np.ndarray | None = None, num_threads: int | None = None) -> None:
        self.threads = kernel_threads(num_threads)
        self.weights = check_weights(DEFAULT_WEIGHTS if weights is None else weights)

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        check_hand_sizes(observations)
        out = np.zeros(observations.shape[0], dtype=np.int64)

        def work(lo: int, hi: int) -> None:
            expert_kernel(*sliced(lo, hi, observations, action_masks), self.weights, out[lo:hi])

        self.threads.run(out.shape[0], work, EXPERT_GRAIN)
        return out
