"""The EAAI baseline player `simple` (agents/simple.py): its three decisions on hand-made positions and on positions
of real play (checked against the meld solver), its seeded tie-breaks on every thread count, and its agreement with
OpenSpiel's port of the same player (`pyspiel.make_simple_gin_rummy_bot`) over thousands of decisions.

Hands are written with this package's suits S H D C; OpenSpiel's card ids are the same numbers with its suits s c d
h, a relabelling of suits that keeps every meld, so the ids pass between the two unchanged.
"""

from __future__ import annotations

import itertools
from collections import Counter
from typing import NamedTuple

import numpy as np
import pytest

from hollywood_gin_env.agents import RandomAgent, SimpleAgent, load_agent
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.engine.observation import OBS_LAYOUT
from hollywood_gin_env.rules.actions import (
    ACTION_DRAW_STOCK,
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    KNOCK_BASE,
    describe_action,
)
from hollywood_gin_env.rules.cards import CARD_VALUES, cards_str, from_mask, parse_cards, to_mask
from hollywood_gin_env.rules.melds import MAX_ARRANGEMENTS, MAX_MELDS, min_arrangements_mask, min_deadwood
from hollywood_gin_env.rules.options import Rules
from tests.decision_rows import collect_states

HAND, FACE_UP, PHASE = (OBS_LAYOUT[k][0] for k in ("hand", "face_up", "phase"))
EAAI = Rules.preset("eaai")


def dealt(mine: str, upcard: str, theirs: str = "", rules: Rules = EAAI) -> Game:
    """A match where P0, the non-dealer (offered the upcard first), holds `mine` and P1 `theirs` (default: the lowest
    ids left); the stock is the other cards in id order."""
    own, up = parse_cards(mine), parse_cards(upcard)
    rest = [c for c in range(52) if c not in own + up]
    other = parse_cards(theirs) if theirs else rest[:10]
    stock = [c for c in rest if c not in other]
    deck = [c for pair in zip(own, other, strict=True) for c in pair] + up + stock
    return Game(rules=rules, deck=deck, first_dealer=1, seed=0)


def choices(game: Game) -> list[str]:
    """The actions `simple` chooses among for the player to act, by name."""
    view = game.observation(game.current_player)
    row = SimpleAgent().choices(view["observation"][None], view["action_mask"][None])[0]
    return sorted(describe_action(int(a)) for a in np.flatnonzero(row))


def joins_meld_by_search(hand: list[int], card: int) -> bool:
    """True if some three cards of hand + card, `card` among them, make a meld (any longer meld that holds the card
    holds such a three): all one rank, or one suit with consecutive ids."""
    for a, b in itertools.combinations(hand, 2):
        low, mid, high = sorted((a, b, card))
        if low % 13 == mid % 13 == high % 13:
            return True
        if low // 13 == high // 13 and mid == low + 1 and high == mid + 1:
            return True
    return False


# --- the three decisions on hand-made positions -----------------------------------------------------------------


@pytest.mark.nojit
def test_takes_the_face_up_card_exactly_when_it_joins_a_meld():
    """Upcard offers to 7H 8H KS KD 2C 4D 6S 9C JH QD (deadwood 61): 9H and 6H make runs with 7H 8H, KC a set with
    KS KD, so each is taken; QC and TD join nothing and are passed, and so is AC, although keeping it for QD would
    save 9 points: the framework's player looks at melds only, never at the deadwood count. The example of
    OpenSpiel's port (simple_gin_rummy_bot.h): with AC-4C, 9D-QD, 3H and JH, the upcard JS makes the set JS JH JD,
    so `simple` takes it, although that set breaks the better run (the port passes there)."""
    hand = "7H 8H KS KD 2C 4D 6S 9C JH QD"
    for upcard in ("9H", "6H", "KC"):
        assert choices(dealt(hand, upcard)) == ["take face-up card"], upcard
    for upcard in ("QC", "TD", "AC"):
        assert choices(dealt(hand, upcard)) == ["pass"], upcard
    assert choices(dealt("AC 2C 3C 4C 9D TD JD QD 3H JH", "JS")) == ["take face-up card"]


