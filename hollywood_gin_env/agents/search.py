"""`SearchAgent`: flat Monte Carlo look-ahead over the few actions worth comparing, on sampled deals consistent with
everything the player knows.

For each decision with more than one candidate the agent samples `rollouts` determinisations of what it cannot see,
conditioned on what the observation says: the opponent holds every card it took from the pile and still has, plus
10 - that many cards drawn from the unseen ones; the stock is the rest of the unseen cards in a random order; the
discard pile, its order, the face-up card, the phase, the dealer and the turn are the observation's. Each candidate
is applied in each determinisation (the same determinisations for every candidate: common random numbers), the hand
is played to its end by the rollout policy (`policy`: `greedy`, `expert`, `bot` or `checkpoint:PATH`, for both seats) in
this package's own engine. The first candidate is the default, the action of `base` (`expert`, or any agent spec);
another is played only if its mean hand score for the player (points won, minus points lost, 0 for a dead hand)
beats the default's by more than `z` standard errors of their paired differences.

Candidates: the base's action; in the discard phase, `expert`'s action, the legal knock that leaves the least
deadwood and the `candidates` discards `expert` scores best; in the other phases every legal action (take, pass,
draw). With `decisions="knock"` only the decisions where a knock is legal are searched, with `decisions="discard"`
only the discard phase's (knock-legal decisions and plain discards); the others get the base's action.

The belief: drawn uniformly, the opponent's unknown cards rarely form melds, so its sampled hand holds far more
deadwood than a real one late in the hand and knocking looks safer than it is. `tilt` > 0 weights each sampled hand
by exp(-tilt * its deadwood), by `BELIEF_SWAPS` Metropolis swaps between the opponent's unknown cards and the stock
(`tilted_hand`); 0 is the uniform draw. The default, 0.25, was measured better than uniform at knock-legal
decisions and level with it elsewhere (docs/EVALUATION.md).

History beliefs (`belief="self"` or `"expert"`; default `"tilted"`, the above). These read the hand's history as
well (agents/belief.py: every action of the hand in order, a `HandHistory` per row, which `act` then takes as its
third argument; `needs_history` is True and evaluate.py, the envs' `opponent=` and the card table hand it one):
`sample_belief` weighs deals by how well an opponent model explains the opponent's every decision, and the
play-outs let that model play the opponent's seat. `self`: the rollout policy is the model (its masked softmax, or
its one-hot choice for a heuristic; eps 0.1, 512 particles, 16 moves: `BELIEF_OPTIONS`), for any opponent; `expert`:
the `expert` heuristic is the model and plays the opponent (belief.MEASURED), opponent-specific. Each searched row
costs a belief (about 2 s on one core for `self`) before its play-outs.

The agent reads only the observation and the mask, and with a history belief the history (never the engine of the
match it plays in); the engine it rolls out in is its own. The rules it rolls out are `rules` (default: the standard
ones): each observation's rules block must agree with them. Randomness: each row's determinisations (and belief)
are seeded from the agent's seed and the row's observation, so the same position gets the same decision whatever
batch it arrives in (the same results with any number of evaluation workers). Memory: a call's rollouts are played
`MAX_ROLLOUT_MATCHES` at a time (whole rows per batch, so the decisions do not depend on the bound).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from hollywood_gin_env._jit import njit
from hollywood_gin_env.agents._features import (
    card_masks,
    check_hand_sizes,
    phase_of,
    popcount,
    stock_size,
    turns,
)
from hollywood_gin_env.agents.base import Agent, AgentProtocol, as_batch
from hollywood_gin_env.agents.belief import (
    MEASURED,
    HandHistory,
    belief_with_retries,
    check_histories,
    choice_probabilities,
    draw_hands,
)
from hollywood_gin_env.agents.expert import (
    DEFAULT_WEIGHTS,
    SCRATCH_SHAPE,
    ExpertAgent,
    best_knock,
    discard_scores,
    expert_row,
)
from hollywood_gin_env.agents.loading import BOT_NAME, load_plain_agent
from hollywood_gin_env.agents.playout import expert_playouts
from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.engine import step_rows
from hollywood_gin_env.kernels import update_legal
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.observation import (
    O_IS_DEALER,
    O_MUST_KNOCK,
    O_RECENCY,
    O_RULES,
    O_SEAT,
    OBS_SIZE,
    encode_rows,
    rules_block,
)
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.sampling import random_below
from hollywood_gin_env.state import (
    DISCARD_BASE,
    HAND_SIZE,
    KNOCK_BASE,
    M_DEALER,
    M_HAND_NO,
    M_MUST_KNOCK,
    M_PHASE,
    M_PILE_LEN,
    M_PLAYER,
    M_STOCK_POS,
    M_TAKEN,
    M_TURNS,
    M_WINNER,
    NUM_ACTIONS,
    PHASE_DISCARD,
    PHASE_OVER,
    R_POINTS,
    R_WINNER,
    S_HAND_OVER,
    S_ILLEGAL,
    EngineState,
)
from hollywood_gin_env.threads import KernelThreads, pool

ROLLOUT_POLICIES = ("greedy", "expert", BOT_NAME)  # or "checkpoint:PATH" (a trained policy), for `policy` and `base`
# search every decision with candidates, only those where a knock is legal, or only the discard phase's (knock-legal
# decisions and plain discards: where the position gate measured the history beliefs)
DECISIONS = ("all", "knock", "discard")
#: The beliefs of the opponent's hidden cards: `tilted` reads the observation alone; `self` and `expert` read the
#: hand's history (agents/belief.py) with the rollout policy or `expert` as the opponent's model.
SEARCH_BELIEFS = ("tilted", "self", "expert")
#: sample_belief's options per history belief: model=self as the position gate ran it (docs/EVALUATION.md), expert
#: as measured (belief.MEASURED).
BELIEF_OPTIONS = {
    "self": {"model": "self", "particles": 512, "eps": 0.1, "moves": 16},
    "expert": dict(MEASURED),
}
MAX_CANDIDATES = NUM_ACTIONS  # a row never has more candidates than actions
# rollout matches held at once (about 4 KB each with their observations): a call's rows are searched in batches of
# at most this many, so memory is bounded whatever the batch and the options (the largest row is 14 * 1024 matches)
MAX_ROLLOUT_MATCHES = 2**15
MAX_ROLLOUT_STEPS = 400  # a hand ends within 2 * 31 draws and their discards; far above any real hand
BELIEF_SWAPS = 100  # Metropolis steps of the tilted belief; rounds fifteen and sixteen measured the tilt at this many
DEFAULTS = {
    "rollouts": 16,
    "candidates": 3,
    "policy": "greedy",
    "z": 2.0,
    "base": "expert",
    "tilt": 0.25,
    "decisions": "all",
    "belief": "tilted",
}
LIMITS = {"rollouts": (1, 1024), "candidates": (1, 11), "z": (0.0, 100.0), "tilt": (0.0, 5.0)}
FLOAT_OPTIONS = ("z", "tilt")


@njit
def candidate_actions(
    obs: np.ndarray, mask: np.ndarray, extra: int, w: np.ndarray, scratch: np.ndarray, out: np.ndarray
) -> int:
    """Write the row's candidates to out (expert's action first); return how many (module docstring)."""
    first = expert_row(obs, mask, w, scratch)
    out[0] = first
    n = 1
    if phase_of(obs) != PHASE_DISCARD:
        for a in range(DISCARD_BASE):
            if mask[a] and a != first:
                out[n] = a
                n += 1
        return n
    knock, _ = best_knock(obs, mask)
    if knock >= 0 and KNOCK_BASE + knock != first:
        out[n] = KNOCK_BASE + knock
        n += 1
    hand, _, took, discarded, declined, unseen = card_masks(obs)
    scores = discard_scores(hand, obs, (took, unseen, discarded | declined), w, scratch)
    for c in range(NUM_CARDS):
        if not mask[DISCARD_BASE + c] or DISCARD_BASE + c == first:
            scores[c] = 1e18
    for _ in range(extra):
        c = int(np.argmin(scores))
        if scores[c] >= 1e18:
            break
        out[n] = DISCARD_BASE + c
        n += 1
        scores[c] = 1e18
    return n


@njit
def consistent(obs: np.ndarray) -> bool:
    """True if the unseen cards are exactly the opponent's hidden cards plus the stock (every real position)."""
    _, _, took, _, _, unseen = card_masks(obs)
    return popcount(unseen) == HAND_SIZE - popcount(took) + stock_size(obs)


