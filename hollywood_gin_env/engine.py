"""`Engine`: N independent Hollywood Gin matches advanced together by the numba kernels.

Python does O(1) numpy work per call; every loop over matches runs inside a kernel. A match is one
series (R37); when it is over its phase is PHASE_OVER until `new_matches` starts it again.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np

from hollywood_gin_env.cards import NUM_CARDS, as_cards, card_name
from hollywood_gin_env.compile_notice import announce_first_compile
from hollywood_gin_env.kernels import new_match_kernel, step_kernel
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import (
    F_DONE_NOW,
    F_HAND_OVER,
    F_ILLEGAL,
    F_PHASE,
    F_PLAYER,
    NUM_ACTIONS,
    PHASE_OVER,
    EngineState,
)

SEED_MASK = (1 << 64) - 1


def _overflow_ok() -> contextlib.AbstractContextManager:
    """Wrap-around uint64 arithmetic is intended; plain Python (NUMBA_DISABLE_JIT=1) would warn."""
    return np.errstate(over="ignore") if numba.config.DISABLE_JIT else contextlib.nullcontext()


def check_deck(deck: object) -> np.ndarray:
    """A fixed deck as 52 distinct card ids (card strings accepted); ValueError otherwise."""
    cards = as_cards(deck)  # type: ignore[arg-type]
    if len(cards) != NUM_CARDS:
        raise ValueError(f"a deck must hold all 52 cards once, got {len(cards)} cards")
    return np.asarray(cards, dtype=np.int64)


class Engine:
    """N matches as struct-of-arrays state (`self.state`), stepped by numba kernels."""

    def __init__(self, num_matches: int, rules: Rules | None = None) -> None:
        if num_matches < 1:
            raise ValueError(f"num_matches={num_matches!r} must be at least 1")
        self.num_matches = num_matches
        self.rules = rules if rules is not None else Rules()
        if not isinstance(self.rules, Rules):
            raise ValueError(f"rules={self.rules!r} is not a hollywood_gin_env.Rules")
        self.params = self.rules.to_params()
        announce_first_compile()  # before the first kernel call compiles for 15-40 s on a cold cache
        self.state = EngineState.allocate(num_matches)
        self.state.ints[:, F_PHASE] = PHASE_OVER
        self._all = np.ones(num_matches, dtype=np.bool_)

    def new_matches(
        self,
        selected: np.ndarray | None = None,
        seeds: np.ndarray | None = None,
        first_dealers: np.ndarray | None = None,
        decks: np.ndarray | None = None,
    ) -> None:
        """Start new matches where `selected` (default all).

        seeds (uint64 per match, or None to continue each match's random stream), first_dealers
        (-1 = random, R2) and decks (a fixed first deal per match; rows of -1 are shuffled) are
        read only where selected.
        """
        n = self.num_matches
        selected = self._all if selected is None else np.asarray(selected, dtype=np.bool_)
        reseed = np.zeros(n, dtype=np.bool_) if seeds is None else np.ones(n, dtype=np.bool_)
        seeds = np.zeros(n, dtype=np.uint64) if seeds is None else np.asarray(seeds).astype(np.uint64)
        dealers = np.full(n, -1, dtype=np.int64) if first_dealers is None else np.asarray(first_dealers, np.int64)
        use_deck = np.zeros(n, dtype=np.bool_)
        if decks is not None:
            decks = np.asarray(decks, dtype=np.int64)
            use_deck = (decks[:, 0] >= 0) & selected
            self.state.deck[use_deck] = decks[use_deck]
        with _overflow_ok():
            new_match_kernel(selected, seeds, reseed, dealers, use_deck, self.state.arrays(), self.params)

    def step(self, actions: np.ndarray, active: np.ndarray | None = None) -> None:
        """Apply one action per active match; see `illegal` for the matches whose action was refused."""
        actions = np.asarray(actions, dtype=np.int64)
        active = self._all if active is None else np.asarray(active, dtype=np.bool_)
        with _overflow_ok():
            step_kernel(actions, active, self.params, self.state.arrays())

    @property
    def legal_mask(self) -> np.ndarray:
        """int8[N, 107]: the legal actions of each match's player to act (all zero once it is over)."""
        return self.state.legal

    @property
    def current_player(self) -> np.ndarray:
        """int64[N]: the player to act in each match."""
        return self.state.ints[:, F_PLAYER]

    @property
    def done(self) -> np.ndarray:
        """bool[N]: the match (series) is over."""
        return self.state.ints[:, F_PHASE] == PHASE_OVER

    @property
    def done_now(self) -> np.ndarray:
        """bool[N]: the last step ended the match."""
        return self.state.ints[:, F_DONE_NOW] == 1

    @property
    def hand_over(self) -> np.ndarray:
        """bool[N]: the last step ended a hand (the next one is dealt already unless the match ended)."""
        return self.state.ints[:, F_HAND_OVER] == 1

    @property
    def illegal(self) -> np.ndarray:
        """bool[N]: the last action given to the match was illegal and changed nothing."""
        return self.state.ints[:, F_ILLEGAL] == 1


def describe_action(action: int) -> str:
    """Readable name of an action id, e.g. 'discard 7H' or 'knock TD'."""
    if not 0 <= action < NUM_ACTIONS:
        return f"action {action} (outside 0..{NUM_ACTIONS - 1})"
    if action < 3:
        return ("draw stock", "take face-up card", "pass")[action]
    if action < 55:
        return f"discard {card_name(action - 3)}"
    return f"knock {card_name(action - 55)}"
