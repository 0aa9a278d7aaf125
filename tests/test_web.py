"""The web server of `python play.py --web` through Starlette's TestClient: every payload of whole matches holds only
what the human may know, matches are isolated behind unguessable ids, and every malformed, forged, replayed or
out-of-turn request is a 4xx with a clear message that leaves the match unchanged. The bot is `expert` or `greedy`
(no torch, no checkpoint)."""

from __future__ import annotations

import functools
import json
import random
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hollywood_gin_env.display.words import hand_events, public_took
from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.session import Session
from hollywood_gin_env.rules.cards import card_name
from hollywood_gin_env.rules.options import Rules
from tests.play_helpers import E1_DECK, E1_SEAT

pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")
from starlette.testclient import TestClient  # noqa: E402

from hollywood_gin_env.play.web.app import MAX_BODY, create_app  # noqa: E402
from hollywood_gin_env.play.web.matches import Matches, session_maker  # noqa: E402
from hollywood_gin_env.play.web.view import legal_moves  # noqa: E402

CARD = re.compile(r"\b(?:[A2-9TJQK]|10)[SHDC]\b")
#: Every key a payload may hold. A new field fails this test until someone has checked what it reveals.
KEYS = {
    "id",
    "state",
    "seq",
    "opponent",
    "opponent_name",
    "seat",
    "hand_number",
    "dealer",
    "phase",
    "turn",
    "prompt",
    "hand",
    "melds",
    "deadwood",
    "deadwood_total",
    "bot",
    "cards",
    "took",
    "pile",
    "face_up",
    "recent",
    "size",
    "stock",
    "moves",
    "earlier_moves",
    "legal",
    "action",
    "card",
    "gin",
    "sheet",
    "game",
    "points",
    "entered",
    "winner",
    "net",
    "rules",
    "summary",
    "knock_limit",
    "game_target",
    "num_games",
    "hand_end",
    "kind",
    "lines",
    "games",
    "spreads",
    "who",
    "role",
    "layoffs",
    "on",
    "match_end",
    "line",
    "save",
    "path",
    "error",
    "message",
    "drawn",
    "knocker",
}


def server(
    seed: int = 5,
    seat: str = "0",
    rules: Rules | None = None,
    deck: str | None = None,
    opponent="expert",
    save: str | None = None,
) -> tuple[TestClient, Matches]:
    """A client of a fresh server whose first match is seeded so; the client speaks to 127.0.0.1."""
    from hollywood_gin_env.play.session import choose_seat

    game = Game(rules or Rules(), seed=seed, deck=deck)
    first = Session(game, choose_seat(seat, seed), opponent, save, hold_hand_ends=True)
    matches = Matches(session_maker(first, seat))
    return TestClient(create_app(matches), base_url="http://127.0.0.1"), matches


def new_match(client: TestClient) -> tuple[str, dict[str, Any]]:
    response = client.post("/api/matches", json={})
    assert response.status_code == 201, response.text
    return response.json()["id"], response.json()["state"]


def click(client: TestClient, match_id: str, body: dict[str, Any]):
    return client.post(f"/api/matches/{match_id}/move", json=body)


