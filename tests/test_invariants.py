"""Property tests over random masked playouts of whole series (RULES.md §6, I1-I7), on the batched `Engine`.

Each playout runs N matches at once. The policy picks among the legal actions only (the legal mask): with
probability EPS uniformly, otherwise greedily (knock when legal, else throw the card that leaves the least
deadwood), so that hands end and series finish. After every step every invariant is checked against a copy
of the state taken before the step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.state import EngineState
from hollywood_gin_env.rules.actions import (
    ACTION_DRAW_STOCK,
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    KNOCK_BASE,
    NUM_ACTIONS,
)
from hollywood_gin_env.rules.cards import CARD_VALUES
from hollywood_gin_env.rules.melds import BIG, discard_deadwoods_mask, min_deadwood_mask
from hollywood_gin_env.rules.options import MAX_HAND_TURNS, Rules
from hollywood_gin_env.rules.scoring import KIND_DEAD, KIND_GIN, KIND_KNOCK, KIND_NAMES, KIND_UNDERCUT
from hollywood_gin_env.rules.showdown import showdown

FULL = (1 << 52) - 1
EPS = 0.25
#: The arrays that describe the game (not the last step); a refused action leaves them as they were.
GAME_ARRAYS = [f for f in EngineState._fields if f != "last_step"]

CONFIGS = {
    "default": Rules(),
    "may_take_to_knock": Rules(last_discard_rule="may_take_to_knock"),
    "alternate": Rules(dealer_rule="alternate"),
    "loser_deals_when_decided": Rules(dealer_rule="loser_deals", hollywood_series_end="when_decided"),
    "rediscard": Rules(allow_rediscard_taken_card=True),
    "one_game": Rules(num_games=1),
    "target_50_win_count": Rules(game_target=50, hollywood_entry_rule="win_count"),
    "win_count": Rules(hollywood_entry_rule="win_count"),
    "modern_boxes_to_target": Rules(
        game_bonus=100, box_bonus=25, shutout_rule="double", boxes_count_toward_target=True
    ),
    "net_points_bonuses": Rules(
        game_bonus=100, box_bonus=20, shutout_rule="flat_100", series_winner_rule="net_points", knock_limit=7
    ),
    "eaai": Rules.preset("eaai"),
    "classic": Rules.preset("classic"),
}


# --- the policy ------------------------------------------------------------------------------------------


def choose_actions(engine: Engine, rng: np.random.Generator, eps: float = EPS) -> np.ndarray:
    """One legal action per match (0 for matches that are over): eps-uniform, else greedy."""
    state, legal = engine.state, engine.legal_mask.astype(bool)
    scores = np.where(legal, rng.random(legal.shape), -np.inf)
    greedy = (rng.random(engine.num_matches) >= eps) & (state.match[:, col.M_PHASE] == col.PHASE_DISCARD)
    after = np.empty(52, dtype=np.int64)
    for i in np.flatnonzero(greedy):
        discard_deadwoods_mask(state.hands[i, state.match[i, col.M_PLAYER]], after)
        bonus = np.where(after < BIG, 200.0 - after, 0.0)
        scores[i, DISCARD_BASE:KNOCK_BASE] += bonus
        scores[i, KNOCK_BASE:] += 1000.0 + bonus
    actions = scores.argmax(axis=1)
    actions[~legal.any(axis=1)] = 0
    return actions


# --- checks ----------------------------------------------------------------------------------------------


def popcount(masks: np.ndarray) -> np.ndarray:
    """Set bits of each int64 mask."""
    return np.bitwise_count(masks).astype(np.int64)


def check_cards(state: EngineState) -> None:
    """I1 (52 cards, each in one place), hand sizes by phase, and I2 (stock sizes)."""
    pos, n = np.arange(52), len(state.match)
    assert (np.sort(state.deck, axis=1) == pos).all(), "the deal's deck is not a permutation of 52 cards"
    stock_pos, pile_len, phase = (
        state.match[:, col.M_STOCK_POS],
        state.match[:, col.M_PILE_LEN],
        state.match[:, col.M_PHASE],
    )
    stock = np.bitwise_or.reduce(np.where(pos >= stock_pos[:, None], np.left_shift(1, state.deck), 0), axis=1)
    pile = np.bitwise_or.reduce(np.where(pos < pile_len[:, None], np.left_shift(1, state.pile), 0), axis=1)
    over = phase == col.PHASE_OVER
    knock_discard = np.where(over, np.left_shift(1, np.maximum(state.last_hand[:, col.R_DISCARD], 0)), 0)
    parts = [state.hands[:, 0], state.hands[:, 1], stock, pile, knock_discard]
    assert (np.bitwise_or.reduce(parts) == FULL).all(), "I1: a card is missing"
    assert (sum(popcount(p) for p in parts) == 52).all(), "I1: a card is in two places"
    sizes = popcount(state.hands)
    player = state.match[:, col.M_PLAYER]
    to_act = sizes[np.arange(n), player]
    other = sizes[np.arange(n), 1 - player]
    assert (to_act == np.where(phase == col.PHASE_DISCARD, 11, 10)).all() and (other == 10).all(), "hand sizes"
    stock_size = 52 - stock_pos
    turn_start = (phase == col.PHASE_DRAW) | (phase == col.PHASE_OFFER_NONDEALER) | (phase == col.PHASE_OFFER_DEALER)
    assert (stock_size[turn_start] >= 3).all(), "I2: a turn starts with fewer than 3 stock cards"
    assert (stock_size >= 2).all(), "I2: the stock went below 2"
    assert (stock_size[phase == col.PHASE_LAST_DISCARD] == 2).all()
    assert (stock_size[(phase == col.PHASE_OFFER_NONDEALER) | (phase == col.PHASE_OFFER_DEALER)] == 31).all(), "R4"


def check_fresh_deal(state: EngineState, i: int) -> None:
    """R3, R4: match i's hand was just dealt from its deck."""
    deck = state.deck[i]
    dealer = int(state.match[i, col.M_DEALER])
    assert state.hands[i, 1 - dealer] == sum(1 << int(c) for c in deck[0:20:2]), "R3: the non-dealer's cards"
    assert state.hands[i, dealer] == sum(1 << int(c) for c in deck[1:20:2]), "R3: the dealer's cards"
    match = state.match[i]
    assert match[col.M_PILE_LEN] == 1 and state.pile[i, 0] == deck[20] and match[col.M_STOCK_POS] == 21, "R3, R4"
    assert (match[col.M_PHASE], match[col.M_PLAYER], match[col.M_TAKEN], match[col.M_MUST_KNOCK]) == (
        col.PHASE_OFFER_NONDEALER,
        1 - dealer,
        -1,
        0,
    )


