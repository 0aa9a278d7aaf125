"""What a privileged critic sees beyond the player's observation, read from the engine: the opponent's hand and
deadwood, who the opponent is (one column per entry of `selfplay.opponents`, so each opponent of the mix is told
apart), the score of `expert` playing the hand's deal out against itself, and the next stock cards in order.

Training only (`model.critic = "privileged"`): the value head is a baseline for PPO's advantages, never used to act,
so it may read the engine's hidden cards. A baseline that depends on the state but not on the action keeps the policy
gradient unbiased, and one that knows the opponent's hand and the stock explains much more of a hand's outcome (the
variance the player-view critic cannot remove): with the whole stock in view and a deterministic opponent, what is
left of a hand's outcome is the learner's own sampled actions. An MLP does not learn to play a hand out from its
cards (docs/RESEARCH.md), so the view also gives the result of one such play-out: `expert` for both seats from the
deal, on the same stock (`expert_deal_scores`, once a hand; `expert` is deterministic, so it is exact). Both read the
matches through the env's `engine` (its `state` and `params`); the envs offer only what a player may know, and the
shipped policy reads the observation only.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.agents.expert import SCRATCH_SHAPE, expert_row
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine, overflow_ok
from hollywood_gin_env.engine.kernels import step_match
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_match
from hollywood_gin_env.engine.state import EngineState, named
from hollywood_gin_env.engine.threads import KernelThreads, kernel_threads, sliced
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.rules.melds import min_deadwood_mask
from hollywood_gin_env.support.jit import njit
from hollywood_gin_trainer.config import MAX_OPPONENTS

#: Fewest matches a thread's slice of the privileged view gets (a fraction of a microsecond a row).
VIEW_GRAIN = 256
#: Fewest matches a thread's slice of the play-outs gets: a hand's play-out costs about a millisecond.
PLAYOUT_GRAIN = 1
#: Decisions a play-out may take: a hand ends within 2 * 31 draws and their discards, far below this.
MAX_PLAYOUT_DECISIONS = 400

OPPONENT_HAND, OPPONENT_DEADWOOD, OPPONENT_KIND = 0, NUM_CARDS, NUM_CARDS + 1
# then one column per entry of selfplay.opponents (opponents.py's codes: who the opponent is), the player's score / 100
# in expert's play-out of the deal (0: none), then one one-hot of 52 per stock card, the top card first
MAX_STOCK_CARDS = NUM_CARDS - 21  # the stock after the deal (R3): 31 cards


def deal_playout_column(opponents: int) -> int:
    """The column of the deal's play-out score in a view of `opponents` "who" columns."""
    return OPPONENT_KIND + opponents


def stock_column(opponents: int) -> int:
    """The first column of the stock cards' one-hots in a view of `opponents` "who" columns."""
    return deal_playout_column(opponents) + 1


def privileged_view_size(stock_cards: int, opponents: int) -> int:
    """Columns of a privileged view that shows the next `stock_cards` stock cards and says which of `opponents`
    entries (selfplay.opponents') the opponent is."""
    if not 1 <= stock_cards <= MAX_STOCK_CARDS:
        raise ValueError(f"stock_cards={stock_cards!r}: must lie in 1..{MAX_STOCK_CARDS}")
    if not 1 <= opponents <= MAX_OPPONENTS:
        raise ValueError(f"opponents={opponents!r}: must lie in 1..{MAX_OPPONENTS} (selfplay.opponents' entries)")
    return stock_column(opponents) + stock_cards * NUM_CARDS


@njit
def privileged_view_kernel(
    players: np.ndarray,
    kinds: np.ndarray,
    deal: np.ndarray,
    hands: np.ndarray,
    deck: np.ndarray,
    match: np.ndarray,
    stock_cards: int,
    opponents: int,
    out: np.ndarray,
) -> None:
    """out[i] = the privileged view of players[i] in match i (module docstring); kinds[i] is the opponent's code,
    0..opponents-1 its column (a self-play match where "self" has no entry, -1, sets none), deal[i] seat 0's score in
    the play-out of the deal."""
    playout, stock = OPPONENT_KIND + opponents, OPPONENT_KIND + opponents + 1
    for i in range(players.shape[0]):
        out[i, :] = 0.0
        opponent = hands[i, 1 - players[i]]
        for c in range(NUM_CARDS):
            if (opponent >> c) & 1:
                out[i, OPPONENT_HAND + c] = 1.0
        out[i, OPPONENT_DEADWOOD] = min_deadwood_mask(opponent) / 100.0
        if 0 <= kinds[i] < opponents:
            out[i, OPPONENT_KIND + kinds[i]] = 1.0
        out[i, playout] = (deal[i] if players[i] == 0 else -deal[i]) / 100.0
        position = match[i, col.M_STOCK_POS]
        for k in range(stock_cards):
            if 0 <= position + k < NUM_CARDS:
                out[i, stock + k * NUM_CARDS + deck[i, position + k]] = 1.0


