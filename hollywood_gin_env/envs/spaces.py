"""The spaces every env shares, the learner's worst reward, and the text rendering of one match."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from hollywood_gin_env.cards import cards_str, from_mask
from hollywood_gin_env.engine import Engine
from hollywood_gin_env.melds import min_deadwood_mask
from hollywood_gin_env.observation import OBS_LAYOUT, OBS_SIZE
from hollywood_gin_env.rules import Rules
from hollywood_gin_env.state import (
    F_DEALER,
    F_HAND_NO,
    F_PHASE,
    F_PILE_LEN,
    F_PLAYER,
    F_STOCK_POS,
    F_WINNER,
    NUM_ACTIONS,
    PHASE_NAMES,
    PHASE_OVER,
)

#: Counters with no upper bound (a hand's turns, hands in a match, sheet totals and entries).
UNBOUNDED = float(np.finfo(np.float32).max)
#: Upper bounds of the "rules" block: the largest values Rules accepts, scaled as OBS_LAYOUT says.
_RULES_HIGH = (90 / 10, 1000 / 25, 1000 / 10, 100000 / 100, 1, 1, 1, 1)


def observation_high() -> np.ndarray:
    """Upper bound of every feature of the observation vector (all features are >= 0)."""
    high = np.ones(OBS_SIZE, dtype=np.float32)
    for name in ("turns", "hand_number"):
        high[OBS_LAYOUT[name][0]] = UNBOUNDED
    sheet = OBS_LAYOUT["sheet"][0]
    for g in range(3):
        high[sheet + 7 * g : sheet + 7 * g + 4] = UNBOUNDED  # totals and entries of both players
    rules = OBS_LAYOUT["rules"][0]
    high[rules : rules + len(_RULES_HIGH)] = _RULES_HIGH
    return high


def observation_space() -> spaces.Dict:
    """{"observation": Box(0, high, (OBS_SIZE,), float32), "action_mask": Box(0, 1, (107,), int8)}."""
    return spaces.Dict({
        "observation": spaces.Box(0.0, observation_high(), (OBS_SIZE,), np.float32),
        "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), np.int8),
    })  # fmt: skip


def worst_reward(rules: Rules, reward: str) -> float:
    """The reward of an illegal action: below any single hand, game or match result of the mode."""
    if reward == "hand":
        return -(max(rules.gin_bonus, rules.undercut_bonus) + 100) / 100.0
    if reward == "game":
        return -float(rules.num_games)
    return -1.0


def match_text(engine: Engine, i: int, learner_seat: int | None = None) -> str:
    """Match i of an engine as text: both hands, the pile, the score sheet (like str(Game))."""
    s, ints = engine.state, engine.state.ints[i]
    done = ints[F_PHASE] == PHASE_OVER
    tag = {p: " (learner)" if p == learner_seat else "" for p in (0, 1)}
    to_act = "-" if done else f"P{ints[F_PLAYER]}{tag[int(ints[F_PLAYER])]}"
    lines = [f"Hand {ints[F_HAND_NO]}  dealer P{ints[F_DEALER]}  phase {PHASE_NAMES[ints[F_PHASE]]}  to act: {to_act}"]
    for p in (0, 1):
        hand = int(s.hands[i, p])
        lines.append(f"P{p}: {cards_str(from_mask(hand)):<33} deadwood {min_deadwood_mask(hand)}{tag[p]}")
    pile = [int(c) for c in s.pile[i, : ints[F_PILE_LEN]]]
    face_up = cards_str(pile[-1:]) or "--"
    lines.append(f"Stock: {52 - ints[F_STOCK_POS]:2d}   face-up: {face_up}   pile: {cards_str(pile)}")
    for g in range(engine.rules.num_games):
        owner = s.game_winner[i, g]
        status = "open" if owner < 0 else f"won by P{owner}"
        (t0, t1), (e0, e1) = s.totals[i, g], s.entries[i, g]
        lines.append(f"G{g + 1}: P0 {t0:3d} ({e0})  P1 {t1:3d} ({e1})  {status}")
    if done:
        lines.append(f"Match over: P{ints[F_WINNER]} wins the series")
    return "\n".join(lines)