def check_hand_in_progress(state: EngineState, before: EngineState, quiet: np.ndarray) -> None:
    """Within a hand the deck order stays, the stock only shrinks by one, and the pile only grows or shrinks
    at its top (R8)."""
    assert (state.deck[quiet] == before.deck[quiet]).all()
    drawn = state.match[quiet, col.M_STOCK_POS] - before.match[quiet, col.M_STOCK_POS]
    assert ((drawn == 0) | (drawn == 1)).all()
    new_len, old_len = state.match[quiet, col.M_PILE_LEN], before.match[quiet, col.M_PILE_LEN]
    assert (np.abs(new_len - old_len) <= 1).all()
    kept = np.arange(52) < np.minimum(new_len, old_len)[:, None]
    assert (state.pile[quiet][kept] == before.pile[quiet][kept]).all(), "R8: the pile changed below its top"
    assert (state.match[quiet, col.M_HAND_NO] == before.match[quiet, col.M_HAND_NO]).all()


def expected_legal(state: EngineState, i: int, rules: Rules) -> set[int]:
    """The legal actions of match i written from RULES.md R5-R12, R28 (min_deadwood per discard)."""
    phase = state.match[i, col.M_PHASE]
    if phase in (col.PHASE_OFFER_NONDEALER, col.PHASE_OFFER_DEALER, col.PHASE_LAST_DISCARD):
        return {ACTION_TAKE, ACTION_PASS}
    if phase == col.PHASE_DRAW:
        return {ACTION_DRAW_STOCK, ACTION_TAKE}
    if phase == col.PHASE_OVER:
        return set()
    hand, out = int(state.hands[i, state.match[i, col.M_PLAYER]]), set()
    for c in range(52):
        if not hand >> c & 1 or (c == state.match[i, col.M_TAKEN] and not rules.allow_rediscard_taken_card):
            continue
        if not state.match[i, col.M_MUST_KNOCK]:
            out.add(DISCARD_BASE + c)
        if min_deadwood_mask(hand & ~(1 << c)) <= rules.knock_limit:
            out.add(KNOCK_BASE + c)
    return out