@pytest.mark.nojit
@pytest.mark.parametrize(("thrown", "expected"), [("9H", "take face-up card"), ("QC", "draw stock")])
def test_in_the_draw_phase_takes_the_discard_that_joins_a_meld_else_draws_the_stock(thrown, expected):
    """Both players pass the upcard, P0 draws its forced stock card and throws `thrown`; P1, holding 7H 8H KS KD 2C
    4D 6S 9C JH QD, takes 9H (run 7H 8H 9H) and draws from the stock rather than take QC."""
    game = dealt("9H QC AS 2S 3S 5D 6D TC TS 3H", "4C", theirs="7H 8H KS KD 2C 4D 6S 9C JH QD")
    game.step(ACTION_PASS)
    game.step(ACTION_PASS)  # P0 draws the forced stock card (R6 d)
    game.step(DISCARD_BASE + parse_cards(thrown)[0])
    assert game.phase == "draw" and game.current_player == 1
    assert choices(game) == [expected]


@pytest.mark.nojit
def test_discards_uniformly_among_the_least_deadwood_cards():
    """7H 8H KS KD 2C 4D 6S 9C JH QD takes 9H (run 7H 8H 9H): 61 deadwood left over KS KD 2C 4D 6S 9C JH QD;
    throwing any of the four ten-point cards leaves 51, the least, so those four are the choices, drawn uniformly:
    about 1,000 each of 4,000 draws from one seeded generator."""
    game = dealt("7H 8H KS KD 2C 4D 6S 9C JH QD", "9H")
    game.step(ACTION_TAKE)
    assert choices(game) == ["discard JH", "discard KD", "discard KS", "discard QD"]
    view = game.observation(0)
    picks = SimpleAgent(seed=7).act(
        view["observation"][None].repeat(4000, 0), view["action_mask"][None].repeat(4000, 0)
    )
    counts = Counter(describe_action(int(a)) for a in picks)
    assert sorted(counts) == choices(game) and min(counts.values()) > 900 and max(counts.values()) < 1100


@pytest.mark.nojit
def test_never_discards_the_face_up_card_just_taken():
    """4S-7S, 9H 9D 9C and JC QC KC is gin already; it takes the upcard 8S, which joins the run. Throwing 4S or 8S
    would each keep gin, but 8S was just taken and may not be thrown back (RULES.md R9, the framework's rule too), so
    the one choice is to go gin throwing 4S."""
    game = dealt("4S 5S 6S 7S 9H 9D 9C JC QC KC", "8S")
    assert choices(game) == ["take face-up card"]
    game.step(ACTION_TAKE)
    assert choices(game) == ["knock 4S"]


@pytest.mark.nojit
@pytest.mark.parametrize(("knock_limit", "verb"), [(10, "knock"), (5, "discard")])
def test_knocks_at_the_first_legal_chance(knock_limit, verb):
    """AS-3S, 4H-6H and 7D 8D KC QC take 9D (run 7D 8D 9D); throwing KC or QC leaves 10 deadwood. With the knock
    limit at 10 that is a knock, taken at once (either card, at random); at 5 it is not, and the same two cards are
    plain discards."""
    game = dealt("AS 2S 3S 4H 5H 6H 7D 8D KC QC", "9D", rules=EAAI.replace(knock_limit=knock_limit))
    game.step(ACTION_TAKE)
    assert choices(game) == [f"{verb} KC", f"{verb} QC"]


# --- every decision of real play, against the meld solver -------------------------------------------------------


class Stalling(RandomAgent):
    """Random, but never knocks unless it must: hands run down the stock to the last-discard offer."""

    def _act(self, observations, action_masks):
        masks = action_masks.copy()
        masks[masks[:, DISCARD_BASE:KNOCK_BASE].any(axis=1), KNOCK_BASE:] = 0
        return super()._act(observations, masks)


@pytest.fixture(scope="module")
def positions():
    """Positions of `simple` against random and greedy play under the eaai rules and under rules that allow
    throwing back a taken card (knock limit 5), and of stalling random play that reaches the last-discard offer."""
    variant = EAAI.replace(allow_rediscard_taken_card=True, knock_limit=5)
    parts = [
        collect_states(rules, (SimpleAgent(seed=1), load_agent(other, seed=2)), matches=32, steps=300, seed=seed)
        for rules in (EAAI, variant)
        for seed, other in ((0, "random"), (100, "greedy"))
    ]
    last_discard = EAAI.replace(last_discard_rule="may_take_to_knock", knock_limit=30)
    parts.append(collect_states(last_discard, (Stalling(3), Stalling(4)), matches=16, steps=300, seed=200))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def expected_choices(obs: np.ndarray, mask: np.ndarray) -> set[int]:
    """The framework player's choices, worked out with the meld solver on the hand's card list."""
    hand = np.flatnonzero(obs[HAND : HAND + 52] > 0.5).tolist()
    if obs[PHASE + col.PHASE_DISCARD] > 0.5:
        allowed = [c for c in hand if mask[DISCARD_BASE + c] or mask[KNOCK_BASE + c]]
        left = {c: min_deadwood([d for d in hand if d != c]) for c in allowed}
        return {
            (KNOCK_BASE if mask[KNOCK_BASE + c] else DISCARD_BASE) + c for c in allowed if left[c] == min(left.values())
        }
    card = int(np.argmax(obs[FACE_UP : FACE_UP + 52]))
    if mask[ACTION_TAKE] and joins_meld_by_search(hand, card):
        return {ACTION_TAKE}
    return {ACTION_DRAW_STOCK if mask[ACTION_DRAW_STOCK] else ACTION_PASS}


