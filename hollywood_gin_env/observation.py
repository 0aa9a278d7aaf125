"""The observation encoder: a pure function of (state, player) holding only what that player may know.

`OBS_LAYOUT` lists every block (name, offset, size, meaning); the README prints the same table.
Card planes are indexed by card id (cards.py). Nothing here reads the opponent's hand or the stock
order: the opponent's cards appear only where they were seen (taken from the discard pile).
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env._jit import njit, njit_inline
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.rules import (
    P_ALLOW_REDISCARD,
    P_GAME_TARGET,
    P_GIN_BONUS,
    P_KNOCK_LIMIT,
    P_LAST_DISCARD,
    P_NUM_GAMES,
    P_UNDERCUT_BONUS,
    P_UNDERCUT_ON_TIE,
)
from hollywood_gin_env.state import (
    F_DEALER,
    F_HAND_NO,
    F_MUST_KNOCK,
    F_PHASE,
    F_PILE_LEN,
    F_PLAYER,
    F_STOCK_POS,
    F_TAKEN,
    F_TURNS,
    KNOCK_BASE,
    NUM_ACTIONS,
    PHASE_DISCARD,
)

_BLOCKS = (
    ("hand", 52, "1 for each card the player holds"),
    ("face_up", 52, "one-hot: the upcard during the offer, else the top of the discard pile"),
    ("discard_pile", 52, "1 for each card in the discard pile"),
    ("pile_recency", 52, "(position + 1) / pile length for each card in the pile: 1 = top, small = old"),
    ("opponent_took", 52, "cards the opponent took from the discard pile and still holds"),
    ("opponent_discarded", 52, "cards the opponent discarded this hand"),
    ("opponent_declined", 52, "cards the opponent passed on: a passed upcard, a top card left to draw the stock"),
    ("unseen", 52, "cards in the stock or the opponent's hidden cards (neither held, in the pile, nor known taken)"),
    ("deadwood_after_discard", 52, "discard phase: own deadwood / 100 after discarding each held card"),
    ("knock_discards", 52, "discard phase: 1 for each card whose discard allows a knock"),
    ("phase", 6, "one-hot: offer_nondealer, offer_dealer, draw, discard, last_discard, over"),
    ("stock_size", 1, "cards in the stock / 31"),
    ("is_dealer", 1, "1 if the player deals this hand"),
    ("seat", 1, "the player's id (0 or 1)"),
    ("deadwood", 1, "own minimum deadwood / 100 (with 11 cards: after the best discard)"),
    ("turns", 1, "draws made this hand / 30"),
    ("hand_number", 1, "hands dealt in this match / 50"),
    ("sheet", 21, "per game G1..G3: own total, opponent total (/ game_target), own and opponent entries (/ 10), "
                  "open, won by the player, won by the opponent"),  # fmt: skip
    ("games_won", 2, "games won by the player and by the opponent / 3"),
    ("rules", 8, "knock_limit / 10, gin_bonus / 25, undercut_bonus / 10, game_target / 100, undercut_on_tie, "
                 "num_games / 3, allow_rediscard_taken_card, last_discard_rule == may_take_to_knock"),  # fmt: skip
    ("must_knock", 1, "1 if the player took the last discard and must knock"),
)


def _layout() -> dict[str, tuple[int, int, str]]:
    offset, table = 0, {}
    for name, size, meaning in _BLOCKS:
        table[name] = (offset, size, meaning)
        offset += size
    return table


#: name -> (offset, size, meaning) of every block of the observation vector.
OBS_LAYOUT = _layout()
OBS_SIZE = sum(size for _, size, _ in _BLOCKS)
O_HAND, O_FACE_UP, O_PILE, O_RECENCY, O_OPP_TOOK, O_OPP_DISCARDED, O_OPP_DECLINED, O_UNSEEN = (
    OBS_LAYOUT[n][0]
    for n in ("hand", "face_up", "discard_pile", "pile_recency", "opponent_took", "opponent_discarded",
              "opponent_declined", "unseen")
)  # fmt: skip
O_DW_AFTER, O_KNOCKS, O_PHASE, O_SCALARS = (
    OBS_LAYOUT[n][0] for n in ("deadwood_after_discard", "knock_discards", "phase", "stock_size")
)
O_SHEET, O_GAMES_WON, O_RULES, O_MUST_KNOCK = (OBS_LAYOUT[n][0] for n in ("sheet", "games_won", "rules", "must_knock"))


@njit_inline
def _encode_cards(i, p, arrays, out) -> None:
    """The card planes of player p in match i (one pass over the 52 cards)."""
    ints, hands, deck, pile, took, discarded, passed = arrays[:7]
    hand, pile_len = hands[i, p], ints[i, F_PILE_LEN]
    pile_mask = 0
    for j in range(pile_len):
        card = pile[i, j]
        pile_mask |= 1 << card
        out[O_RECENCY + card] = (j + 1) / pile_len
    if pile_len > 0:
        out[O_FACE_UP + pile[i, pile_len - 1]] = 1.0
    opp_took, opp_discarded, opp_declined = took[i, 1 - p], discarded[i, 1 - p], passed[i, 1 - p]
    unseen = ((1 << 52) - 1) & ~(hand | pile_mask | opp_took)
    for c in range(52):
        out[O_HAND + c] = (hand >> c) & 1
        out[O_PILE + c] = (pile_mask >> c) & 1
        out[O_OPP_TOOK + c] = (opp_took >> c) & 1
        out[O_OPP_DISCARDED + c] = (opp_discarded >> c) & 1
        out[O_OPP_DECLINED + c] = (opp_declined >> c) & 1
        out[O_UNSEEN + c] = (unseen >> c) & 1


@njit_inline
def _encode_deadwood(i, p, arrays, params, out, scratch) -> None:
    """Own deadwood, and per discard the deadwood it leaves and whether it allows a knock."""
    ints, hands, discard_dw = arrays[0], arrays[1], arrays[14]
    hand = hands[i, p]
    if ints[i, F_PHASE] != PHASE_DISCARD or ints[i, F_PLAYER] != p:
        out[O_SCALARS + 3] = min_deadwood_mask(hand) / 100.0
        return
    deadwoods = discard_dw[i]  # the engine's, computed for the legal mask
    taken = ints[i, F_TAKEN]
    best = 1 << 30
    for c in range(52):
        if (hand >> c) & 1:
            out[O_DW_AFTER + c] = deadwoods[c] / 100.0
            if not (c == taken and params[P_ALLOW_REDISCARD] == 0):
                best = min(best, deadwoods[c])
                if deadwoods[c] <= params[P_KNOCK_LIMIT]:
                    out[O_KNOCKS + c] = 1.0
    out[O_SCALARS + 3] = best / 100.0


@njit_inline
def _encode_sheet(i, p, arrays, params, out) -> None:
    """The Hollywood score sheet from player p's side, and the rule options that change play."""
    totals, entries, game_winner = arrays[7], arrays[8], arrays[9]
    target = params[P_GAME_TARGET]
    won_own, won_opp = 0, 0
    for g in range(params[P_NUM_GAMES]):
        base = O_SHEET + 7 * g
        out[base + 0] = totals[i, g, p] / target
        out[base + 1] = totals[i, g, 1 - p] / target
        out[base + 2] = entries[i, g, p] / 10.0
        out[base + 3] = entries[i, g, 1 - p] / 10.0
        owner = game_winner[i, g]
        out[base + 4] = owner < 0
        out[base + 5] = owner == p
        out[base + 6] = owner == 1 - p
        won_own += owner == p
        won_opp += owner == 1 - p
    out[O_GAMES_WON] = won_own / 3.0
    out[O_GAMES_WON + 1] = won_opp / 3.0
    out[O_RULES + 0] = params[P_KNOCK_LIMIT] / 10.0
    out[O_RULES + 1] = params[P_GIN_BONUS] / 25.0
    out[O_RULES + 2] = params[P_UNDERCUT_BONUS] / 10.0
    out[O_RULES + 3] = target / 100.0
    out[O_RULES + 4] = params[P_UNDERCUT_ON_TIE]
    out[O_RULES + 5] = params[P_NUM_GAMES] / 3.0
    out[O_RULES + 6] = params[P_ALLOW_REDISCARD]
    out[O_RULES + 7] = params[P_LAST_DISCARD]


