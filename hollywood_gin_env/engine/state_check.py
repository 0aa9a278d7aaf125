"""Checks of engine state that comes from outside the engine (a training checkpoint), before any kernel sees it.

The kernels and the encoder index arrays with the card ids, lengths and players they read from the state and do
not check bounds, so a tampered file could make them write anywhere. `check_engine_state` checks every array's
type, dtype and shape, every value's range, and the invariants the kernels rely on in a match in progress:
the deck is a permutation of the 52 cards; the two hands, the discard pile and the stock hold each card exactly
once; the hands hold 10 cards (11 for the player to discard); the phase fits the pile and the stock; the legal
actions and cached deadwoods are what the engine would compute. A bad state raises one ValueError naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.kernels import update_legal  # the engine's own legal-mask writer, to compare against
from hollywood_gin_env.engine.state import FIRST_STOCK_POS, HAND_SIZE, EngineState
from hollywood_gin_env.rules.cards import FULL_DECK_MASK, NUM_CARDS
from hollywood_gin_env.rules.melds import BIG
from hollywood_gin_env.rules.options import P_DEAD_STOCK
from hollywood_gin_env.rules.scoring import KIND_NAMES, MAX_GAMES, series_result
from hollywood_gin_env.support.jit import njit
from hollywood_gin_env.support.messages import shown_value

#: Counters and points (hands, turns, totals) are far below this in any match; the bound keeps sums in int64.
COUNT_MAX = 1 << 31
_CARD = (0, NUM_CARDS - 1)
_CARD_OR_NONE = (-1, NUM_CARDS - 1)
_PLAYER = (0, 1)
_PLAYER_OR_NONE = (-1, 1)
_FLAG = (0, 1)
_COUNT = (0, COUNT_MAX)
_MASK = (0, FULL_DECK_MASK)
_GAMES_MASK = (0, (1 << MAX_GAMES) - 1)

#: (low, high) of every value, per field, or per column of the three per-match arrays.
RANGES: dict[str, Any] = {
    "match": {
        col.M_PHASE: (0, col.PHASE_OVER),
        col.M_PLAYER: _PLAYER,
        col.M_DEALER: _PLAYER,
        col.M_STOCK_POS: (0, NUM_CARDS),
        col.M_PILE_LEN: (0, NUM_CARDS),
        col.M_TAKEN: _CARD_OR_NONE,
        col.M_MUST_KNOCK: _FLAG,
        col.M_WINNER: _PLAYER_OR_NONE,
        col.M_HAND_NO: _COUNT,
        col.M_TURNS: _COUNT,
    },
    "last_step": {col.S_HAND_OVER: _FLAG, col.S_DONE_NOW: _FLAG, col.S_ILLEGAL: _FLAG, col.S_DRAWN: _CARD_OR_NONE},
    "last_hand": {
        col.R_KIND: (0, len(KIND_NAMES) - 1),
        col.R_KNOCKER: _PLAYER_OR_NONE,
        col.R_WINNER: _PLAYER_OR_NONE,
        col.R_KNOCKER_DW: _COUNT,
        col.R_DEFENDER_DW: _COUNT,
        col.R_POINTS: _COUNT,
        col.R_KNOCKER_HAND: _MASK,
        col.R_DEFENDER_HAND: _MASK,
        col.R_DISCARD: _CARD,
        col.R_CREDITED: _GAMES_MASK,
        col.R_CLOSED: _GAMES_MASK,
        col.R_TURNS: _COUNT,
    },
    "hands": _MASK,
    "deck": _CARD,
    "pile": _CARD,
    "took": _MASK,
    "discarded": _MASK,
    "declined": _MASK,
    "totals": _COUNT,
    "entries": _COUNT,
    "game_winner": _PLAYER_OR_NONE,
    "game_net": (-COUNT_MAX, COUNT_MAX),
    "hand_wins": _COUNT,
    "rng": None,
    "legal": _FLAG,
    "discard_dw": (0, BIG),
}


#: The name of each column of the per-match arrays (columns.py), for messages.
COLUMN_NAMES = {
    array: {value: key for key, value in vars(col).items() if key.startswith(prefix)}
    for array, prefix in (("match", "M_"), ("last_step", "S_"), ("last_hand", "R_"))
}


def check_engine_state(arrays: Mapping[str, Any], num_matches: int, params: np.ndarray) -> EngineState:
    """The arrays as an `EngineState` of num_matches matches under params (`Rules.to_params()`); ValueError naming
    the field (and the match) of the first thing that is wrong. Nothing is written anywhere."""
    state = _typed(arrays, num_matches)
    _check_ranges(state)
    _check_matches_in_progress(state, params)
    _check_derived(state, params)
    return state


def _typed(arrays: Mapping[str, Any], num_matches: int) -> EngineState:
    """Each field as an array of the engine's dtype and shape."""
    if not isinstance(arrays, Mapping):
        raise ValueError(f"engine state must be a dict of arrays, got {type(arrays).__name__}")
    template = EngineState.allocate(1)
    names = set(EngineState._fields)
    unknown, missing = sorted(set(arrays) - names, key=str), sorted(names - set(arrays))
    if unknown or missing:
        what = f"unknown field {shown_value(unknown[0])}" if unknown else f"missing field {shown_value(missing[0])}"
        raise ValueError(f"engine state: {what}; the fields are {', '.join(EngineState._fields)}")
    fields = {}
    for name, model in template._asdict().items():
        array, shape = arrays[name], (num_matches, *model.shape[1:])
        if not isinstance(array, np.ndarray) or array.dtype != model.dtype or array.shape != shape:
            found = f"{array.dtype}{list(array.shape)}" if isinstance(array, np.ndarray) else type(array).__name__
            raise ValueError(
                f"engine state field {shown_value(name)} must be an array of dtype {model.dtype} and shape {shape}, "
                f"got {found}"
            )
        fields[name] = array
    return EngineState(**fields)