def expected_credited(before: EngineState, i: int, winner: int, rules: Rules) -> int:
    """R32 cascade (or A12 win_count) from the sheet before the hand, as a bit mask."""
    open_games = [g for g in range(rules.num_games) if before.game_winner[i, g] < 0]
    if rules.hollywood_entry_rule == "win_count":
        wins = before.hand_wins[i, winner] + 1
        return sum(1 << g for g in open_games if g < wins)
    if not open_games:
        return 0
    low = open_games[0]
    return (1 << low) | sum(1 << g for g in open_games if g > low and before.entries[i, g - 1, winner] > 0)


def expected_score(k: int, d: int, rules: Rules) -> tuple[int, bool, int]:
    """R22-R24: (kind, knocker wins, points)."""
    if k == 0:
        return KIND_GIN, True, rules.gin_bonus + d
    if k < d or (k == d and not rules.undercut_on_tie):
        return KIND_KNOCK, True, d - k
    return KIND_UNDERCUT, False, rules.undercut_bonus + k - d


def expected_dealer(dealer: int, winner: int, rules: Rules) -> int:
    """R29, R30, A11."""
    if winner < 0:
        return dealer
    return {"winner_deals": winner, "alternate": 1 - dealer, "loser_deals": 1 - winner}[rules.dealer_rule]


def sheet_of(state: EngineState, i: int) -> list:
    """Match i's score sheet as lists."""
    arrays = (state.totals, state.entries, state.game_winner, state.game_net, state.hand_wins)
    return [a[i].tolist() for a in arrays]


def check_showdown(state: EngineState, before: EngineState, i: int, rules: Rules) -> int:
    """I3, I4 for a knock in match i; returns the hand winner."""
    last = state.last_hand[i]
    knocker = int(last[col.R_KNOCKER])
    assert knocker == before.match[i, col.M_PLAYER] and before.match[i, col.M_PHASE] == col.PHASE_DISCARD
    kh, dh, card = int(last[col.R_KNOCKER_HAND]), int(last[col.R_DEFENDER_HAND]), int(last[col.R_DISCARD])
    assert kh | (1 << card) == before.hands[i, knocker] and not kh >> card & 1, "I1: the knock discard"
    assert dh == before.hands[i, 1 - knocker], "the defender's hand changed"
    k, d, points = int(last[col.R_KNOCKER_DW]), int(last[col.R_DEFENDER_DW]), int(last[col.R_POINTS])
    assert k == min_deadwood_mask(kh) <= rules.knock_limit, "R12, R13: the knocker's deadwood"
    own = min_deadwood_mask(dh)
    total = sum(int(CARD_VALUES[c]) for c in range(52) if dh >> c & 1)
    assert d <= own <= total, "I4"
    if k == 0:
        assert d == own, "I3, R16: no layoffs after gin"
    kind, knocker_wins, expected_points = expected_score(k, d, rules)
    winner = knocker if knocker_wins else 1 - knocker
    assert (last[col.R_KIND], last[col.R_WINNER], points) == (kind, winner, expected_points), "R22-R24"
    floor = {
        KIND_GIN: rules.gin_bonus,
        KIND_KNOCK: 1 if rules.undercut_on_tie else 0,
        KIND_UNDERCUT: rules.undercut_bonus,
    }[kind]
    assert points >= floor, "I3"
    return winner