def test_every_choice_of_real_play_is_the_framework_players(positions):
    """On every position of the fixture, every phase among them, the choices are exactly the framework player's as
    the meld solver works them out (take iff the card joins a meld, else draw or pass; the least-deadwood cards the
    mask lets go, as knocks where a knock is legal), and `act` picks one of them, a legal action."""
    obs, masks = positions
    phases = obs[:, PHASE : PHASE + col.NUM_PHASES] > 0.5
    assert phases[:, : col.PHASE_OVER].any(axis=0).all()  # both offers, the draw, the discard and the last discard
    agent = SimpleAgent(seed=5)
    chosen, picked = agent.choices(obs, masks), agent.act(obs, masks)
    for i in range(len(obs)):
        assert set(np.flatnonzero(chosen[i]).tolist()) == expected_choices(obs[i], masks[i]), i
    assert (chosen[np.arange(len(obs)), picked] == 1).all() and (masks[np.arange(len(obs)), picked] == 1).all()
    assert (chosen.sum(axis=1) > 1).sum() > 100 and (picked >= KNOCK_BASE).sum() > 20  # ties and knocks were met


@pytest.mark.nojit
def test_joins_meld_is_a_search_over_the_melds_of_three():
    """The kernel's bit test (two more of the rank, or a run of three through the card) against the search over
    every pair of the hand, on 4,000 random hands and cards, and on the corners: ace low only, no run round the
    corner from king to ace, no run across suits."""
    from hollywood_gin_env.agents.simple import joins_meld

    rng = np.random.default_rng(0)
    for _ in range(4000):
        cards = rng.choice(52, size=11, replace=False).tolist()
        hand, card = cards[:10], cards[10]
        assert joins_meld(to_mask(hand), card) == joins_meld_by_search(hand, card), (cards_str(hand), card)
    corners = [("2S 3S", "AS", True), ("QS KS", "AS", False), ("KS AS", "2S", False), ("QS KS", "AH", False)]
    corners += [("JS QS", "KS", True), ("KS AH", "QS", False), ("AH 2H", "3H", True), ("5C 5D", "5H", True)]
    for hand, card, joins in corners:
        assert joins_meld(to_mask(parse_cards(hand)), parse_cards(card)[0]) == joins, (hand, card)


# --- seeds and threads --------------------------------------------------------------------------------------------


def test_the_same_seed_gives_the_same_actions_on_every_thread_count(positions, monkeypatch):
    """Rows split down to one-row slices on 1, 2 and 3 threads give the same actions from one seed (one uniform a
    row, drawn before the split); reset(seed) replays them; another seed breaks some ties otherwise."""
    monkeypatch.setattr("hollywood_gin_env.agents.simple.SIMPLE_GRAIN", 1)
    obs, masks = positions
    first = load_agent("simple", seed=3, num_threads=1).act(obs, masks)
    for k in (2, 3):
        assert np.array_equal(load_agent("simple", seed=3, num_threads=k).act(obs, masks), first), k
    agent = SimpleAgent(seed=4)
    other = agent.act(obs, masks)
    agent.reset(3)
    assert np.array_equal(agent.act(obs, masks), first) and not np.array_equal(other, first)


def test_load_agent_names_it_simple():
    """The built-in name, any case, as the other heuristics."""
    agent = load_agent(" Simple ", seed=0, num_threads=2)
    assert isinstance(agent, SimpleAgent) and agent.name == "simple" and agent.threads.num_threads == 2


# --- agreement with OpenSpiel's port --------------------------------------------------------------------------------

