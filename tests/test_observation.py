"""The one observation table (`OBS_BLOCKS`): what the encoder writes decodes, block by block, to the state it
came from; the heuristics' decoders and the space's bounds read the same table."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.agents import _features
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.observation import OBS_BLOCKS, OBS_LAYOUT, OBS_SIZE, decode, observation_high, rules_block
from hollywood_gin_env.envs.spaces import observation_space
from hollywood_gin_env.rules.actions import KNOCK_BASE
from hollywood_gin_env.rules.bits import count_bits
from hollywood_gin_env.rules.cards import CARD_VALUES, FULL_DECK_MASK, from_mask
from hollywood_gin_env.rules.melds import min_deadwood_mask
from hollywood_gin_env.rules.options import LAST_DISCARD_RULES, Rules
from hollywood_gin_env.rules.scoring import MAX_GAMES

VARIANTS = [
    Rules(game_target=40),
    Rules(last_discard_rule="may_take_to_knock", allow_rediscard_taken_card=True, knock_limit=5, game_target=30),
    Rules(num_games=1, gin_bonus=20, undercut_bonus=15, undercut_on_tie=False, game_target=25),
]


def plane(mask: int) -> np.ndarray:
    return np.array([(mask >> c) & 1 for c in range(52)], dtype=np.float64)


def expected_blocks(game: Game, p: int) -> dict[str, np.ndarray]:
    """Every block's raw values for player p, worked out from the Game and its engine state."""
    s, rules = game._engine.state, game.rules
    match = s.match[0]
    hand = int(s.hands[0, p])
    pile = game.discard_pile
    pile_mask = sum(1 << c for c in pile)
    to_discard = game.phase == "discard" and game.current_player == p
    legal = game._engine.legal_mask[0]
    dw_after, knocks, deadwood = np.zeros(52), np.zeros(52), float(min_deadwood_mask(hand))
    if to_discard:
        after = {c: min_deadwood_mask(hand & ~(1 << c)) for c in from_mask(hand)}
        for c, d in after.items():
            dw_after[c] = d
            knocks[c] = legal[KNOCK_BASE + c]
        barred = int(match[col.M_TAKEN]) if not rules.allow_rediscard_taken_card else -1
        deadwood = float(min(d for c, d in after.items() if c != barred))
    recency = np.zeros(52)
    for j, c in enumerate(pile):
        recency[c] = (j + 1) / len(pile)
    face_up = np.zeros(52)
    if pile:
        face_up[pile[-1]] = 1
    sheet = np.zeros(7 * MAX_GAMES)
    won = [0, 0]
    for g in range(rules.num_games):
        owner = int(s.game_winner[0, g])
        sheet[7 * g : 7 * g + 7] = (
            s.totals[0, g, p],
            s.totals[0, g, 1 - p],
            s.entries[0, g, p],
            s.entries[0, g, 1 - p],
            owner < 0,
            owner == p,
            owner == 1 - p,
        )
        won[0] += owner == p
        won[1] += owner == 1 - p
    opp_took = int(s.took[0, 1 - p])
    take = [0.0, 0.0, 0.0]
    if not to_discard and pile and count_bits(hand) == 10:  # taking the face-up card, then the best other discard
        now, face = min_deadwood_mask(hand), pile[-1]
        best = min([now] + [min_deadwood_mask((hand | 1 << face) & ~(1 << c)) for c in from_mask(hand)])
        take = [now - best, best, float(best < now)]
    return {
        "hand": plane(hand),
        "face_up": face_up,
        "discard_pile": plane(pile_mask),
        "pile_recency": recency,
        "opponent_took": plane(opp_took),
        "opponent_discarded": plane(int(s.discarded[0, 1 - p])),
        "opponent_declined": plane(int(s.declined[0, 1 - p])),
        "unseen": plane(FULL_DECK_MASK & ~(hand | pile_mask | opp_took)),
        "deadwood_after_discard": dw_after,
        "knock_discards": knocks,
        "phase": np.eye(len(col.PHASE_NAMES))[col.PHASE_NAMES.index(game.phase)],
        "stock_size": [game.stock_size],
        "is_dealer": [game.dealer == p],
        "seat": [p],
        "deadwood": [deadwood],
        "turns": [match[col.M_TURNS]],
        "hand_number": [game.hand_number],
        "sheet": sheet,
        "games_won": won,
        "rules": [
            rules.knock_limit,
            rules.gin_bonus,
            rules.undercut_bonus,
            rules.game_target,
            rules.undercut_on_tie,
            rules.num_games,
            rules.allow_rediscard_taken_card,
            LAST_DISCARD_RULES.index(rules.last_discard_rule),
        ],
        "must_knock": [match[col.M_MUST_KNOCK]],
        "take_effect": take,
    }


