"""The player's decisions as the ids of `Discrete(107)` (RULES.md, "How the engine's actions map onto the rules"),
their names, and the one check of an action a front end receives (`as_action`, `as_actions`)."""

from __future__ import annotations

import numpy as np

from hollywood_gin_env.rules.cards import NUM_CARDS, card_name
from hollywood_gin_env.support.messages import shown_value

NUM_ACTIONS = 107
ACTION_DRAW_STOCK = 0
ACTION_TAKE = 1
ACTION_PASS = 2
ACTION_NAMES = ("draw stock", "take face-up card", "pass")  # of the three actions below DISCARD_BASE
DISCARD_BASE = 3  # 3 + c: discard card c
KNOCK_BASE = DISCARD_BASE + NUM_CARDS  # 55 + c: knock, discarding card c
_INT64 = np.dtype(np.int64)  # numpy's int64 arrays share this dtype object, so `is` is the quick test


def describe_action(action: int) -> str:
    """Readable name of an action id, e.g. 'discard 7H' or 'knock TD'."""
    if not 0 <= action < NUM_ACTIONS:
        return f"action {action} (outside 0..{NUM_ACTIONS - 1})"
    if action < DISCARD_BASE:
        return ACTION_NAMES[action]
    if action < KNOCK_BASE:
        return f"discard {card_name(action - DISCARD_BASE)}"
    return f"knock {card_name(action - KNOCK_BASE)}"


def illegal_action_message(action: object, legal: np.ndarray, where: str = "") -> str:
    """The one text of an illegal action: the value given, `where` (" in match 3"), and the legal actions by name."""
    shown = int(action) if isinstance(action, (int, np.integer)) and not isinstance(action, bool) else repr(action)
    names = ", ".join(f"{a} ({describe_action(a)})" for a in np.flatnonzero(legal)) or "none: the match is over"
    return f"illegal action {shown}{where}: legal actions are {names}"


def as_action(action: object) -> int:
    """One action id as an int: a Python or numpy integer, or an integer array of one element.

    TypeError for anything else (1.0 and True are not actions), so no front end casts silently; the
    value may still be out of range or illegal, which each front end handles as it documents.
    """
    kind = type(action)
    if kind is int or kind is np.int64:  # the usual ids first, by exact type (bool is a subclass of int)
        return int(action)
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    array_like = isinstance(action, (np.ndarray, list, tuple)) or hasattr(action, "__array__")  # e.g. a tensor
    array = np.asarray(action) if array_like else None
    if array is None or array.dtype.kind not in "iu" or array.size != 1:
        shown = f"an array of dtype {array.dtype} and shape {array.shape}" if array is not None else repr(action)
        raise TypeError(f"an action is an integer action id (0..{NUM_ACTIONS - 1}), got {shown}")
    return int(array.reshape(()))


def as_actions(actions: object, num: int, source: str = "actions") -> np.ndarray:
    """int64[num] action ids from an integer array of shape (num,) (a list of ints also works).

    No silent casts: floats (1.7 is not action 1), bools, strings and other shapes raise a TypeError
    or ValueError naming the dtype or shape received. Huge unsigned ids stay illegal rather than wrap.
    """
    if type(actions) is np.ndarray and actions.dtype is _INT64 and actions.shape == (num,):
        return actions  # already what the checks below return; the envs pass such arrays every step
    if isinstance(actions, np.ndarray):
        array = actions
    else:  # a list, or an array-like such as a torch tensor
        if isinstance(actions, (list, tuple)) and any(isinstance(a, (bool, np.bool_)) for a in actions):
            raise TypeError(f"{source} must be integer action ids, got a bool in {shown_value(actions)}")
        try:
            array = np.asarray(actions)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"{source} must be an integer array of shape ({num},), got {shown_value(actions)}"
            ) from error
    if array.dtype == object:  # e.g. Python ints beyond int64: each must be an integer
        if not all(isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)) for a in array.flat):
            kinds = sorted({type(a).__name__ for a in array.flat})
            raise TypeError(f"{source} must be integer action ids, got items of type {', '.join(kinds)}")
        array = np.array([min(max(int(a), -1), NUM_ACTIONS) for a in array.flat], dtype=np.int64).reshape(array.shape)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{source} must be an integer array of shape ({num},), got dtype {array.dtype}")
    if array.shape != (num,):
        raise ValueError(f"{source} must have shape ({num},) (one action id per match), got shape {array.shape}")
    if array.dtype.kind == "u" and array.dtype.itemsize >= 8:
        array = np.minimum(array, NUM_ACTIONS)
    return array.astype(np.int64, copy=False)