OS_TAKE, OS_STOCK, OS_PASS, OS_KNOCK = 52, 53, 54, 55  # OpenSpiel gin_rummy's ids; 0..51 discard that card
TAKE_PHASES = ("take or pass", "draw")
KNOCK_LIMIT = 10  # OpenSpiel's knock_card, the eaai preset's knock_limit


class Decision(NamedTuple):
    """One decision of `simple` in this engine, with what OpenSpiel's port chose in the same position."""

    phase: str  # "take or pass", "draw", "discard" or "knock" (a discard where either game allows a knock)
    hand: tuple[int, ...]
    face_up: int  # the card offered (take decisions), else -1
    taken: int  # the card just taken from the pile (discard decisions), else -1
    legal: frozenset[int]
    simple: int  # the action `simple` played
    choices: frozenset[int]  # the actions it chooses among
    port: int  # OpenSpiel's port's action, in this engine's ids
    port_ties: frozenset[int]  # the actions the port's documented rule allows, its arbitrary tie-breaks left open


class OpenSpielMirror:
    """The hand a `Game` (one per mirror) is playing, replayed move by move in OpenSpiel's gin_rummy.

    The non-dealer, who acts first, is OpenSpiel's player 0; the deal is replayed as OpenSpiel's chance actions
    (player 0's ten cards, player 1's, the upcard), each stock draw as the card the engine drew. The replay stops at
    a knock (the engine then scores by itself) and where OpenSpiel ends a hand the engine does not: its hand limit of
    50 takes from the pile (this engine's is 200 turns, RULES.md A22). At 2 stock cards OpenSpiel offers a knock with
    the last discard, where the eaai rules kill the hand (R26): the engine deals again, so that offer is never asked.
    """

    def __init__(self, pyspiel) -> None:
        self.pyspiel = pyspiel
        self.game = pyspiel.load_game("gin_rummy")
        self.state, self.seat, self.seen = None, {}, 0

    def follow(self, events: list[dict]) -> None:
        """Apply the events logged since the last call."""
        for event in events[self.seen :]:
            self._apply(event)
        self.seen = len(events)

    def _apply(self, event: dict) -> None:
        kind = event["type"]
        if kind == "deal":
            dealer = event["dealer"]
            self.seat = {1 - dealer: 0, dealer: 1}
            self.state = self.game.new_initial_state()
            for card in [*event["hands"][1 - dealer], *event["hands"][dealer], event["upcard"]]:
                self.state.apply_action(card)
        elif self.state is None or self.state.is_terminal():
            return
        elif kind == "pass":
            self.state.apply_action(OS_PASS)
        elif kind == "draw" and event["source"] == "stock":
            self.state.apply_action(OS_STOCK)
            self.state.apply_action(event["card"])
        elif kind == "draw":
            self.state.apply_action(OS_TAKE)
        elif kind == "discard":
            self.state.apply_action(event["card"])
        elif kind == "knock":
            self.state = None

    def to_act(self, player: int) -> bool:
        """True if OpenSpiel's hand goes on and it is `player`'s turn there too."""
        live = self.state is not None and not self.state.is_terminal()
        return live and self.state.current_player() == self.seat[player]

    def hand(self, player: int) -> list[int]:
        """The player's cards in OpenSpiel (its observation: the observer's one-hot, then the two hands' planes)."""
        seat = self.seat[player]
        tensor = np.asarray(self.state.observation_tensor(seat))
        return np.flatnonzero(tensor[2 + 52 * seat : 2 + 52 * (seat + 1)] > 0.5).tolist()

    def port_action(self, player: int) -> int:
        """The port's action in this engine's ids: its knock and the discard it then makes are one knock here."""
        bot = self.pyspiel.make_simple_gin_rummy_bot(self.game.get_parameters(), self.seat[player])
        action = bot.step(self.state)
        if action == OS_KNOCK:
            after = self.state.clone()
            after.apply_action(OS_KNOCK)
            return KNOCK_BASE + bot.step(after)
        if action < 52:
            return DISCARD_BASE + action
        return {OS_TAKE: ACTION_TAKE, OS_STOCK: ACTION_DRAW_STOCK, OS_PASS: ACTION_PASS}[action]