@njit
def determinise(
    m: int, obs: np.ndarray, seed: np.uint64, tilt: float, arrays, params: np.ndarray, given: int = -1
) -> None:
    """Write into match m of arrays one deal consistent with obs (module docstring), drawn from `seed`, the
    opponent's hidden cards weighted by exp(-tilt * its deadwood) (`tilted_hand`); or, with `given` >= 0, the
    opponent holding the hand `given` (a card mask: its taken cards plus hidden ones, e.g. a belief's sample) and the
    stock the rest of the unseen cards in a random order."""
    s = EngineState(*arrays)
    hand, pile, took, discarded, declined, unseen = card_masks(obs)
    me = int(round(obs[O_SEAT]))
    them = 1 - me
    s.rng[m] = seed
    hidden = np.empty(NUM_CARDS, dtype=np.int64)
    n = 0
    for c in range(NUM_CARDS):
        if (unseen >> c) & 1:
            hidden[n] = c
            n += 1
    for j in range(n - 1, 0, -1):  # Fisher-Yates with the match's own splitmix stream
        k = random_below(s.rng, m, j + 1)
        hidden[j], hidden[k] = hidden[k], hidden[j]
    opponent_hidden = HAND_SIZE - popcount(took)
    stock = n - opponent_hidden
    if given >= 0:
        opponent = given
        held = 0  # a stable partition: the given hand's hidden cards first, the stock after them in shuffled order
        rest = np.empty(n, dtype=np.int64)
        k = 0
        for j in range(n):
            if (given >> hidden[j]) & 1:
                hidden[held] = hidden[j]
                held += 1
            else:
                rest[k] = hidden[j]
                k += 1
        hidden[held:n] = rest[:k]
    else:
        opponent = tilted_hand(took, hidden, opponent_hidden, n, tilt, s.rng, m)
    position = NUM_CARDS - stock
    k = 0
    for c in range(NUM_CARDS):  # the cards out of the stock fill the deck's dealt part, in any order
        if not (unseen >> c) & 1 or (opponent >> c) & 1:
            s.deck[m, k] = c
            k += 1
    for j in range(stock):
        s.deck[m, position + j] = hidden[opponent_hidden + j]
    order = np.full(NUM_CARDS, 2.0)  # the pile, bottom first, by recency
    length = 0
    for c in range(NUM_CARDS):
        if (pile >> c) & 1:
            order[c] = obs[O_RECENCY + c]
            length += 1
    ranked = np.argsort(order)
    for j in range(length):
        s.pile[m, j] = ranked[j]
    s.match[m, M_PHASE] = phase_of(obs)
    s.match[m, M_PLAYER] = me
    s.match[m, M_DEALER] = me if obs[O_IS_DEALER] > 0.5 else them
    s.match[m, M_STOCK_POS] = position
    s.match[m, M_PILE_LEN] = length
    s.match[m, M_TAKEN] = -1  # unknown here; the real mask already chose the first action
    s.match[m, M_MUST_KNOCK] = 1 if obs[O_MUST_KNOCK] > 0.5 else 0
    s.match[m, M_WINNER] = -1
    s.match[m, M_HAND_NO] = 1
    s.match[m, M_TURNS] = turns(obs)
    s.hands[m, me] = hand
    s.hands[m, them] = opponent
    s.took[m, me], s.took[m, them] = 0, took
    s.discarded[m, me], s.discarded[m, them] = 0, discarded
    s.declined[m, me], s.declined[m, them] = 0, declined
    s.last_step[m, :] = 0
    s.last_hand[m, :] = 0
    s.totals[m, :, :] = 0  # a fresh score sheet: only the hand's own score is read back
    s.entries[m, :, :] = 0
    s.game_winner[m, :] = -1
    s.game_net[m, :] = 0
    s.hand_wins[m, :] = 0
    update_legal(m, s.match, s.hands, s.legal, s.discard_dw, params)


