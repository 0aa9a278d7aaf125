"""The observation encoder: a pure function of (state, player) holding only what that player may know.

`OBS_BLOCKS` is the one table of the observation vector: every block's name, offset, size, scale
(what a raw value is divided by), raw upper bound and meaning. The encoder's constants, `decode`,
the heuristics' decoders (agents/_features.py), `observation_space`'s bounds (envs/spaces.py) and
the README table's test all come from it. Card planes are indexed by card id (cards.py). Nothing
here reads the opponent's hand or the stock order: the opponent's cards appear only where they were
seen (taken from the discard pile).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.state import STOCK_AFTER_DEAL, EngineState, named
from hollywood_gin_env.engine.threads import sliced
from hollywood_gin_env.rules.actions import KNOCK_BASE, NUM_ACTIONS
from hollywood_gin_env.rules.cards import FULL_DECK_MASK, NUM_CARDS
from hollywood_gin_env.rules.melds import BIG, best_deadwood_taking, count_bits, min_deadwood_mask
from hollywood_gin_env.rules.options import (
    P_ALLOW_REDISCARD,
    P_GAME_TARGET,
    P_GIN_BONUS,
    P_KNOCK_LIMIT,
    P_LAST_DISCARD,
    P_NUM_GAMES,
    P_UNDERCUT_BONUS,
    P_UNDERCUT_ON_TIE,
    Rules,
    largest_param,
)
from hollywood_gin_env.rules.scoring import MAX_GAMES
from hollywood_gin_env.support.jit import njit, njit_inline
from hollywood_gin_env.support.messages import shown_value

#: Deadwood counts are divided by this (no 11-card hand has 100 deadwood).
DEADWOOD_SCALE = 100.0
#: A hand's turns and a match's hands are divided by these typical sizes (they have no upper bound).
TURNS_SCALE = 30.0
HANDS_SCALE = 50.0
#: Sheet entries ("boxes") of one game are divided by this.
ENTRIES_SCALE = 10.0

#: The rule options of the "rules" block, in order, each with its kernel parameter and scale.
RULE_FEATURES = (
    ("knock_limit", P_KNOCK_LIMIT, 10.0),
    ("gin_bonus", P_GIN_BONUS, 25.0),
    ("undercut_bonus", P_UNDERCUT_BONUS, 10.0),
    ("game_target", P_GAME_TARGET, 100.0),
    ("undercut_on_tie", P_UNDERCUT_ON_TIE, 1.0),
    ("num_games", P_NUM_GAMES, float(MAX_GAMES)),
    ("allow_rediscard_taken_card", P_ALLOW_REDISCARD, 1.0),
    ("last_discard_rule", P_LAST_DISCARD, 1.0),  # 1 = "may_take_to_knock"
)
#: One game's 7 sheet features: scale (a string names the rule option that scales it) and raw upper bound.
SHEET_SCALES = ("game_target", "game_target", ENTRIES_SCALE, ENTRIES_SCALE, 1.0, 1.0, 1.0)
SHEET_HIGHS = (None, None, None, None, 1, 1, 1)
SHEET_PER_GAME = len(SHEET_SCALES)
#: The "take_effect" block: what taking the face-up card would do to a 10-card hand (exact meld solver).
TAKE_EFFECT_SIZE = 3
HAND_CARDS = 10


class ObsBlock(NamedTuple):
    """One block of the observation vector: obs[offset : offset + size] = raw value / scale, element-wise.

    scale and high have one entry per element; a string scale names the rule option (its value in
    the match's rules) that divides the element; high is the raw upper bound, None if unbounded.
    """

    name: str
    offset: int
    size: int
    scale: tuple[float | str, ...]
    high: tuple[float | None, ...]
    meaning: str


_CARD = (1.0, 1)  # a 0/1 card plane (or a fraction that is at most 1)
_SPEC = (
    # name, size, (scale, high) for every element or as tuples of per-element values, meaning
    ("hand", NUM_CARDS, _CARD, "1 for each card the player holds"),
    ("face_up", NUM_CARDS, _CARD, "one-hot: the upcard during the offer, else the top of the discard pile"),
    ("discard_pile", NUM_CARDS, _CARD, "1 for each card in the discard pile"),
    ("pile_recency", NUM_CARDS, _CARD, "(position + 1) / pile length for each card in the pile: 1 = top, small = old"),
    ("opponent_took", NUM_CARDS, _CARD, "cards the opponent took from the discard pile and still holds"),
    ("opponent_discarded", NUM_CARDS, _CARD, "cards the opponent discarded this hand"),
    (
        "opponent_declined",
        NUM_CARDS,
        _CARD,
        "cards the opponent passed on: a passed upcard, a top card left to draw the stock",
    ),
    (
        "unseen",
        NUM_CARDS,
        _CARD,
        "cards in the stock or the opponent's hidden cards (neither held, in the pile, nor known taken)",
    ),
    (
        "deadwood_after_discard",
        NUM_CARDS,
        (DEADWOOD_SCALE, DEADWOOD_SCALE),
        "discard phase: own deadwood / 100 after discarding each held card",
    ),
    ("knock_discards", NUM_CARDS, _CARD, "discard phase: 1 for each card whose discard allows a knock"),
    ("phase", col.NUM_PHASES, _CARD, "one-hot: offer_nondealer, offer_dealer, draw, discard, last_discard, over"),
    ("stock_size", 1, (float(STOCK_AFTER_DEAL), STOCK_AFTER_DEAL), "cards in the stock / 31"),
    ("is_dealer", 1, _CARD, "1 if the player deals this hand"),
    ("seat", 1, _CARD, "the player's id (0 or 1)"),
    (
        "deadwood",
        1,
        (DEADWOOD_SCALE, DEADWOOD_SCALE),
        "own minimum deadwood / 100 (with 11 cards: after the best discard)",
    ),
    ("turns", 1, (TURNS_SCALE, None), "draws made this hand / 30"),
    ("hand_number", 1, (HANDS_SCALE, None), "hands dealt in this match / 50"),
    (
        "sheet",
        SHEET_PER_GAME * MAX_GAMES,
        (SHEET_SCALES * MAX_GAMES, SHEET_HIGHS * MAX_GAMES),
        "per game G1..G3: own total, opponent total (/ game_target), own and opponent entries (/ 10), "
        "open, won by the player, won by the opponent",
    ),
    ("games_won", 2, (float(MAX_GAMES), MAX_GAMES), "games won by the player and by the opponent / 3"),
    (
        "rules",
        len(RULE_FEATURES),
        (tuple(scale for _, _, scale in RULE_FEATURES), tuple(largest_param(name) for name, _, _ in RULE_FEATURES)),
        "knock_limit / 10, gin_bonus / 25, undercut_bonus / 10, game_target / 100, undercut_on_tie, "
        "num_games / 3, allow_rediscard_taken_card, last_discard_rule == may_take_to_knock",
    ),
    ("must_knock", 1, _CARD, "1 if the player took the last discard and must knock"),
    (
        "take_effect",
        TAKE_EFFECT_SIZE,
        ((10.0, DEADWOOD_SCALE, 1.0), (DEADWOOD_SCALE, DEADWOOD_SCALE, 1)),
        "with 10 cards held and a face-up card: the deadwood taking it and the best discard would save / 10, the "
        "deadwood that leaves / 100, 1 if taking it lowers the deadwood (the taken card is never the discard)",
    ),
)


def _per_element(value: object, size: int) -> tuple:
    return tuple(value) if isinstance(value, tuple) else (value,) * size


def _blocks() -> tuple[ObsBlock, ...]:
    offset, blocks = 0, []
    for name, size, (scale, high), meaning in _SPEC:
        block = ObsBlock(name, offset, size, _per_element(scale, size), _per_element(high, size), meaning)
        if len(block.scale) != size or len(block.high) != size:
            raise AssertionError(f"observation block {name!r}: scale and high need {size} entries")
        blocks.append(block)
        offset += size
    return tuple(blocks)


#: Every block of the observation vector, in order.
OBS_BLOCKS = _blocks()
#: name -> (offset, size, meaning) of every block (the same table, keyed by name).
OBS_LAYOUT = {b.name: (b.offset, b.size, b.meaning) for b in OBS_BLOCKS}
OBS_SIZE = sum(b.size for b in OBS_BLOCKS)
_BY_NAME = {b.name: b for b in OBS_BLOCKS}


def _scale(name: str) -> float:
    """The one scale of a block whose elements share it."""
    (scale,) = set(_BY_NAME[name].scale)
    return float(scale)


O_HAND, O_FACE_UP, O_PILE, O_RECENCY, O_OPP_TOOK, O_OPP_DISCARDED, O_OPP_DECLINED, O_UNSEEN = (
    _BY_NAME[n].offset
    for n in (
        "hand",
        "face_up",
        "discard_pile",
        "pile_recency",
        "opponent_took",
        "opponent_discarded",
        "opponent_declined",
        "unseen",
    )
)
O_DW_AFTER, O_KNOCKS, O_PHASE = (_BY_NAME[n].offset for n in ("deadwood_after_discard", "knock_discards", "phase"))
O_STOCK_SIZE, O_IS_DEALER, O_SEAT, O_DEADWOOD, O_TURNS, O_HAND_NUMBER = (
    _BY_NAME[n].offset for n in ("stock_size", "is_dealer", "seat", "deadwood", "turns", "hand_number")
)
O_SHEET, O_GAMES_WON, O_RULES, O_MUST_KNOCK, O_TAKE_EFFECT = (
    _BY_NAME[n].offset for n in ("sheet", "games_won", "rules", "must_knock", "take_effect")
)
DW_AFTER_SCALE, STOCK_SCALE, DEADWOOD_BLOCK_SCALE = (
    _scale(n) for n in ("deadwood_after_discard", "stock_size", "deadwood")
)
TURNS_BLOCK_SCALE, HANDS_BLOCK_SCALE, GAMES_WON_SCALE = (_scale(n) for n in ("turns", "hand_number", "games_won"))
RULE_PARAMS = np.array([param for _, param, _ in RULE_FEATURES], dtype=np.int64)
RULE_SCALES = np.array(_BY_NAME["rules"].scale, dtype=np.float64)
#: Index, within the "rules" block, of each option (for decoders).
RULE_INDEX = {name: k for k, (name, _, _) in enumerate(RULE_FEATURES)}
if SHEET_SCALES[:2] != ("game_target", "game_target"):
    raise AssertionError("_encode_sheet divides the totals by the game target")


@njit_inline
def _encode_cards(i: int, p: int, s: EngineState, out: np.ndarray) -> None:
    """The card planes of player p in match i (one pass over the 52 cards)."""
    hand, pile_len = s.hands[i, p], s.match[i, col.M_PILE_LEN]
    pile_mask = 0
    for j in range(pile_len):
        card = s.pile[i, j]
        pile_mask |= 1 << card
        out[O_RECENCY + card] = (j + 1) / pile_len
    if pile_len > 0:
        out[O_FACE_UP + s.pile[i, pile_len - 1]] = 1.0
    opp_took, opp_discarded, opp_declined = s.took[i, 1 - p], s.discarded[i, 1 - p], s.declined[i, 1 - p]
    unseen = FULL_DECK_MASK & ~(hand | pile_mask | opp_took)
    for c in range(NUM_CARDS):
        out[O_HAND + c] = (hand >> c) & 1
        out[O_PILE + c] = (pile_mask >> c) & 1
        out[O_OPP_TOOK + c] = (opp_took >> c) & 1
        out[O_OPP_DISCARDED + c] = (opp_discarded >> c) & 1
        out[O_OPP_DECLINED + c] = (opp_declined >> c) & 1
        out[O_UNSEEN + c] = (unseen >> c) & 1


@njit_inline
def _encode_deadwood(i: int, p: int, s: EngineState, params: np.ndarray, out: np.ndarray) -> None:
    """Own deadwood, per discard the deadwood it leaves and whether it allows a knock, and the take effect."""
    hand = s.hands[i, p]
    if s.match[i, col.M_PHASE] != col.PHASE_DISCARD or s.match[i, col.M_PLAYER] != p:
        now = min_deadwood_mask(hand)
        out[O_DEADWOOD] = now / DEADWOOD_BLOCK_SCALE
        pile_len = s.match[i, col.M_PILE_LEN]
        if pile_len > 0 and count_bits(hand) == HAND_CARDS:
            _encode_take(hand, s.pile[i, pile_len - 1], now, out)
        return
    deadwoods = s.discard_dw[i]  # the engine's, computed for the legal mask
    taken = s.match[i, col.M_TAKEN]
    best = BIG
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            out[O_DW_AFTER + c] = deadwoods[c] / DW_AFTER_SCALE
            if not (c == taken and params[P_ALLOW_REDISCARD] == 0):
                best = min(best, deadwoods[c])
                if deadwoods[c] <= params[P_KNOCK_LIMIT]:
                    out[O_KNOCKS + c] = 1.0
    out[O_DEADWOOD] = best / DEADWOOD_BLOCK_SCALE


@njit_inline
def _encode_take(hand: int, face: int, now: int, out: np.ndarray) -> None:
    """The "take_effect" block: the best deadwood after taking `face` and discarding another card."""
    best = min(now, best_deadwood_taking(hand, face, False))
    out[O_TAKE_EFFECT] = (now - best) / 10.0
    out[O_TAKE_EFFECT + 1] = best / DEADWOOD_SCALE
    out[O_TAKE_EFFECT + 2] = 1.0 if best < now else 0.0


@njit_inline
def _encode_sheet(i: int, p: int, s: EngineState, params: np.ndarray, out: np.ndarray) -> None:
    """The Hollywood score sheet from player p's side, and the rule options that change play."""
    target = params[P_GAME_TARGET]
    won_own, won_opp = 0, 0
    for g in range(params[P_NUM_GAMES]):
        base = O_SHEET + SHEET_PER_GAME * g
        out[base + 0] = s.totals[i, g, p] / target
        out[base + 1] = s.totals[i, g, 1 - p] / target
        out[base + 2] = s.entries[i, g, p] / ENTRIES_SCALE
        out[base + 3] = s.entries[i, g, 1 - p] / ENTRIES_SCALE
        owner = s.game_winner[i, g]
        out[base + 4] = owner < 0
        out[base + 5] = owner == p
        out[base + 6] = owner == 1 - p
        won_own += owner == p
        won_opp += owner == 1 - p
    out[O_GAMES_WON] = won_own / GAMES_WON_SCALE
    out[O_GAMES_WON + 1] = won_opp / GAMES_WON_SCALE
    _encode_rules(params, out, O_RULES)


@njit_inline
def _encode_rules(params: np.ndarray, out: np.ndarray, offset: int) -> None:
    """The "rules" block, written at out[offset:]: each option of RULE_FEATURES / its scale."""
    for k in range(RULE_PARAMS.shape[0]):
        out[offset + k] = params[RULE_PARAMS[k]] / RULE_SCALES[k]


def rules_block(rules: Rules) -> np.ndarray:
    """The "rules" block (float32[len(RULE_FEATURES)]) every observation of a match under `rules` holds."""
    out = np.zeros(len(RULE_FEATURES), dtype=np.float32)
    _encode_rules(rules.to_params(), out, 0)
    return out


@njit_inline
def encode_match(i: int, p: int, s: EngineState, params: np.ndarray, out: np.ndarray) -> None:
    """Write player p's observation of match i into out (float32[OBS_SIZE])."""
    match = s.match
    out[:] = 0.0
    _encode_cards(i, p, s, out)
    _encode_deadwood(i, p, s, params, out)
    _encode_sheet(i, p, s, params, out)
    out[O_PHASE + match[i, col.M_PHASE]] = 1.0
    out[O_STOCK_SIZE] = (NUM_CARDS - match[i, col.M_STOCK_POS]) / STOCK_SCALE
    out[O_IS_DEALER] = match[i, col.M_DEALER] == p
    out[O_SEAT] = p
    out[O_TURNS] = match[i, col.M_TURNS] / TURNS_BLOCK_SCALE
    out[O_HAND_NUMBER] = match[i, col.M_HAND_NO] / HANDS_BLOCK_SCALE
    out[O_MUST_KNOCK] = match[i, col.M_MUST_KNOCK]


@njit
def encode_kernel(players, selected, arrays, params, out_obs, out_mask) -> None:
    """For each selected match i: the observation of players[i] and its action mask (zero unless to act).

    arrays is `EngineState.arrays()`; params is `Rules.to_params()`.
    """
    s = named(arrays)
    for i in range(s.match.shape[0]):
        if not selected[i]:
            continue
        p = players[i]
        encode_match(i, p, s, params, out_obs[i])
        to_act = s.match[i, col.M_PLAYER] == p
        for a in range(NUM_ACTIONS):
            out_mask[i, a] = s.legal[i, a] if to_act else 0


#: Fewest matches a thread's slice of the encoder gets (a few microseconds a match: the take_effect block's solver).
ENCODE_GRAIN = 64


def encode_rows(threads, players, selected, arrays, params, out_obs, out_mask) -> None:
    """`encode_kernel` over slices of the matches on `threads` (a threads.KernelThreads): the same output."""
    if threads.whole(players.shape[0], ENCODE_GRAIN):
        encode_kernel(players, selected, arrays, params, out_obs, out_mask)
        return

    def work(lo: int, hi: int) -> None:
        players_, selected_, arrays_, obs, mask = sliced(lo, hi, players, selected, arrays, out_obs, out_mask)
        encode_kernel(players_, selected_, arrays_, params, obs, mask)

    threads.run(players.shape[0], work, ENCODE_GRAIN)


def encode_one(engine, match: int, player: int) -> dict[str, np.ndarray]:
    """The observation dict of one player in one match of an `Engine`."""
    if player not in (0, 1):
        raise ValueError(f"player={shown_value(player)} is not 0 or 1")
    n = engine.num_matches
    players = np.full(n, player, dtype=np.int64)
    selected = np.zeros(n, dtype=np.bool_)
    selected[match] = True
    obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
    encode_kernel(players, selected, engine.arrays, engine.params, obs, mask)
    return {"observation": obs[match], "action_mask": mask[match]}


def decode(observation: np.ndarray) -> dict[str, np.ndarray]:
    """Every block of one observation vector in raw units (value * scale, float64), by block name.

    Scales that name a rule option use that option's value as decoded from the "rules" block.
    """
    obs = np.asarray(observation, dtype=np.float64)
    if obs.shape != (OBS_SIZE,):
        raise ValueError(f"an observation has shape ({OBS_SIZE},), got {obs.shape}")
    rules = _BY_NAME["rules"]
    rule_values = obs[rules.offset : rules.offset + rules.size] * np.array(rules.scale, dtype=np.float64)
    options = {name: rule_values[k] for name, k in RULE_INDEX.items()}
    out = {}
    for block in OBS_BLOCKS:
        scale = np.array([options[x] if isinstance(x, str) else x for x in block.scale], dtype=np.float64)
        out[block.name] = obs[block.offset : block.offset + block.size] * scale
    return out


def observation_high() -> np.ndarray:
    """Upper bound of every feature of the observation vector (all features are >= 0; unbounded: float32 max)."""
    unbounded = float(np.finfo(np.float32).max)
    high = np.empty(OBS_SIZE, dtype=np.float32)
    for block in OBS_BLOCKS:
        for k, (scale, top) in enumerate(zip(block.scale, block.high, strict=True)):
            high[block.offset + k] = unbounded if top is None else top / scale
    return high


__all__ = [
    "OBS_BLOCKS",
    "OBS_LAYOUT",
    "OBS_SIZE",
    "KNOCK_BASE",
    "ObsBlock",
    "decode",
    "encode_kernel",
    "encode_match",
    "encode_one",
    "observation_high",
    "rules_block",
]