def best_unmelded(cards: list[int]) -> set[tuple[int, ...]]:
    """The unmelded cards of each minimum-deadwood arrangement of `cards` (the meld solver's list of them)."""
    hand = to_mask(cards)
    melds = np.zeros((MAX_ARRANGEMENTS, MAX_MELDS), dtype=np.int64)
    counts = np.zeros(MAX_ARRANGEMENTS, dtype=np.int64)
    found = min_arrangements_mask(hand, melds, counts)
    melded = [int(np.bitwise_or.reduce(melds[a, : counts[a]])) if counts[a] else 0 for a in range(found)]
    return {tuple(from_mask(hand & ~m)) for m in melded}


def value(cards) -> int:
    return int(sum(CARD_VALUES[c] for c in cards))


def port_knock_deadwood(unmelded: tuple[int, ...]) -> int:
    """OpenSpiel's deadwood of 11 cards (its MinDeadwood, which decides its knocks): one best arrangement's unmelded
    cards less the highest-ranked of them, whose value is the highest."""
    return value(unmelded) - max((int(CARD_VALUES[c]) for c in unmelded), default=0)


def port_ties(phase: str, hand: list[int], face_up: int) -> frozenset[int]:
    """The actions the port's documented policy (simple_gin_rummy_bot.h) allows, over every best arrangement of the
    cards and every card of equal points: its code breaks those ties by a fixed order, its header "arbitrarily".

    Take decisions: take iff that allows a knock at once or the card is melded in the best arrangement of hand +
    card, else draw or pass. Discard decisions: knock iff OpenSpiel's deadwood allows it, throwing a deadwood card
    worth the most points of a best arrangement of the 11 cards (with none, a card whose loss keeps gin).
    """
    if phase in TAKE_PHASES:
        other = ACTION_PASS if phase == "take or pass" else ACTION_DRAW_STOCK
        return frozenset(
            ACTION_TAKE if port_knock_deadwood(u) <= KNOCK_LIMIT or face_up not in u else other
            for u in best_unmelded([*hand, face_up])
        )
    ties = set()
    for unmelded in best_unmelded(hand):
        if not unmelded:
            ties |= {KNOCK_BASE + c for c in hand if min_deadwood([d for d in hand if d != c]) == 0}
            continue
        base = KNOCK_BASE if port_knock_deadwood(unmelded) <= KNOCK_LIMIT else DISCARD_BASE
        top = max(int(CARD_VALUES[c]) for c in unmelded)
        ties |= {base + c for c in unmelded if CARD_VALUES[c] == top}
    return frozenset(ties)


def play_against_the_port(pyspiel, matches: int, seed: int) -> tuple[list[Decision], int]:
    """`simple` plays both seats of `matches` eaai matches; at each of its decisions where OpenSpiel's replay is in
    the same position (same player to act, same hand), the port is asked too. Returns the decisions and how many
    were left out because OpenSpiel's hand had ended."""
    agent, decisions, left_out = SimpleAgent(seed=seed), [], 0
    for match in range(matches):
        game, mirror = Game(EAAI, seed=seed + match), OpenSpielMirror(pyspiel)
        while not game.done:
            mirror.follow(game.events)
            player, view = game.current_player, game.observation(game.current_player)
            obs, mask = view["observation"][None], view["action_mask"][None]
            action = int(agent.act(obs, mask)[0])
            if mirror.to_act(player):
                assert mirror.hand(player) == game.hand(player), "the replay in OpenSpiel lost track of the hand"
                decisions.append(decision(game, mirror, action, agent.choices(obs, mask)[0], mask[0]))
            else:
                left_out += 1
            game.step(action)
    return decisions, left_out


def decision(game: Game, mirror: OpenSpielMirror, action: int, chosen: np.ndarray, mask: np.ndarray) -> Decision:
    """The record of one decision of the player to act."""
    player, hand, last = game.current_player, game.hand(game.current_player), game.events[-1]
    if game.phase == "discard":
        knocks = mask[KNOCK_BASE:].any() or OS_KNOCK in mirror.state.legal_actions()
        phase, face_up = "knock" if knocks else "discard", -1
        taken = last["card"] if last["type"] == "draw" and last.get("source") == "discard" else -1
    else:
        phase, face_up, taken = ("draw" if game.phase == "draw" else "take or pass"), game.discard_pile[-1], -1
    return Decision(
        phase=phase,
        hand=tuple(hand),
        face_up=face_up,
        taken=taken,
        legal=frozenset(np.flatnonzero(mask).tolist()),
        simple=action,
        choices=frozenset(np.flatnonzero(chosen).tolist()),
        port=mirror.port_action(player),
        port_ties=port_ties(phase, hand, face_up),
    )