@njit
def tilted_hand(
    took: int, hidden: np.ndarray, opponent_hidden: int, n: int, tilt: float, rng: np.ndarray, m: int
) -> int:
    """The opponent's hand: `took` plus hidden[:opponent_hidden], after BELIEF_SWAPS Metropolis swaps of a card
    there with one of hidden[opponent_hidden:n] (the stock, whose order stays uniform) towards exp(-tilt * deadwood);
    hidden is permuted in place. Why: uniformly drawn hands hold far more deadwood than a real opponent's late in
    the hand, and the search then overrates knocking (EVALUATION.md)."""
    hand = took
    for j in range(opponent_hidden):
        hand |= 1 << hidden[j]
    if tilt <= 0.0 or opponent_hidden == 0 or n == opponent_hidden:
        return hand
    deadwood = min_deadwood_mask(hand)
    for _ in range(BELIEF_SWAPS):
        i = random_below(rng, m, opponent_hidden)
        j = opponent_hidden + random_below(rng, m, n - opponent_hidden)
        proposal = (hand & ~(1 << hidden[i])) | (1 << hidden[j])
        proposed = min_deadwood_mask(proposal)
        if proposed > deadwood and random_below(rng, m, 1 << 53) / 2.0**53 >= np.exp(-tilt * (proposed - deadwood)):
            continue
        hidden[i], hidden[j] = hidden[j], hidden[i]
        hand, deadwood = proposal, proposed
    return hand


