"""The web server's matches: each a `Session` behind an unguessable id, and how new ones are made.

An id is the only key to its match (`secrets.token_urlsafe`, 192 bits): a page that does not hold it can neither
read nor move in that match. Each state of a match is numbered (`seq`); a move must name the state it was made
on, so a replayed or stale request is refused instead of being played twice. Each entry carries a lock: the app
serves one request of a match at a time (in a worker thread), and any number of matches at once.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import random
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.session import Session, choose_seat

MAX_MATCHES = 32  # matches kept in memory; the least recently used one goes first (its save file stays)
MAX_CREATED = 256  # matches one server starts, so the save files they write are bounded too (a restart resets it)
ID_BYTES = 24
ID_PATTERN = re.compile(r"[A-Za-z0-9_-]{32}")


@dataclass
class Entry:
    """A match, the number of its current state, and the lock its requests take in turn."""

    session: Session
    seq: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class MatchLimitError(RuntimeError):
    """The server has started as many matches as it may; the message says so and what to do."""


class Matches:
    """Matches by id; `create()` makes one with `make_session(n)` (n counts the matches made, from 0), at most
    `created_limit` in all, at most `limit` kept."""

    def __init__(
        self, make_session: Callable[[int], Session], limit: int = MAX_MATCHES, created_limit: int = MAX_CREATED
    ) -> None:
        self._make, self._limit, self._made, self._created_limit = make_session, limit, 0, created_limit
        self._entries: OrderedDict[str, Entry] = OrderedDict()

    def create(self) -> str:
        """Make the next match, let the bot open it if it is to act, and return its new id; MatchLimitError if this
        server has made `created_limit` already."""
        return self.add(self.make())

    def make(self) -> Session:
        """The next match, the bot's opening moves played (`create`'s slow half: the app runs it in a worker thread,
        one at a time); MatchLimitError if this server has made `created_limit` already."""
        if self._made >= self._created_limit:
            raise MatchLimitError(
                f"This server has started {self._made} matches, its limit: restart the server (play --web) for more "
                "(your saved matches resume with --resume)."
            )
        session = self._make(self._made)
        self._made += 1
        session.advance()
        return session

    def add(self, session: Session) -> str:
        """Keep a match `make` made (the least recently used one goes beyond `limit`) and return its new id."""
        match_id = secrets.token_urlsafe(ID_BYTES)
        self._entries[match_id] = Entry(session)
        while len(self._entries) > self._limit:
            self._entries.popitem(last=False)
        return match_id

    def get(self, match_id: str) -> Entry | None:
        """The match with this id, or None (an id of the wrong form is never looked up)."""
        if not isinstance(match_id, str) or not ID_PATTERN.fullmatch(match_id):
            return None
        entry = self._entries.get(match_id)
        if entry is not None:
            self._entries.move_to_end(match_id)
        return entry

    def __len__(self) -> int:
        return len(self._entries)


def numbered_path(path: str, number: int) -> str:
    """Save file number `number` (2, 3, ...) beside `path`: `stem-2.json`, `stem-3.json`..."""
    stem, ext = os.path.splitext(path)
    return f"{stem}-{number}{ext or '.json'}"


def session_maker(first: Session, seat: str) -> Callable[[int], Session]:
    """Match 0 is `first`; each later one is a new match with its rules and opponent, the seat chosen by `seat`
    ("0", "1", "random") and a seed drawn from the first's (so a seed fixes them all). With a save file, each
    later match saves to the next numbered file beside it that does not exist yet (never over an earlier match)."""
    numbers = itertools.count(2)

    def make(n: int) -> Session:
        if n == 0:
            return first
        seed = random.Random(f"{first.game.seed}:match {n}").getrandbits(63)
        game = Game(first.game.rules, seed=seed)
        path = None
        if first.save_path is not None:
            path = next(p for p in (numbered_path(first.save_path, k) for k in numbers) if not os.path.lexists(p))
        session = Session(game, choose_seat(seat, seed), first.bot, path, hold_hand_ends=True)  # one bot, shared
        session.save()  # at once, so the file holds this match and the next one numbers past it
        return session

    return make