def check_hand_end(state: EngineState, before: EngineState, i: int, rules: Rules) -> None:
    """A hand just ended in match i: I3-I5, R26, R30, R32 (the sheet change), the next deal."""
    last = state.last_hand[i]
    if last[col.R_KIND] == KIND_DEAD:
        stock_before = 52 - before.match[i, col.M_STOCK_POS]
        assert stock_before == 2 or last[col.R_TURNS] == MAX_HAND_TURNS, "R26, A22: a hand dies with 2 stock cards"
        assert last[col.R_WINNER] == -1 and last[col.R_POINTS] == 0 and last[col.R_CREDITED] == 0
        assert sheet_of(state, i) == sheet_of(before, i), "I5: a dead hand changed the sheet"
        assert state.match[i, col.M_DEALER] == before.match[i, col.M_DEALER], "I5, R29: a dead hand changed the dealer"
        assert (
            state.match[i, col.M_PHASE] != col.PHASE_OVER
            and state.match[i, col.M_HAND_NO] == before.match[i, col.M_HAND_NO] + 1
        )
        check_fresh_deal(state, i)
        return
    winner = check_showdown(state, before, i, rules)
    points, credited = int(last[col.R_POINTS]), int(last[col.R_CREDITED])
    assert credited == expected_credited(before, i, winner, rules), "R32 / A12: credited games"
    wins = before.hand_wins[i].copy()
    wins[winner] += 1
    assert (state.hand_wins[i] == wins).all(), "I5: exactly the winner's win count goes up"
    for g in range(3):
        step = int(credited >> g & 1)
        assert state.entries[i, g, winner] == before.entries[i, g, winner] + step
        assert state.totals[i, g, winner] == before.totals[i, g, winner] + step * points
        assert state.entries[i, g, 1 - winner] == before.entries[i, g, 1 - winner], "I5: loser credited"
        assert state.totals[i, g, 1 - winner] == before.totals[i, g, 1 - winner], "I5: loser credited"
    assert state.match[i, col.M_DEALER] == expected_dealer(int(before.match[i, col.M_DEALER]), winner, rules), "R30"
    if state.match[i, col.M_PHASE] != col.PHASE_OVER:
        check_fresh_deal(state, i)
        assert state.match[i, col.M_HAND_NO] == before.match[i, col.M_HAND_NO] + 1


def box_score(state: EngineState, rules: Rules) -> np.ndarray:
    """totals, plus boxes where they count toward the target: [N, 3, 2]."""
    return state.totals + rules.boxes_count_toward_target * rules.box_bonus * state.entries


def expected_net(state: EngineState, i: int, g: int, rules: Rules) -> int:
    """R39: the closed game's net to its winner."""
    w = int(state.game_winner[i, g])
    tot, ent, box = state.totals[i, g], state.entries[i, g], rules.box_bonus
    net = int(tot[w] + rules.game_bonus + box * ent[w] - tot[1 - w] - box * ent[1 - w])
    if ent[1 - w] == 0:
        net = {"none": net, "double": 2 * net, "flat_100": net + 100}[rules.shutout_rule]
    return net


def check_sheet(state: EngineState, before: EngineState, stepped: np.ndarray, rules: Rules) -> None:
    """I6, I7 and R37 on every stepped match."""
    ng = rules.num_games
    was_closed, closed = before.game_winner >= 0, state.game_winner >= 0
    assert (state.game_winner[:, ng:] == -1).all() and (state.totals[:, ng:] == 0).all(), "games past num_games"
    for arr in ("totals", "entries"):
        now, then = getattr(state, arr), getattr(before, arr)
        assert (now[was_closed] == then[was_closed]).all(), "I7: a closed game changed"
    assert (state.game_winner[was_closed] == before.game_winner[was_closed]).all(), "I7"
    assert (state.game_net[was_closed] == before.game_net[was_closed]).all(), "I7"
    assert (closed | ~was_closed).all()
    score = box_score(state, rules)
    still_open = ~closed[:, :ng]
    assert (score[:, :ng][still_open] < rules.game_target).all(), "I7: an open game reached the target"
    for g in range(1, ng):
        prev_open = ~closed[:, g - 1]
        assert (state.entries[prev_open, g] <= state.entries[prev_open, g - 1]).all(), "I6: entries"
        assert (state.totals[prev_open, g] <= state.totals[prev_open, g - 1]).all(), "I6: totals"
        assert (closed[:, g] <= closed[:, g - 1]).all(), "I6: close order"
    for i, g in zip(*np.nonzero(closed & ~was_closed), strict=True):
        last = state.last_hand[i]
        assert stepped[i] and state.last_step[i, col.S_HAND_OVER] and last[col.R_CREDITED] >> g & 1, (
            "I7: closed uncredited"
        )
        assert last[col.R_CLOSED] >> g & 1 and state.game_winner[i, g] == last[col.R_WINNER]
        assert score[i, g, last[col.R_WINNER]] >= rules.game_target
        assert state.game_net[i, g] == expected_net(state, i, g, rules), "R39"
    check_series(state, before, stepped, rules)