@njit
def deal_all(
    obs: np.ndarray,
    row_of: np.ndarray,
    rollout_of: np.ndarray,
    seeds: np.ndarray,
    tilt: float,
    arrays,
    params: np.ndarray,
    given: np.ndarray | None = None,
) -> None:
    """Match m gets determinisation rollout_of[m] of row row_of[m] (the same one for every candidate of the row);
    with `given`, the opponent holds the hand given[m] (card masks; `determinise`)."""
    for m in range(row_of.shape[0]):
        r = row_of[m]
        seed = seeds[r] + np.uint64(rollout_of[m]) * np.uint64(0x9E3779B97F4A7C15)
        determinise(m, obs[r], seed, tilt, arrays, params, -1 if given is None else given[m])


def parse_search_spec(text: str) -> dict[str, object]:
    """The options of "search" or, say, "search:rollouts=16,candidates=3,policy=greedy,z=2,base=expert,tilt=0.25,
    decisions=all,belief=tilted" (a checkpoint path may not hold a comma); ValueError naming a bad one."""
    options = dict(DEFAULTS)
    body = text.split(":", 1)[1] if ":" in text else ""
    for part in filter(None, (p.strip() for p in body.split(","))):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in DEFAULTS:
            raise ValueError(f"search agent option {part!r}: use key=value with a key of {', '.join(DEFAULTS)}")
        if key in ("policy", "base"):
            if value not in ROLLOUT_POLICIES and not value.lower().startswith("checkpoint:"):
                raise ValueError(
                    f"search agent {key}={value!r}: use one of {', '.join(ROLLOUT_POLICIES)} or checkpoint:PATH"
                )
            options[key] = value
            continue
        if key in ("decisions", "belief"):
            allowed = DECISIONS if key == "decisions" else SEARCH_BELIEFS
            if value not in allowed:
                raise ValueError(f"search agent {key}={value!r}: use one of {', '.join(allowed)}")
            options[key] = value
            continue
        low, high = LIMITS[key]
        number = _number(value, float if key in FLOAT_OPTIONS else int)
        if number is None or not low <= number <= high:
            kind = "a number" if key in FLOAT_OPTIONS else "a whole number"
            raise ValueError(f"search agent {key}={value!r}: use {kind} in {low}..{high}")
        options[key] = number
    return options


def _number(text: str, kind: type) -> int | float | None:
    """text as an int (ASCII digits only) or a finite float (ASCII only); None if it is not one."""
    if not text.isascii():  # int() and float() read other scripts' digits; isdigit() also passes a superscript
        return None
    if kind is int:
        return int(text) if text.isdigit() else None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if np.isfinite(value) else None


