"""The engine's numba kernels: deal, upcard offer, draw, discard/knock, showdown, dead hand, next deal.

Every kernel loops over the N matches of an `EngineState` (state.py) with no Python in the loop.
The one implementation of the turn rules (R3-R30) lives here; scoring is in scoring.py and the
showdown in showdown.py. Kernels take `EngineState.arrays()` and read it by name (`state.named`).
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.state import FIRST_STOCK_POS, HAND_SIZE, UPCARD_POS, EngineState, named
from hollywood_gin_env.rules.actions import ACTION_DRAW_STOCK, ACTION_PASS, ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.bits import LOWEST_RANK, SUIT_BITS
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.rules.melds import MAX_MELDS, best_deadwood_taking, discard_deadwoods_mask
from hollywood_gin_env.rules.options import (
    DEALER_LOSER_DEALS,
    DEALER_WINNER_DEALS,
    LAST_DISCARD_MAY_TAKE,
    MAX_HAND_TURNS,
    P_ALLOW_REDISCARD,
    P_DEAD_STOCK,
    P_DEALER_RULE,
    P_KNOCK_LIMIT,
    P_LAST_DISCARD,
)
from hollywood_gin_env.rules.scoring import KIND_DEAD, KIND_NONE, enter_hand, hand_score, series_result
from hollywood_gin_env.rules.showdown import showdown_mask
from hollywood_gin_env.support.jit import njit, njit_inline
from hollywood_gin_env.support.streams import random_below

# Helpers called once a step and taking the whole state are inlined: numba then skips the per-call reference
# counting of its 17 arrays, which would cost more than their own work. `update_legal` is the exception: it is
# large, and inlined it made a step ~20% slower (measured), so it is a plain call taking the four arrays it reads.
# Helpers called once a hand are plain calls.


@njit
def _shuffle(rng: np.ndarray, i: int, deck: np.ndarray) -> None:
    """Fill deck[i] with a uniformly shuffled deck (Fisher-Yates)."""
    for c in range(NUM_CARDS):
        deck[i, c] = c
    for c in range(NUM_CARDS - 1, 0, -1):
        j = random_below(rng, i, c + 1)
        deck[i, c], deck[i, j] = deck[i, j], deck[i, c]


@njit
def _deal(i: int, s: EngineState) -> None:
    """Deal deck[i] as R3 says: alternately from the non-dealer, the upcard, then the stock."""
    match, deck = s.match, s.deck
    dealer = match[i, col.M_DEALER]
    s.hands[i, 0] = 0
    s.hands[i, 1] = 0
    for j in range(HAND_SIZE):
        s.hands[i, 1 - dealer] |= 1 << deck[i, 2 * j]
        s.hands[i, dealer] |= 1 << deck[i, 2 * j + 1]
    s.pile[i, 0] = deck[i, UPCARD_POS]
    match[i, col.M_PILE_LEN] = 1
    match[i, col.M_STOCK_POS] = FIRST_STOCK_POS
    match[i, col.M_PHASE] = col.PHASE_OFFER_NONDEALER
    match[i, col.M_PLAYER] = 1 - dealer
    match[i, col.M_TAKEN] = -1
    match[i, col.M_MUST_KNOCK] = 0
    match[i, col.M_TURNS] = 0
    match[i, col.M_HAND_NO] += 1
    for p in range(2):
        s.took[i, p] = 0
        s.discarded[i, p] = 0
        s.declined[i, p] = 0


@njit
def _can_knock_with(hand: int, card: int, params: np.ndarray) -> bool:
    """True if taking `card` (from the pile) into `hand` allows a knock (R12), R9 applied: unless the rules allow
    it, the taken card may not be the knock discard."""
    return best_deadwood_taking(hand, card, params[P_ALLOW_REDISCARD] != 0) <= params[P_KNOCK_LIMIT]


@njit
def update_legal(i: int, match, hands, legal, discard_dw, params: np.ndarray) -> None:
    """Write the legal-action mask of match i's player to act (and, to discard, each discard's deadwood)."""
    legal[i, :] = 0
    phase = match[i, col.M_PHASE]
    if phase <= col.PHASE_OFFER_DEALER or phase == col.PHASE_LAST_DISCARD:  # the two offers and the last discard
        legal[i, ACTION_TAKE] = 1
        legal[i, ACTION_PASS] = 1
    elif phase == col.PHASE_DRAW:
        legal[i, ACTION_DRAW_STOCK] = 1
        legal[i, ACTION_TAKE] = 1
    elif phase == col.PHASE_DISCARD:
        hand = hands[i, match[i, col.M_PLAYER]]
        taken = match[i, col.M_TAKEN]
        deadwoods = discard_dw[i]
        discard_deadwoods_mask(hand, deadwoods)
        may_discard = 1 - match[i, col.M_MUST_KNOCK]
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


@njit_inline
def _take_top(i: int, s: EngineState) -> None:
    """The player to act takes the top card of the discard pile (the upcard included)."""
    match = s.match
    player = match[i, col.M_PLAYER]
    match[i, col.M_PILE_LEN] -= 1
    card = s.pile[i, match[i, col.M_PILE_LEN]]
    s.hands[i, player] |= 1 << card
    s.took[i, player] |= 1 << card
    match[i, col.M_TAKEN] = card
    match[i, col.M_TURNS] += 1
    match[i, col.M_PHASE] = col.PHASE_DISCARD


@njit_inline
def _draw_stock(i: int, s: EngineState) -> None:
    """The player to act draws the top of the stock."""
    match = s.match
    card = s.deck[i, match[i, col.M_STOCK_POS]]
    match[i, col.M_STOCK_POS] += 1
    s.hands[i, match[i, col.M_PLAYER]] |= 1 << card
    match[i, col.M_TAKEN] = -1
    s.last_step[i, col.S_DRAWN] = card
    match[i, col.M_TURNS] += 1
    match[i, col.M_PHASE] = col.PHASE_DISCARD


@njit
def _start_hand_result(i: int, s: EngineState, kind: int, knocker: int, winner: int) -> None:
    """Record the start of a hand result; the hand's scores follow."""
    result = s.last_hand
    s.last_step[i, col.S_HAND_OVER] = 1
    result[i, col.R_KIND] = kind
    result[i, col.R_KNOCKER] = knocker
    result[i, col.R_WINNER] = winner
    result[i, col.R_TURNS] = s.match[i, col.M_TURNS]
    result[i, col.R_CREDITED] = 0
    result[i, col.R_CLOSED] = 0
    result[i, col.R_POINTS] = 0


