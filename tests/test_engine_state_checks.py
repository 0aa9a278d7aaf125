"""Engine state restored from a file, the players handed to `observe` and the engine's per-match arguments are
checked before any kernel sees them: a bad value is one error naming the field, never a segfault (a tampered
last.pt, `observe([10**6, ...])`), and the state stays as it was."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.rules.options import Rules

N = 6


def played_env(steps: int = 41, rules: Rules | None = None) -> SelfPlayVectorEnv:
    """An env whose matches are in mixed phases after `steps` random legal decisions."""
    env = SelfPlayVectorEnv(N, rules)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        masks = obs["action_mask"]
        obs, *_ = env.step(np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int64))
    return env


def in_phase(state: dict, phase: int) -> int:
    """The first match of the state in `phase`."""
    rows = np.flatnonzero(state["engine"]["match"][:, col.M_PHASE] == phase)
    assert rows.size, f"no match in phase {phase}: play another number of steps"
    return int(rows[0])


def set_match(column: int, value: int, phase: int = col.PHASE_DRAW):
    def change(state: dict) -> None:
        state["engine"]["match"][in_phase(state, phase), column] = value

    return change


def swap_hand_and_stock(state: dict) -> None:
    """Put a stock card into a hand without taking one out: the match now holds 53 cards."""
    e = state["engine"]
    i = in_phase(state, col.PHASE_DRAW)
    e["hands"][i, 0] |= 1 << int(e["deck"][i, e["match"][i, col.M_STOCK_POS]])


def duplicate_in_deck(state: dict) -> None:
    e = state["engine"]
    e["deck"][0, 30] = e["deck"][0, 31]


def card_in_both_hands(state: dict) -> None:
    e = state["engine"]
    i = in_phase(state, col.PHASE_DRAW)
    card = int(np.flatnonzero([(int(e["hands"][i, 1]) >> c) & 1 for c in range(52)])[0])
    e["hands"][i, 0] |= 1 << card


def took_card_not_held(state: dict) -> None:
    e = state["engine"]
    i = in_phase(state, col.PHASE_DRAW)
    e["took"][i, 0] = 1 << int(e["deck"][i, 51])  # the bottom stock card


def pile_length_off_by_one(state: dict) -> None:
    e = state["engine"]
    i = in_phase(state, col.PHASE_DRAW)
    e["match"][i, col.M_PILE_LEN] += 1


def field(name: str, value):
    def change(state: dict) -> None:
        state["engine"][name][...] = value

    return change


def replace(name: str, value):
    def change(state: dict) -> None:
        state["engine"][name] = value

    return change


CORRUPTIONS = {
    "pile 10**6": (field("pile", 10**6), "'pile'"),
    "pile -1": (field("pile", -1), "'pile'"),
    "deck 52": (field("deck", 52), "'deck'"),
    "deck with a card twice": (duplicate_in_deck, "'deck'"),
    "hand beyond 52 bits": (field("hands", 1 << 60), "'hands'"),
    "53 cards in a match": (swap_hand_and_stock, "'hands'.*(10 cards|exactly once)"),
    "a card in both hands": (card_in_both_hands, "'hands'"),
    "took a card not held": (took_card_not_held, "'took'"),
    "phase 9": (set_match(col.M_PHASE, 9), "'match'"),
    "player 2": (set_match(col.M_PLAYER, 2), "'match'"),
    "dealer -1": (set_match(col.M_DEALER, -1), "'match'"),
    "pile length 53": (set_match(col.M_PILE_LEN, 53), "'match'"),
    "pile length off by one": (pile_length_off_by_one, "exactly once"),
    "stock position 60": (set_match(col.M_STOCK_POS, 60), "'match'"),
    "stock position 52 to draw from": (set_match(col.M_STOCK_POS, 52), "'match'"),
    "taken card 99": (set_match(col.M_TAKEN, 99, col.PHASE_DISCARD), "'match'"),
    "must knock while drawing": (set_match(col.M_MUST_KNOCK, 1), "'match'"),
    "winner of a running match": (set_match(col.M_WINNER, 1), "'match'"),
    "hand number 0": (set_match(col.M_HAND_NO, 0), "'match'"),
    "game winner 5": (field("game_winner", 5), "'game_winner'"),
    "negative totals": (field("totals", -7), "'totals'"),
    "drawn card 77": (lambda s: s["engine"]["last_step"].__setitem__((0, col.S_DRAWN), 77), "'last_step'"),
    "legal all ones": (field("legal", 1), "'legal'"),
    "legal 5": (field("legal", 5), "'legal'"),
    "discard deadwoods changed": (field("discard_dw", 3), "'discard_dw'"),
    "rng as int64": (replace("rng", np.zeros(N, dtype=np.int64)), "'rng'"),
    "pile as float": (lambda s: s["engine"].__setitem__("pile", s["engine"]["pile"].astype(float)), "'pile'"),
    "one match too many": (lambda s: s["engine"].__setitem__("deck", np.zeros((N + 1, 52), np.int64)), "'deck'"),
    "a list, not an array": (lambda s: s["engine"].__setitem__("hands", [[0, 0]] * N), "'hands'"),
    "missing field": (lambda s: s["engine"].pop("declined"), "'declined'"),
    "unknown field": (lambda s: s["engine"].__setitem__("cheat", np.zeros(N)), "'cheat'"),
    "decision_step shape": (lambda s: s.__setitem__("decision_step", np.zeros((N, 3), np.int64)), "decision_step"),
    "decision_step after step": (lambda s: s["decision_step"].__setitem__((0, 0), s["step"]), "decision_step"),
    "step negative": (lambda s: s.__setitem__("step", -1), "step"),
    "step a float": (lambda s: s.__setitem__("step", 3.5), "step"),
}


@pytest.fixture(scope="module")
def env_and_state():
    env = played_env()
    return env, env.state_dict()


def copy_state(state: dict) -> dict:
    return {
        "engine": {k: v.copy() for k, v in state["engine"].items()},
        "decision_step": state["decision_step"].copy(),
        "step": state["step"],
    }


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_a_corrupt_engine_state_is_refused_naming_the_field_and_changes_nothing(env_and_state, name):
    env, state = env_and_state
    change, fragment = CORRUPTIONS[name]
    bad = copy_state(state)
    change(bad)
    target = SelfPlayVectorEnv(N)
    target.load_state_dict(copy_state(state))
    before = target.state_dict()
    with pytest.raises(ValueError, match=fragment):
        target.load_state_dict(bad)
    after = target.state_dict()
    for key, array in before["engine"].items():
        np.testing.assert_array_equal(after["engine"][key], array, err_msg=key)
    assert after["step"] == before["step"]


def test_a_valid_state_loads_and_plays_on_exactly(env_and_state):
    env, state = env_and_state
    copy = SelfPlayVectorEnv(N)
    copy.load_state_dict(copy_state(state))
    rng = np.random.default_rng(5)
    original = played_env()
    obs_a = original.observe(original.engine.current_player)
    for _ in range(30):
        mask = obs_a["action_mask"]
        actions = np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int64)
        obs_a, rew_a, *_ = original.step(actions)
        obs_b, rew_b, *_ = copy.step(actions)
        np.testing.assert_array_equal(obs_a["observation"], obs_b["observation"])
        np.testing.assert_array_equal(rew_a, rew_b)


def test_states_of_every_phase_and_of_ended_matches_load():
    """Matches of an unreset env (all over), and states under other rules, pass the checks as they are."""
    fresh = SelfPlayVectorEnv(N)
    assert (fresh.state_dict()["engine"]["match"][:, col.M_PHASE] == col.PHASE_OVER).all()
    SelfPlayVectorEnv(N).load_state_dict(fresh.state_dict())
    rules = Rules(game_target=30, last_discard_rule="may_take_to_knock", allow_rediscard_taken_card=True)
    env = SelfPlayVectorEnv(N, rules)
    obs, _ = env.reset(seed=1)
    rng = np.random.default_rng(2)
    seen = set()
    for _ in range(600):
        SelfPlayVectorEnv(N, rules).load_state_dict(env.state_dict())
        seen |= set(env.state_dict()["engine"]["match"][:, col.M_PHASE].tolist())
        mask = obs["action_mask"]
        obs, *_ = env.step(np.argmax(rng.random(mask.shape) * mask, axis=1).astype(np.int64))
    assert {0, 1, 2, 3} <= seen


CHILD = textwrap.dedent(
    """
    import numpy as np, sys
    from hollywood_gin_env.envs import SelfPlayVectorEnv
    env = SelfPlayVectorEnv(4)
    env.reset(seed=0)
    what = sys.argv[1]
    if what == "load":
        state = env.state_dict()
        state["engine"]["pile"][...] = 10**6
        state["engine"]["match"][:, 4] = 52
        SelfPlayVectorEnv(4).load_state_dict(state)
    else:
        env.observe(np.array([10**6, 0, 0, 0]))
    """
)


@pytest.mark.parametrize("what", ["load", "observe"])
def test_out_of_range_indices_raise_in_a_child_process_instead_of_crashing_it(what):
    """The cases that wrote or read far out of bounds: the child ends with a ValueError, not a signal."""
    child = subprocess.run([sys.executable, "-c", CHILD, what], capture_output=True, text=True, timeout=300)
    assert child.returncode == 1, (child.returncode, child.stderr[-2000:])
    assert "ValueError" in child.stderr


@pytest.mark.parametrize(
    "players, fragment",
    [
        ([2] * N, "0 or 1"),
        ([-1] + [0] * (N - 1), "0 or 1"),
        ([0] * (N - 1), "shape"),
        ([[0] * N], "shape"),
        ([0.0] * N, "integer"),
        ([True] * N, "integer"),
        ([2**64 - 1] * N, "0 or 1"),
    ],
)
def test_observe_refuses_players_other_than_0_or_1_per_match(players, fragment):
    env = played_env(5)
    with pytest.raises(ValueError, match=fragment):
        env.observe(np.array(players))


def test_observe_takes_integer_arrays_and_lists():
    env = played_env(5)
    players = env.engine.current_player.copy()
    a = env.observe(players)
    b = env.observe(players.astype(np.int8).tolist())
    np.testing.assert_array_equal(a["observation"], b["observation"])
    assert (a["action_mask"].sum(axis=1) > 0).all()


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda e: e.step(np.zeros(N - 1, dtype=np.int64)), "shape"),
        (lambda e: e.step(np.zeros(N, dtype=np.int64), np.ones(N - 2, dtype=bool)), "active"),
        (lambda e: e.new_matches(selected=np.ones(1, dtype=bool)), "selected"),
        (lambda e: e.new_matches(seeds=np.arange(2, dtype=np.uint64)), "seeds"),
        (lambda e: e.new_matches(seeds=-np.ones(N, dtype=np.int64)), "seeds"),
        (lambda e: e.new_matches(seeds=np.full(N, 0.5)), "seeds"),
        (lambda e: e.new_matches(first_dealers=np.full(N, 7)), "first_dealers"),
        (lambda e: e.new_matches(first_dealers=np.zeros(3, dtype=np.int64)), "first_dealers"),
        (lambda e: e.new_matches(decks=np.full((N, 52), 10**6)), "decks"),
        (lambda e: e.new_matches(decks=np.zeros((N, 52), dtype=np.int64)), "decks"),
        (lambda e: e.new_matches(decks=np.zeros((1, 52), dtype=np.int64)), "decks"),
    ],
)
def test_the_engine_refuses_per_match_arguments_of_the_wrong_shape_or_range(call, fragment):
    """Engine (documented in docs/ENVIRONMENTS.md) hands these to its kernels, which read one entry per match."""
    from hollywood_gin_env.engine.batched import Engine

    engine = Engine(N)
    engine.new_matches(seeds=np.arange(N, dtype=np.uint64))
    before = {k: v.copy() for k, v in engine.state._asdict().items()}
    with pytest.raises(ValueError, match=fragment):
        call(engine)
    for key, array in engine.state._asdict().items():
        np.testing.assert_array_equal(array, before[key], err_msg=key)


def test_the_engine_takes_fixed_decks_and_shuffle_rows():
    from hollywood_gin_env.engine.batched import Engine

    engine = Engine(2)
    decks = np.stack([np.arange(52)[::-1], np.full(52, -1)])
    engine.new_matches(seeds=np.array([1, 2], dtype=np.uint64), first_dealers=np.array([0, -1]), decks=decks)
    np.testing.assert_array_equal(engine.state.deck[0], np.arange(52)[::-1])
    assert sorted(engine.state.deck[1]) == list(range(52))


def test_sample_legal_refuses_uniforms_that_do_not_match_the_masks():
    from hollywood_gin_env.engine.sampling import sample_legal

    masks = np.ones((4, 107), dtype=np.int8)
    with pytest.raises(ValueError, match="uniforms of shape"):
        sample_legal(masks, np.zeros(1))
    assert sample_legal(masks, np.zeros(4)).tolist() == [0, 0, 0, 0]