class SearchAgent(Agent):
    """Determinised flat Monte Carlo over a short list of candidates (module docstring); deterministic for a seed."""

    def __init__(
        self,
        rollouts: int = 16,
        candidates: int = 3,
        policy: str = "greedy",
        z: float = 2.0,
        base: str = "expert",
        tilt: float = 0.25,
        decisions: str = "all",
        belief: str = "tilted",
        rules: Rules | None = None,
        seed: int | None = None,
    ) -> None:
        parse_search_spec(
            f"search:rollouts={rollouts},candidates={candidates},policy={policy},z={z},base={base},"
            f"tilt={tilt},decisions={decisions},belief={belief}"
        )
        self.rollouts, self.candidates, self.policy_name, self.confidence = rollouts, candidates, policy, float(z)
        self.tilt, self.decisions, self.belief = float(tilt), decisions, belief
        self.rules = rules if rules is not None else Rules()
        self.params = self.rules.to_params()
        self.policy = load_plain_agent(policy)
        # expert's action is already the first candidate
        self.base = None if base == "expert" else load_plain_agent(base)
        self.weights = DEFAULT_WEIGHTS.copy()
        # the opponent's seat in the play-outs: the opponent model of the belief (the rollout policy but for expert)
        self.opponent = load_plain_agent("expert") if belief == "expert" and policy != "expert" else self.policy
        self.name = (
            f"search:rollouts={rollouts},candidates={candidates},policy={policy},z={z:g}"
            + (f",base={base}" if self.base is not None else "")
            + f",tilt={tilt:g}"
            + (f",decisions={decisions}" if decisions != "all" else "")
            + (f",belief={belief}" if belief != "tilted" else "")
        )
        self._rules_block = rules_block(self.rules)
        self.reset(seed)

    @property
    def needs_history(self) -> bool:
        """True when `act` needs each row's hand history (the beliefs `self` and `expert`)."""
        return self.belief != "tilted"

    def act(
        self, observations: np.ndarray, action_masks: np.ndarray, histories: Sequence[HandHistory] | None = None
    ) -> np.ndarray:
        """int64[B] legal actions; `histories` (one `HandHistory` per row, the acting player's) when
        `needs_history`, else ignored."""
        obs, masks = as_batch(observations, action_masks)
        if self.needs_history:
            check_histories(histories, obs)
        if obs.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        return self._choose(obs, masks, histories if self.needs_history else None)

    def reset(self, seed: int | None = None) -> None:
        """Seed the determinisations (None: seed 0, so that an unseeded agent is still deterministic)."""
        self.seed = 0 if seed is None else int(seed)

    def _act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self._choose(observations, action_masks, None)

    def _choose(
        self, observations: np.ndarray, action_masks: np.ndarray, histories: Sequence[HandHistory] | None
    ) -> np.ndarray:
        check_hand_sizes(observations)
        self._check_rules(observations)
        cands, counts, ok = candidate_table(observations, action_masks, self.candidates, self.weights)
        if self.base is not None:
            put_first(cands, counts, np.asarray(self.base.act(observations, action_masks), dtype=np.int64))
        out = cands[:, 0].copy()
        searched = (counts > 1) & ok
        if self.decisions == "knock":
            searched &= knock_legal(action_masks)
        elif self.decisions == "discard":
            searched &= discard_phase(action_masks)
        search = np.flatnonzero(searched)
        if search.size == 0:
            return out
        seeds = self._row_seeds(observations)
        for rows in rollout_batches(search, counts, self.rollouts, MAX_ROLLOUT_MATCHES):
            given = None if histories is None else self._belief_hands(rows, counts, histories, seeds)
            self._search_rows(rows, observations, cands, counts, seeds, out, given)
        return out

    def _belief_hands(
        self, rows: np.ndarray, counts: np.ndarray, histories: Sequence[HandHistory], seeds: np.ndarray
    ) -> np.ndarray:
        """The opponent's hand (card mask) of every play-out of the rows, `rollouts` deals drawn from each row's
        history belief, in `rollout_layout`'s order (each row's deals repeated for every candidate)."""
        options = dict(BELIEF_OPTIONS[self.belief])
        if self.belief == "self":
            options["policy"] = choice_probabilities(self.policy)
        given = []
        for r in rows:
            seed = int(seeds[r])
            belief, _ = belief_with_retries(histories[r], seed, rules=self.rules, **options)
            hands, _ = draw_hands(belief, self.rollouts, seed=seed)
            given.append(np.tile(hands, int(counts[r])))
        return np.concatenate(given).astype(np.int64)

    def _search_rows(
        self,
        search: np.ndarray,
        observations: np.ndarray,
        cands: np.ndarray,
        counts: np.ndarray,
        seeds: np.ndarray,
        out: np.ndarray,
        given: np.ndarray | None = None,
    ) -> None:
        """Roll out every candidate of the rows `search` and write each row's choice to out (`given`: the opponent's
        hand of each play-out, from a history belief; else the tilted belief deals it)."""
        row_of, cand_of, rollout_of = rollout_layout(search, counts, self.rollouts)
        arrays = EngineState.allocate(row_of.size).arrays()
        deal_all(observations, row_of, rollout_of, seeds, self.tilt, arrays, self.params, given)
        values = rollout_scores(
            arrays,
            cands[row_of, cand_of],
            observations[row_of, O_SEAT].round().astype(np.int64),
            self.policy,
            self.params,
            opponent=self.opponent,
        )
        start = 0
        for r in search:
            size = counts[r] * self.rollouts
            out[r] = cands[
                r, confident_best(values[start : start + size].reshape(counts[r], self.rollouts), self.confidence)
            ]
            start += size

    def _row_seeds(self, observations: np.ndarray) -> np.ndarray:
        """uint64 per row from the agent's seed and the row's bytes (module docstring)."""
        seeds = np.empty(observations.shape[0], dtype=np.uint64)
        prefix = self.seed.to_bytes(8, "little", signed=True)
        for r, row in enumerate(observations):
            digest = hashlib.blake2b(prefix + row.tobytes(), digest_size=8).digest()
            seeds[r] = np.frombuffer(digest, dtype=np.uint64)[0]
        return seeds

    def _check_rules(self, observations: np.ndarray) -> None:
        block = observations[:, O_RULES : O_RULES + self._rules_block.size]
        bad = np.flatnonzero(np.abs(block - self._rules_block).max(axis=1) > 1e-4)
        if bad.size:
            raise ValueError(
                f"observation row {int(bad[0])} was made under other rules than this search agent's "
                f"({self.rules}): build SearchAgent(rules=...) with the rules of the match"
            )


