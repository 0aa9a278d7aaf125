"""No observation leaks hidden information: relabelling the cards a player cannot see (the opponent's
hidden cards and the stock) leaves that player's observation and mask unchanged.

The relabelling is done on the engine state, as if the deck had been shuffled with those cards
swapped: every place that holds an unseen card (the opponent's hand, the stock, the deal history,
the card last drawn) gets its image under one random permutation of the unseen cards.
"""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.observation import OBS_SIZE, encode_kernel
from hollywood_gin_env.engine.state import EngineState
from hollywood_gin_env.rules.actions import NUM_ACTIONS
from hollywood_gin_env.rules.cards import from_mask, to_mask


def copy_state(state: EngineState) -> EngineState:
    out = EngineState.allocate(state.match.shape[0])
    for src, dst in zip(state.arrays(), out.arrays(), strict=True):
        dst[...] = src
    return out


def unseen_cards(state: EngineState, i: int, p: int) -> list[int]:
    """Cards player p of match i cannot locate: the opponent's cards not known taken, and the stock."""
    hidden = int(state.hands[i, 1 - p]) & ~int(state.took[i, 1 - p])
    return from_mask(hidden) + state.deck[i, state.match[i, col.M_STOCK_POS] :].tolist()


def relabel(state: EngineState, i: int, sigma: dict[int, int], owner: int) -> None:
    """Apply the card relabelling sigma to every hidden place of match i (owner's hand included)."""
    kept = int(state.hands[i, owner]) & ~to_mask(sigma)
    state.hands[i, owner] = kept | to_mask(sigma[c] for c in from_mask(int(state.hands[i, owner])) if c in sigma)
    state.deck[i] = [sigma.get(int(c), int(c)) for c in state.deck[i]]
    drawn = int(state.last_step[i, col.S_DRAWN])
    state.last_step[i, col.S_DRAWN] = sigma.get(drawn, drawn)


def observe(engine: Engine, state: EngineState, players: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = state.match.shape[0]
    obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
    encode_kernel(players, np.ones(n, dtype=np.bool_), state.arrays(), engine.params, obs, mask)
    return obs, mask


def test_permuting_unseen_cards_leaves_every_observation_unchanged():
    n, rng = 32, np.random.default_rng(0)
    engine = Engine(n)
    engine.new_matches(seeds=np.arange(n, dtype=np.uint64))
    checked = changed = 0
    for t in range(600):
        masks = engine.legal_mask
        engine.step(np.argmax(rng.random(masks.shape) * masks, axis=1))
        if engine.done.any():
            engine.new_matches(selected=engine.done)
        if t % 15:
            continue
        for p in (0, 1):
            players = np.full(n, p, dtype=np.int64)
            before = observe(engine, engine.state, players)
            permuted = copy_state(engine.state)
            for i in range(n):
                unseen = unseen_cards(engine.state, i, p)
                relabel(permuted, i, dict(zip(unseen, rng.permutation(unseen).tolist(), strict=True)), 1 - p)
            changed += int((permuted.hands[:, 1 - p] != engine.state.hands[:, 1 - p]).sum())
            after = observe(engine, permuted, players)
            np.testing.assert_array_equal(before[0], after[0])
            np.testing.assert_array_equal(before[1], after[1])
            checked += n
    assert checked >= 2 * n * 40 and changed > checked // 2  # the relabelling really moved cards


def test_the_check_detects_a_leak_of_the_own_hand():
    # Control: swapping one of the player's own cards with an unseen card does change its observation.
    engine = Engine(4)
    engine.new_matches(seeds=np.arange(4, dtype=np.uint64))
    players = engine.current_player.copy()
    permuted = copy_state(engine.state)
    for i in range(4):
        p = int(players[i])
        own, other = from_mask(int(engine.state.hands[i, p]))[0], unseen_cards(engine.state, i, p)[0]
        relabel(permuted, i, {own: other, other: own}, p)
    assert not np.array_equal(observe(engine, engine.state, players)[0], observe(engine, permuted, players)[0])
