"""The play program's `hint`: what a bot would do in the player's seat, and what each choice does to deadwood.

A checkpoint agent (one whose `.policy` is a torch module returning logits) shows its top action probabilities; a
heuristic shows its choice. The deadwood figures come from the meld solver, never from a rule written again.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from hollywood_gin_env.play.commands import action_words
from hollywood_gin_env.rules.actions import ACTION_TAKE, DISCARD_BASE, KNOCK_BASE
from hollywood_gin_env.rules.cards import card_name
from hollywood_gin_env.rules.melds import min_deadwood

if TYPE_CHECKING:
    from hollywood_gin_env.engine.game import Game

TOP_ACTIONS = 3
CHECKPOINT_PREFIX = "checkpoint:"


def agent_label(name: str) -> str:
    """An agent's name as a player reads it: a checkpoint by its file name, not its whole path."""
    if name.lower().startswith(CHECKPOINT_PREFIX):
        return os.path.basename(name[len(CHECKPOINT_PREFIX) :].rstrip("/\\")) or name
    return name


def bot_advice(game: Game, player: int, agent: Any) -> str:
    """The agent's view of the position: top probabilities for a policy (an agent with `probabilities`, a checkpoint
    agent's), else its choice."""
    obs = game.observation(player)
    probabilities = getattr(agent, "probabilities", None)
    if callable(probabilities):
        probs = np.asarray(probabilities(obs["observation"][None], obs["action_mask"][None]), dtype=np.float64)[0]
        best = [int(a) for a in np.argsort(-probs, kind="stable")[:TOP_ACTIONS] if probs[a] > 0]
        return f"{agent_label(agent.name)} would: " + ", ".join(f"{action_words(a, game)} {probs[a]:.0%}" for a in best)
    return f"{agent_label(agent.name)} would {action_words(agent_choice(agent, game, player), game)}."


def agent_choice(agent: Any, game: Game, player: int) -> int:
    """The agent's action for `player` in the game as it stands."""
    obs = game.observation(player)
    return int(np.asarray(agent.act(obs["observation"][None], obs["action_mask"][None]))[0])


def deadwood_lines(game: Game, player: int) -> list[str]:
    """The deadwood each legal discard leaves (discard phase), or what taking the face-up card would give."""
    hand, legal = game.hand(player), set(game.legal_actions())
    if any(a >= DISCARD_BASE for a in legal):
        playable = [c for c in hand if {DISCARD_BASE + c, KNOCK_BASE + c} & legal]
        after = {c: min_deadwood([x for x in hand if x != c]) for c in playable}
        ranked = sorted(after, key=lambda c: (after[c], c))
        shown = [f"{card_name(c)} {after[c]}{' knock' if KNOCK_BASE + c in legal else ''}" for c in ranked]
        return ["Deadwood after each discard: " + ", ".join(shown) + "."]
    if ACTION_TAKE not in legal or not game.discard_pile:
        return []
    top = game.discard_pile[-1]
    banned = () if game.rules.allow_rediscard_taken_card else (top,)
    after = {c: min_deadwood([x for x in [*hand, top] if x != c]) for c in [*hand, top] if c not in banned}
    best = min(after.values())
    discards = " or ".join(card_name(c) for c in sorted(after) if after[c] == best)
    return [
        f"Your deadwood is {min_deadwood(hand)}; taking {card_name(top)} and discarding {discards} would leave {best}."
    ]


def hint_lines(game: Game, player: int, agent: Any) -> list[str]:
    """The hint shown to the player to act: the bot's advice, then the deadwood figures."""
    return [bot_advice(game, player, agent), *deadwood_lines(game, player)]
