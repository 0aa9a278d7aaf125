"""The engine's numba kernels: deal, upcard offer, draw, discard/knock, showdown, dead hand, next deal.

Every kernel loops over the N matches of an `EngineState` (state.py) with no Python in the loop.
The one implementation of the turn rules (R3-R30) lives here; scoring is in scoring.py and the
showdown in showdown.py. Arrays are passed in the order of `EngineState.arrays()`.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit, njit_inline
from hollywood_gin_env.melds import BIG, LOWEST_RANK, MAX_MELDS, SUIT_BITS, discard_deadwoods_mask
from hollywood_gin_env.rules import P_ALLOW_REDISCARD, P_DEAD_STOCK, P_DEALER_RULE, P_KNOCK_LIMIT, P_LAST_DISCARD
from hollywood_gin_env.sampling import random_below
from hollywood_gin_env.scoring import KIND_DEAD, KIND_NONE, enter_hand, hand_score, series_result
from hollywood_gin_env.showdown import showdown_mask
from hollywood_gin_env.state import (
    ACTION_DRAW_STOCK,
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    F_DEALER,
    F_DONE_NOW,
    F_DRAWN,
    F_HAND_NO,
    F_HAND_OVER,
    F_ILLEGAL,
    F_MUST_KNOCK,
    F_PHASE,
    F_PILE_LEN,
    F_PLAYER,
    F_R_CLOSED,
    F_R_CREDITED,
    F_R_DEFENDER_DW,
    F_R_DEFENDER_HAND,
    F_R_DISCARD,
    F_R_KIND,
    F_R_KNOCKER,
    F_R_KNOCKER_DW,
    F_R_KNOCKER_HAND,
    F_R_POINTS,
    F_R_TURNS,
    F_R_WINNER,
    F_STOCK_POS,
    F_TAKEN,
    F_TURNS,
    F_WINNER,
    KNOCK_BASE,
    NUM_FIELDS,
    PHASE_DISCARD,
    PHASE_DRAW,
    PHASE_LAST_DISCARD,
    PHASE_OFFER_DEALER,
    PHASE_OFFER_NONDEALER,
    PHASE_OVER,
)


@njit
def _shuffle(rng: np.ndarray, i: int, deck: np.ndarray) -> None:
    """Fill deck[i] with a uniformly shuffled deck (Fisher-Yates)."""
    for c in range(52):
        deck[i, c] = c
    for c in range(51, 0, -1):
        j = random_below(rng, i, c + 1)
        deck[i, c], deck[i, j] = deck[i, j], deck[i, c]


@njit
def _deal(i, ints, hands, deck, pile, took, discarded, passed) -> None:
    """Deal deck[i] as R3 says: alternately from the non-dealer, the upcard, then the stock."""
    dealer = ints[i, F_DEALER]
    hands[i, 0] = 0
    hands[i, 1] = 0
    for j in range(10):
        hands[i, 1 - dealer] |= 1 << deck[i, 2 * j]
        hands[i, dealer] |= 1 << deck[i, 2 * j + 1]
    pile[i, 0] = deck[i, 20]
    ints[i, F_PILE_LEN] = 1
    ints[i, F_STOCK_POS] = 21
    ints[i, F_PHASE] = PHASE_OFFER_NONDEALER
    ints[i, F_PLAYER] = 1 - dealer
    ints[i, F_TAKEN] = -1
    ints[i, F_MUST_KNOCK] = 0
    ints[i, F_TURNS] = 0
    ints[i, F_HAND_NO] += 1
    for p in range(2):
        took[i, p] = 0
        discarded[i, p] = 0
        passed[i, p] = 0


@njit
def _can_knock_with(hand: int, card: int, params: np.ndarray, scratch: np.ndarray) -> bool:
    """True if taking `card` (from the pile) into `hand` allows a knock (R12), R9 applied."""
    discard_deadwoods_mask(hand | (1 << card), scratch)
    if params[P_ALLOW_REDISCARD] == 0:
        scratch[card] = BIG  # R9: the taken card may not be the knock discard
    return scratch.min() <= params[P_KNOCK_LIMIT]


@njit
def _update_legal(i, ints, hands, legal, discard_dw, params) -> None:
    """Write the legal-action mask of match i's player to act (and, to discard, each discard's deadwood)."""
    legal[i, :] = 0
    phase = ints[i, F_PHASE]
    if phase <= PHASE_OFFER_DEALER or phase == PHASE_LAST_DISCARD:  # the two offers and the last discard
        legal[i, ACTION_TAKE] = 1
        legal[i, ACTION_PASS] = 1
    elif phase == PHASE_DRAW:
        legal[i, ACTION_DRAW_STOCK] = 1
        legal[i, ACTION_TAKE] = 1
    elif phase == PHASE_DISCARD:
        hand = hands[i, ints[i, F_PLAYER]]
        taken = ints[i, F_TAKEN]
        deadwoods = discard_dw[i]
        discard_deadwoods_mask(hand, deadwoods)
        may_discard = 1 - ints[i, F_MUST_KNOCK]
        limit = params[P_KNOCK_LIMIT]
        if params[P_ALLOW_REDISCARD] == 0 and taken >= 0:
            hand &= ~(1 << taken)
        for suit in range(4):
            bits = (hand >> (13 * suit)) & SUIT_BITS
            while bits:
                rank = LOWEST_RANK[bits]
                bits ^= 1 << rank
                c = 13 * suit + rank
                legal[i, DISCARD_BASE + c] = may_discard
                legal[i, KNOCK_BASE + c] = deadwoods[c] <= limit


@njit
def _take_top(i, ints, hands, pile, took) -> None:
    """The player to act takes the top card of the discard pile (the upcard included)."""
    player = ints[i, F_PLAYER]
    ints[i, F_PILE_LEN] -= 1
    card = pile[i, ints[i, F_PILE_LEN]]
    hands[i, player] |= 1 << card
    took[i, player] |= 1 << card
    ints[i, F_TAKEN] = card
    ints[i, F_TURNS] += 1
    ints[i, F_PHASE] = PHASE_DISCARD


@njit
def _draw_stock(i, ints, hands, deck) -> None:
    """The player to act draws the top of the stock."""
    card = deck[i, ints[i, F_STOCK_POS]]
    ints[i, F_STOCK_POS] += 1
    hands[i, ints[i, F_PLAYER]] |= 1 << card
    ints[i, F_TAKEN] = -1
    ints[i, F_DRAWN] = card
    ints[i, F_TURNS] += 1
    ints[i, F_PHASE] = PHASE_DISCARD


@njit
def _start_hand_result(i, ints, kind: int, knocker: int, winner: int) -> None:
    """Record the start of a hand result; the hand's scores follow."""
    ints[i, F_HAND_OVER] = 1
    ints[i, F_R_KIND] = kind
    ints[i, F_R_KNOCKER] = knocker
    ints[i, F_R_WINNER] = winner
    ints[i, F_R_TURNS] = ints[i, F_TURNS]
    ints[i, F_R_CREDITED] = 0
    ints[i, F_R_CLOSED] = 0
    ints[i, F_R_POINTS] = 0


