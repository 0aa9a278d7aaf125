"""The search agent: its determinisations agree with everything the player knows, it plays only legal actions, it is
deterministic for a seed whatever the batch, and its options and rules are checked."""

from __future__ import annotations

import numpy as np
import pytest

from hollywood_gin_env import Rules
from hollywood_gin_env.agents import ExpertAgent, load_agent
from hollywood_gin_env.agents.search import BELIEF_OPTIONS, SearchAgent, confident_best, deal_all, parse_search_spec
from hollywood_gin_env.duplicate import play_chunk
from hollywood_gin_env.engine import Engine
from hollywood_gin_env.envs import SelfPlayVectorEnv
from hollywood_gin_env.history import HandHistory, HistoryRecorder
from hollywood_gin_env.observation import O_SEAT, OBS_LAYOUT, OBS_SIZE, encode_kernel, encode_rows
from hollywood_gin_env.state import DISCARD_BASE, KNOCK_BASE, M_PLAYER, M_STOCK_POS, NUM_ACTIONS, EngineState

# Blocks a determinisation cannot reproduce: the score sheet and hand count (it rolls out one hand on a fresh
# sheet) and which discards allow a knock right after a take (the card taken this turn is not in the observation).
NOT_REPRODUCED = {"sheet", "games_won", "hand_number", "knock_discards"}


def _positions(num_envs: int = 32, steps: int = 90, seed: int = 3):
    """Observations and masks of expert-vs-expert play, step by step."""
    env = SelfPlayVectorEnv(num_envs, episode="hand")
    obs, _ = env.reset(seed=seed)
    expert = ExpertAgent()
    for _ in range(steps):
        yield env, obs["observation"].copy(), obs["action_mask"].copy()
        obs, *_ = env.step(expert.act(obs["observation"], obs["action_mask"]))


@pytest.mark.parametrize("tilt", [0.0, 0.5])
def test_a_determinisation_shows_the_player_exactly_its_own_observation(tilt):
    """Encoded from the player's seat, every sampled deal gives back the observation it was sampled from, and the
    opponent's sampled hand holds every card it is known to have taken and none the player has seen elsewhere;
    with a tilted belief too."""
    agent = SearchAgent()
    mismatches = 0
    for env, obs, _ in _positions(steps=90 if tilt == 0.0 else 30):
        n = obs.shape[0]
        arrays = EngineState.allocate(3 * n).arrays()
        rows = np.repeat(np.arange(n), 3)
        deal_all(obs, rows, np.tile(np.arange(3), n), agent._row_seeds(obs), tilt, arrays, agent.params)
        s = EngineState(*arrays)
        again = np.zeros((3 * n, obs.shape[1]), dtype=np.float32)
        encode_kernel(
            s.match[:, M_PLAYER].copy(),
            np.ones(3 * n, dtype=np.bool_),
            arrays,
            agent.params,
            again,
            np.zeros((3 * n, 107), dtype=np.int8),
        )
        for name, (offset, size, _) in OBS_LAYOUT.items():
            if name not in NOT_REPRODUCED:
                assert np.array_equal(again[:, offset : offset + size], obs[rows, offset : offset + size]), name
        real = env.engine.state
        for m, r in enumerate(rows):
            me = int(real.match[r, M_PLAYER])
            assert s.hands[m, 1 - me] & real.took[r, 1 - me] == real.took[r, 1 - me]
            assert s.hands[m, 1 - me] & real.hands[r, me] == 0
        mismatches += int((s.hands[:, 1] != real.hands[rows, 1]).sum())
    assert mismatches > 0  # the hidden cards are sampled, not read from the real deal


@pytest.mark.slow  # whole matches of the search agent (about 7 s): CI's second command runs it
def test_search_plays_legal_actions_for_whole_matches_and_is_deterministic_for_a_seed():
    env = SelfPlayVectorEnv(6, episode="match")
    obs, info = env.reset(seed=11)
    a, b = SearchAgent(rollouts=4, seed=5), SearchAgent(rollouts=4, seed=5)
    other = SearchAgent(rollouts=4, seed=6)
    differs = False
    for _ in range(150):
        o, m = obs["observation"], obs["action_mask"]
        actions = a.act(o, m)
        assert m[np.arange(len(actions)), actions].all()
        assert np.array_equal(actions, b.act(o, m))
        order = np.random.default_rng(0).permutation(len(o))
        assert np.array_equal(actions[order], a.act(o[order], m[order]))  # the batch does not matter
        differs |= not np.array_equal(actions, other.act(o, m))
        obs, *_ = env.step(actions)  # the env refuses an illegal action
    assert differs  # the seed does reach the determinisations


