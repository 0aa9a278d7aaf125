"""One match between a human and a bot, as both front ends (the terminal's `play.py`, the web page) drive it.

`Session` owns the match (`Game`), the human's seat, the opponent agent and the save file: the human's moves go in
through `play(action)` (checked: the human's turn, a legal action), the bot's through `bot_move()` (reseeded per
decision, so a resumed match plays on exactly as an unbroken one), and every move is saved at once, atomically,
in the one save format (`save_match` / `load_match`). A front end only shows the match and turns input into
actions. A hand's end can be held (`advance(hold_hand_end=True)`) so a page shows it before the bot plays on.

The bot is an `Opponent`: the agent its spec names, loaded once and shared by every session given it (the web page's
matches hold one copy of a checkpoint, not one each), and used by one thread at a time (its reseeding and its choice
are one step, whichever thread asks).
"""

from __future__ import annotations

import json
import random
import threading
from typing import Any

from hollywood_gin_env.agents import HEURISTICS, AgentProtocol, load_agent
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.hints import agent_choice, agent_label, hint_lines
from hollywood_gin_env.support.atomic import atomic_write_text, remove_temporaries
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_env.support.userfiles import format_bytes, read_user_file

FILE_FORMAT = "hollywood-gin-match"
FILE_VERSION = 1
MAX_FILE_BYTES = 16 * 2**20  # a long match's log is well under 1 MB; refuse more before reading it
#: Moves a saved match may hold: a match against a bot takes about 2,000, random against random at most about 81,000;
#: replaying 100,000 takes a few seconds, and their log (about 70 bytes a move) fits MAX_FILE_BYTES.
MAX_MATCH_ACTIONS = 100_000


class SessionError(ValueError):
    """A move the session refuses (not the human's turn, illegal, nothing to continue); the match is unchanged."""


class MatchTooLongError(ValueError):
    """A match that a save file cannot hold (more moves or bytes than `load_match` reads): it is not written."""


def check_match_length(actions: int) -> None:
    """MatchTooLongError if a match of `actions` moves is more than a saved match may hold."""
    if actions > MAX_MATCH_ACTIONS:
        raise MatchTooLongError(
            f"the match has {actions:,} moves, more than the {MAX_MATCH_ACTIONS:,} a saved match may hold"
        )


def save_match(path: str, game: Game, human: int, opponent: str) -> None:
    """Write the match (its engine event log, the human's seat, the opponent) to path atomically; MatchTooLongError,
    writing nothing, if `load_match` would refuse the file (too many moves or bytes)."""
    check_match_length(len(game.actions_played()))
    data = {
        "format": FILE_FORMAT,
        "version": FILE_VERSION,
        "human_seat": human,
        "opponent": opponent,
        "events": game.events,
    }
    text = json.dumps(data)  # ASCII: its length is its size in bytes
    if len(text) > MAX_FILE_BYTES:
        size, limit = format_bytes(len(text)), format_bytes(MAX_FILE_BYTES)
        raise MatchTooLongError(f"the match's log is {size}, more than the {limit} a saved match may hold")
    atomic_write_text(path, text)


def _read_json(path: str) -> Any:
    try:  # a regular file only, read at most MAX_FILE_BYTES (/dev/zero never ends, a FIFO would wait)
        return json.loads(read_user_file(path, MAX_FILE_BYTES, "saved match").decode("utf-8"))
    except RecursionError:
        raise ValueError(f"{path} is not a saved match: its JSON is nested too deeply") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read the saved match {path}: {error}") from None


def _field(data: dict, key: str, allowed: tuple, path: str) -> Any:
    """data[key] if it is one of `allowed` (compared by type too, so True is not 1); ValueError naming it else."""
    value = data.get(key)
    if not any(type(value) is type(a) and value == a for a in allowed):
        raise ValueError(
            f"{path}: {key} {shown_value(value)} is not allowed: this program reads {key} "
            f"{' or '.join(repr(a) for a in allowed)}"
        )
    return value