def snapshots(rules: Rules, seed: int, steps: int = 400):
    """(game, player) at every decision of a random legal playout, both players' views."""
    rng, game = np.random.default_rng(seed), Game(rules, seed=seed)
    for _ in range(steps):
        for p in (0, 1):
            yield game, p
        if game.done:
            return
        game.step(int(rng.choice(game.legal_actions())))


@pytest.mark.parametrize("rules", VARIANTS, ids=["default", "variant", "one_game"])
def test_every_block_decodes_to_the_state_it_encodes(rules):
    """decode(obs)[block] * its scale is the raw value, for every block of OBS_BLOCKS (none unchecked)."""
    checked = 0
    for game, p in snapshots(rules, seed=3):
        decoded = decode(game.observation(p)["observation"])
        expected = expected_blocks(game, p)
        assert set(decoded) == set(expected) == {b.name for b in OBS_BLOCKS}, "a block has no check"
        for name, values in expected.items():
            np.testing.assert_allclose(
                decoded[name],
                np.asarray(values, dtype=np.float64),
                rtol=1e-6,
                atol=1e-6,
                err_msg=f"block {name!r} at {game.phase}",
            )
        checked += 1
    assert checked > 100


def test_the_heuristics_read_the_table():
    """agents/_features decodes stock, turns, deadwood after a discard, the knock limit and R9 as the state says."""
    for rules in VARIANTS:
        for game, p in snapshots(rules, seed=5, steps=200):
            obs = game.observation(p)["observation"]
            assert _features.stock_size(obs) == game.stock_size
            assert _features.turns(obs) == game._engine.state.match[0, col.M_TURNS]
            assert _features.knock_limit(obs) == rules.knock_limit
            assert _features.rediscard_allowed(obs) == rules.allow_rediscard_taken_card
            assert _features.phase_of(obs) == col.PHASE_NAMES.index(game.phase)
            hand = int(game._engine.state.hands[0, p])
            if game.phase == "discard" and game.current_player == p:
                for c in from_mask(hand):
                    assert _features.dw_after(obs, c) == min_deadwood_mask(hand & ~(1 << c))
            assert _features.card_masks(obs)[0] == hand
            assert _features.card_value(7) == CARD_VALUES[7] and _features.popcount(hand) == count_bits(hand)


def test_layout_and_bounds_come_from_the_table():
    """Blocks tile the vector; OBS_LAYOUT and the space's bounds are the table's; every observation lies within."""
    offset = 0
    for block in OBS_BLOCKS:
        assert block.offset == offset and len(block.scale) == len(block.high) == block.size
        assert OBS_LAYOUT[block.name] == (block.offset, block.size, block.meaning)
        offset += block.size
    assert offset == OBS_SIZE
    high = observation_high()
    np.testing.assert_array_equal(observation_space()["observation"].high, high)
    for block in OBS_BLOCKS:
        for k, (scale, top) in enumerate(zip(block.scale, block.high, strict=True)):
            want = np.finfo(np.float32).max if top is None else np.float32(top / scale)
            assert high[block.offset + k] == want, (block.name, k)
    for rules in VARIANTS:
        for game, p in snapshots(rules, seed=9, steps=150):
            obs = game.observation(p)["observation"]
            assert (obs >= 0).all() and (obs <= high).all()


def test_rules_block_is_the_block_every_observation_holds():
    """rules_block(rules) equals, bit for bit, the "rules" block of every observation of a match under those rules."""
    offset, size, _ = OBS_LAYOUT["rules"]
    blocks = [rules_block(rules) for rules in VARIANTS]
    assert all(block.dtype == np.float32 and block.shape == (size,) for block in blocks)
    assert len({block.tobytes() for block in blocks}) == len(VARIANTS), "the variants' blocks differ"
    for rules, block in zip(VARIANTS, blocks, strict=True):
        for game, p in snapshots(rules, seed=11, steps=40):
            np.testing.assert_array_equal(game.observation(p)["observation"][offset : offset + size], block)


def test_decode_refuses_a_wrong_shape():
    with pytest.raises(ValueError, match=rf"shape \({OBS_SIZE},\), got \(3,\)"):
        decode(np.zeros(3))