def check_series(state: EngineState, before: EngineState, stepped: np.ndarray, rules: Rules) -> None:
    """R37, I7: the series ends exactly when it is decided, and the winner is right."""
    ng = rules.num_games
    closed = state.game_winner[:, :ng] >= 0
    wins = np.stack([(state.game_winner[:, :ng] == p).sum(axis=1) for p in (0, 1)], axis=1)
    decided = closed.all(axis=1)
    if rules.hollywood_series_end == "when_decided":
        decided |= (2 * wins > ng).any(axis=1)
    done = state.match[:, col.M_PHASE] == col.PHASE_OVER
    assert (done == decided).all(), "R37: the series ended at the wrong time"
    assert (
        state.last_step[stepped, col.S_DONE_NOW] == (done & ~(before.match[:, col.M_PHASE] == col.PHASE_OVER))[stepped]
    ).all()
    net = np.stack(
        [np.where(state.game_winner[:, :ng] == p, state.game_net[:, :ng], 0).sum(axis=1) for p in (0, 1)], axis=1
    )
    by_games = np.where(wins[:, 0] > wins[:, 1], 0, 1)
    if rules.series_winner_rule == "net_points":
        expected = np.where(net[:, 0] != net[:, 1], np.where(net[:, 0] > net[:, 1], 0, 1), by_games)
    else:
        expected = by_games
        assert (2 * wins[done].max(axis=1) > ng).all(), "I7: the series winner has fewer than 2 games"
    assert (state.match[done, col.M_WINNER] == expected[done]).all(), "R37: series winner"
    assert (state.match[~done, col.M_WINNER] == -1).all()


def check_step(engine: Engine, before: EngineState, stepped: np.ndarray, rules: Rules, check_mask: bool) -> dict:
    """Every invariant after one step; returns counts of what happened."""
    state = engine.state
    assert not engine.illegal[stepped].any(), "a legal action was refused"
    check_cards(state)
    ended = np.flatnonzero(stepped & engine.hand_over)
    quiet = stepped & ~engine.hand_over
    for arr in ("totals", "entries", "game_winner", "game_net", "hand_wins"):
        assert (getattr(state, arr)[quiet] == getattr(before, arr)[quiet]).all(), "the sheet changed mid-hand"
    assert (state.match[quiet, col.M_DEALER] == before.match[quiet, col.M_DEALER]).all()
    check_hand_in_progress(state, before, quiet)
    for i in ended:
        check_hand_end(state, before, i, rules)
    check_sheet(state, before, stepped, rules)
    if check_mask:
        for i in range(engine.num_matches):
            assert set(np.flatnonzero(engine.legal_mask[i])) == expected_legal(state, i, rules), "legal mask"
    kinds = state.last_hand[ended, col.R_KIND]
    return {"hands": len(ended), "dead": int((kinds == KIND_DEAD).sum()), "gin": int((kinds == KIND_GIN).sum())}


def copy_state(state: EngineState) -> EngineState:
    """A deep copy of an engine state."""
    return EngineState(*[a.copy() for a in state.arrays()])