def discard_phase(action_masks: np.ndarray) -> np.ndarray:
    """bool per row: the row's decision is a discard (some discard or knock is legal; actions DISCARD_BASE on)."""
    return action_masks[:, DISCARD_BASE:].any(axis=1)


def knock_legal(action_masks: np.ndarray) -> np.ndarray:
    """bool per row: some knock is legal in the row's action mask."""
    return action_masks[:, KNOCK_BASE : KNOCK_BASE + NUM_CARDS].any(axis=1)


def rollout_scores(
    arrays: tuple,
    first: np.ndarray | None,
    seats: np.ndarray,
    policy: AgentProtocol,
    params: np.ndarray,
    threads: KernelThreads | None = None,
    opponent: AgentProtocol | None = None,
) -> np.ndarray:
    """Each match's hand score for `seats` (won +, lost -, dead 0) after its action `first` (None: none, the policy
    acts from the start) and `policy` playing both seats to the hand's end (with `opponent`: `policy` the seat
    `seats`, `opponent` the other); the matches in `arrays` (an `EngineState`'s) are advanced in place. The engine
    and the encoder run on `threads` (default: the process's pool for its CPUs); the policies on their own. An
    `ExpertAgent` playing both seats plays in one compiled loop per match instead (agents/playout.py: the same
    scores and states, with no Python per decision)."""
    threads = pool() if threads is None else threads
    s = EngineState(*arrays)
    n = seats.size
    values = np.zeros(n)
    over = np.zeros(n, dtype=np.bool_)
    if first is not None:
        step_rows(threads, first, np.ones(n, dtype=np.bool_), params, arrays)
        if s.last_step[:, S_ILLEGAL].any():
            raise AssertionError("rollout_scores: a first action was illegal in its match")  # a bug, never input
        over = s.last_step[:, S_HAND_OVER] == 1
        _score(s, over, seats, values)
    opponent = policy if opponent is None else opponent
    if opponent is policy and type(policy) is ExpertAgent:  # exactly that class: a subclass may decide otherwise
        seats = np.ascontiguousarray(seats, dtype=np.int64)
        expert_playouts(threads, arrays, params, policy.weights, seats, over, values, MAX_ROLLOUT_STEPS)
        return values
    obs = np.zeros((n, OBS_SIZE), dtype=np.float32)
    mask = np.zeros((n, NUM_ACTIONS), dtype=np.int8)
    actions = np.zeros(n, dtype=np.int64)
    for _ in range(MAX_ROLLOUT_STEPS):
        active = ~over & (s.match[:, M_PHASE] != PHASE_OVER)
        if not active.any():
            break
        players = s.match[:, M_PLAYER].copy()
        encode_rows(threads, players, active, arrays, params, obs, mask)
        # one call for both seats when one policy plays them (the batch a sampling agent sees stays the same)
        own = players == seats
        groups = ((policy, active),) if opponent is policy else ((policy, active & own), (opponent, active & ~own))
        for agent, rows in groups:
            idx = np.flatnonzero(rows)
            if idx.size:
                actions[idx] = agent.act(obs[idx], mask[idx])
        step_rows(threads, actions, active, params, arrays)
        ended = active & (s.last_step[:, S_HAND_OVER] == 1)
        _score(s, ended, seats, values)
        over |= ended
    return values