def test_confident_best_keeps_expert_unless_the_paired_difference_is_clear():
    rng = np.random.default_rng(0)
    base = rng.normal(0.0, 20.0, size=64)
    noisy = np.stack([base, base + rng.normal(0.5, 20.0, size=64)])
    clear = np.stack([base, base + 3.0 + rng.normal(0.0, 1.0, size=64)])
    assert confident_best(noisy, 2.0) == 0
    assert confident_best(clear, 2.0) == 1
    assert confident_best(np.stack([base + 1.0, base]), 0.0) == 0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("search:rollouts=0", "rollouts='0': use a whole number in 1..1024"),
        ("search:rollouts=x", "rollouts='x'"),
        ("search:candidates=12", "candidates='12': use a whole number in 1..11"),
        ("search:policy=random", "policy='random': use one of greedy, expert"),
        ("search:z=nan", "z='nan': use a number in 0.0..100.0"),
        ("search:depth=3", "search agent option 'depth=3'"),
        ("search:rollouts", "search agent option 'rollouts'"),
        ("search:tilt=-0.5", "tilt='-0.5': use a number in 0.0..5.0"),
        ("search:tilt=inf", "tilt='inf': use a number in 0.0..5.0"),
        ("search:decisions=river", "decisions='river': use one of all, knock, discard"),
        ("search:belief=psychic", "belief='psychic': use one of tilted, self, expert"),
        ("search:rollouts=\u00b2", "rollouts='\u00b2': use a whole number in 1..1024"),
        ("search:rollouts=\u0663", "rollouts='\u0663': use a whole number in 1..1024"),
        ("search:candidates=\uff13", "candidates='\uff13': use a whole number in 1..11"),
        ("search:z=\u0663", "z='\u0663': use a number in 0.0..100.0"),
        ("search:tilt=\u0661.5", "tilt='\u0661.5': use a number in 0.0..5.0"),
    ],
)
def test_bad_search_options_are_named(spec, message):
    """Each bad option is named with what is allowed; numbers are ASCII digits only (a superscript two or an
    Arabic-Indic three is not a number of rollouts)."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(".", r"\.")):
        load_agent(spec)


def test_the_spec_reaches_the_agent():
    agent = load_agent("search:rollouts=8,candidates=2,policy=expert,z=1.5", seed=3)
    assert (agent.rollouts, agent.candidates, agent.policy_name, agent.confidence, agent.seed) == (
        8,
        2,
        "expert",
        1.5,
        3,
    )
    assert parse_search_spec("search") == {
        "rollouts": 16,
        "candidates": 3,
        "policy": "greedy",
        "z": 2.0,
        "base": "expert",
        "tilt": 0.25,
        "decisions": "all",
        "belief": "tilted",
    }
    tilted = load_agent("search:tilt=0.25,decisions=knock")
    assert (tilted.tilt, tilted.decisions, tilted.needs_history) == (0.25, "knock", False)
    assert tilted.name.endswith(",tilt=0.25,decisions=knock")
    reading = load_agent("search:decisions=discard,belief=self")
    assert (reading.decisions, reading.belief, reading.needs_history) == ("discard", "self", True)
    assert reading.name.endswith(",decisions=discard,belief=self")


def test_a_tilted_belief_deals_the_opponent_less_deadwood_and_keeps_every_known_card():
    """The larger the tilt, the less deadwood the sampled opponent holds; the cards it took stay in its hand, and
    the stock holds exactly the other unseen cards (the chain only swaps a hidden card with a stock card)."""
    from hollywood_gin_env.agents._features import card_masks
    from hollywood_gin_env.melds import min_deadwood_mask
    from hollywood_gin_env.state import M_STOCK_POS

    obs = np.concatenate([o for _, o, _ in _positions(num_envs=16, steps=60)][20:])  # hands some turns old
    env_rows = obs.shape[0]
    agent = SearchAgent()
    seeds = agent._row_seeds(obs)
    unseen = np.array([card_masks(o)[5] for o in obs], dtype=np.int64)
    mean_deadwood = []
    for tilt in (0.0, 0.1, 0.5):
        arrays = EngineState.allocate(4 * env_rows).arrays()
        rows = np.repeat(np.arange(env_rows), 4)
        deal_all(obs, rows, np.tile(np.arange(4), env_rows), seeds, tilt, arrays, agent.params)
        s = EngineState(*arrays)
        them = 1 - s.match[:, M_PLAYER]
        hands = s.hands[np.arange(rows.size), them]
        assert (hands & s.took[np.arange(rows.size), them] == s.took[np.arange(rows.size), them]).all()
        mean_deadwood.append(np.mean([min_deadwood_mask(int(h)) for h in hands]))
        stock = np.array([sum(1 << int(c) for c in s.deck[m, s.match[m, M_STOCK_POS] :]) for m in range(rows.size)])
        assert (stock & hands == 0).all()
        assert np.array_equal(stock | (hands & unseen[rows]), unseen[rows])
    assert mean_deadwood[0] > mean_deadwood[1] + 3 > mean_deadwood[2] + 6, mean_deadwood


def test_searching_knock_decisions_only_plays_the_base_elsewhere():
    """decisions=knock: a row without a legal knock gets its base's action unsearched; at knock-legal rows the
    search may overrule it."""
    search = SearchAgent(rollouts=8, z=0.0, decisions="knock", seed=1)
    expert = ExpertAgent()
    changed = 0
    for _, obs, masks in _positions(num_envs=16, steps=60):
        actions = search.act(obs, masks)
        knock = masks[:, KNOCK_BASE:].any(axis=1)
        assert np.array_equal(actions[~knock], expert.act(obs[~knock], masks[~knock]))
        changed += int((actions[knock] != expert.act(obs[knock], masks[knock])).sum())
    assert changed > 0


def test_observations_of_other_rules_are_refused():
    env = SelfPlayVectorEnv(2, Rules(knock_limit=5))
    obs, _ = env.reset(seed=0)
    with pytest.raises(ValueError, match="other rules than this search agent's"):
        SearchAgent().act(obs["observation"], obs["action_mask"])
    actions = SearchAgent(rules=Rules(knock_limit=5), rollouts=2).act(obs["observation"], obs["action_mask"])
    assert obs["action_mask"][np.arange(2), actions].all()


def test_search_plays_as_the_envs_opponent_at_a_card_table_and_in_evaluate(capsys):
    import gymnasium as gym

    from hollywood_gin_env.evaluate import main as evaluate_main
    from hollywood_gin_env.game import Game
    from hollywood_gin_env.session import Session

    env = gym.make("HollywoodGin-v1", opponent="search:rollouts=2")
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    for _ in range(60):
        obs, _, terminated, _, _ = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        if terminated:
            break
    game = Game(seed=2)
    session = Session(game, 1 - game.dealer, "search:rollouts=2")
    session.advance()  # the bot opens if it is its turn
    for _ in range(5):
        session.play(game.legal_actions()[0])
        session.advance()
        assert session.humans_turn or game.done
    assert evaluate_main(["--agents", "search:rollouts=2", "expert", "--matches", "2", "--no-progress"]) == 0
    assert "search:rollouts=2 vs expert" in capsys.readouterr().out  # the report labels an agent by its spec


@pytest.mark.slow  # whole searched decisions (about 6 s): CI's second command runs it
def test_without_a_standard_error_the_search_plays_its_base_and_a_checkpoint_can_be_base_and_rollout_policy():
    """One rollout per candidate gives no standard error, so the gate never lets the rollouts overrule the default:
    the agent then plays exactly as its base."""
    pytest.importorskip("torch")
    bot = "bot"
    search = SearchAgent(rollouts=1, policy=bot, base=bot)
    plain = load_agent(bot)
    for _, obs, masks in _positions(num_envs=8, steps=40):
        assert np.array_equal(search.act(obs, masks), plain.act(obs, masks))
    assert search.name.endswith(f"base={bot},tilt=0.25")


def test_put_first_moves_or_adds_the_default():
    from hollywood_gin_env.agents.search import put_first

    cands = np.array([[5, 6, 7, 0], [5, 6, 7, 0]])
    counts = np.array([3, 3])
    put_first(cands, counts, np.array([7, 9]))
    assert cands.tolist() == [[7, 5, 6, 0], [9, 5, 6, 7]] and counts.tolist() == [3, 4]


def test_the_rollouts_of_one_call_are_played_in_bounded_batches_with_the_same_decisions(monkeypatch):
    """The rollout matches of a call were all allocated at once (rollouts=1024, candidates=11 over 1000 rows needs
    about 13 GB); they are now played MAX_ROLLOUT_MATCHES at a time, a row never split, and the decisions are the
    same whatever the bound."""
    from hollywood_gin_env.agents import search

    sizes = []
    allocate = EngineState.allocate
    monkeypatch.setattr(EngineState, "allocate", staticmethod(lambda n: sizes.append(n) or allocate(n)))
    agent = SearchAgent(rollouts=8, candidates=3, seed=2)
    positions = [(o, m) for _, o, m in _positions(num_envs=16, steps=30)][::3]
    unbounded = [agent.act(o, m) for o, m in positions]
    assert max(sizes) > 64
    monkeypatch.setattr(search, "MAX_ROLLOUT_MATCHES", 64)
    sizes.clear()
    assert all(np.array_equal(agent.act(o, m), want) for (o, m), want in zip(positions, unbounded, strict=True))
    assert sizes and max(sizes) <= 64


def test_the_largest_allowed_search_fits_one_batch_per_row():
    """A row is never split across batches, so the bound must hold the largest row the options allow."""
    from hollywood_gin_env.agents.search import LIMITS, MAX_ROLLOUT_MATCHES

    most_candidates = LIMITS["candidates"][1] + 3  # the discards, plus the base's, expert's and the knock
    assert most_candidates * LIMITS["rollouts"][1] <= MAX_ROLLOUT_MATCHES


def test_a_determinisation_with_a_given_hand_deals_that_hand_and_the_rest_to_the_stock():
    """deal_all(..., given=): the opponent holds exactly the given hand, the stock is the other unseen cards, and
    the stock's order differs between determinisations (it is drawn, not copied)."""
    agent, shuffled = SearchAgent(), False
    for env, obs, _ in _positions(num_envs=8, steps=40, seed=5):
        real = env.engine.state
        n = obs.shape[0]
        rows = np.repeat(np.arange(n), 2)
        arrays = EngineState.allocate(2 * n).arrays()
        me = real.match[rows, M_PLAYER]
        given = real.hands[rows, 1 - me].astype(np.int64)
        deal_all(obs, rows, np.tile(np.arange(2), n), agent._row_seeds(obs), 0.5, arrays, agent.params, given)
        s = EngineState(*arrays)
        assert np.array_equal(s.hands[np.arange(2 * n), 1 - me], given)
        assert np.array_equal(s.hands[np.arange(2 * n), me], real.hands[rows, me])
        stocks = [real.deck[r, real.match[r, M_STOCK_POS] :].tolist() for r in range(n)]
        orders = [s.deck[m, s.match[m, M_STOCK_POS] :].tolist() for m in range(2 * n)]
        assert all(sorted(orders[m]) == sorted(stocks[rows[m]]) for m in range(2 * n))
        shuffled |= any(orders[2 * r] != orders[2 * r + 1] for r in range(n))
    assert shuffled