def load_match(path: str) -> tuple[Game, int, str]:
    """(game replayed from its event log, human seat, opponent spec) of a saved match; ValueError if it is not one."""
    data = _read_json(path)
    if not isinstance(data, dict) or data.get("format") != FILE_FORMAT:
        raise ValueError(f"{path} is not a match saved by play.py (expected format {FILE_FORMAT!r})")
    _field(data, "version", (FILE_VERSION,), path)
    human = _field(data, "human_seat", (0, 1), path)
    opponent = data.get("opponent", "expert")
    if not isinstance(opponent, str) or not opponent.isprintable():
        raise ValueError(
            f"{path}: opponent {shown_value(opponent)} is not allowed: use an agent spec such as 'bot' or 'expert' "
            "(printable characters only)"
        )
    events = data.get("events")
    if isinstance(events, list):  # counted before replaying: replay time and memory grow with the moves
        try:
            check_match_length(sum(isinstance(e, dict) and "action" in e for e in events))
        except MatchTooLongError as error:
            raise ValueError(f"{path}: {error}") from None
    try:
        game = Game.replay(events)
    except (KeyError, TypeError, ValueError, RecursionError) as error:  # a hand-edited or damaged log
        raise ValueError(f"{path} holds no replayable match: {str(error)[:300]}") from None
    return game, human, opponent


class Opponent:
    """The agent a spec names (`agent` if given, built from it already; else `load_agent(spec, allow_import=...)`),
    loaded once: sessions given the same Opponent share it, one thread at a time."""

    def __init__(self, spec: str, agent: AgentProtocol | None = None, allow_import: bool = True) -> None:
        self.spec, self._lock = spec, threading.Lock()
        self.agent = agent if agent is not None else load_agent(spec, allow_import=allow_import)

    @property
    def label(self) -> str:
        """The opponent as the player reads it ("bot", "policy.safetensors", "expert")."""
        return agent_label(getattr(self.agent, "name", self.spec))

    def choose(self, game: Game, player: int, seed: int) -> int:
        """The agent's action for `player`, reseeded with `seed` first (so a resumed match plays on as an unbroken
        one)."""
        with self._lock:
            if hasattr(self.agent, "reset"):
                self.agent.reset(seed)
            return agent_choice(self.agent, game, player)

    def hint(self, game: Game, player: int) -> list[str]:
        """What the agent would do in `player`'s seat, and the deadwood each choice leaves (`hint_lines`)."""
        with self._lock:
            return hint_lines(game, player, self.agent)