def confident_best(values: np.ndarray, z: float) -> int:
    """The candidate (row of values: candidates x determinisations) to play: the best mean, if it beats candidate 0
    (the default) by more than z standard errors of their paired differences; else 0."""
    means = values.mean(axis=1)
    best = int(np.argmax(means))
    if best == 0:
        return 0
    diff = values[best] - values[0]
    error = diff.std(ddof=1) / np.sqrt(diff.size) if diff.size > 1 else np.inf
    return best if diff.mean() > z * error else 0


def _score(s: EngineState, ended: np.ndarray, seats: np.ndarray, values: np.ndarray) -> None:
    """values[m] = the hand's points for seats[m] where ended (won +, lost -, dead 0)."""
    winner, points = s.last_hand[ended, R_WINNER], s.last_hand[ended, R_POINTS]
    sign = np.where(winner == seats[ended], 1.0, np.where(winner < 0, 0.0, -1.0))
    values[ended] = sign * points


def rollout_batches(search: np.ndarray, counts: np.ndarray, rollouts: int, limit: int) -> list[np.ndarray]:
    """The rows `search` in order, split into runs whose rollout matches (counts * rollouts each) add up to at most
    `limit`; a row is never split (its matches share determinisations), so a row over the limit is a run alone."""
    batches, start, total = [], 0, 0
    for i, size in enumerate(counts[search] * rollouts):
        if total + size > limit and i > start:
            batches.append(search[start:i])
            start, total = i, 0
        total += size
    batches.append(search[start:])
    return batches


def rollout_layout(search: np.ndarray, counts: np.ndarray, rollouts: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, candidate, determinisation) of every rollout match of the rows `search`, row by row."""
    per_row = counts[search] * rollouts
    row_of = np.repeat(search, per_row)
    starts = np.cumsum(per_row) - per_row
    local = np.arange(row_of.size) - np.repeat(starts, per_row)
    return row_of, local // rollouts, local % rollouts


def candidate_table(
    observations: np.ndarray, masks: np.ndarray, extra: int, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(candidates, how many, consistent) of each row: `candidate_actions` with `expert` weighted by `weights`, in
    a table with room for one more (a base's action, `put_first`)."""
    rows = observations.shape[0]
    cands = np.zeros((rows, extra + 3), dtype=np.int64)  # base, expert, knock, discards; or <= 3
    counts = np.zeros(rows, dtype=np.int64)
    ok = np.zeros(rows, dtype=np.bool_)
    _candidates_kernel(observations, masks, extra, np.asarray(weights, dtype=np.float64), cands, counts, ok)
    return cands, counts, ok


@njit
def put_first(cands: np.ndarray, counts: np.ndarray, actions: np.ndarray) -> None:
    """Make actions[r] row r's first candidate (the default that the others must beat), adding it if missing."""
    for r in range(cands.shape[0]):
        at = -1
        for j in range(counts[r]):
            if cands[r, j] == actions[r]:
                at = j
        if at < 0:
            at = counts[r]
            counts[r] += 1
        for j in range(at, 0, -1):
            cands[r, j] = cands[r, j - 1]
        cands[r, 0] = actions[r]


@njit
def _candidates_kernel(observations, masks, extra, w, out, counts, ok) -> None:
    scratch = np.zeros(SCRATCH_SHAPE, dtype=np.int64)
    for r in range(observations.shape[0]):
        counts[r] = candidate_actions(observations[r], masks[r], extra, w, scratch, out[r])
        ok[r] = consistent(observations[r])