def _bad(field: str, bad: np.ndarray, what: str, kind: str = "engine") -> None:
    """Raise for the first match flagged in bad (bool[N], or bool[N, ...])."""
    rows = np.flatnonzero(bad.reshape(bad.shape[0], -1).any(axis=1))
    if rows.size:
        raise ValueError(f"{kind} state field {shown_value(field)}, match {int(rows[0])}: {what}")


def _check_ranges(state: EngineState) -> None:
    for name, bounds in RANGES.items():
        array = getattr(state, name)
        columns = bounds.items() if isinstance(bounds, dict) else [(Ellipsis, bounds)] if bounds else []
        for column, (low, high) in columns:
            values = array[:, column]
            where = "" if column is Ellipsis else f" of column {COLUMN_NAMES[name][column]}"
            _bad(name, (values < low) | (values > high), f"values{where} must lie in {low}..{high}")


def _popcount(masks: np.ndarray) -> np.ndarray:
    """Cards in each int64 mask (numpy < 2 has no bitwise_count)."""
    as_bytes = np.ascontiguousarray(masks, dtype="<i8").view(np.uint8).reshape(*masks.shape, 8)
    return np.unpackbits(as_bytes, axis=-1).sum(axis=-1).astype(np.int64)


def _row_masks(cards: np.ndarray, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, count) per row of the cards where keep (cards in 0..51)."""
    bits = np.where(keep, np.left_shift(np.int64(1), cards), 0)
    return np.bitwise_or.reduce(bits, axis=1), keep.sum(axis=1)


def _check_matches_in_progress(state: EngineState, params: np.ndarray) -> None:
    """Where a match is in progress: the phase's invariants, then the 52 cards."""
    live = state.match[:, col.M_PHASE] != col.PHASE_OVER
    for field, bad, what in (*_phase_problems(state, params), *_card_problems(state)):
        _bad(field, live.reshape(-1, *([1] * (bad.ndim - 1))) & bad, what)


def _phase_problems(state: EngineState, params: np.ndarray) -> list[tuple[str, np.ndarray, str]]:
    """(field, bool per match, what must hold) of the phase, the pile and the stock of a match in progress."""
    m = state.match
    phase, pile_len, stock_pos = m[:, col.M_PHASE], m[:, col.M_PILE_LEN], m[:, col.M_STOCK_POS]
    stock, dead_stock, offer = NUM_CARDS - stock_pos, params[P_DEAD_STOCK], phase <= col.PHASE_OFFER_DEALER
    other_phase = phase != col.PHASE_DISCARD
    return [
        ("match", stock_pos < FIRST_STOCK_POS, f"col.M_STOCK_POS of a match in progress is {FIRST_STOCK_POS} or more"),
        ("match", m[:, col.M_WINNER] != -1, "a match in progress has no winner (col.M_WINNER -1)"),
        ("match", m[:, col.M_HAND_NO] < 1, "a match in progress has dealt a hand (col.M_HAND_NO 1 or more)"),
        (
            "match",
            offer & ((pile_len != 1) | (stock_pos != FIRST_STOCK_POS)),
            "during the upcard offer the pile holds the upcard only and the stock is whole",
        ),
        ("match", other_phase & (pile_len < 1), "the discard pile is empty outside the discard phase"),
        ("match", (phase == col.PHASE_DRAW) & (stock <= dead_stock), "the draw phase has no stock left to draw from"),
        ("match", (phase == col.PHASE_LAST_DISCARD) & (stock > dead_stock), "the last-discard phase has stock left"),
        (
            "match",
            other_phase & ((m[:, col.M_TAKEN] != -1) | (m[:, col.M_MUST_KNOCK] != 0)),
            "col.M_TAKEN is -1 and col.M_MUST_KNOCK 0 outside the discard phase",
        ),
        ("game_winner", ~_undecided(state, params), "a match in progress is already decided"),
    ]


