"""The engine's struct-of-arrays state for N matches: named arrays and columns, phases, actions, the deal.

`EngineState` is a named tuple of arrays, so the numba kernels read the same names as Python
(`s.hands[i, p]`, `s.match[i, M_PHASE]`). The per-match integers are split by what they describe:
`match` (the match in progress), `last_step` (what the last `Engine.step` did) and `last_hand`
(the result of the hand that ended last). README, "Glossary", defines match, game, hand, turn.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from hollywood_gin_env._jit import njit_inline
from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.scoring import MAX_GAMES

# Actions (docs/ENVIRONMENTS.md): Discrete(107).
NUM_ACTIONS = 107
ACTION_DRAW_STOCK = 0
ACTION_TAKE = 1
ACTION_PASS = 2
ACTION_NAMES = ("draw stock", "take face-up card", "pass")  # of the three actions below DISCARD_BASE
DISCARD_BASE = 3  # 3 + c: discard card c
KNOCK_BASE = DISCARD_BASE + NUM_CARDS  # 55 + c: knock, discarding card c

# The deal (R3): ten cards each, dealt alternately from the top of the deck, then the upcard; the rest is the stock.
HAND_SIZE = 10
UPCARD_POS = 2 * HAND_SIZE  # deck index of the upcard
FIRST_STOCK_POS = UPCARD_POS + 1  # deck index of the first stock card
STOCK_AFTER_DEAL = NUM_CARDS - FIRST_STOCK_POS  # 31 cards

# Phases: who acts and what they may do.
PHASE_OFFER_NONDEALER = 0  # take (1) or pass (2) the upcard (R6a)
PHASE_OFFER_DEALER = 1  # take (1) or pass (2) the upcard (R6c)
PHASE_DRAW = 2  # draw from the stock (0) or take the top discard (1)
PHASE_DISCARD = 3  # discard (3 + c) or knock (55 + c)
PHASE_LAST_DISCARD = 4  # "may_take_to_knock": take the last discard to knock (1), or let the hand die (2)
PHASE_OVER = 5  # the match is over
PHASE_NAMES = ("offer_nondealer", "offer_dealer", "draw", "discard", "last_discard", "over")
NUM_PHASES = len(PHASE_NAMES)

# The match in progress: match[i, M_*].
M_PHASE = 0
M_PLAYER = 1  # the player to act
M_DEALER = 2
M_STOCK_POS = 3  # deck index of the top stock card; the stock is deck[i, M_STOCK_POS:]
M_PILE_LEN = 4
M_TAKEN = 5  # the card taken from the discard pile this turn, or -1 (R9)
M_MUST_KNOCK = 6  # 1 after taking the last discard under "may_take_to_knock"
M_WINNER = 7  # the match winner once the match is over, else -1
M_HAND_NO = 8  # hands dealt in this match, the current one included
M_TURNS = 9  # turns begun in the current hand: each begins with a draw (the forced one after two passes too)
NUM_MATCH_FIELDS = 10

# What the last step did to each match: last_step[i, S_*]; every step rewrites them, also where a match sat out.
S_HAND_OVER = 0  # 1 if the step ended a hand (the next one is already dealt unless the match ended)
S_DONE_NOW = 1  # 1 if the step ended the match
S_ILLEGAL = 2  # 1 if the action given to this match was illegal (state unchanged)
S_DRAWN = 3  # the card the step drew from the stock (also the forced draw after two passes), or -1
NUM_STEP_FIELDS = 4

# The result of the hand that ended last: last_hand[i, R_*].
R_KIND = 0  # scoring.KIND_*
R_KNOCKER = 1  # -1 for a dead hand
R_WINNER = 2  # the player who scored, -1 for a dead hand
R_KNOCKER_DW = 3
R_DEFENDER_DW = 4
R_POINTS = 5
R_KNOCKER_HAND = 6  # the knocker's 10 cards after the knock discard (mask)
R_DEFENDER_HAND = 7
R_DISCARD = 8  # the knock discard
R_CREDITED = 9  # games credited (bit mask)
R_CLOSED = 10  # games closed by the hand (bit mask)
R_TURNS = 11  # turns of the hand
NUM_HAND_FIELDS = 12


class EngineState(NamedTuple):
    """All arrays of N matches; leading axis N everywhere. Kernels take `arrays()` and rebuild the names."""

    match: np.ndarray  # int64[N, NUM_MATCH_FIELDS]
    last_step: np.ndarray  # int64[N, NUM_STEP_FIELDS]
    last_hand: np.ndarray  # int64[N, NUM_HAND_FIELDS]
    hands: np.ndarray  # int64[N, 2] card masks
    deck: np.ndarray  # int64[N, 52] the current deal's deck order (R3)
    pile: np.ndarray  # int64[N, 52] the discard pile, bottom first
    took: np.ndarray  # int64[N, 2] cards each player took from the pile and still holds (public)
    discarded: np.ndarray  # int64[N, 2] cards each player discarded this hand (public)
    declined: np.ndarray  # int64[N, 2] cards each player declined: a passed upcard, a top card left for the stock
    totals: np.ndarray  # int64[N, 3, 2]
    entries: np.ndarray  # int64[N, 3, 2]
    game_winner: np.ndarray  # int64[N, 3], -1 while open
    game_net: np.ndarray  # int64[N, 3]
    hand_wins: np.ndarray  # int64[N, 2] hands won this match
    rng: np.ndarray  # uint64[N] per-match random state (splitmix64)
    legal: np.ndarray  # int8[N, 107] legal actions of the player to act
    discard_dw: np.ndarray  # int64[N, 52] in the discard phase: deadwood after each discard of the player to act

    @classmethod
    def allocate(cls, n: int) -> EngineState:
        """Zeroed arrays for n matches."""

        def z(*shape: int) -> np.ndarray:
            return np.zeros((n, *shape), dtype=np.int64)

        return cls(
            match=z(NUM_MATCH_FIELDS),
            last_step=z(NUM_STEP_FIELDS),
            last_hand=z(NUM_HAND_FIELDS),
            hands=z(2),
            deck=z(NUM_CARDS),
            pile=z(NUM_CARDS),
            took=z(2),
            discarded=z(2),
            declined=z(2),
            totals=z(MAX_GAMES, 2),
            entries=z(MAX_GAMES, 2),
            game_winner=z(MAX_GAMES),
            game_net=z(MAX_GAMES),
            hand_wins=z(2),
            rng=np.zeros(n, dtype=np.uint64),
            legal=np.zeros((n, NUM_ACTIONS), dtype=np.int8),
            discard_dw=z(NUM_CARDS),
        )

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays as a plain tuple, as the kernels take them (see `named`)."""
        return tuple(self)

    def sheet(self) -> tuple[np.ndarray, ...]:
        """The score sheet as `envs.batch.credit` reads it: (totals, entries, game_winner, game_net, hand_wins)."""
        return self.totals, self.entries, self.game_winner, self.game_net, self.hand_wins

    def copy_match(self, src: int, dst: EngineState, dst_index: int) -> None:
        """Copy match src of this state into match dst_index of dst."""
        for mine, theirs in zip(self, dst, strict=True):
            theirs[dst_index] = mine[src]


@njit_inline
def named(arrays: tuple) -> EngineState:
    """The `EngineState` of a plain tuple of its arrays, inside a kernel.

    Kernels take the plain tuple: numba's dispatcher types a plain tuple of arrays faster than a
    named one, and a step calls a kernel several times. Inlined, the rebuild costs nothing.
    """
    return EngineState(*arrays)