@njit
def _next_dealer(dealer: int, winner: int, params: np.ndarray) -> int:
    """The dealer of the next hand (R29, R30, A11); after a dead hand the dealer stays."""
    if winner < 0:
        return dealer
    if params[P_DEALER_RULE] == 0:
        return winner
    if params[P_DEALER_RULE] == 2:
        return 1 - winner
    return 1 - dealer


@njit
def _knock(i, card, arrays, params) -> None:
    """Knock discarding `card`: showdown, scoring and the score sheet (R13-R25, R31-R37)."""
    ints, hands, deck, pile, took, discarded, passed = arrays[:7]
    totals, entries, game_winner, game_net, hand_wins, rng = arrays[7:13]
    knocker = ints[i, F_PLAYER]
    hands[i, knocker] &= ~(1 << card)
    melds = np.zeros(MAX_MELDS, dtype=np.int64)
    layoffs = np.zeros(MAX_MELDS, dtype=np.int64)
    k, d, _ = showdown_mask(hands[i, knocker], hands[i, 1 - knocker], melds, layoffs)
    kind, knocker_wins, points = hand_score(k, d, params)
    winner = knocker if knocker_wins else 1 - knocker
    _start_hand_result(i, ints, kind, knocker, winner)
    ints[i, F_R_KNOCKER_DW] = k
    ints[i, F_R_DEFENDER_DW] = d
    ints[i, F_R_POINTS] = points
    ints[i, F_R_KNOCKER_HAND] = hands[i, knocker]
    ints[i, F_R_DEFENDER_HAND] = hands[i, 1 - knocker]
    ints[i, F_R_DISCARD] = card
    credited, closed = enter_hand(
        totals[i], entries[i], game_winner[i], game_net[i], hand_wins[i], winner, points, params
    )
    ints[i, F_R_CREDITED] = credited
    ints[i, F_R_CLOSED] = closed
    _after_hand(i, winner, arrays, params)