def choose(state: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """A fair player: the lowest knock, else the discard leaving least deadwood, else draw/take/pass at random."""
    legal = state["legal"]
    for kind in ("knock", "discard"):
        options = [m for m in legal if m["action"] == kind]
        if options:
            return min(options, key=lambda m: (m["deadwood"], m["card"]))
    return rng.choice(legal)


def without_deadwood(move: dict[str, Any]) -> dict[str, Any]:
    """A legal move as the page sends it: its action and card."""
    return {k: move[k] for k in ("action", "card") if k in move}


def keys_of(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in keys_of(v)}
    if isinstance(value, list):
        return {k for v in value for k in keys_of(v)}
    return set()


def cards_in(value: Any) -> set[str]:
    """Every card name written anywhere in a payload."""
    return set(CARD.findall(json.dumps(value).replace("10", "T")))


def public_cards(game: Game, hand_start: int, hand_end: int) -> set[str]:
    """Cards the human (game's seat `human`) saw during events[hand_start:hand_end]: its own hands, the upcard,
    everything passed, taken or discarded."""
    seen: set[int] = set()
    for e in game.events[hand_start:hand_end]:
        if e["type"] == "deal":
            seen.add(e["upcard"])
        elif e["type"] in ("pass", "discard", "knock") or (e["type"] == "draw" and e["source"] == "discard"):
            seen.add(e["card"])
    return {card_name(c) for c in seen}


def check_payload(payload: dict[str, Any], session: Session) -> None:
    """The payload names no card the human may not know now: outside the hand's-end block, only its hand and the
    public pile of this hand; in that block, only that hand's showdown (both hands) or, for a dead hand, its public
    cards and the human's own."""
    assert keys_of(payload) <= KEYS, keys_of(payload) - KEYS
    game, human = session.game, session.human
    state = payload["state"]
    deal = max(i for i, e in enumerate(game.events) if e["type"] == "deal")
    allowed = public_cards(game, deal, len(game.events)) | {card_name(c) for c in game.hand(human)}
    ended = state["hand_end"]
    rest = {k: v for k, v in payload.items() if k != "state"} | {k: v for k, v in state.items() if k != "hand_end"}
    if not game.done:
        stock = game.events[deal]["deck"][-game.stock_size :] if game.stock_size else []
        hidden = {card_name(c) for c in stock} | {card_name(c) for c in game.hand(1 - human)}
        hidden -= {card_name(c) for c in public_took(hand_events(game.events), 1 - human)}
        assert not cards_in(rest) & hidden, cards_in(rest) & hidden
    if game.done:  # the last hand has ended: its showdown is public, and the table shows it
        allowed |= ended_hand_cards(game, human, len(game.events))
    assert cards_in(rest) <= allowed, cards_in(rest) - allowed
    if ended is not None:
        index = [i for i, e in enumerate(game.events) if e["type"] == "hand_result"][-1]
        assert cards_in(ended) <= ended_hand_cards(game, human, index + 1), "the hand's end shows a hidden card"


def ended_hand_cards(game: Game, human: int, upto: int) -> set[str]:
    """What the showdown of the hand whose result is the last before event `upto` made public to the human."""
    result = max(i for i, e in enumerate(game.events[:upto]) if e["type"] == "hand_result")
    deal = max(i for i, e in enumerate(game.events[:result]) if e["type"] == "deal")
    seen = public_cards(game, deal, result)
    mine = human_cards(game, human, deal, result)
    if game.events[result]["kind"] == "dead":
        return seen | mine
    spread = game.events[result - 1]
    shown = [c for key in ("knocker_deadwood_cards", "defender_deadwood_cards") for c in spread[key]]
    shown += [c for key in ("knocker_melds", "defender_melds", "layoffs") for m in spread[key] for c in m]
    return seen | mine | {card_name(c) for c in shown}


def human_cards(game: Game, seat: int, deal: int, end: int) -> set[str]:
    """Every card the seat held during events[deal:end]: its dealt hand and every card it drew."""
    held = set(game.events[deal]["hands"][seat])
    held |= {e["card"] for e in game.events[deal:end] if e["type"] == "draw" and e["player"] == seat}
    return {card_name(c) for c in held}


@pytest.mark.parametrize("seed, seat", [(5, "0"), (11, "1")])
def test_every_payload_of_a_whole_match_holds_only_what_the_human_may_know(seed, seat):
    """Whole matches clicked through (hints and typed commands included): no payload names a card of the bot's
    hidden hand or the stock before the showdown makes it public, and no payload holds an unchecked field."""
    client, matches = server(seed=seed, seat=seat)
    match_id, state = new_match(client)
    session = matches.get(match_id).session
    rng = random.Random(seed)
    payloads = 0
    kinds = set()
    while True:
        payload = client.get(f"/api/matches/{match_id}").json()
        check_payload(payload, session)
        payloads += 1
        state = payload["state"]
        if state["match_end"]:
            break
        if state["turn"] == "you":
            hint = client.get(f"/api/matches/{match_id}/hint").json()
            assert cards_in(hint) <= {card_name(c) for c in session.game.hand(session.human)} | cards_in(state)
            answer = client.post(f"/api/matches/{match_id}/command", json={"seq": state["seq"], "text": "log"})
            check_payload(answer.json(), session)
        move = choose(state, rng)
        response = click(client, match_id, {"seq": state["seq"], **without_deadwood(move)})
        assert response.status_code == 200, response.text
        check_payload(response.json(), session)
        if state["hand_end"]:
            kinds.add(state["hand_end"]["kind"])
    assert session.game.done and payloads > 20 and kinds, (payloads, kinds)


def test_the_hand_end_shows_both_hands_the_layoffs_and_the_score_of_e1():
    """RULES.md E1 by clicks: take 2C, knock discarding 9D; the bot lays 6H and 8H off; 38 - 2 = 36 to you."""
    client, matches = server(seed=0, seat=E1_SEAT, deck=E1_DECK, opponent="greedy")
    match_id, state = new_match(client)
    assert state["turn"] == "you" and {m["action"] for m in state["legal"]} == {"take", "pass"}
    state = click(client, match_id, {"seq": state["seq"], "action": "take", "card": "2C"}).json()["state"]
    knock = [m for m in state["legal"] if m["action"] == "knock"]
    assert {"action": "knock", "card": "9D", "deadwood": 2, "gin": False} in knock
    state = click(client, match_id, {"seq": state["seq"], "action": "knock", "card": "9D"}).json()["state"]
    end = state["hand_end"]
    assert (end["kind"], end["winner"], end["points"], end["games"]) == ("knock", "you", 36, [1])
    mine, bots = end["spreads"]
    assert mine["melds"] == [["3H", "4H", "5H"], ["8S", "8D", "8C"], ["JS", "QS", "KS"]] and mine["deadwood"] == ["2C"]
    assert bots["layoffs"] == [{"cards": ["8H"], "on": ["8S", "8D", "8C"]}, {"cards": ["6H"], "on": ["3H", "4H", "5H"]}]
    assert bots["deadwood_total"] == 38 and "Knock: 38 \u2212 2 = 36 points to you, entered in game 1." in end["lines"]
    assert state["legal"] == [{"action": "next"}] and state["sheet"][0]["points"] == [36, 0]
    state = click(client, match_id, {"seq": state["seq"], "action": "next"}).json()["state"]
    assert state["hand_end"] is None and state["hand_number"] == 2


def test_matches_are_isolated_behind_unguessable_ids():
    """Ids are 192 random bits (not derived from the seed); a near-miss id is a 404 that never echoes it; moving
    in one match leaves the other exactly as it was."""
    client, _ = server(seed=3)
    other_client, _ = server(seed=3)
    a, state_a = new_match(client)
    b, _ = new_match(client)
    assert len({a, b, new_match(other_client)[0]}) == 3 and all(len(i) == 32 for i in (a, b))
    before_b = client.get(f"/api/matches/{b}").json()
    forged = a[:-1] + ("A" if a[-1] != "A" else "B")
    for path in (f"/api/matches/{forged}", f"/api/matches/{forged}/hint", "/api/matches/" + "x" * 32, "/api/matches/x"):
        response = client.get(path)
        assert response.status_code == 404 and forged not in response.text, (path, response.text)
    response = click(client, forged, {"seq": state_a["seq"], "action": choose(state_a, random.Random(0))["action"]})
    assert response.status_code == 404 and response.json()["error"].startswith("No such match")
    assert other_client.get(f"/api/matches/{a}").status_code == 404  # another server has no such match
    move = choose(state_a, random.Random(0))
    assert click(client, a, {"seq": state_a["seq"], **without_deadwood(move)}).is_success
    assert client.get(f"/api/matches/{b}").json() == before_b
    assert b not in json.dumps(client.get(f"/api/matches/{a}").json())


def snapshot(client: TestClient, match_id: str, matches: Matches) -> tuple:
    entry = matches.get(match_id)
    return client.get(f"/api/matches/{match_id}").json(), [dict(e) for e in entry.session.game.events], entry.seq


BAD_MOVES = [
    # (what, body or raw bytes, content type, status, words in the error)
    ("not JSON", b"{seq: 0", "application/json", 400, "not valid JSON"),
    ("a JSON list", b"[1, 2]", "application/json", 400, "JSON object"),
    ("deep JSON", b"[" * 3000 + b"]" * 3000, "application/json", 413, "over 4096 bytes"),
    (
        "deeply nested, small",
        b"[" * 2000 + b"]" * 2000,
        "application/json",
        400,
        ("not valid JSON", "must be a JSON object"),
    ),  # which one depends on the recursion limit in force
    (
        "a huge body",
        b'{"seq": 0, "action": "draw", "pad": "' + b"x" * MAX_BODY + b'"}',
        "application/json",
        413,
        "over 4096 bytes",
    ),
    ("form data", b"seq=0&action=draw", "application/x-www-form-urlencoded", 415, "as JSON"),
    ("no seq", {"action": "pass"}, None, 400, "seq must be"),
    ("seq true", {"seq": True, "action": "pass"}, None, 400, "seq must be"),
    ("seq text", {"seq": "0", "action": "pass"}, None, 400, "seq must be"),
    ("seq float", {"seq": 0.0, "action": "pass"}, None, 400, "seq must be"),
    ("a future seq", {"seq": 7, "action": "pass"}, None, 409, "replayed or stale"),
    ("an unknown action", {"seq": 0, "action": "cheat"}, None, 400, "action 'cheat' is not allowed"),
    ("an action number", {"seq": 0, "action": 55}, None, 400, "action 55 is not allowed"),
    ("an extra field", {"seq": 0, "action": "pass", "player": 1}, None, 400, "Unknown field player"),
    ("discard without a card", {"seq": 0, "action": "discard"}, None, 400, "discard needs a card"),
    ("a card with pass", {"seq": 0, "action": "pass", "card": "2C"}, None, 400, "pass takes no card"),
    ("a bad card name", {"seq": 0, "action": "discard", "card": "ZZ"}, None, 400, "'ZZ' is not a card name"),
    ("a card id", {"seq": 0, "action": "discard", "card": 12}, None, 400, "12 is not a card name"),
    ("a long card", {"seq": 0, "action": "discard", "card": "7H" * 30}, None, 400, "is not a card name"),
    ("draw on the offer", {"seq": 0, "action": "draw"}, None, 409, "take it or pass first"),
    ("discard on the offer", {"seq": 0, "action": "discard", "card": "9D"}, None, 409, "take it or pass first"),
    ("take another card", {"seq": 0, "action": "take", "card": "KD"}, None, 409, "only take the face-up card, 2C"),
    ("next mid-hand", {"seq": 0, "action": "next"}, None, 409, "no finished hand to continue"),
]


@pytest.mark.parametrize("what, body, content_type, status, words", BAD_MOVES, ids=[b[0] for b in BAD_MOVES])
def test_a_bad_move_request_is_a_clear_4xx_and_changes_nothing(what, body, content_type, status, words):
    """E1 at the upcard offer to the human: each bad request gets its status and message; the match, its event log
    and its state number are as they were, and a good move still plays."""
    client, matches = server(seed=0, seat=E1_SEAT, deck=E1_DECK, opponent="greedy")
    match_id, state = new_match(client)
    before = snapshot(client, match_id, matches)
    if isinstance(body, bytes):
        response = client.post(f"/api/matches/{match_id}/move", content=body, headers={"content-type": content_type})
    else:
        response = click(client, match_id, body)
    assert response.status_code == status, response.text
    assert any(w in response.json()["error"] for w in ((words,) if isinstance(words, str) else words)), response.json()
    assert snapshot(client, match_id, matches) == before
    assert click(client, match_id, {"seq": state["seq"], "action": "take"}).status_code == 200


def test_replayed_stale_and_out_of_turn_requests_are_refused():
    """A move sent twice plays once; a move after the hand ended waits for `next`; after the match, nothing plays."""
    client, matches = server(
        seed=0, seat=E1_SEAT, deck=E1_DECK, opponent="greedy", rules=Rules(num_games=1, game_target=30)
    )
    match_id, state = new_match(client)
    take = {"seq": state["seq"], "action": "take"}
    assert click(client, match_id, take).status_code == 200
    before = snapshot(client, match_id, matches)
    replayed = click(client, match_id, take)
    assert replayed.status_code == 409 and "replayed or stale" in replayed.json()["error"]
    assert snapshot(client, match_id, matches) == before
    seq = before[0]["state"]["seq"]
    illegal = click(client, match_id, {"seq": seq, "action": "knock", "card": "3H"})
    assert illegal.status_code == 409 and "leaves deadwood" in illegal.json()["error"]
    state = click(client, match_id, {"seq": seq, "action": "knock", "card": "9D"}).json()["state"]
    assert state["match_end"]["winner"] == "you" and state["legal"] == []  # 36 >= 30: the one game, the series
    before = snapshot(client, match_id, matches)
    for body in ({"seq": state["seq"], "action": "draw"}, {"seq": state["seq"], "action": "next"}):
        response = click(client, match_id, body)
        assert response.status_code == 409 and response.json()["error"], response.text
    typed = client.post(f"/api/matches/{match_id}/command", json={"seq": state["seq"], "text": "d"})
    assert typed.status_code == 400 and "The match is over" in typed.json()["error"]
    assert client.get(f"/api/matches/{match_id}/hint").status_code == 409
    assert snapshot(client, match_id, matches) == before


def test_typed_commands_play_like_the_terminal_and_garbage_is_explained():
    client, matches = server(seed=0, seat=E1_SEAT, deck=E1_DECK, opponent="greedy")
    match_id, state = new_match(client)
    url = f"/api/matches/{match_id}/command"
    for text, words in [
        ("d", "take it or pass first"),
        ("xyzzy now", "Unknown command"),
        ("", "Type a command"),
        ("k" * 41, "at most 40"),
        ("take\x1b[A", "control characters"),
    ]:
        response = client.post(url, json={"seq": state["seq"], "text": text})
        assert response.status_code == 400 and words in response.json()["error"], (text, response.text)
    for body in ({"seq": state["seq"], "text": 7}, {"seq": state["seq"]}, {"seq": state["seq"], "text": "t", "x": 1}):
        assert client.post(url, json=body).status_code == 400
    sheet = client.post(url, json={"seq": state["seq"], "text": "sheet"}).json()
    assert sheet["message"][0].startswith("Score sheet") and sheet["message"][1].startswith("G1: You")
    assert client.post(url, json={"seq": state["seq"], "text": "help"}).json()["message"][0].startswith("Commands")
    state = client.post(url, json={"seq": state["seq"], "text": "take 2c"}).json()["state"]
    state = client.post(url, json={"seq": state["seq"], "text": "knock 9d"}).json()["state"]
    assert state["hand_end"]["points"] == 36


def test_wrong_methods_paths_and_hosts_are_4xx_with_json():
    client, _ = server()
    match_id, _ = new_match(client)
    for method, path, status in [
        ("GET", f"/api/matches/{match_id}/move", 405),
        ("DELETE", "/api/matches", 405),
        ("GET", "/nothing", 404),
        ("GET", "/static/../app.py", 404),
    ]:
        response = client.request(method, path)
        assert response.status_code == status and "error" in response.json(), (method, path, response.text)
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400  # DNS rebinding
    page = client.get("/")
    assert page.status_code == 200 and "default-src 'self'" in page.headers["content-security-policy"]
    assert "http" not in re.sub(r'"/static/[a-z.]+"', "", page.text.split("<body>")[0])  # nothing from outside
    for name in ("app.js", "style.css"):
        text = client.get(f"/static/{name}").text
        assert text and not re.search(r"https?://|@import|url\(", text), name


def test_matches_in_memory_are_bounded():
    client, matches = server()
    ids = [new_match(client)[0] for _ in range(40)]
    assert len(matches) == 32 and client.get(f"/api/matches/{ids[0]}").status_code == 404
    assert client.get(f"/api/matches/{ids[-1]}").status_code == 200


def simple_web_move(state: dict[str, Any]) -> dict[str, Any]:
    """Pass the upcard, draw from the stock, discard what leaves least deadwood (never knock)."""
    legal = state["legal"]
    for action in ("next", "pass", "draw"):
        if {"action": action} in legal:
            return {"action": action}
    return without_deadwood(min((m for m in legal if m["action"] == "discard"), key=lambda m: m["deadwood"]))


def test_a_match_started_in_the_browser_goes_on_in_the_terminal_and_back(tmp_path):
    """Web (saved after every move) -> the terminal program's session and parser on the same file -> web again:
    each step starts from the file, and the file always replays to the table the page shows."""
    import io

    from rich.console import Console

    from hollywood_gin_env.play import terminal as play

    path = str(tmp_path / "match.json")
    client, matches = server(seed=7, opponent="greedy", save=path)
    match_id, state = new_match(client)
    for _ in range(4):
        state = click(client, match_id, {"seq": state["seq"], **simple_web_move(state)}).json()["state"]
    assert state["save"] == {"path": path, "error": None}
    web_events = matches.get(match_id).session.game.events
    assert play.load_match(path)[0].events == web_events

    session = play.first_session(play.parse_args(["--resume", path]), web=False)
    terminal = play.Terminal(session, Console(file=io.StringIO(), width=200))
    for _ in range(4):
        session.advance()
        assert terminal.command(terminal_command(session)) is True
    session.advance()
    assert len(session.game.events) > len(web_events)
    assert play.load_match(path)[0].events == session.game.events

    back = play.first_session(play.parse_args(["--resume", path]), web=True)
    client = TestClient(create_app(Matches(session_maker(back, "random"))), base_url="http://127.0.0.1")
    match_id, state = new_match(client)
    assert state["hand"]["deadwood_total"] >= 0 and state["seq"] == 0
    assert {c for g in state["hand"]["melds"] for c in g} | set(state["hand"]["deadwood"]) == {
        card_name(c) for c in session.game.hand(session.human)
    }
    state = click(client, match_id, {"seq": 0, **simple_web_move(state)}).json()["state"]
    saved = play.load_match(path)[0]
    assert saved.events == back.game.events and len(saved.events) > len(session.game.events)
    assert saved.events[: len(session.game.events)] == session.game.events


def terminal_command(session: Session) -> str:
    """The terminal's keystrokes for simple_web_move's choice."""
    move = simple_web_move({"legal": legal_moves(session)})
    return {"pass": "p", "draw": "d"}.get(move["action"]) or move["card"].lower()


def test_every_file_of_the_page_is_package_data():
    """pyproject's package-data globs cover every file under web/static, so an install ships the whole page."""
    import fnmatch
    import tomllib
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    globs = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    static = root / "hollywood_gin_env" / "play" / "web" / "static"
    files = [p.relative_to(static.parent).as_posix() for p in static.iterdir()]
    assert files and all(any(fnmatch.fnmatch(f, g) for g in globs["hollywood_gin_env.play.web"]) for f in files), files


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["take", "pass", "draw", "discard", "knock", "next", "2C", "9D", "7h", "10H", "d", "t"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["seq", "action", "card", "text"]), inner, max_size=4)
    ),
    max_leaves=8,
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=JSON_VALUES, endpoint=st.sampled_from(["move", "command"]))
def test_no_request_body_is_a_server_error_and_a_refused_one_changes_nothing(body, endpoint):
    """Any JSON body at the two moving endpoints: never a 5xx; a 4xx carries a message and leaves the match as it
    was; a 200 is a legal move (the state number advances)."""
    client, matches = fuzz_server()
    match_id = next(iter(matches._entries))
    before = snapshot(client, match_id, matches)
    raw = json.dumps(body)  # NaN and Infinity too, as a forged request may send them
    headers = {"content-type": "application/json"}
    response = client.post(f"/api/matches/{match_id}/{endpoint}", content=raw, headers=headers)
    assert response.status_code < 500, (body, response.text)
    if response.status_code >= 400:
        assert response.json()["error"] and snapshot(client, match_id, matches) == before
    elif endpoint == "move":
        assert matches.get(match_id).seq == before[2] + 1


@functools.cache
def fuzz_server() -> tuple[TestClient, Matches]:
    """One server for all the fuzzed requests (a legal one moves its match on, which the next examples meet)."""
    client, matches = server(seed=0, seat=E1_SEAT, deck=E1_DECK, opponent="greedy")
    new_match(client)
    return client, matches