def _recorded_positions(seed: int = 7, steps: int = 40):
    """(observations, masks, histories) of the player to act in four expert-vs-expert matches, step by step."""
    engine = Engine(4)
    engine.new_matches(seeds=np.arange(seed, seed + 4, dtype=np.uint64))
    views = [HistoryRecorder(engine, np.full(4, seat)) for seat in (0, 1)]
    obs, masks = np.zeros((4, OBS_SIZE), dtype=np.float32), np.zeros((4, NUM_ACTIONS), dtype=np.int8)
    expert = ExpertAgent()
    for _ in range(steps):
        players, live = engine.current_player.copy(), ~engine.done
        encode_rows(engine.threads, players, live, engine.arrays, engine.params, obs, masks)
        rows = np.flatnonzero(live)
        histories = [views[int(players[m])].histories[m].copy() for m in rows]
        yield obs[rows].copy(), masks[rows].copy(), histories
        actions = np.zeros(4, dtype=np.int64)
        actions[rows] = expert.act(obs[rows], masks[rows])
        engine.step(actions, live)
        for view in views:
            view.record(actions, live)


def test_a_history_belief_needs_one_history_per_row_from_the_rows_seat():
    """belief=self and belief=expert read the hand's history: without histories, with too few, or with another
    seat's, `act` refuses by name; the tilted belief ignores them."""
    obs, masks, histories = next(_recorded_positions())
    agent = SearchAgent(rollouts=2, belief="self", decisions="discard")
    with pytest.raises(ValueError, match="reads the hand's history"):
        agent.act(obs, masks)
    with pytest.raises(ValueError, match="3 given for 4 observation rows"):
        agent.act(obs, masks, histories[:3])
    other = [HandHistory(1 - h.viewer, h.dealer, h.hand, h.upcard) for h in histories]
    with pytest.raises(ValueError, match="view; row 0 is seat"):
        agent.act(obs, masks, other)
    assert SearchAgent(rollouts=2).act(obs, masks).shape == (4,)