@njit
def _dead_hand(i, arrays, params) -> None:
    """The hand is drawn (R26-R29): nothing is scored and the same dealer deals again."""
    ints = arrays[0]
    _start_hand_result(i, ints, KIND_DEAD, -1, -1)
    ints[i, F_R_KNOCKER_DW] = 0
    ints[i, F_R_DEFENDER_DW] = 0
    _after_hand(i, -1, arrays, params)


@njit
def _after_hand(i, winner, arrays, params) -> None:
    """End the series if it is decided (R37), else pick the next dealer and deal."""
    ints, hands, deck, pile, took, discarded, passed = arrays[:7]
    totals, entries, game_winner, game_net, hand_wins, rng = arrays[7:13]
    series_winner = series_result(game_winner[i], game_net[i], params)
    if series_winner >= 0:
        ints[i, F_WINNER] = series_winner
        ints[i, F_PHASE] = PHASE_OVER
        ints[i, F_DONE_NOW] = 1
        ints[i, F_DEALER] = _next_dealer(ints[i, F_DEALER], winner, params)
        return
    ints[i, F_DEALER] = _next_dealer(ints[i, F_DEALER], winner, params)
    _shuffle(rng, i, deck)
    _deal(i, ints, hands, deck, pile, took, discarded, passed)


@njit_inline
def _discard(i, card, arrays, params, scratch) -> None:
    """Discard without knocking; the hand dies when the stock is down to its last cards (R26, R28)."""
    ints, hands, deck, pile, took, discarded, passed = arrays[:7]
    player = ints[i, F_PLAYER]
    hands[i, player] &= ~(1 << card)
    took[i, player] &= ~(1 << card)
    discarded[i, player] |= 1 << card
    pile[i, ints[i, F_PILE_LEN]] = card
    ints[i, F_PILE_LEN] += 1
    ints[i, F_PLAYER] = 1 - player
    ints[i, F_TAKEN] = -1
    ints[i, F_PHASE] = PHASE_DRAW
    if 52 - ints[i, F_STOCK_POS] > params[P_DEAD_STOCK]:
        return
    if params[P_LAST_DISCARD] == 1 and _can_knock_with(hands[i, 1 - player], card, params, scratch):
        ints[i, F_PHASE] = PHASE_LAST_DISCARD
    else:
        _dead_hand(i, arrays, params)