@njit
def _next_dealer(dealer: int, winner: int, params: np.ndarray) -> int:
    """The dealer of the next hand (R29, R30, A11); after a dead hand the dealer stays."""
    if winner < 0:
        return dealer
    if params[P_DEALER_RULE] == DEALER_WINNER_DEALS:
        return winner
    if params[P_DEALER_RULE] == DEALER_LOSER_DEALS:
        return 1 - winner
    return 1 - dealer


@njit
def _knock(i: int, card: int, s: EngineState, params: np.ndarray) -> None:
    """Knock discarding `card`: showdown, scoring and the score sheet (R13-R25, R31-R37)."""
    hands, result = s.hands, s.last_hand
    knocker = s.match[i, col.M_PLAYER]
    hands[i, knocker] &= ~(1 << card)
    melds = np.zeros(MAX_MELDS, dtype=np.int64)
    layoffs = np.zeros(MAX_MELDS, dtype=np.int64)
    k, d, _ = showdown_mask(hands[i, knocker], hands[i, 1 - knocker], melds, layoffs)
    kind, knocker_wins, points = hand_score(k, d, params)
    winner = knocker if knocker_wins else 1 - knocker
    _start_hand_result(i, s, kind, knocker, winner)
    result[i, col.R_KNOCKER_DW] = k
    result[i, col.R_DEFENDER_DW] = d
    result[i, col.R_POINTS] = points
    result[i, col.R_KNOCKER_HAND] = hands[i, knocker]
    result[i, col.R_DEFENDER_HAND] = hands[i, 1 - knocker]
    result[i, col.R_DISCARD] = card
    credited, closed = enter_hand(
        s.totals[i], s.entries[i], s.game_winner[i], s.game_net[i], s.hand_wins[i], winner, points, params
    )
    result[i, col.R_CREDITED] = credited
    result[i, col.R_CLOSED] = closed
    _after_hand(i, winner, s, params)