#: The differences between the two players that docs/EVALUATION.md documents, each with its test on a decision.
DIFFERENCES = {
    "the port throws back the card it just took (OpenSpiel allows it, RULES.md R9 does not)": lambda d: (
        d.port not in d.legal and (d.port - DISCARD_BASE) % 52 == d.taken
    ),
    "the port takes a card that joins no meld, to knock at once": lambda d: (
        d.phase in TAKE_PHASES
        and d.port == ACTION_TAKE
        and not joins_meld_by_search(list(d.hand), d.face_up)
        and min(min_deadwood([c for c in (*d.hand, d.face_up) if c != x]) for x in d.hand) <= KNOCK_LIMIT
    ),
    "simple takes a card that joins a meld, but none of a best arrangement (the port looks at that one)": lambda d: (
        d.phase in TAKE_PHASES
        and d.simple == ACTION_TAKE != d.port
        and joins_meld_by_search(list(d.hand), d.face_up)
        and min_deadwood([*d.hand, d.face_up]) == min_deadwood(list(d.hand)) + CARD_VALUES[d.face_up]
    ),
}


def explain(d: Decision) -> str | None:
    """The documented difference behind a decision where the two players part, or None where they agree."""
    if d.port in d.choices and d.simple in d.port_ties:
        return None
    return next((name for name, holds in DIFFERENCES.items() if holds(d)), "UNEXPLAINED")


#: The least share of each phase's decisions where the port's action is one of `simple`'s choices, and `simple`'s
#: one of the port's ties. The documented differences come to about 2% of take decisions and 1% of discards in
#: `simple`'s own play (docs/EVALUATION.md); the floors leave room for those and for another sample of positions,
#: and fail if the players part anywhere else at that scale.
PHASE_FLOORS = {"take or pass": 0.95, "draw": 0.95, "discard": 0.98, "knock": 0.98}
AGREEMENTS = {
    "same action": lambda d: d.simple == d.port,
    "port's among simple's choices": lambda d: d.port in d.choices,
    "simple's among the port's ties": lambda d: d.simple in d.port_ties,
}


def test_simple_agrees_with_openspiels_port_wherever_their_documented_rules_agree():
    """`simple` plays both seats of 12 eaai matches (about 3,200 decisions); at each decision OpenSpiel's port of the
    framework player (pyspiel.make_simple_gin_rummy_bot, in OpenSpiel's gin_rummy: knock card 10) decides in the
    same position, replayed move by move in OpenSpiel.

    The port is deterministic; where its documentation leaves a tie open ("ties broken arbitrarily": equal points,
    several best arrangements), `port_ties` holds every choice it allows, and each of the port's real actions is
    checked to lie in it. Per phase (take or pass, draw, discard, knock) the test prints the share of decisions
    with the same action, with the port's action among `simple`'s choices, and with `simple`'s among the port's
    ties, and holds the last two to PHASE_FLOORS. Every decision where they part must be one of the documented
    differences (DIFFERENCES, docs/EVALUATION.md): the port throws back a card it just took (R9 forbids it here),
    takes a card that joins no meld when that allows an immediate knock, and asks whether the card is melded in one
    best arrangement of hand + card where the framework's player asks whether it joins any meld."""
    pyspiel = pytest.importorskip("pyspiel", reason="OpenSpiel is in the test extra")
    decisions, left_out = play_against_the_port(pyspiel, matches=12, seed=0)
    assert len(decisions) >= 3000 and left_out < len(decisions) // 10
    assert all(d.port in d.port_ties for d in decisions), "the port's rule as restated here misses an action it took"
    print(f"\n{len(decisions)} decisions compared, {left_out} left out (OpenSpiel's hand had ended)")
    for phase, floor in PHASE_FLOORS.items():
        rows = [d for d in decisions if d.phase == phase]
        rates = [sum(map(agree, rows)) / len(rows) for agree in AGREEMENTS.values()]
        shown = ", ".join(f"{label} {100 * rate:.1f}%" for label, rate in zip(AGREEMENTS, rates, strict=True))
        print(f"{phase:>12}: {len(rows):5d} decisions; {shown}")
        assert len(rows) >= 100 and min(rates[1:]) >= floor, phase
    reasons = Counter(explain(d) for d in decisions)
    for reason, count in reasons.most_common():
        print(f"  {count:5d} {reason or 'agree'}")
    unexplained = [d for d in decisions if explain(d) == "UNEXPLAINED"]
    assert not unexplained, [(cards_str(d.hand), d) for d in unexplained[:3]]