@njit_inline
def _apply(i, action, arrays, params, scratch) -> None:
    """Apply one legal action to match i."""
    ints, hands, deck, pile, took, discarded, passed = arrays[:7]
    phase = ints[i, F_PHASE]
    player = ints[i, F_PLAYER]
    if action == ACTION_PASS:
        passed[i, player] |= 1 << pile[i, ints[i, F_PILE_LEN] - 1]
        if phase == PHASE_OFFER_NONDEALER:
            ints[i, F_PHASE] = PHASE_OFFER_DEALER
            ints[i, F_PLAYER] = ints[i, F_DEALER]
        elif phase == PHASE_OFFER_DEALER:
            # R6(d): both passed, so the non-dealer must draw from the stock; that draw is forced.
            ints[i, F_PLAYER] = 1 - ints[i, F_DEALER]
            _draw_stock(i, ints, hands, deck)
        else:
            _dead_hand(i, arrays, params)
    elif action == ACTION_TAKE:
        _take_top(i, ints, hands, pile, took)
        if phase == PHASE_LAST_DISCARD:
            ints[i, F_MUST_KNOCK] = 1
    elif action == ACTION_DRAW_STOCK:
        passed[i, player] |= 1 << pile[i, ints[i, F_PILE_LEN] - 1]
        _draw_stock(i, ints, hands, deck)
    elif action >= KNOCK_BASE:
        _knock(i, action - KNOCK_BASE, arrays, params)
    else:
        _discard(i, action - DISCARD_BASE, arrays, params, scratch)


@njit
def step_kernel(actions, active, params, arrays) -> None:
    """Advance every active match by its action; illegal actions set F_ILLEGAL and change nothing."""
    ints, legal, discard_dw = arrays[0], arrays[13], arrays[14]
    scratch = np.zeros(52, dtype=np.int64)
    for i in range(ints.shape[0]):
        # The per-step flags describe this call, so matches left out of it report that nothing happened.
        ints[i, F_HAND_OVER] = 0
        ints[i, F_DONE_NOW] = 0
        ints[i, F_DRAWN] = -1
        ints[i, F_ILLEGAL] = 0
        if not active[i]:
            continue
        action = actions[i]
        if action < 0 or action >= legal.shape[1] or legal[i, action] == 0:
            ints[i, F_ILLEGAL] = 1
            continue
        _apply(i, action, arrays, params, scratch)
        _update_legal(i, ints, arrays[1], legal, discard_dw, params)


@njit
def new_match_kernel(selected, seeds, reseed, first_dealers, use_deck, arrays, params) -> None:
    """Start a new match (series) in each selected match: a fresh sheet, the first dealer, the first deal.

    seeds[i] reseeds match i's RNG where reseed[i]; first_dealers[i] < 0 draws the dealer at random (R2);
    where use_deck[i], deck[i] already holds the first deal's order (a fixed deck) and is not shuffled.
    """
    ints, hands, deck, pile, took, discarded, passed = arrays[:7]
    totals, entries, game_winner, game_net, hand_wins, rng, legal, discard_dw = arrays[7:15]
    for i in range(ints.shape[0]):
        if not selected[i]:
            continue
        if reseed[i]:
            rng[i] = np.uint64(seeds[i])
        for f in range(NUM_FIELDS):
            ints[i, f] = 0
        ints[i, F_WINNER] = -1
        ints[i, F_R_KIND] = KIND_NONE
        ints[i, F_R_WINNER] = -1
        ints[i, F_DRAWN] = -1
        for g in range(totals.shape[1]):
            game_winner[i, g] = -1
            game_net[i, g] = 0
            for p in range(2):
                totals[i, g, p] = 0
                entries[i, g, p] = 0
        hand_wins[i, 0] = 0
        hand_wins[i, 1] = 0
        dealer = first_dealers[i]
        ints[i, F_DEALER] = dealer if dealer >= 0 else random_below(rng, i, 2)
        if not use_deck[i]:
            _shuffle(rng, i, deck)
        _deal(i, ints, hands, deck, pile, took, discarded, passed)
        _update_legal(i, ints, hands, legal, discard_dw, params)
