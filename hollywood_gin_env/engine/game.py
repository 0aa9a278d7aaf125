"""`Game`: one match over the batched engine (N = 1), for scripting, tests, replays and human play."""

from __future__ import annotations

from typing import Any

import numpy as np

from hollywood_gin_env.display.position import Position
from hollywood_gin_env.engine import columns as col
from hollywood_gin_env.engine.batched import Engine, check_deck
from hollywood_gin_env.engine.state import UPCARD_POS
from hollywood_gin_env.rules.actions import (
    ACTION_DRAW_STOCK,
    ACTION_PASS,
    ACTION_TAKE,
    DISCARD_BASE,
    KNOCK_BASE,
    illegal_action_message,
)
from hollywood_gin_env.rules.cards import NUM_CARDS, from_mask
from hollywood_gin_env.rules.options import Rules
from hollywood_gin_env.rules.scoring import KIND_DEAD, KIND_NAMES, MAX_GAMES
from hollywood_gin_env.rules.showdown import showdown
from hollywood_gin_env.support.messages import shown_value
from hollywood_gin_env.support.streams import draw_root_seed, match_seeds


class Game:
    """One Hollywood Gin match (three games played at once, R37) with an event log from which it replays exactly.

    Args:
        rules: the rule options (default `Rules()`).
        seed: a non-negative integer that seeds the match's random stream (deals, the first dealer), as
            `reset(seed=seed)` of every env does; None draws one (logged).
        deck: fixes the first deal (52 card ids or strings, dealt as RULES.md R3 says).
        first_dealer: 0 or 1; None draws it at random (R2).
    """

    def __init__(
        self,
        rules: Rules | None = None,
        seed: int | None = None,
        deck: Any = None,
        first_dealer: int | None = None,
    ) -> None:
        first_dealer = check_first_dealer(first_dealer)
        if seed is not None and not _is_int(seed):
            raise ValueError(f"seed={shown_value(seed)} is not allowed: use an integer or None")
        self._engine = Engine(1, rules)
        self.rules = self._engine.rules
        self.seed = draw_root_seed() if seed is None else int(seed)
        fixed = check_deck(deck) if deck is not None else np.full(52, -1, dtype=np.int64)
        self._engine.new_matches(
            seeds=match_seeds(self.seed, 1),
            first_dealers=np.array([-1 if first_dealer is None else first_dealer]),
            decks=fixed[None, :],
        )
        self.events: list[dict[str, Any]] = [
            {
                "type": "start",
                "seed": self.seed,
                "first_dealer": first_dealer,
                "deck": None if deck is None else fixed.tolist(),
                "rules": self.rules.to_dict(),
            }
        ]
        self._log_deal()

    # --- state -----------------------------------------------------------------------------------
    @property
    def _match(self) -> np.ndarray:
        return self._engine.state.match[0]

    @property
    def current_player(self) -> int:
        """The player to act (0 or 1); -1 once the match is over."""
        return -1 if self.done else int(self._match[col.M_PLAYER])

    @property
    def phase(self) -> str:
        """The phase name: offer_nondealer, offer_dealer, draw, discard, last_discard or over."""
        return col.PHASE_NAMES[int(self._match[col.M_PHASE])]

    @property
    def dealer(self) -> int:
        """The dealer of the current hand."""
        return int(self._match[col.M_DEALER])

    @property
    def hand_number(self) -> int:
        """Hands dealt in this match so far (the current one included)."""
        return int(self._match[col.M_HAND_NO])

    @property
    def done(self) -> bool:
        """True once the series is over."""
        return int(self._match[col.M_PHASE]) == col.PHASE_OVER

    @property
    def winner(self) -> int | None:
        """The match winner once the match is over, else None."""
        return int(self._match[col.M_WINNER]) if self.done else None

    def hand(self, player: int) -> list[int]:
        """The cards player (0 or 1) holds, sorted by id."""
        _check_player(player)
        return from_mask(int(self._engine.state.hands[0, player]))

    @property
    def discard_pile(self) -> list[int]:
        """The discard pile, bottom first (the last card is the face-up one)."""
        return [int(c) for c in self._engine.state.pile[0, : self._match[col.M_PILE_LEN]]]

    @property
    def stock_size(self) -> int:
        """Cards left in the stock."""
        return NUM_CARDS - int(self._match[col.M_STOCK_POS])

    @property
    def score_sheet(self) -> dict[str, list]:
        """Per game (G1..G3): totals [p0, p1], entries [p0, p1], winner (None while open), net (R39)."""
        s = self._engine.state
        games = range(self.rules.num_games)
        return {
            "totals": [s.totals[0, g].tolist() for g in games],
            "entries": [s.entries[0, g].tolist() for g in games],
            "winners": [None if s.game_winner[0, g] < 0 else int(s.game_winner[0, g]) for g in games],
            "net": [int(s.game_net[0, g]) for g in games],
        }

    @property
    def last_result(self) -> dict[str, Any] | None:
        """The result of the last hand that ended (see the "hand_result" event), or None."""
        results = [e for e in self.events if e["type"] == "hand_result"]
        return results[-1] if results else None

    def legal_actions(self) -> list[int]:
        """The legal action ids of the player to act (empty once the match is over)."""
        return [int(a) for a in np.flatnonzero(self._engine.legal_mask[0])]

    def observation(self, player: int) -> dict[str, np.ndarray]:
        """The env observation of `player`: {"observation": float32 vector, "action_mask": int8[107]}."""
        from hollywood_gin_env.engine.observation import encode_one

        _check_player(player)
        return encode_one(self._engine, 0, int(player))

    # --- play ------------------------------------------------------------------------------------
    def step(self, action: int) -> None:
        """Apply the action of the player to act; an illegal action raises ValueError, state unchanged."""
        legal = self.legal_actions()
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or int(action) not in legal:
            raise ValueError(illegal_action_message(action, self._engine.legal_mask[0]))
        action = int(action)
        player, pile_top = self.current_player, self.discard_pile[-1] if self.discard_pile else -1
        hand_no = self.hand_number
        self._engine.step(np.array([action]))
        self._log_action(player, action, pile_top)
        if self._engine.hand_over[0]:
            self._log_hand_result()
        if not self.done and self.hand_number != hand_no:
            self._log_deal()

    # --- event log -------------------------------------------------------------------------------
    def _log_deal(self) -> None:
        deck = self._engine.state.deck[0].tolist()
        self.events.append(
            {
                "type": "deal",
                "hand": self.hand_number,
                "dealer": self.dealer,
                "deck": deck,
                "hands": [self.hand(0), self.hand(1)],
                "upcard": deck[UPCARD_POS],
            }
        )

    def _log_action(self, player: int, action: int, pile_top: int) -> None:
        drawn = int(self._engine.state.last_step[0, col.S_DRAWN])
        if action == ACTION_PASS:
            self.events.append({"type": "pass", "player": player, "card": pile_top, "action": action})
            if drawn >= 0:  # R6(d): the forced stock draw after two passes
                self.events.append({"type": "draw", "player": 1 - player, "card": drawn, "source": "stock"})
        elif action == ACTION_TAKE:
            self.events.append(
                {"type": "draw", "player": player, "card": pile_top, "source": "discard", "action": action}
            )
        elif action == ACTION_DRAW_STOCK:
            self.events.append({"type": "draw", "player": player, "card": drawn, "source": "stock", "action": action})
        elif action >= KNOCK_BASE:
            self.events.append({"type": "knock", "player": player, "card": action - KNOCK_BASE, "action": action})
        else:
            self.events.append({"type": "discard", "player": player, "card": action - DISCARD_BASE, "action": action})

    def _log_hand_result(self) -> None:
        last = self._engine.state.last_hand[0]
        kind = int(last[col.R_KIND])
        if kind != KIND_DEAD:
            spread = showdown(from_mask(int(last[col.R_KNOCKER_HAND])), from_mask(int(last[col.R_DEFENDER_HAND])))
            self.events.append({"type": "spread", "knocker": int(last[col.R_KNOCKER]), **spread})
        result = {
            "type": "hand_result",
            "kind": KIND_NAMES[kind],
            "knocker": int(last[col.R_KNOCKER]),
            "winner": int(last[col.R_WINNER]),
            "points": int(last[col.R_POINTS]),
            "knocker_deadwood": int(last[col.R_KNOCKER_DW]),
            "defender_deadwood": int(last[col.R_DEFENDER_DW]),
            "knock_discard": int(last[col.R_DISCARD]) if kind != KIND_DEAD else None,
            "credited_games": [g for g in range(MAX_GAMES) if last[col.R_CREDITED] >> g & 1],
            "turns": int(last[col.R_TURNS]),
        }
        result["layoffs"] = self.events[-1]["layoffs"] if kind != KIND_DEAD else []
        self.events.append(result)
        sheet = self.score_sheet
        for g in range(self.rules.num_games):
            if last[col.R_CLOSED] >> g & 1:
                self.events.append(
                    {
                        "type": "game_close",
                        "game": g,
                        "winner": sheet["winners"][g],
                        "totals": sheet["totals"][g],
                        "entries": sheet["entries"][g],
                        "net": sheet["net"][g],
                    }
                )
        if self.done:
            self.events.append({"type": "match_end", "winner": self.winner})

    def actions_played(self) -> list[int]:
        """The action ids chosen so far, in order (forced draws excluded)."""
        return [e["action"] for e in self.events if "action" in e]

    @classmethod
    def replay(cls, events: list[dict[str, Any]]) -> Game:
        """Rebuild a match from its event log: same seed, rules, deck and actions."""
        if isinstance(events, (str, bytes, dict)) or not isinstance(events, (list, tuple)) or not events:
            raise ValueError(
                f"events={shown_value(events)} is not an event log: expected Game.events, a non-empty list "
                "of dicts starting with a 'start' event"
            )
        start = events[0]
        if not isinstance(start, dict) or start.get("type") != "start":
            raise ValueError(f"an event log starts with a 'start' event, got {shown_value(start)}")
        missing = [key for key in ("seed", "deck", "first_dealer", "rules") if key not in start]
        if missing or not isinstance(start["rules"], dict):
            raise ValueError(f"the 'start' event lacks {missing or 'a rules dict'}: {shown_value(start)}")
        game = cls(Rules(**start["rules"]), seed=start["seed"], deck=start["deck"], first_dealer=start["first_dealer"])
        for event in events:
            if "action" in event:
                game.step(event["action"])
        return game

    @classmethod
    def view_of(cls, engine: Engine, index: int) -> Game:
        """A copy of match `index` of a batched engine as a Game with an empty event log (to render or inspect)."""
        game = cls.__new__(cls)
        game._engine = Engine(1, engine.rules)
        engine.state.copy_match(int(index), game._engine.state, 0)
        game.rules, game.seed, game.events = engine.rules, None, []
        return game

    # --- display ---------------------------------------------------------------------------------
    def position(self) -> Position:
        """The match now as plain values, what the renderers draw (the event log copied)."""
        return Position(
            hands=(self.hand(0), self.hand(1)),
            discard_pile=self.discard_pile,
            stock_size=self.stock_size,
            phase=self.phase,
            legal_actions=self.legal_actions(),
            current_player=self.current_player,
            dealer=self.dealer,
            hand_number=self.hand_number,
            done=self.done,
            winner=self.winner,
            score_sheet=self.score_sheet,
            events=list(self.events),
        )

    def __str__(self) -> str:
        from hollywood_gin_env.display.render import render  # rich loads only when a match is shown

        return render(self.position())


def position_of(engine: Engine, index: int) -> Position:
    """Match `index` of a batched engine now as plain values, what the renderers draw (no event log)."""
    return Game.view_of(engine, index).position()


def check_first_dealer(value: Any, name: str = "first_dealer") -> int | None:
    """A first dealer as a plain int (the log holds plain ints), or None (drawn at random, R2); ValueError naming
    `name` unless it is 0, 1 or None: True, 1.0 and "1" are none of them (Game and every env's reset options)."""
    if value is not None and (not _is_int(value) or value not in (0, 1)):
        raise ValueError(f"{name}={shown_value(value)} is not allowed: use 0, 1 or None")
    return None if value is None else int(value)


def _is_int(value: Any) -> bool:
    """True for Python and numpy integers, False for bools (True is not a seat or a seed) and floats."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_player(player: Any) -> None:
    """ValueError unless player is the integer 0 or 1."""
    if not _is_int(player) or player not in (0, 1):
        raise ValueError(f"player={shown_value(player)} is not allowed: use 0 or 1")
