"""The state's column indices and codes, read as `col.M_PHASE` after `from hollywood_gin_env.engine import columns as
col`: `match[i, col.M_*]` (the match in progress), `last_step[i, col.S_*]` (what the last step did),
`last_hand[i, col.R_*]` (the result of the hand that ended last), and the `col.PHASE_*` values of the phase column.

numba freezes a module's integer attributes as constants when it compiles a kernel, so `col.M_PHASE` costs what the
literal costs (benchmarks/README.md).
"""

from __future__ import annotations

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