def _card_problems(state: EngineState) -> list[tuple[str, np.ndarray, str]]:
    """(field, bool per match, what must hold) of where the 52 cards are in a match in progress."""
    m = state.match
    player, taken, discarding = m[:, col.M_PLAYER], m[:, col.M_TAKEN], m[:, col.M_PHASE] == col.PHASE_DISCARD
    rows = np.arange(m.shape[0])
    own, other = state.hands[rows, player], state.hands[rows, 1 - player]
    pile, pile_count = _row_masks(state.pile, np.arange(NUM_CARDS) < m[:, col.M_PILE_LEN, None])
    stock, _ = _row_masks(state.deck, np.arange(NUM_CARDS) >= m[:, col.M_STOCK_POS, None])
    parts = (own, other, pile, stock)
    counts = sum(_popcount(p) for p in parts)
    union = own | other | pile | stock
    return [
        ("deck", np.sort(state.deck, axis=1) != np.arange(NUM_CARDS), "not all 52 cards once"),
        (
            "hands",
            (_popcount(own) != HAND_SIZE + discarding) | (_popcount(other) != HAND_SIZE),
            "the hands must hold 10 cards each (11 for the player to discard)",
        ),
        (
            "hands",
            (union != FULL_DECK_MASK) | (counts != NUM_CARDS) | (pile_count != _popcount(pile)),
            "the hands, the discard pile (col.M_PILE_LEN long) and the stock must hold each card exactly once",
        ),
        (
            "match",
            discarding & (taken >= 0) & ((own >> np.maximum(taken, 0)) & 1 == 0),
            "the card taken this turn (col.M_TAKEN) is not in the hand",
        ),
        ("took", state.took & ~state.hands != 0, "a card taken from the pile is not in the hand"),
    ]


def _undecided(state: EngineState, params: np.ndarray) -> np.ndarray:
    out = np.zeros(state.match.shape[0], dtype=np.bool_)
    _undecided_kernel(state.game_winner, state.game_net, params, out)
    return out


@njit
def _undecided_kernel(game_winner, game_net, params, out) -> None:
    for i in range(game_winner.shape[0]):
        out[i] = series_result(game_winner[i], game_net[i], params) < 0


@njit
def _legal_kernel(match, hands, legal, discard_dw, params) -> None:
    for i in range(match.shape[0]):
        update_legal(i, match, hands, legal, discard_dw, params)


def _check_derived(state: EngineState, params: np.ndarray) -> None:
    """The legal masks and the discard phase's cached deadwoods equal what the engine computes from the rest."""
    legal = np.zeros_like(state.legal)
    discard_dw = state.discard_dw.copy()
    _legal_kernel(state.match, state.hands, legal, discard_dw, params)
    _bad("legal", legal != state.legal, "the legal actions differ from the engine's for this state")
    changed = (state.match[:, col.M_PHASE] == col.PHASE_DISCARD)[:, None] & (discard_dw != state.discard_dw)
    _bad("discard_dw", changed, "the deadwood after each discard differs from the engine's")


def check_counters(decision_step: Any, step: Any, num_matches: int) -> tuple[np.ndarray, int]:
    """SelfPlayVectorEnv's counters: decision_step int64[N, 2] in -1..step-1, step an int >= 0."""
    if type(step) is not int and not (isinstance(step, np.integer) and not isinstance(step, np.bool_)):
        raise ValueError(f"env state field 'step' must be an integer, got {shown_value(step)}")
    if not 0 <= step < COUNT_MAX**2:
        raise ValueError(f"env state field 'step'={step} must lie in 0..{COUNT_MAX**2 - 1}")
    shape, array = (num_matches, 2), decision_step
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "iu" or array.shape != shape:
        found = f"{array.dtype}{list(array.shape)}" if isinstance(array, np.ndarray) else type(array).__name__
        raise ValueError(f"env state field 'decision_step' must be an integer array of shape {shape}, got {found}")
    _bad("decision_step", (array < -1) | (array >= step), f"values must lie in -1..{int(step) - 1}", kind="env")
    return array.astype(np.int64), int(step)