@pytest.mark.slow  # history beliefs at every discard of a few expert hands (about 30 s): CI's second command runs it
@pytest.mark.parametrize("belief", ["self", "expert"])
def test_a_history_belief_search_plays_legal_discards_deterministically_and_only_where_asked(belief, monkeypatch):
    """decisions=discard with a history belief: legal actions, the base's action outside the discard phase, the
    same actions for the same seed whatever the batch's order, and the search does overrule the base somewhere."""
    small = {**BELIEF_OPTIONS[belief], "particles": 64, "moves": 2}  # the plumbing, not the belief's quality
    monkeypatch.setitem(BELIEF_OPTIONS, belief, small)
    agent = SearchAgent(rollouts=16, z=0.0, belief=belief, decisions="discard", seed=2)
    twin = SearchAgent(rollouts=16, z=0.0, belief=belief, decisions="discard", seed=2)
    expert, changed = ExpertAgent(), 0
    for obs, masks, histories in _recorded_positions(steps=30):
        actions = agent.act(obs, masks, histories)
        assert masks[np.arange(len(actions)), actions].all()
        drawing = ~masks[:, DISCARD_BASE:].any(axis=1)
        assert np.array_equal(actions[drawing], expert.act(obs[drawing], masks[drawing]))
        order = np.arange(len(actions))[::-1]
        reordered = twin.act(obs[order], masks[order], [histories[i] for i in order])
        assert np.array_equal(actions[order], reordered)
        changed += int((actions != expert.act(obs, masks)).sum())
    assert changed > 0


