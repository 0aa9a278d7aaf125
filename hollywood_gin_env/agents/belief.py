"""The opponent's hidden cards, conditioned on every action it was seen to take: a particle belief.

What a player cannot see in a hand is the opponent's hand and the stock. The cards say only so much: the opponent
holds the cards it took from the pile and still has, and its other cards are among the unseen ones. Its actions say
more: each discard, each take or pass of the face-up card, each stock draw and each turn it did not knock were
chosen from the hand it held then. This module weighs sampled deals by how well an opponent model explains those
actions (`model="expert"`: the `expert` heuristic, deterministic, so an action it would not take from a deal costs
that deal a factor `eps`; `model="self"`: a policy's probability p of the action, as (1 - eps) p + eps / the legal
actions), or by the cards alone (`model="none"`: the uniform belief over the deals the cards allow).

The history. One observation holds the opponent's discards, takes and declines as sets, not in order, and not which
of its discards followed a draw; so the belief reads a `HandHistory`: the viewer's seat, the dealer, the viewer's
dealt hand and the upcard, then every action of the hand in order (both players'), with the card the viewer drew
when an action drew it one (the viewer's own draw, or the draw forced on it after two passes). Nothing else: no card
the viewer never saw. `HistoryRecorder` keeps one per match of an `Engine` as it is stepped (both in
hollywood_gin_env/history.py, below the envs, which keep one for an opponent that reads it).

The sampler (sequential importance resampling over the hand). The unknown cards are those the viewer neither was
dealt, drew, nor saw as the upcard; before any action, every way of dealing them to the opponent's hand, its stock
draws and the rest of the stock is equally likely. Each particle is a deal of the opponent's ten cards from them,
replayed through the hand in this package's own engine (`step_match`): at each of the opponent's stock draws the
card is drawn uniformly from the particle's remaining unknown cards, except when a card the opponent discards
before its next draw (and had not taken) is not yet in its hand, which then must be the one drawn (the particle's
weight takes the chance of that draw, 1 / remaining; two such cards kill it); an action illegal from a particle's
cards (a discard of a card it does not hold) kills it; at each of the opponent's decisions the model is asked what
it would do from the particle's cards (its observation as the engine encodes it: `encode_match`) and its answer
weighs the particle (see `model`). When the effective sample size falls below half the particles (or a particle is
dead at the end) they are resampled (systematic) and given fresh random streams. The result is each particle's
opponent hand, its stock (the remaining unknown cards; their order is uniform) and its weight.

The deal is guided: drawn uniformly, the opponent's ten cards rarely hold the cards it later discards, so most
particles would need each of those cards forced as a draw (weight 1 / remaining) and resampling would leave a few
lineages of dealt hands. So each card it discarded without having taken it goes into its dealt hand with chance
10 / (10 + its stock draws before that discard) (`_guide`), the rest uniformly from the other unknown cards, and the
particle's weight starts at the uniform deal's chance of that hand over this proposal's: the same belief, with far
fewer particles wasted.

Moves. Resampling copies particles, so after a long history many share the cards they were dealt and never played,
and the belief's card chances are those of a few lineages (with model none and 4000 particles, cards off the uniform
chance by 0.26 at twenty actions). `moves` > 0 resamples at the end and then makes that many Metropolis moves per
particle (`_move`): a card of its hand that it did not take trades places with a stock card, the history is
replayed from the new deal (one batched replay of all particles, as costly as the sampler's own pass), and the move
is kept with chance min(1, eps ** (its extra mismatches)) (model self: min(1, the ratio of the two deals'
likelihoods of the opponent's decisions under the policy)) when every action stays legal; the two deals are equally
likely a priori, so the belief is unchanged and its particles are fresh (sixteen moves bring the same case to 0.03).

Tempering (`final_eps`). `expert` is deterministic, so against it the exact belief is eps = 0: only deals from
which it makes every one of the opponent's decisions. Those are too few for the sampler to find directly, and any
eps > 0 lets the far more numerous deals that explain all but one or two decisions outweigh them (at eps 0.01 the
belief's opponent held about 5 points more deadwood than the true hands, on average). So with `final_eps` the moves
lower eps geometrically from `eps` to `final_eps` (to 0: down to 1e-6 over the first three quarters of the moves,
then 0), multiplying each particle's weight by (new eps / old eps) ** its mismatches before each move and
resampling when the weights grow uneven: a sequential Monte Carlo sampler whose particles, after every move, are the
belief at that move's eps (`Belief.mismatches` says how many decisions each particle's deal leaves unexplained).

If the model explains none of the particles at some decision (possible only with eps = 0), that decision is left
out of the weights and counted (`Belief.unexplained`); if the cards alone leave no particle (too few particles for
a long history), `ValueError` says so. Deterministic for a seed.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from hollywood_gin_env._jit import njit
from hollywood_gin_env.agents.expert import DEFAULT_WEIGHTS, expert_row, new_scratch
from hollywood_gin_env.bits import count_bits
from hollywood_gin_env.cards import NUM_CARDS
from hollywood_gin_env.engine import overflow_ok
from hollywood_gin_env.history import HandHistory
from hollywood_gin_env.kernels import new_match_kernel, step_match
from hollywood_gin_env.observation import O_SEAT, OBS_SIZE, encode_match
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.sampling import check_seed, random_below
from hollywood_gin_env.state import (
    ACTION_DRAW_STOCK,
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    HAND_SIZE,
    KNOCK_BASE,
    M_DEALER,
    M_PHASE,
    M_PLAYER,
    M_STOCK_POS,
    NUM_ACTIONS,
    PHASE_DISCARD,
    PHASE_DRAW,
    PHASE_OFFER_DEALER,
    PHASE_OFFER_NONDEALER,
    UPCARD_POS,
    EngineState,
    named,
)
from hollywood_gin_env.threads import KernelThreads, check_num_threads, sliced
from hollywood_gin_env.threads import pool as thread_pool

MODELS = ("expert", "self", "none")  # opponent models; "self": a policy given as `policy`; "none": the cards alone
ASK_EXPERT, ASK_POLICY = 1, 2  # what `_advance` does at the opponent's decisions (0: nothing)
#: The options measured best on the tuning positions (docs/EVALUATION.md: the least deadwood error and the fewest
#: bits there); `sample_belief`'s own defaults make no moves, which is cheaper and far less sound.
MEASURED = {"model": "expert", "particles": 512, "eps": 0.01, "moves": 48}
PARTICLE_LIMITS = (1, 65536)
MAX_NEEDS = 8  # own discards between two stock draws of the opponent that `_guide` tracks (one draw supplies one)
RESAMPLE_BELOW = 0.5  # resample when the effective sample size falls below this share of the particles
MAX_RETRY_PARTICLES = 8192  # belief_with_retries doubles the particles up to this many
MAX_MOVES = 64  # Metropolis moves a belief may make


def check_histories(histories: object, observations: np.ndarray) -> None:
    """ValueError unless `histories` holds one `HandHistory` per observation row, each seen from that row's seat."""
    rows = observations.shape[0]
    if histories is None or isinstance(histories, (str, bytes)) or not hasattr(histories, "__len__"):
        raise ValueError(
            f"histories={histories!r}: this agent reads the hand's history; give one HandHistory per row "
            "(hollywood_gin_env.history.HistoryRecorder keeps them; evaluate.py and the envs do)"
        )
    if len(histories) != rows:
        raise ValueError(f"histories: {len(histories)} given for {rows} observation rows; give one per row")
    for r, history in enumerate(histories):
        if not isinstance(history, HandHistory):
            raise ValueError(f"histories[{r}] is a {type(history).__name__}, not a HandHistory")
        seat = int(round(float(observations[r, O_SEAT])))
        if history.viewer != seat:
            raise ValueError(f"histories[{r}] is seat {history.viewer}'s view; row {r} is seat {seat}'s decision")


