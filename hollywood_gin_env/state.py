"""The engine's struct-of-arrays state for N matches: field indices, phases, actions, allocation."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hollywood_gin_env.scoring import MAX_GAMES

# Actions (DESIGN.md): Discrete(107).
NUM_ACTIONS = 107
ACTION_DRAW_STOCK = 0
ACTION_TAKE = 1
ACTION_PASS = 2
DISCARD_BASE = 3
KNOCK_BASE = 55

# Phases: who acts and what they may do.
PHASE_OFFER_NONDEALER = 0  # take (1) or pass (2) the upcard (R6a)
PHASE_OFFER_DEALER = 1  # take (1) or pass (2) the upcard (R6c)
PHASE_DRAW = 2  # draw from the stock (0) or take the top discard (1)
PHASE_DISCARD = 3  # discard (3 + c) or knock (55 + c)
PHASE_LAST_DISCARD = 4  # "may_take_to_knock": take the last discard to knock (1), or let the hand die (2)
PHASE_OVER = 5  # the match (series) is over
PHASE_NAMES = ("offer_nondealer", "offer_dealer", "draw", "discard", "last_discard", "over")

# Per-match integer fields: ints[i, F_*].
F_PHASE = 0
F_PLAYER = 1  # the player to act
F_DEALER = 2
F_STOCK_POS = 3  # deck index of the top stock card; the stock is deck[i, F_STOCK_POS:]
F_PILE_LEN = 4
F_TAKEN = 5  # the card taken from the discard pile this turn, or -1 (R9)
F_MUST_KNOCK = 6  # 1 after taking the last discard under "may_take_to_knock"
F_WINNER = 7  # the series winner once the match is over, else -1
F_HAND_NO = 8  # hands dealt in this match, the current one included
F_TURNS = 9  # draws made in the current hand
F_HAND_OVER = 10  # 1 if the last step ended a hand (the next one is already dealt)
F_R_KIND = 11  # result of the last hand: scoring.KIND_*
F_R_KNOCKER = 12
F_R_WINNER = 13  # the player who scored, -1 for a dead hand
F_R_KNOCKER_DW = 14
F_R_DEFENDER_DW = 15
F_R_POINTS = 16
F_R_KNOCKER_HAND = 17  # the knocker's 10 cards after the knock discard (mask)
F_R_DEFENDER_HAND = 18
F_R_DISCARD = 19  # the knock discard
F_R_CREDITED = 20  # games credited (bit mask)
F_R_CLOSED = 21  # games closed by the hand (bit mask)
F_R_TURNS = 22  # draws made in the hand that ended
F_DONE_NOW = 23  # 1 if the last step ended the match
F_ILLEGAL = 24  # 1 if the last action given to this match was illegal (state unchanged)
F_DRAWN = 25  # the card the last step drew from the stock (also the forced draw after two passes), or -1
NUM_FIELDS = 26


@dataclass
class EngineState:
    """All arrays of N matches; leading axis N everywhere."""

    ints: np.ndarray  # int64[N, NUM_FIELDS]
    hands: np.ndarray  # int64[N, 2] card masks
    deck: np.ndarray  # int64[N, 52] the current deal's deck order (R3)
    pile: np.ndarray  # int64[N, 52] the discard pile, bottom first
    took: np.ndarray  # int64[N, 2] cards each player took from the pile and still holds (public)
    discarded: np.ndarray  # int64[N, 2] cards each player discarded this hand (public)
    passed: np.ndarray  # int64[N, 2] cards each player declined: a passed upcard, a top card left for the stock
    totals: np.ndarray  # int64[N, 3, 2]
    entries: np.ndarray  # int64[N, 3, 2]
    game_winner: np.ndarray  # int64[N, 3], -1 while open
    game_net: np.ndarray  # int64[N, 3]
    hand_wins: np.ndarray  # int64[N, 2] hands won this series
    rng: np.ndarray  # uint64[N] per-match random state (splitmix64)
    legal: np.ndarray  # int8[N, 107] legal actions of the player to act
    discard_dw: np.ndarray  # int64[N, 52] in the discard phase: deadwood after each discard of the player to act

    @classmethod
    def allocate(cls, n: int) -> EngineState:
        """Zeroed arrays for n matches."""

        def z(*shape: int) -> np.ndarray:
            return np.zeros((n, *shape), dtype=np.int64)

        return cls(
            ints=z(NUM_FIELDS), hands=z(2), deck=z(52), pile=z(52), took=z(2), discarded=z(2),
            passed=z(2), totals=z(MAX_GAMES, 2), entries=z(MAX_GAMES, 2), game_winner=z(MAX_GAMES),
            game_net=z(MAX_GAMES), hand_wins=z(2), rng=np.zeros(n, dtype=np.uint64),
            legal=np.zeros((n, NUM_ACTIONS), dtype=np.int8), discard_dw=z(52),
        )  # fmt: skip

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arrays in the order the kernels take them."""
        return (
            self.ints, self.hands, self.deck, self.pile, self.took, self.discarded, self.passed,
            self.totals, self.entries, self.game_winner, self.game_net, self.hand_wins, self.rng, self.legal,
            self.discard_dw,
        )  # fmt: skip

    def copy_match(self, src: int, dst: EngineState, dst_index: int) -> None:
        """Copy match src of this state into match dst_index of dst."""
        for mine, theirs in zip(self.arrays(), dst.arrays(), strict=True):
            theirs[dst_index] = mine[src]