def check_illegal_step(engine: Engine, rng: np.random.Generator) -> None:
    """An illegal action (one per match, over matches included) sets `illegal` and changes no game array."""
    legal = engine.legal_mask.astype(bool)
    wide = np.concatenate([~legal, np.ones((engine.num_matches, 2), dtype=bool)], axis=1)  # -1 and 107 too
    choice = np.where(wide, rng.random(wide.shape), -1.0).argmax(axis=1)
    actions = np.where(choice == NUM_ACTIONS, -1, choice)
    actions = np.where(choice == NUM_ACTIONS + 1, NUM_ACTIONS, actions)
    before = copy_state(engine.state)
    engine.step(actions)
    assert engine.illegal.all(), "an illegal action was accepted"
    for name in GAME_ARRAYS:
        assert (getattr(engine.state, name) == getattr(before, name)).all(), f"a refused action changed {name}"


def check_every_legal_action(engine: Engine, i: int) -> None:
    """Apply each legal action of match i to its own copy: none is refused."""
    actions = np.flatnonzero(engine.legal_mask[i])
    scratch = Engine(len(actions), engine.rules)
    for j in range(len(actions)):
        engine.state.copy_match(i, scratch.state, j)
    scratch.step(actions)
    assert not scratch.illegal.any()


def playout(rules: Rules, n: int, seed: int, max_steps: int, eps: float = EPS, check_mask_every: int = 4) -> dict:
    """Play n matches to their end (or max_steps) checking every invariant after every step."""
    engine = Engine(n, rules)
    engine.new_matches(seeds=np.arange(n, dtype=np.uint64) + np.uint64(1000 * seed))
    rng = np.random.default_rng(seed)
    check_cards(engine.state)
    for i in range(n):
        check_fresh_deal(engine.state, i)
    stats = {"hands": 0, "dead": 0, "gin": 0, "steps": 0}
    while not engine.done.all() and stats["steps"] < max_steps:
        step = stats["steps"]
        if step % 9 == 4:
            check_illegal_step(engine, rng)
        if step % 25 == 3:
            check_every_legal_action(engine, int(rng.choice(np.flatnonzero(~engine.done))))
        actions = choose_actions(engine, rng, eps)
        stepped = ~engine.done
        before = copy_state(engine.state)
        engine.step(actions, stepped)
        for key, value in check_step(engine, before, stepped, rules, step % check_mask_every == 0).items():
            stats[key] += value
        stats["steps"] += 1
    stats["finished"] = int(engine.done.sum())
    return stats


# the default rules in the quick tier; every other configuration in CI's second command (about 7 s each)
SERIES_CONFIGS = [pytest.param(name, marks=() if name == "default" else pytest.mark.slow) for name in CONFIGS]


@pytest.mark.parametrize("name", SERIES_CONFIGS)
def test_random_series_keep_every_invariant(name):
    """I1-I7 after every step of 200 whole series under each rule configuration (2,000 series in all)."""
    stats = playout(CONFIGS[name], n=200, seed=len(name), max_steps=5000)
    assert stats["finished"] == 200, stats
    assert stats["hands"] > 400 and stats["dead"] > 0 and stats["gin"] > 0, stats


def test_gin_only_playout_keeps_every_invariant():
    """knock_limit=0 (gin only): series are long, so a fixed number of steps; the invariants still hold."""
    stats = playout(Rules(knock_limit=0), n=64, seed=11, max_steps=600)
    assert stats["gin"] > 0 and stats["hands"] > stats["gin"], stats


def test_uniform_random_playout_keeps_every_invariant():
    """Purely uniform legal actions (no greedy part): long hands, many dead ones; invariants hold."""
    stats = playout(Rules(), n=64, seed=5, max_steps=400, eps=1.0)
    assert stats["dead"] > 0, stats


@pytest.mark.nojit
def test_tiny_playout_keeps_every_invariant():
    """A short playout of 3 matches, 400 steps (also run in plain Python under NUMBA_DISABLE_JIT=1)."""
    stats = playout(Rules(last_discard_rule="may_take_to_knock"), n=3, seed=2, max_steps=400, check_mask_every=1)
    assert stats["hands"] > 5, stats