@pytest.mark.slow  # two short duplicate chunks with a history belief (about 40 s): CI's second command runs it
def test_evaluate_keeps_each_sides_histories_for_an_agent_that_reads_them():
    """play_chunk hands a history-reading agent one history per row, from its own seat and of the hand being
    played, and the same seed replays the same record."""
    seen = []

    class Reader(ExpertAgent):
        needs_history = True

        def act(self, observations, action_masks, histories=None):
            for row, history in zip(observations, histories, strict=True):
                assert history.viewer == int(round(float(row[O_SEAT])))
                seen.append(len(history.actions))
            return super().act(observations, action_masks)

    plain = play_chunk((ExpertAgent(), ExpertAgent()), 4, seed=3, start=0, stop=4, max_decisions=80)
    read = play_chunk((Reader(), ExpertAgent()), 4, seed=3, start=0, stop=4, max_decisions=80)
    assert (read.decisions, read.points, read.hands) == (plain.decisions, plain.points, plain.hands)
    assert len(seen) == read.decisions[0] and max(seen) > 4 and 0 in seen  # a hand's first decision: no actions yet
    spec = "search:rollouts=8,belief=self,decisions=discard,policy=greedy"
    first = play_chunk((load_agent(spec, seed=1), ExpertAgent()), 2, seed=4, start=0, stop=2, max_decisions=40)
    again = play_chunk((load_agent(spec, seed=1), ExpertAgent()), 2, seed=4, start=0, stop=2, max_decisions=40)
    assert (first.decisions, first.points, first.illegal) == (again.decisions, again.points, [0, 0])