@njit_inline
def encode_match(i, p, arrays, params, out, scratch) -> None:
    """Write player p's observation of match i into out (float32[OBS_SIZE])."""
    ints = arrays[0]
    out[:] = 0.0
    _encode_cards(i, p, arrays, out)
    _encode_deadwood(i, p, arrays, params, out, scratch)
    _encode_sheet(i, p, arrays, params, out)
    out[O_PHASE + ints[i, F_PHASE]] = 1.0
    out[O_SCALARS + 0] = (52 - ints[i, F_STOCK_POS]) / 31.0
    out[O_SCALARS + 1] = ints[i, F_DEALER] == p
    out[O_SCALARS + 2] = p
    out[O_SCALARS + 4] = ints[i, F_TURNS] / 30.0
    out[O_SCALARS + 5] = ints[i, F_HAND_NO] / 50.0
    out[O_MUST_KNOCK] = ints[i, F_MUST_KNOCK]


@njit
def encode_kernel(players, selected, arrays, params, out_obs, out_mask) -> None:
    """For each selected match i: the observation of players[i] and its action mask (zero unless to act)."""
    ints, legal = arrays[0], arrays[13]
    scratch = np.zeros(52, dtype=np.int64)
    for i in range(ints.shape[0]):
        if not selected[i]:
            continue
        p = players[i]
        encode_match(i, p, arrays, params, out_obs[i], scratch)
        to_act = ints[i, F_PLAYER] == p
        for a in range(NUM_ACTIONS):
            out_mask[i, a] = legal[i, a] if to_act else 0


def encode_one(engine, match: int, player: int) -> dict[str, np.ndarray]:
    """The observation dict of one player in one match of an `Engine`."""
    if player not in (0, 1):
        raise ValueError(f"player={player!r} is not 0 or 1")
    n = engine.num_matches
    players = np.full(n, player, dtype=np.int64)
    selected = np.zeros(n, dtype=np.bool_)
    selected[match] = True
    obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
    encode_kernel(players, selected, engine.state.arrays(), engine.params, obs, mask)
    return {"observation": obs[match], "action_mask": mask[match]}


__all__ = ["OBS_LAYOUT", "OBS_SIZE", "KNOCK_BASE", "encode_kernel", "encode_match", "encode_one"]