def test_same_seeds_same_arrays():
    """Same seeds and the same actions give identical state arrays after every step."""
    engines = [Engine(32, Rules()) for _ in range(2)]
    for engine in engines:
        engine.new_matches(seeds=np.arange(32, dtype=np.uint64) * np.uint64(77))
    rng = np.random.default_rng(0)
    for _ in range(600):
        actions = choose_actions(engines[0], rng)
        for engine in engines:
            engine.step(actions, ~engine.done)
        for a, b in zip(engines[0].state.arrays(), engines[1].state.arrays(), strict=True):
            assert (a == b).all()
    assert engines[0].state.match[:, col.M_HAND_NO].max() > 1  # several hands were dealt


@pytest.mark.parametrize("seed", range(4))
def test_game_playouts_match_the_log(seed):
    """Whole series through `Game`: the log's hand results add up to the sheet, and the log replays."""
    rules = [Rules(), Rules(num_games=1), Rules(hollywood_entry_rule="win_count"), Rules(game_target=60)][seed]
    game = Game(rules, seed=seed)
    rng = np.random.default_rng(seed)
    while not game.done:
        legal = game.legal_actions()
        knocks = [a for a in legal if a >= KNOCK_BASE]
        if not knocks and game.phase == "discard":  # greedy: throw the card that leaves the least deadwood
            hand = sum(1 << c for c in game.hand(game.current_player))
            legal = sorted(legal, key=lambda a: min_deadwood_mask(hand & ~(1 << (a - DISCARD_BASE))))[:2]
        game.step(int(rng.choice(knocks or legal)))
        assert len(game.hand(0)) + len(game.hand(1)) + len(game.discard_pile) + game.stock_size == 52 - game.done
    totals = np.zeros((3, 2), dtype=np.int64)
    for event in game.events:
        if event["type"] == "hand_result" and event["kind"] != "dead":
            for g in event["credited_games"]:
                totals[g, event["winner"]] += event["points"]
    assert totals[: rules.num_games].tolist() == game.score_sheet["totals"]
    closes = [e for e in game.events if e["type"] == "game_close"]
    assert sorted(e["game"] for e in closes) == list(range(rules.num_games))
    assert game.events[-1] == {"type": "match_end", "winner": game.winner}
    assert Game.replay(game.events).events == game.events


@settings(max_examples=40, deadline=None)
@given(
    deck=st.permutations(range(52)),
    dealer=st.sampled_from([0, 1]),
    picks=st.lists(st.integers(0, 10**6), min_size=120, max_size=120),
)
def test_any_fixed_deck_deals_by_r3_and_scores_by_r22_r24(deck, dealer, picks):
    """Any deck is dealt as R3 says; random legal play (knocks first) conserves the cards, and every knock
    scores what showdown.showdown and R22-R24 give for the two hands at the knock."""
    game = Game(Rules(), seed=0, deck=deck, first_dealer=dealer)
    assert game.hand(1 - dealer) == sorted(deck[0:20:2]) and game.hand(dealer) == sorted(deck[1:20:2])
    assert game.discard_pile == [deck[20]] and game.stock_size == 31
    for pick in picks:
        legal = game.legal_actions()
        knocks = [a for a in legal if a >= KNOCK_BASE]
        action = (knocks or legal)[pick % len(knocks or legal)]
        player, hands = game.current_player, (game.hand(0), game.hand(1))
        game.step(action)
        assert len(game.hand(0)) + len(game.hand(1)) + len(game.discard_pile) + game.stock_size == 52 - game.done
        if action >= KNOCK_BASE:
            knocker = [c for c in hands[player] if c != action - KNOCK_BASE]
            spread = showdown(knocker, hands[1 - player])
            kind, knocker_wins, points = expected_score(
                spread["knocker_deadwood"], spread["defender_deadwood"], game.rules
            )
            result = game.last_result
            assert (result["kind"], result["points"], result["knocker"]) == (KIND_NAMES[kind], points, player)
            assert result["winner"] == (player if knocker_wins else 1 - player)
        if game.done:
            break