class Session:
    """One match between the human at seat `human` and the agent `opponent` names (or an `Opponent` to share), saved
    to `save_path` if given.

    The agent is `agent` if given (built from `opponent` already), else `load_agent(opponent, allow_import=...)`
    (`Opponent`): `allow_import=False` for a spec read from a save file, which never makes the program import a
    module.
    With hold_hand_ends (the web page), a hand that ends before the match does is held: nothing more is played
    until `continue_play()`, so the page shows the hand's end before the bot opens the next one.
    """

    def __init__(
        self,
        game: Game,
        human: int,
        opponent: str | Opponent,
        save_path: str | None = None,
        hold_hand_ends: bool = False,
        agent: AgentProtocol | None = None,
        allow_import: bool = True,
    ) -> None:
        if type(human) is not int or human not in (0, 1):
            raise ValueError(f"human={shown_value(human)} is not allowed: use seat 0 or 1")
        self.bot = opponent if isinstance(opponent, Opponent) else Opponent(opponent, agent, allow_import)
        self.game, self.human, self.opponent, self.save_path = game, human, self.bot.spec, save_path
        if save_path:  # what a killed save of this file left beside it (a save writes a temporary, then renames it)
            remove_temporaries(save_path)
        self.hold_hand_ends = hold_hand_ends
        self.names = player_names(human, self.opponent_label)
        self.held_hand_end: int | None = None  # index of the held "hand_result" event
        self.save_error: str | None = None  # why the last save failed; None when it worked or there is no file

    @property
    def agent(self) -> AgentProtocol:
        """The bot's agent (shared with the sessions given the same `Opponent`: play it through `bot`)."""
        return self.bot.agent

    @property
    def opponent_label(self) -> str:
        """The opponent as the player reads it ("bot", "policy.safetensors", "expert")."""
        return self.bot.label

    @property
    def opponent_name(self) -> str:
        """How the table names the opponent ("Bot", "Expert")."""
        return opponent_name(self.opponent_label)

    @property
    def humans_turn(self) -> bool:
        """True when the human is to act and no hand's end is held."""
        return not self.game.done and self.held_hand_end is None and self.game.current_player == self.human

    def save(self) -> bool:
        """Save the match if there is a save file; False (the reason in `save_error`) if that failed."""
        self.save_error = None
        if self.save_path:
            try:
                save_match(self.save_path, self.game, self.human, self.opponent)
            except OSError as error:
                self.save_error = f"Could not save the match to {self.save_path}: {error}"
            except MatchTooLongError as error:  # the file keeps the last save, which resumes
                self.save_error = (
                    f"The match is no longer saved: {error}. {self.save_path} keeps it as last saved; "
                    "finish it here, or resume that."
                )
        return self.save_error is None

    def not_your_turn(self) -> str:
        """Why the human may not move now."""
        if self.game.done:
            return "The match is over: nothing more can be played; start a new match."
        if self.held_hand_end is not None:
            return "The hand is over: continue to the next hand first."
        return f"It is not your turn: the other player is to act ({self.game.phase.replace('_', ' ')})."

    def play(self, action: int) -> None:
        """Apply the human's action and save; SessionError (match unchanged) if it is not the human's to make."""
        if not self.humans_turn:
            raise SessionError(self.not_your_turn())
        try:
            self._step(action)
        except ValueError as error:  # the engine's message names the action and the legal ones; nothing changed
            raise SessionError(str(error)) from None

    def bot_move(self) -> None:
        """The bot's action, reseeded per decision so a resumed match plays on exactly as an unbroken one."""
        if self.game.done or self.game.current_player == self.human or self.held_hand_end is not None:
            raise SessionError("It is not the bot's turn.")
        seed = random.Random(f"{self.game.seed}:{len(self.game.actions_played())}").getrandbits(63)
        self._step(self.bot.choose(self.game, 1 - self.human, seed))

    def _step(self, action: int) -> None:
        events = self.game.events
        before = len(events)
        self.game.step(action)
        ended = [i for i in range(before, len(events)) if events[i]["type"] == "hand_result"]
        if self.hold_hand_ends and ended and not self.game.done:
            self.held_hand_end = ended[-1]
        self.save()  # after every move, so a crash loses nothing

    def advance(self) -> None:
        """Let the bot play until the human is to act, a hand's end is held or the match is over."""
        while not self.game.done and self.held_hand_end is None and self.game.current_player != self.human:
            self.bot_move()

    def continue_play(self) -> None:
        """Go on after a held hand's end: the bot plays if it opens the next hand."""
        if self.held_hand_end is None:
            raise SessionError("There is no finished hand to continue from: play your move.")
        self.held_hand_end = None
        self.advance()

    def hint(self) -> list[str]:
        """What the bot would do in the human's seat and the deadwood each choice leaves (the terminal's `hint`)."""
        if not self.humans_turn:
            raise SessionError(self.not_your_turn())
        return self.bot.hint(self.game, self.human)


def opponent_name(label: str) -> str:
    """How the table names an opponent of this label: a heuristic by its name ("Expert"), the shipped bot or a
    checkpoint "Bot"."""
    return label.capitalize() if label in HEURISTICS else "Bot"


def player_names(human: int, label: str) -> tuple[str, str]:
    """The names of seats 0 and 1 at the table: "You" for the human's, the opponent's name for the other."""
    name = opponent_name(label)
    return ("You", name) if human == 0 else (name, "You")


def choose_seat(seat: str, seed: int) -> int:
    """The human's seat for `--seat`: "0", "1", or "random" (drawn from the match seed, so a seed fixes it too)."""
    if seat not in ("0", "1", "random"):
        raise ValueError(f"seat={shown_value(seat)} is not allowed: use '0', '1' or 'random'")
    return random.Random(seed).randrange(2) if seat == "random" else int(seat)