def choice_probabilities(agent) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """An agent's action probabilities for model=self: its `probabilities` (a policy's masked softmax) if it has
    them, else 1 on the action it plays (a deterministic heuristic's)."""
    probabilities = getattr(agent, "probabilities", None)
    if callable(probabilities):
        return probabilities

    def one_hot(observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        chosen = np.asarray(agent.act(observations, action_masks), dtype=np.int64)
        out = np.zeros((chosen.size, NUM_ACTIONS), dtype=np.float64)
        out[np.arange(chosen.size), chosen] = 1.0
        return out

    return one_hot


class Belief(NamedTuple):
    """Weighted samples of what the viewer cannot see."""

    hands: np.ndarray  # int64[N]: the opponent's hand (card mask) of each particle
    stocks: np.ndarray  # int64[N]: the cards of the stock (mask); their order is uniform
    weights: np.ndarray  # float64[N], summing to 1
    unexplained: int  # opponent decisions the model explained from no particle (left out of the weights)
    mismatches: np.ndarray  # int64[N]: the opponent's decisions `expert` would have made otherwise (model expert)


def check_belief_options(model: str, particles: int, eps: float) -> None:
    """ValueError naming a bad option (model, particles or eps) and what is allowed."""
    if model not in MODELS:
        raise ValueError(f"belief model={model!r}: use one of {', '.join(MODELS)}")
    low, high = PARTICLE_LIMITS
    if isinstance(particles, bool) or not isinstance(particles, (int, np.integer)) or not low <= particles <= high:
        raise ValueError(f"belief particles={particles!r}: use a whole number in {low}..{high}")
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not 0.0 <= float(eps) <= 1.0:
        raise ValueError(f"belief eps={eps!r}: use a number in 0..1")


def sample_belief(
    history: HandHistory,
    model: str = "expert",
    particles: int = 512,
    eps: float = 0.05,
    seed: int = 0,
    rules: Rules | None = None,
    weights: np.ndarray | None = None,
    policy: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    moves: int = 0,
    final_eps: float | None = None,
    num_threads: int | None = None,
) -> Belief:
    """The belief after `history` (module docstring): `particles` weighted deals, the opponent modelled by `model`:
    `expert` (with `weights`, default its own; a decision it would not take weighs `eps`), `self` (`policy`, which
    maps observations and masks to action probabilities; a decision weighs (1 - eps) p + eps / legal actions) or
    `none` (the cards alone); then `moves` Metropolis moves per particle, over which (with `expert`) eps falls
    geometrically to `final_eps` if given (tempering; module docstring). The particles' replays run on
    `num_threads` kernel threads (default: the process's); the result is the same for every count."""
    check_belief_options(model, particles, eps)
    if final_eps is not None:
        check_final_eps(final_eps, eps, model, moves)
    if (model == "self") != (policy is not None):
        raise ValueError(f"belief model={model!r}: model='self' takes a policy (probabilities), the others none")
    if isinstance(moves, bool) or not isinstance(moves, (int, np.integer)) or not 0 <= moves <= MAX_MOVES:
        raise ValueError(f"belief moves={moves!r}: use a whole number in 0..{MAX_MOVES}")
    seed = check_seed(seed)
    threads = thread_pool(check_num_threads(num_threads))
    params = (rules if rules is not None else Rules()).to_params()
    w = np.asarray(DEFAULT_WEIGHTS if weights is None else weights, dtype=np.float64)
    events, viewer = history.events(), history.viewer
    rng = np.random.default_rng(np.random.SeedSequence([seed, 0xBE11EF]))
    n = int(particles)
    guide = _guide(history)
    state, pool, logw = _start(history, guide, _fresh_seeds(rng, n), np.full(n, -1, dtype=np.int64), params)
    arrays, rows = state.arrays(), _buffers(n)
    script = np.full(n, -1, dtype=np.int64)  # no scripted draws: each is sampled
    asked, mismatch, counts = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64)
    ask = {"expert": ASK_EXPERT, "self": ASK_POLICY, "none": 0}[model]
    opponent = OpponentModel(ask, w, policy, float(eps))
    loglik = np.zeros(n)  # model self: each particle's log-likelihood of the opponent's decisions
    log_eps = np.log(eps) if eps > 0 else -np.inf
    unexplained = 0
    for k in range(events.shape[0]):
        _advance_all(threads, arrays, pool, script, logw, asked, mismatch, events, guide.needs, k, viewer, params, w,
                     ask, rows)  # fmt: skip
        alive = np.isfinite(logw)
        if not alive.any():
            raise ValueError(
                f"sample_belief: no particle of {n} holds cards that allow action {k} of the history; "
                "use more particles (or the history is not one hand's)"
            )
        if ask == ASK_POLICY and (asked & alive).any():
            factor = _policy_loglik(policy, rows, asked & alive, int(events[k, 0]), eps)
        else:
            factor = np.where(mismatch & alive, log_eps, 0.0)
        if np.isfinite(logw + factor).any():
            logw += factor
            counts += mismatch & alive
            loglik += factor if ask == ASK_POLICY else 0.0
        else:
            unexplained += 1  # the model explains this decision from no particle: leave it out
        last = k == events.shape[0] - 1
        if _effective_share(logw) < RESAMPLE_BELOW or (last and (moves or not np.isfinite(logw).all())):
            _resample(state, logw, rng, pool, counts, loglik)
    schedule = _tempering(log_eps, final_eps, moves if events.shape[0] else 0)
    for step_log_eps in schedule:
        # Tempering: the particles are the belief at the last eps; reweighted by eps ** mismatches, the new one.
        with np.errstate(invalid="ignore"):  # 0 mismatches times an infinite change of log eps: no change
            logw += np.where(counts > 0, counts * (step_log_eps - log_eps), 0.0)
        log_eps = step_log_eps
        if not np.isfinite(logw).any():
            raise ValueError(f"sample_belief: no particle of {n} explains every action with final_eps={final_eps}")
        if _effective_share(logw) < RESAMPLE_BELOW or not np.isfinite(logw).all():
            _resample(state, logw, rng, pool, counts, loglik)
        _move(history, guide, state, (pool, counts, loglik), rng, params, opponent, log_eps, threads)
    weight = np.exp(logw - logw.max())
    return Belief(state.hands[:, 1 - viewer].copy(), pool.copy(), weight / weight.sum(), unexplained, counts.copy())