def privileged_view(
    engine: Engine,
    players: np.ndarray,
    kinds: np.ndarray,
    deal: np.ndarray,
    stock_cards: int,
    opponents: int,
    threads: KernelThreads | None = None,
) -> np.ndarray:
    """float32[N, privileged_view_size(stock_cards, opponents)]: the privileged view of players[i] in each match of
    `engine`, whose opponent is code kinds[i] (opponents.py's: an entry of selfplay.opponents, of `opponents`, or -1)
    and whose deal's play-out gave seat 0 deal[i] points; over slices of the matches on `threads` (default: the
    process's shared threads), the same for every count."""
    out = np.empty((players.shape[0], privileged_view_size(stock_cards, opponents)), dtype=np.float32)
    players = np.ascontiguousarray(players, dtype=np.int64)
    kinds = np.ascontiguousarray(kinds, dtype=np.int64)
    deal = np.ascontiguousarray(deal, dtype=np.float64)
    state = engine.state
    hands, deck, match = state.hands, state.deck, state.match

    def work(lo: int, hi: int) -> None:
        privileged_view_kernel(
            players[lo:hi],
            kinds[lo:hi],
            deal[lo:hi],
            hands[lo:hi],
            deck[lo:hi],
            match[lo:hi],
            stock_cards,
            opponents,
            out[lo:hi],
        )

    (kernel_threads() if threads is None else threads).run(out.shape[0], work, VIEW_GRAIN)
    return out


@njit
def expert_playout_kernel(arrays, params, weights, seats, values, max_decisions: int) -> None:
    """Each unfinished match i: `expert` (weights) plays both seats until the hand ends (at most max_decisions
    decisions); values[i] = the hand's points for seats[i] (won +, lost -, dead 0). One compiled loop per match: the
    encoder (`encode_match`), the expert's decision (`expert_row`) and the engine step (`step_match`)."""
    s = named(arrays)
    obs = np.zeros(OBS_SIZE, dtype=np.float32)
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    for i in range(s.match.shape[0]):
        for _ in range(max_decisions):
            if s.match[i, col.M_PHASE] == col.PHASE_OVER:
                break
            player = s.match[i, col.M_PLAYER]
            encode_match(i, player, s, params, obs)
            for a in range(NUM_ACTIONS):
                mask[a] = s.legal[i, a]  # the mask of the player to act, as the encoder writes it
            step_match(i, expert_row(obs, mask, weights, scratch), True, s, params)
            if s.last_step[i, col.S_HAND_OVER] == 1:
                winner = s.last_hand[i, col.R_WINNER]
                sign = 1.0 if winner == seats[i] else (0.0 if winner < 0 else -1.0)
                values[i] = sign * s.last_hand[i, col.R_POINTS]
                break


def expert_deal_scores(engine: Engine, rows: np.ndarray, weights: np.ndarray, threads: KernelThreads) -> np.ndarray:
    """float64[len(rows)]: seat 0's score of the current hand (won +, lost -, dead 0) when `expert` (its `weights`)
    plays both seats of match rows[i] of `engine` from now to the hand's end, on its own stock; played on copies of
    the matches (the engine is left as it is), over slices of them on `threads`."""
    copy = EngineState(*(array[rows] for array in engine.state))  # fancy indexing copies
    arrays, params = copy.arrays(), engine.params
    seats = np.zeros(len(rows), dtype=np.int64)
    values = np.zeros(len(rows))

    def work(lo: int, hi: int) -> None:
        with overflow_ok():  # numpy's error state is per thread
            arrays_, seats_, values_ = sliced(lo, hi, arrays, seats, values)
            expert_playout_kernel(arrays_, params, weights, seats_, values_, MAX_PLAYOUT_DECISIONS)

    threads.run(len(rows), work, PLAYOUT_GRAIN)
    return values
