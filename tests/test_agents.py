"""The agent protocol (shapes, dtypes, only legal actions), the heuristics' specs, and checkpoint loading.

Observations come from real play: batched matches driven by random and greedy agents, under the
default rules and under variants that reach the rarer phases (the last-discard offer, rediscards).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from hollywood_gin_env.agents import ExpertAgent, GreedyAgent, RandomAgent, SimpleAgent, load_agent
from hollywood_gin_env.agents._features import card_masks
from hollywood_gin_env.agents.expert import discard_lookaheads, lookahead, lookahead_of, new_scratch
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.observation import OBS_LAYOUT, OBS_SIZE
from hollywood_gin_env.rules.actions import (
    ACTION_DRAW_STOCK,
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    KNOCK_BASE,
    NUM_ACTIONS,
)
from hollywood_gin_env.rules.cards import parse_cards, to_mask
from hollywood_gin_env.rules.melds import min_deadwood
from hollywood_gin_env.rules.options import Rules
from tests.decision_rows import collect_states

HAND, FACE_UP, PHASE, DW_AFTER = (OBS_LAYOUT[k][0] for k in ("hand", "face_up", "phase", "deadwood_after_discard"))
VARIANTS = [Rules(), Rules(last_discard_rule="may_take_to_knock", allow_rediscard_taken_card=True, knock_limit=5)]
LAST_DISCARD = Rules(last_discard_rule="may_take_to_knock", knock_limit=30)


class StallingAgent(RandomAgent):
    """Random, but never knocks unless it must: hands run down the stock to the last-discard offer."""

    name = "stalling"

    def _act(self, observations, action_masks):
        masks = action_masks.copy()
        can_discard = masks[:, DISCARD_BASE:KNOCK_BASE].any(axis=1)
        masks[can_discard, KNOCK_BASE:] = 0
        return super()._act(observations, masks)


@pytest.fixture(scope="module")
def states():
    """Observation/mask rows from random-vs-greedy and greedy-vs-greedy play under two rule sets."""
    parts = [collect_states(r, (RandomAgent(seed=1), GreedyAgent())) for r in VARIANTS]
    parts += [collect_states(r, (GreedyAgent(), GreedyAgent()), seed=100) for r in VARIANTS]
    parts.append(collect_states(LAST_DISCARD, (StallingAgent(2), StallingAgent(3)), matches=32, steps=300, seed=200))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def hand_of(row: np.ndarray) -> int:
    return to_mask(np.flatnonzero(row[HAND : HAND + 52] > 0.5))


@pytest.mark.parametrize("spec", ["random", "greedy", "expert", "simple"])
def test_protocol_shapes_dtypes_and_legality(spec, states):
    obs, masks = states
    assert masks.sum(axis=1).min() > 0
    must_knock = obs[:, OBS_LAYOUT["must_knock"][0]] > 0.5
    assert (obs[:, PHASE : PHASE + 5] > 0.5).any(axis=0).all() and must_knock.any()  # every phase is covered
    actions = load_agent(spec, seed=3).act(obs, masks)
    assert actions.shape == (len(obs),) and actions.dtype == np.int64
    assert (masks[np.arange(len(obs)), actions] == 1).all()


@pytest.mark.nojit
@pytest.mark.parametrize("agent", [RandomAgent(0), GreedyAgent(), ExpertAgent(), SimpleAgent(0)])
def test_empty_batch_and_bad_shapes(agent):
    assert agent.act(np.zeros((0, OBS_SIZE), np.float32), np.zeros((0, NUM_ACTIONS), np.int8)).shape == (0,)
    with pytest.raises(ValueError, match="observations must have shape"):
        agent.act(np.zeros((2, OBS_SIZE - 1)), np.zeros((2, NUM_ACTIONS)))
    with pytest.raises(ValueError, match="action_masks must have shape"):
        agent.act(np.zeros((2, OBS_SIZE)), np.zeros((3, NUM_ACTIONS)))


def test_random_agent_is_uniform_and_seeded(states):
    obs, masks = states
    rows = np.flatnonzero(masks.sum(1) == 11)[:1].repeat(5500)
    picks = RandomAgent(seed=7).act(obs[rows], masks[rows])
    counts = np.bincount(picks, minlength=NUM_ACTIONS)
    assert counts[masks[rows[0]] == 0].sum() == 0
    assert counts[masks[rows[0]] == 1].min() > 400 and counts.max() < 600  # 11 legal actions, 500 each
    assert (RandomAgent(seed=7).act(obs[:500], masks[:500]) == RandomAgent(seed=7).act(obs[:500], masks[:500])).all()


def test_greedy_knocks_when_it_may_else_discards_to_the_lowest_deadwood(states):
    obs, masks = states
    actions = GreedyAgent().act(obs, masks)
    discard_rows = np.flatnonzero(obs[:, PHASE + col.PHASE_DISCARD] > 0.5)
    for i in discard_rows:
        after = np.round(obs[i, DW_AFTER : DW_AFTER + 52] * 100)
        knocks = np.flatnonzero(masks[i, KNOCK_BASE:])
        if knocks.size:
            assert actions[i] >= KNOCK_BASE and after[actions[i] - KNOCK_BASE] == after[knocks].min()
        else:
            legal = np.flatnonzero(masks[i, DISCARD_BASE:KNOCK_BASE])
            assert after[actions[i] - DISCARD_BASE] == after[legal].min()


def test_greedy_takes_the_face_up_card_only_when_it_helps(states):
    obs, masks = states
    rows = np.flatnonzero(masks[:, ACTION_TAKE] & (masks[:, ACTION_DRAW_STOCK] | masks[:, ACTION_PASS]))
    rows = rows[obs[rows, PHASE + 4] < 0.5][:400]  # the last-discard offer has its own rule
    actions = GreedyAgent().act(obs[rows], masks[rows])
    for i, action in zip(rows, actions, strict=True):
        hand = [c for c in range(52) if hand_of(obs[i]) >> c & 1]
        card = int(np.argmax(obs[i, FACE_UP : FACE_UP + 52]))
        now = min_deadwood(hand)
        melds_it = min_deadwood(hand + [card]) < now + min(card % 13 + 1, 10)
        after = [min_deadwood([c for c in hand if c != d] + [card]) for d in hand]
        assert (action == ACTION_TAKE) == (melds_it or min(after) < now)


def scenario(hand0: str, upcard: str) -> Game:
    """A match where P0 (non-dealer) holds hand0 and is offered `upcard`; P1 gets low junk."""
    mine = parse_cards(hand0)
    rest = [c for c in range(52) if c not in mine and c != parse_cards(upcard)[0]]
    theirs, stock = rest[:10], rest[10:]
    deck = [c for pair in zip(mine, theirs, strict=True) for c in pair] + parse_cards(upcard) + stock
    return Game(deck=deck, first_dealer=1, seed=0)


def act(agent, game: Game) -> int:
    o = game.observation(game.current_player)
    return int(agent.act(o["observation"][None], o["action_mask"][None])[0])


@pytest.mark.nojit
@pytest.mark.parametrize("agent", [GreedyAgent(), ExpertAgent()], ids=["greedy", "expert"])
def test_scenarios_take_meld_cards_and_go_gin(agent):
    hand = "7H 8H KS KD 2C 4D 6S 9C JH QD"
    assert act(agent, scenario(hand, "9H")) == ACTION_TAKE  # 7H 8H 9H
    assert act(agent, scenario(hand, "KC")) == ACTION_TAKE  # KS KD KC
    assert act(agent, scenario(hand, "QC")) == ACTION_PASS  # melds nothing, lowers nothing
    game = scenario("AS 2S 3S 4H 5H 6H 7D 8D 9D KC", "TD")
    game.step(ACTION_TAKE)
    assert act(agent, game) == KNOCK_BASE + parse_cards("KC")[0]  # gin: AS-3S, 4H-6H, 7D-TD


@pytest.mark.nojit
def test_greedy_knocks_at_ten_with_the_highest_card():
    game = scenario("AS 2S 3S 4H 5H 6H 7D 8D KC QC", "9D")
    game.step(ACTION_TAKE)  # deadwood KC QC: discarding either leaves 10
    assert act(GreedyAgent(), game) == KNOCK_BASE + parse_cards("KC")[0]


@pytest.mark.nojit
def test_expert_prefers_the_safe_discard():
    """Deadwood KC QC: either discard leaves 10. The opponent took QD and QH, so QC would give them a set of
    queens; the expert throws the safe KC (the greedy tie-break would throw KC too, by card id)."""
    game = scenario("AS 2S 3S 4H 5H 6H 7D 8D KC QC", "9D")
    obs = game.observation(0)["observation"].copy()
    mask = game.observation(0)["action_mask"].copy()
    took = OBS_LAYOUT["opponent_took"][0]
    unseen = OBS_LAYOUT["unseen"][0]
    kc, qc, qd, qh = parse_cards("KC QC QD QH")
    obs[took + qd] = obs[took + qh] = 1.0  # the opponent holds two queens
    obs[unseen + qd] = obs[unseen + qh] = 0.0
    mask[:] = 0
    mask[DISCARD_BASE + kc] = mask[DISCARD_BASE + qc] = 1
    obs[PHASE : PHASE + 6] = 0
    obs[PHASE + col.PHASE_DISCARD] = 1
    assert ExpertAgent().act(obs[None], mask[None])[0] == DISCARD_BASE + kc


def test_expert_scores_every_discard_at_once_exactly_as_one_at_a_time():
    """discard_lookaheads (one meld-solver pass per unseen draw for all eleven discards) gives, for every card c of
    an 11-card hand, exactly lookahead(hand - c): the expected deadwood and the chances of gin and a knock, to the
    last bit, on the hands of real play (the discard phase's hand, and the hand plus the face-up card)."""
    rng = np.random.default_rng(7)
    scratch, checked = new_scratch(), 0
    for match in range(12):
        game, agent = Game(seed=300 + match), (ExpertAgent(), RandomAgent(seed=match))[match % 2]
        while not game.done and checked < 400:
            view = game.observation(game.current_player)
            obs = view["observation"]
            hand, _, _, _, _, unseen = card_masks(obs)
            face_up = np.flatnonzero(obs[FACE_UP : FACE_UP + 52] > 0.5)
            cards = hand if hand.bit_count() == 11 else hand | (1 << int(face_up[0])) if face_up.size else 0
            if cards.bit_count() == 11 and rng.random() < 0.5:
                limit = int(rng.integers(0, 11))
                n = discard_lookaheads(cards, unseen, limit, scratch)
                for c in np.flatnonzero([(cards >> c) & 1 for c in range(52)]):
                    one = lookahead(cards & ~(1 << int(c)), unseen, limit, new_scratch())
                    assert lookahead_of(scratch, n, int(c)) == one
                checked += 1
            game.step(int(agent.act(obs[None], view["action_mask"][None])[0]))
    assert checked >= 100


@pytest.mark.nojit
def test_load_agent_specs_and_errors():
    names = ["random", "greedy", "expert", "simple"]
    assert [load_agent(s).name for s in ("random", "Greedy", " expert ", "SIMPLE")] == names
    agent = GreedyAgent()
    assert load_agent(agent) is agent
    with pytest.raises(ValueError, match="unknown agent spec 'alpha'"):
        load_agent("alpha")
    with pytest.raises(FileNotFoundError, match="checkpoint file not found"):
        load_agent("checkpoint:/nonexistent/policy.pt")


def test_agents_and_evaluate_do_not_import_torch():
    code = "import sys, hollywood_gin_env.agents, hollywood_gin_env.evaluation.evaluate; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