def check_final_eps(final_eps: float, eps: float, model: str, moves: int) -> None:
    """ValueError naming a bad final_eps (tempering needs the expert model, moves and 0 <= final_eps <= eps)."""
    if isinstance(final_eps, bool) or not isinstance(final_eps, (int, float)) or not 0.0 <= final_eps <= eps:
        raise ValueError(f"belief final_eps={final_eps!r}: use a number in 0..eps ({eps})")
    if model != "expert" or not moves:
        raise ValueError(f"belief final_eps={final_eps!r}: tempering takes model='expert' and moves > 0")


def _tempering(log_eps: float, final_eps: float | None, moves: int) -> np.ndarray:
    """The log eps of each move: constant, or falling geometrically to final_eps at the last (0: -inf there)."""
    if final_eps is None or moves == 0:
        return np.full(moves, log_eps)
    low = np.log(final_eps) if final_eps > 0 else -np.inf
    if not np.isfinite(low):  # geometric to a tiny eps, then the last quarter of the moves under the hard constraint
        hard = max(1, moves // 4)
        steps = np.full(moves, -np.inf)
        steps[: moves - hard] = np.linspace(log_eps, min(log_eps, np.log(1e-6)), moves - hard + 1)[1:]
        return steps
    return np.linspace(log_eps, low, moves + 1)[1:]


def _resample(state: EngineState, logw, rng, *carried: np.ndarray) -> None:
    """Systematic resampling of the particles (their state and each `carried` array) by their weights, in place;
    the copies get fresh random streams."""
    index = _systematic(logw, logw.size, rng)
    for array in (*state.arrays(), *carried):
        array[:] = array[index]
    logw[:] = 0.0
    state.rng[:] = _fresh_seeds(rng, logw.size)  # copies of one particle must draw their own future cards


class OpponentModel(NamedTuple):
    """Who the opponent is taken to be: what `_advance` asks (ASK_EXPERT, ASK_POLICY or 0) and with what."""

    ask: int
    weights: np.ndarray  # expert's
    policy: Callable[[np.ndarray, np.ndarray], np.ndarray] | None  # model self's probabilities
    eps: float


def _move(history, guide: Guide, state: EngineState, per_particle, rng, params, opponent, log_eps, threads) -> None:
    """One Metropolis move of every particle, in place: a card of the opponent's hand that it neither took nor will
    discard trades places with a stock card (where it was dealt or drawn); the whole history is replayed from the
    new deal, and the move kept if every action stays legal, with chance min(1, eps ** (its mismatches - the old
    ones)) (model expert) or min(1, the new deal's likelihood of the opponent's decisions / the old one's) (model
    self). The cards' prior is the same for both deals, so the belief is left as it is, with fresh hands.
    per_particle: (pool, mismatches, log-likelihoods), updated where a move is kept."""
    pool, counts, loglik = per_particle
    them = 1 - history.viewer
    n = pool.size
    offset = 0 if history.viewer == history.dealer else 1  # R3: the opponent's deal positions
    slots = 2 * np.arange(HAND_SIZE) + offset
    dealt = np.bitwise_or.reduce(np.left_shift(1, state.deck[:, slots]), axis=1)
    draws = state.deck[:, guide.draw_positions].copy()
    hidden = state.hands[:, them] & ~state.took[:, them]
    cards = np.arange(NUM_CARDS)
    out = _pick(hidden, cards, rng)
    into = _pick(pool, cards, rng)
    ok = (out >= 0) & (into >= 0)
    was_dealt = ok & ((dealt >> np.maximum(out, 0)) & 1 == 1)
    dealt = np.where(was_dealt, (dealt & ~np.left_shift(1, np.maximum(out, 0))) | np.left_shift(1, np.maximum(into, 0)),
                     dealt)  # fmt: skip
    drawn = ok[:, None] & ~was_dealt[:, None] & (draws == out[:, None])
    draws = np.where(drawn, into[:, None], draws)
    new, new_pool, legal, new_counts, new_loglik = _replay_given(
        history, guide, dealt, draws, params, opponent, threads
    )
    with np.errstate(invalid="ignore"):  # -inf - -inf (both deals ruled out): nan, never taken
        if opponent.ask == ASK_POLICY:
            chance = np.exp(np.minimum(new_loglik - loglik, 0.0))
        else:
            chance = np.exp(np.where(new_counts > counts, (new_counts - counts) * log_eps, 0.0))
    keep = ok & legal & (rng.random(n) < np.nan_to_num(chance))
    for mine, theirs in zip(state.arrays(), new.arrays(), strict=True):
        mine[keep] = theirs[keep]
    pool[keep], counts[keep], loglik[keep] = new_pool[keep], new_counts[keep], new_loglik[keep]


def _pick(masks: np.ndarray, cards: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly chosen card of each mask (-1 for an empty one)."""
    held = (masks[:, None] >> cards[None, :]) & 1 == 1
    keys = np.where(held, rng.random(held.shape), -1.0)
    return np.where(held.any(axis=1), keys.argmax(axis=1), -1)


def _policy_loglik(policy, rows: tuple, asked: np.ndarray, action: int, eps: float) -> np.ndarray:
    """log((1 - eps) p + eps / legal actions) of `action` where asked (the policy's probability p), else 0."""
    obs, mask = rows
    probabilities = np.asarray(policy(obs[asked], mask[asked]), dtype=np.float64)
    if probabilities.shape != (int(asked.sum()), NUM_ACTIONS):
        raise ValueError(f"belief policy returned shape {probabilities.shape}, not (rows, {NUM_ACTIONS})")
    legal = mask[asked].sum(axis=1)
    out = np.zeros(asked.size)
    with np.errstate(divide="ignore"):  # eps = 0 and p = 0: the particle is ruled out
        out[asked] = np.log((1.0 - eps) * probabilities[:, action] + eps / legal)
    return out


def replay_mismatches(
    history: HandHistory,
    opponent_hand: int,
    opponent_draws: list[int],
    rules: Rules | None = None,
    weights: np.ndarray | None = None,
) -> int:
    """How many of the opponent's decisions in `history` `expert` (`weights`) would have made otherwise had it been
    dealt `opponent_hand` and drawn `opponent_draws` in order; -1 if those cards make one of its actions illegal."""
    params = (rules if rules is not None else Rules()).to_params()
    w = np.asarray(DEFAULT_WEIGHTS if weights is None else weights, dtype=np.float64)
    if bin(int(opponent_hand)).count("1") != HAND_SIZE or int(opponent_hand) & ~history.unknown_cards():
        raise ValueError(f"opponent_hand={int(opponent_hand):#x}: use {HAND_SIZE} cards the viewer never saw")
    guide = _guide(history)
    draws = np.full((1, guide.draw_events.size), -1, dtype=np.int64)
    given = list(opponent_draws)[: draws.shape[1]]
    draws[0, : len(given)] = given
    expert = OpponentModel(ASK_EXPERT, w, None, 0.0)
    _, _, legal, counts, _ = _replay_given(
        history, guide, np.array([int(opponent_hand)]), draws, params, expert, thread_pool(1)
    )
    return int(counts[0]) if legal[0] else -1


def _replay_given(
    history: HandHistory, guide: Guide, dealt: np.ndarray, draws: np.ndarray, params, opponent: OpponentModel, threads
) -> tuple[EngineState, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(state, pool, legal, mismatches, log-likelihoods) of particles dealt `dealt` (the opponent's ten cards each)
    drawing draws[m] (its stock draws in order; -1: sampled) through the whole history, the opponent's decisions
    weighed by `opponent` (mismatches: expert's; log-likelihoods: model self's, the others 0)."""
    n = dealt.size
    state, pool, logw = _start(history, guide, np.zeros(n, dtype=np.uint64), dealt, params)
    arrays, events, rows = state.arrays(), history.events(), _buffers(n)
    script = np.full(n, -1, dtype=np.int64)
    asked, mismatch, counts = np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.bool_), np.zeros(n, dtype=np.int64)
    logw[:], loglik = 0.0, np.zeros(n)
    slot = {int(k): j for j, k in enumerate(guide.draw_events)}
    for k in range(events.shape[0]):
        if k in slot:
            script[:] = draws[:, slot[k]]
        _advance_all(threads, arrays, pool, script, logw, asked, mismatch, events, guide.needs, k, history.viewer,
                     params, opponent.weights, opponent.ask, rows)  # fmt: skip
        counts += mismatch
        alive = asked & np.isfinite(logw)
        if opponent.ask == ASK_POLICY and alive.any():
            loglik += _policy_loglik(opponent.policy, rows, alive, int(events[k, 0]), opponent.eps)
    return state, pool, np.isfinite(logw), counts, loglik


def _start(
    history: HandHistory, guide: Guide, seeds: np.ndarray, given: np.ndarray, params: np.ndarray
) -> tuple[EngineState, np.ndarray, np.ndarray]:
    """(state, pool, log-weights) of the particles (one per seed) dealt as `_deal_particles` says, before the
    history's first action."""
    n = seeds.size
    state = EngineState.allocate(n)
    arrays = state.arrays()
    pool, logw = np.zeros(n, dtype=np.int64), np.zeros(n)
    with overflow_ok():
        _deal_particles(
            arrays, pool, logw, seeds, history.unknown_cards(), history.hand, history.upcard, history.viewer,
            history.dealer, given, guide.kept, guide.chance,
        )  # fmt: skip
        new_match_kernel(
            np.ones(n, dtype=np.bool_),
            np.zeros(n, dtype=np.uint64),
            np.zeros(n, dtype=np.bool_),
            np.full(n, history.dealer, dtype=np.int64),
            np.ones(n, dtype=np.bool_),
            arrays,
            params,
        )
    if (state.hands[:, history.viewer] != history.hand).any():
        raise AssertionError("belief: a particle dealt the viewer another hand")  # a bug, never input
    return state, pool, logw


BELIEF_GRAIN = 64  # particles a slice at least: one slice's replay of an action is microseconds of work


def _advance_all(
    threads: KernelThreads, arrays, pool, script, logw, asked, mismatch, events, needs, k, viewer, params, w, ask, rows
) -> None:
    """`_advance` over slices of the particles on `threads` (each particle's draws come from its own stream, so
    every thread count gives the same result); each slice gets its own scratch row for `expert`."""
    obs, mask = rows

    def work(lo: int, hi: int) -> None:
        with overflow_ok():  # numpy's error state is per thread
            parts = sliced(lo, hi, arrays, pool, script, logw, asked, mismatch, obs, mask)
            scratch = new_scratch()
            _advance(*parts[:6], events, needs, k, viewer, params, w, ask, (parts[6], parts[7], scratch))

    threads.run(logw.size, work, BELIEF_GRAIN)


def _buffers(n: int) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask rows of n particles, for `_advance_all` (each slice makes its own scratch row)."""
    return np.zeros((n, OBS_SIZE), dtype=np.float32), np.zeros((n, NUM_ACTIONS), dtype=np.int8)


def belief_with_retries(history: HandHistory, seed: int, **options) -> tuple[Belief, int]:
    """sample_belief, with twice the particles (up to MAX_RETRY_PARTICLES) each time the cards alone leave none (a
    sharp model can resample a long history onto a few dealt hands that a later action rules out); and how many
    retries that took. Deterministic for a seed, like sample_belief."""
    particles = options.pop("particles")
    for retries in range(8):
        try:
            return sample_belief(history, seed=seed, particles=particles, **options), retries
        except ValueError:
            if particles * 2 > MAX_RETRY_PARTICLES:
                raise
            particles *= 2
    raise AssertionError("unreachable: the particles reach the limit first")


def draw_hands(belief: Belief, count: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(hands, stocks) of `count` deals drawn from the belief by its weights (systematic resampling)."""
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 1:
        raise ValueError(f"count={count!r}: use a whole number of at least 1")
    rng = np.random.default_rng(np.random.SeedSequence([check_seed(seed), 0xD4A3]))
    with np.errstate(divide="ignore"):
        index = _systematic(np.log(belief.weights), int(count), rng)
    return belief.hands[index], belief.stocks[index]


def _fresh_seeds(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, 2**64, size=n, dtype=np.uint64)


def _effective_share(logw: np.ndarray) -> float:
    """Effective sample size over the number of particles."""
    w = np.exp(logw - logw.max())
    return float(w.sum() ** 2 / (w * w).sum() / w.size)


def _systematic(logw: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """Indices of `count` particles resampled systematically by the weights exp(logw)."""
    w = np.exp(logw - logw.max())
    edges = np.cumsum(w / w.sum())
    edges[-1] = 1.0
    points = (rng.random() + np.arange(count)) / count
    return np.minimum(np.searchsorted(edges, points, side="right"), logw.size - 1)


@njit
def _deal_particles(
    arrays, pool, logw, seeds, unknown: int, hand: int, upcard: int, viewer: int, dealer: int, given, kept, chance
) -> None:
    """Each particle m: its random stream seeds[m], the opponent's ten cards and a deck that deals the viewer `hand`
    and shows `upcard`; pool[m] = the unknown cards left. The opponent's cards are given[m] if >= 0, else drawn from
    `unknown`: each card of `kept` (the cards it will discard that it did not take) is put in with chance chance[i]
    while there is room, the rest uniformly from the unknown cards outside `kept`; logw[m] = log(the uniform draw's
    chance of that hand / this proposal's), so the weighted particles are the uniform draw (`_guide`)."""
    s = named(arrays)
    cards = np.empty(NUM_CARDS, dtype=np.int64)
    mine = np.empty(HAND_SIZE, dtype=np.int64)
    k = 0
    for c in range(NUM_CARDS):
        if (hand >> c) & 1:
            mine[k] = c
            k += 1
    kept_mask = 0
    for i in range(kept.shape[0]):
        kept_mask |= 1 << kept[i]
    prior = _log_choose(count_bits(unknown), HAND_SIZE)
    for m in range(s.deck.shape[0]):
        s.rng[m] = seeds[m]
        theirs = given[m]
        logw[m] = 0.0
        if theirs < 0:
            theirs, log_proposal, k = 0, 0.0, 0
            for i in range(kept.shape[0]):
                if k == HAND_SIZE:
                    break
                if random_below(s.rng, m, 1 << 53) / 2.0**53 < chance[i]:
                    theirs |= 1 << kept[i]
                    k += 1
                    log_proposal += np.log(chance[i])
                else:
                    log_proposal += np.log(1.0 - chance[i])
            n = 0
            for c in range(NUM_CARDS):
                if (unknown >> c) & 1 and not (kept_mask >> c) & 1:
                    cards[n] = c
                    n += 1
            for j in range(HAND_SIZE - k):  # a partial Fisher-Yates: a uniform draw of the rest
                r = j + random_below(s.rng, m, n - j)
                cards[j], cards[r] = cards[r], cards[j]
                theirs |= 1 << cards[j]
            log_proposal -= _log_choose(n, HAND_SIZE - k)
            logw[m] = -prior - log_proposal
        n = 0
        for c in range(NUM_CARDS):
            if (theirs >> c) & 1:
                cards[n] = c
                n += 1
        for j in range(HAND_SIZE):
            # R3: the non-dealer gets deck[0], deck[2], ...; the dealer deck[1], deck[3], ...
            s.deck[m, 2 * j + (1 if viewer == dealer else 0)] = mine[j]
            s.deck[m, 2 * j + (0 if viewer == dealer else 1)] = cards[j]
        s.deck[m, UPCARD_POS] = upcard
        pool[m] = unknown & ~theirs
        position = UPCARD_POS + 1
        for c in range(NUM_CARDS):  # the rest of the deck in card order: each draw writes its card before it
            if not (hand >> c) & 1 and not (theirs >> c) & 1 and c != upcard:
                s.deck[m, position] = c
                position += 1


@njit
def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


class Guide(NamedTuple):
    """What the public actions say about the opponent's cards (`_guide`)."""

    kept: np.ndarray  # the cards it discarded without having taken them, in order
    chance: np.ndarray  # per kept card: the proposal's chance that it was dealt
    needs: np.ndarray  # [action, MAX_NEEDS]: kept cards discarded after its stock draw at that action, before the next
    draw_events: np.ndarray  # the actions at which it drew from the stock
    draw_positions: np.ndarray  # the deck positions of those draws


def _guide(history: HandHistory) -> Guide:
    """The `Guide` of a history, read from its public actions: the opponent's discards of cards it did not
    take from the pile, in order, each with the chance that it was dealt rather than drawn before its discard (10 :
    the draws before it; the cards tell nothing else); needs[k] = those of them discarded after the opponent's stock
    draw at action k and before its next one (-1 padded). Only the sampler's efficiency depends on the chances."""
    them, nondealer = 1 - history.viewer, 1 - history.dealer
    phase, actor, top, draws, last_draw = PHASE_OFFER_NONDEALER, nondealer, history.upcard, 0, -1
    position = UPCARD_POS + 1  # of the next stock draw, either player's
    draw_events, draw_positions = [], []
    took: set[int] = set()
    cards, chances = [], []
    needs = np.full((len(history.actions), MAX_NEEDS), -1, dtype=np.int64)
    for k, action in enumerate(history.actions):
        if phase == PHASE_DISCARD:
            card = action - (KNOCK_BASE if action >= KNOCK_BASE else DISCARD_BASE)
            if actor == them and card in took:
                took.discard(card)
            elif actor == them:
                cards.append(card)
                chances.append(1.0 if draws == 0 else max(HAND_SIZE / (HAND_SIZE + draws), 0.05))
                if last_draw >= 0:
                    slot = int((needs[last_draw] >= 0).sum())
                    needs[last_draw, min(slot, MAX_NEEDS - 1)] = card  # more than fit cannot all be drawn there
            top, actor, phase = card, 1 - actor, PHASE_DRAW
        elif action == ACTION_TAKE:
            took |= {top} if actor == them else set()
            phase = PHASE_DISCARD
        elif action == ACTION_DRAW_STOCK:
            if actor == them:
                draws, last_draw = draws + 1, k
                draw_events.append(k)
                draw_positions.append(position)
            position += 1
            phase = PHASE_DISCARD
        elif phase == PHASE_OFFER_NONDEALER:
            phase, actor = PHASE_OFFER_DEALER, history.dealer
        elif phase == PHASE_OFFER_DEALER:  # two passes: the non-dealer draws
            phase, actor = PHASE_DISCARD, nondealer
            if actor == them:
                draws, last_draw = draws + 1, k
                draw_events.append(k)
                draw_positions.append(position)
            position += 1
        else:  # a pass of the last discard ends the hand
            break
    return Guide(
        np.array(cards, dtype=np.int64),
        np.array(chances, dtype=np.float64),
        needs,
        np.array(draw_events, dtype=np.int64),
        np.array(draw_positions, dtype=np.int64),
    )


@njit
def _advance(
    arrays, pool, script, logw, asked, mismatch, events, needs, k: int, viewer: int, params, w, ask: int, rows
):
    """Apply event k of the history to every live particle: kill it where the action is illegal from its cards; at
    the opponent's decisions (asked[m]) write its observation and mask to rows (ask > 0) and set mismatch[m] where
    `expert` would act otherwise (ask == ASK_EXPERT); write the card of a stock draw into the deck before it (the
    opponent's: script[m] if that is a card, which is then used up (-1), else drawn as the module docstring says)."""
    s = named(arrays)
    obs, mask, scratch = rows
    them = 1 - viewer
    action, card = events[k, 0], events[k, 1]
    for m in range(s.match.shape[0]):
        mismatch[m] = False
        asked[m] = False
        if logw[m] == -np.inf:
            continue
        if s.legal[m, action] == 0:
            logw[m] = -np.inf
            continue
        player = s.match[m, M_PLAYER]
        phase = s.match[m, M_PHASE]
        if player == them and ask > 0:
            asked[m] = True
            encode_match(m, them, s, params, obs[m])
            for a in range(NUM_ACTIONS):
                mask[m, a] = s.legal[m, a]
            if ask == ASK_EXPERT:
                mismatch[m] = expert_row(obs[m], mask[m], w, scratch) != action
        drawer = -1
        if action == ACTION_DRAW_STOCK:
            drawer = player
        elif action == ACTION_PASS and phase == PHASE_OFFER_DEALER:
            drawer = 1 - s.match[m, M_DEALER]  # R6(d): two passes, the non-dealer draws
        position = s.match[m, M_STOCK_POS]
        if drawer == viewer:
            s.deck[m, position] = card
        elif drawer == them:
            held = s.hands[m, them]
            needed, missing = -1, 0  # the cards it discards before its next draw that it does not hold yet
            for j in range(needs.shape[1]):
                if needs[k, j] >= 0 and not (held >> needs[k, j]) & 1:
                    needed = needs[k, j]
                    missing += 1
            if script[m] >= 0:
                drawn = script[m]
                script[m] = -1
            elif missing > 1:
                logw[m] = -np.inf
                continue
            elif needed >= 0:
                if not (pool[m] >> needed) & 1:
                    logw[m] = -np.inf
                    continue
                logw[m] -= np.log(count_bits(pool[m]))  # the chance that the draw was that card
                drawn = needed
            else:
                drawn = _nth_card(pool[m], random_below(s.rng, m, count_bits(pool[m])))
            if not (pool[m] >> drawn) & 1:  # only a scripted card can be missing
                logw[m] = -np.inf
                continue
            pool[m] &= ~(1 << drawn)
            s.deck[m, position] = drawn
        step_match(m, action, True, s, params)


@njit
def _nth_card(mask: int, k: int) -> int:
    """The k-th (from 0) card of a mask, in card order."""
    for c in range(NUM_CARDS):
        if (mask >> c) & 1:
            if k == 0:
                return c
            k -= 1
    return -1
