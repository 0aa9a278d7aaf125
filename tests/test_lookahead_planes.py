"""agents/lookahead_planes.py: the lookahead inputs of real positions against a brute force over every unseen draw
(melds.min_deadwood), zeros where nothing applies, no crash on hostile rows; and the policies that read them."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env.agents import load_agent
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS, danger
from hollywood_gin_env.agents.lookahead_planes import LOOKAHEAD_SIZE, lookahead_planes
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.observation import OBS_SIZE, decode
from hollywood_gin_env.rules.cards import NUM_CARDS
from hollywood_gin_env.rules.melds import min_deadwood

KNOCK_LIMIT = 10  # the default rules'
NUMBERS = 4 * NUM_CARDS


def _cards(plane: np.ndarray) -> list[int]:
    return [int(c) for c in np.flatnonzero(plane > 0.5)]


def _after_draw(ten: list[int], unseen: list[int]) -> tuple[float, float, float]:
    """Brute force: over every unseen card drawn, the lowest deadwood of the 11 cards less any one; its mean, and the
    shares of draws that give gin and a knock."""
    results = [min(min_deadwood([c for c in ten + [u] if c != x]) for x in ten + [u]) for u in unseen]
    return (
        float(np.mean(results)),
        float(np.mean([r == 0 for r in results])),
        float(np.mean([r <= KNOCK_LIMIT for r in results])),
    )


def _positions(phase: str, count: int, seed: int = 0) -> list[np.ndarray]:
    """Observations of the player to act in `phase` late in a hand (after 12 draws, when knocks and gin are near),
    from `expert` playing both seats of seeded matches, one position a hand."""
    expert, found = load_agent("expert"), []
    for match in range(200):
        game = Game(seed=seed + match)
        while not game.done and len(found) < count:
            view = game.observation(game.current_player)
            if game.phase == phase and decode(view["observation"])["turns"][0] * 30 >= 12:
                found.append(view["observation"])
                break
            game.step(int(expert.act(view["observation"][None], view["action_mask"][None])[0]))
    return found


def test_discard_phase_planes_match_a_brute_force_over_every_draw():
    positions = _positions("discard", 6)
    planes = lookahead_planes(np.stack(positions))
    # the positions are ones where the chances differ: knocks possible, gin rarer than a knock
    assert (
        len(positions) == 6
        and planes[:, NUM_CARDS : 2 * NUM_CARDS].max() > planes[:, 2 * NUM_CARDS : 3 * NUM_CARDS].max()
    )
    for obs in positions:
        blocks = decode(obs)
        hand, unseen = _cards(blocks["hand"]), _cards(blocks["unseen"])
        took, signals = blocks["opponent_took"], blocks["opponent_discarded"] + blocks["opponent_declined"]
        out = lookahead_planes(obs[None])[0]
        expected = {c: _after_draw([h for h in hand if h != c], unseen) for c in hand}
        best = min(e for e, _, _ in expected.values())
        base = (10 - int(took.sum())) / len(unseen)
        took_mask = sum(1 << c for c in _cards(took))
        unseen_mask, signal_mask = sum(1 << c for c in unseen), sum(1 << c for c in _cards(signals))
        for c in range(NUM_CARDS):
            if c not in hand:
                assert out[c::NUM_CARDS][:4].tolist() == [0, 0, 0, 0]
                continue
            mean, gin, knock = expected[c]
            assert out[c] == pytest.approx((mean - best) / 10, abs=1e-5)
            assert out[NUM_CARDS + c] == pytest.approx(knock, abs=1e-6)
            assert out[2 * NUM_CARDS + c] == pytest.approx(gin, abs=1e-6)
            assert out[3 * NUM_CARDS + c] == pytest.approx(
                danger(c, took_mask, unseen_mask, signal_mask, base, DEFAULT_WEIGHTS), abs=1e-6
            )
        assert out[NUMBERS] == pytest.approx(best / 100, abs=1e-6)
        assert out[NUMBERS + 1 :].tolist() == [0, 0, 0]  # no stock draw to weigh in the discard phase


def test_draw_phase_numbers_weigh_the_stock_against_taking():
    positions = _positions("draw", 12, seed=5)
    assert positions, "random play reaches the draw phase"
    for obs in positions:
        blocks = decode(obs)
        hand, unseen = _cards(blocks["hand"]), _cards(blocks["unseen"])
        face_up = _cards(blocks["face_up"])[0]
        out = lookahead_planes(obs[None])[0]
        stock, gin, knock = _after_draw(hand, unseen)
        assert out[NUMBERS + 2] == pytest.approx(knock, abs=1e-6)
        assert out[NUMBERS + 3] == pytest.approx(gin, abs=1e-6)
        if blocks["take_effect"][2] < 0.5:  # taking would not help: nothing about the 11 cards
            assert not out[:NUMBERS].any() and out[NUMBERS] == 0 and out[NUMBERS + 1] == 0
            continue
        eleven = hand + [face_up]
        best = min(_after_draw([h for h in eleven if h != c], unseen)[0] for c in eleven)
        assert out[NUMBERS] == pytest.approx(best / 100, abs=1e-5)
        assert out[NUMBERS + 1] == pytest.approx((stock - best) / 10, abs=1e-5)
        assert set(np.flatnonzero(out[NUM_CARDS : 2 * NUM_CARDS] + out[3 * NUM_CARDS : NUMBERS])) <= set(eleven)


def test_rows_with_nothing_to_describe_are_zero_and_hostile_rows_do_not_crash():
    assert not lookahead_planes(np.zeros((3, OBS_SIZE), dtype=np.float32)).any()
    rng = np.random.default_rng(0)
    hostile = np.concatenate(
        [
            rng.random((64, OBS_SIZE)) * 4 - 2,
            np.full((2, OBS_SIZE), np.nan),
            np.full((2, OBS_SIZE), np.inf),
            np.ones((2, OBS_SIZE)),
        ]
    ).astype(np.float32)
    out = lookahead_planes(hostile)
    assert out.shape == (70, LOOKAHEAD_SIZE) and np.isfinite(out).all()
    for shape in ((3, OBS_SIZE - 1), (OBS_SIZE,), (2, 3, OBS_SIZE)):  # rows the kernel would read past: refused
        with pytest.raises(ValueError, match=rf"observations must have shape \(B, {OBS_SIZE}\), got"):
            lookahead_planes(np.zeros(shape, dtype=np.float32))


def test_the_inputs_are_a_pure_function_of_the_rows():
    rows = np.stack(_positions("discard", 4, seed=9) + _positions("draw", 4, seed=9))
    together = lookahead_planes(rows)
    one_by_one = np.concatenate([lookahead_planes(r[None]) for r in rows[::-1]])[::-1]
    assert np.array_equal(together, one_by_one)