@njit
def _dead_hand(i: int, s: EngineState, params: np.ndarray) -> None:
    """The hand is drawn (R26-R29): nothing is scored and the same dealer deals again."""
    _start_hand_result(i, s, KIND_DEAD, -1, -1)
    s.last_hand[i, col.R_KNOCKER_DW] = 0
    s.last_hand[i, col.R_DEFENDER_DW] = 0
    _after_hand(i, -1, s, params)


@njit
def _after_hand(i: int, winner: int, s: EngineState, params: np.ndarray) -> None:
    """End the match if it is decided (R37), else pick the next dealer and deal."""
    match = s.match
    match_winner = series_result(s.game_winner[i], s.game_net[i], params)
    match[i, col.M_DEALER] = _next_dealer(match[i, col.M_DEALER], winner, params)
    if match_winner >= 0:
        match[i, col.M_WINNER] = match_winner
        match[i, col.M_PHASE] = col.PHASE_OVER
        s.last_step[i, col.S_DONE_NOW] = 1
        return
    _shuffle(s.rng, i, s.deck)
    _deal(i, s)


@njit_inline
def _discard(i: int, card: int, s: EngineState, params: np.ndarray) -> None:
    """Discard without knocking; the hand dies when the stock is down to its last cards (R26, R28) or after
    MAX_HAND_TURNS draws (A22)."""
    match = s.match
    player = match[i, col.M_PLAYER]
    s.hands[i, player] &= ~(1 << card)
    s.took[i, player] &= ~(1 << card)
    s.discarded[i, player] |= 1 << card
    s.pile[i, match[i, col.M_PILE_LEN]] = card
    match[i, col.M_PILE_LEN] += 1
    match[i, col.M_PLAYER] = 1 - player
    match[i, col.M_TAKEN] = -1
    match[i, col.M_PHASE] = col.PHASE_DRAW
    if NUM_CARDS - match[i, col.M_STOCK_POS] > params[P_DEAD_STOCK]:
        if match[i, col.M_TURNS] >= MAX_HAND_TURNS:
            _dead_hand(i, s, params)
        return
    if params[P_LAST_DISCARD] == LAST_DISCARD_MAY_TAKE and _can_knock_with(s.hands[i, 1 - player], card, params):
        match[i, col.M_PHASE] = col.PHASE_LAST_DISCARD
    else:
        _dead_hand(i, s, params)


@njit_inline
def _apply(i: int, action: int, s: EngineState, params: np.ndarray) -> None:
    """Apply one legal action to match i."""
    match = s.match
    phase = match[i, col.M_PHASE]
    player = match[i, col.M_PLAYER]
    if action == ACTION_PASS:
        s.declined[i, player] |= 1 << s.pile[i, match[i, col.M_PILE_LEN] - 1]
        if phase == col.PHASE_OFFER_NONDEALER:
            match[i, col.M_PHASE] = col.PHASE_OFFER_DEALER
            match[i, col.M_PLAYER] = match[i, col.M_DEALER]
        elif phase == col.PHASE_OFFER_DEALER:
            # R6(d): both passed, so the non-dealer must draw from the stock; that draw is forced.
            match[i, col.M_PLAYER] = 1 - match[i, col.M_DEALER]
            _draw_stock(i, s)
        else:
            _dead_hand(i, s, params)
    elif action == ACTION_TAKE:
        _take_top(i, s)
        if phase == col.PHASE_LAST_DISCARD:
            match[i, col.M_MUST_KNOCK] = 1
    elif action == ACTION_DRAW_STOCK:
        s.declined[i, player] |= 1 << s.pile[i, match[i, col.M_PILE_LEN] - 1]
        _draw_stock(i, s)
    elif action >= KNOCK_BASE:
        _knock(i, action - KNOCK_BASE, s, params)
    else:
        _discard(i, action - DISCARD_BASE, s, params)


@njit_inline
def _starts_step(i: int, action: int, active: bool, flags, legal) -> bool:
    """Clear match i's per-step flags; True if it is active and `action` is legal (else col.S_ILLEGAL is set)."""
    # The per-step flags describe this call, so matches left out of it report that nothing happened.
    flags[i, col.S_HAND_OVER] = 0
    flags[i, col.S_DONE_NOW] = 0
    flags[i, col.S_DRAWN] = -1
    flags[i, col.S_ILLEGAL] = 0
    if not active:
        return False
    if action < 0 or action >= legal.shape[1] or legal[i, action] == 0:
        flags[i, col.S_ILLEGAL] = 1
        return False
    return True


@njit_inline
def step_match(i: int, action: int, active: bool, s: EngineState, params: np.ndarray) -> None:
    """Advance match i by `action` if active (an illegal action sets col.S_ILLEGAL and changes nothing)."""
    if _starts_step(i, action, active, s.last_step, s.legal):
        _apply(i, action, s, params)
        update_legal(i, s.match, s.hands, s.legal, s.discard_dw, params)


@njit
def step_kernel(actions, active, params, arrays) -> None:
    """Advance every active match by its action; illegal actions set col.S_ILLEGAL and change nothing."""
    s = named(arrays)
    flags, legal = s.last_step, s.legal
    # step_match's body written out, _starts_step too: the loop runs 1.3x slower with step_match inlined here
    # and 1.02x slower with _starts_step (measured against each other on one core)
    for i in range(flags.shape[0]):
        flags[i, col.S_HAND_OVER] = 0
        flags[i, col.S_DONE_NOW] = 0
        flags[i, col.S_DRAWN] = -1
        flags[i, col.S_ILLEGAL] = 0
        if not active[i]:
            continue
        action = actions[i]
        if action < 0 or action >= legal.shape[1] or legal[i, action] == 0:
            flags[i, col.S_ILLEGAL] = 1
            continue
        _apply(i, action, s, params)
        update_legal(i, s.match, s.hands, s.legal, s.discard_dw, params)


@njit
def new_match_kernel(selected, seeds, reseed, first_dealers, use_deck, arrays, params) -> None:
    """Start a new match in each selected match: a fresh sheet, the first dealer, the first deal.

    seeds[i] reseeds match i's RNG where reseed[i]; first_dealers[i] < 0 draws the dealer at random (R2);
    where use_deck[i], deck[i] already holds the first deal's order (a fixed deck) and is not shuffled.
    """
    s = named(arrays)
    match, flags, result = s.match, s.last_step, s.last_hand
    for i in range(match.shape[0]):
        if not selected[i]:
            continue
        if reseed[i]:
            s.rng[i] = np.uint64(seeds[i])
        match[i, :] = 0
        flags[i, :] = 0
        result[i, :] = 0
        match[i, col.M_WINNER] = -1
        result[i, col.R_KIND] = KIND_NONE
        result[i, col.R_WINNER] = -1
        flags[i, col.S_DRAWN] = -1
        for g in range(s.totals.shape[1]):
            s.game_winner[i, g] = -1
            s.game_net[i, g] = 0
            for p in range(2):
                s.totals[i, g, p] = 0
                s.entries[i, g, p] = 0
        s.hand_wins[i, 0] = 0
        s.hand_wins[i, 1] = 0
        dealer = first_dealers[i]
        match[i, col.M_DEALER] = dealer if dealer >= 0 else random_below(s.rng, i, 2)
        if not use_deck[i]:
            _shuffle(s.rng, i, s.deck)
        _deal(i, s)
        update_legal(i, s.match, s.hands, s.legal, s.discard_dw, params)
