"""What the web server accepts from whom: a state-changing request must be JSON from the page's own origin (a
cross-site page can neither start matches nor move), the host check reads a bracketed IPv6 address, the matches a
server starts (and the files they write) are bounded, and a request body that never arrives is given up on."""

from __future__ import annotations

import asyncio
import re

import pytest

from hollywood_gin_env.engine.game import Game
from hollywood_gin_env.play.session import Session

pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")
from starlette.requests import Request  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from hollywood_gin_env.play.web import app as web_app  # noqa: E402
from hollywood_gin_env.play.web.app import create_app, read_body  # noqa: E402
from hollywood_gin_env.play.web.matches import Matches, session_maker  # noqa: E402

EVIL = "http://evil.example"


def server(base_url: str = "http://127.0.0.1", save: str | None = None, **limits) -> tuple[TestClient, Matches]:
    first = Session(Game(seed=5), 0, "greedy", save, hold_hand_ends=True)
    matches = Matches(session_maker(first, "0"), **limits)
    return TestClient(create_app(matches), base_url=base_url), matches


def test_starting_a_match_needs_json_so_a_cross_site_form_cannot():
    """`POST /api/matches` took no body and no content type: any web page's plain form or no-cors fetch (a "simple"
    request, never preflighted) started matches and, 32 of them, evicted the player's match."""
    client, matches = server()
    for kwargs in ({}, {"content": b"x=1", "headers": {"content-type": "application/x-www-form-urlencoded"}}):
        response = client.post("/api/matches", **kwargs)
        assert response.status_code == 415 and "JSON" in response.json()["error"], response.text
    assert len(matches) == 0
    assert client.post("/api/matches", json={}).status_code == 201
    response = client.post("/api/matches", json={"seed": 3})
    assert response.status_code == 400 and "Unknown field seed" in response.json()["error"]


@pytest.mark.parametrize(
    "headers, named",
    [
        ({"origin": EVIL}, "Origin http://evil.example"),
        ({"origin": "null"}, "Origin null"),
        ({"origin": "http://127.0.0.1:9999"}, "Origin http://127.0.0.1:9999"),
        ({"sec-fetch-site": "cross-site"}, "Sec-Fetch-Site cross-site"),
    ],
)
def test_a_cross_origin_request_that_changes_state_is_403_naming_why(headers, named):
    client, matches = server()
    match_id = client.post("/api/matches", json={}).json()["id"]
    entry = matches.get(match_id)
    before = ([dict(e) for e in entry.session.game.events], entry.seq)
    for path, body in [
        ("/api/matches", {}),
        (f"/api/matches/{match_id}/move", {"seq": entry.seq, "action": "pass"}),
        (f"/api/matches/{match_id}/command", {"seq": entry.seq, "text": "p"}),
    ]:
        response = client.post(path, json=body, headers=headers)
        assert response.status_code == 403, (path, response.text)
        assert named in response.json()["error"] and "cross-origin" in response.json()["error"], response.text
    assert len(matches) == 1 and ([dict(e) for e in entry.session.game.events], entry.seq) == before
    assert client.get(f"/api/matches/{match_id}", headers=headers).status_code == 200  # reading changes nothing


def test_the_pages_own_origin_may_move():
    client, _ = server()
    same = {"origin": "http://127.0.0.1", "sec-fetch-site": "same-origin"}
    created = client.post("/api/matches", json={}, headers=same)
    assert created.status_code == 201, created.text
    response = client.post(
        f"/api/matches/{created.json()['id']}/move",
        json={"seq": created.json()["state"]["seq"], "action": "pass"},
        headers=same,
    )
    assert response.status_code in (200, 409), response.text  # 409: passing may not be legal for this deal


def test_a_bracketed_ipv6_loopback_host_is_served():
    """`play.py --web --host ::1`: the page's requests name Host [::1]:PORT, which the host check refused."""
    client, _ = server(base_url="http://[::1]:8765")
    assert client.get("/").status_code == 200
    created = client.post("/api/matches", json={}, headers={"origin": "http://[::1]:8765"})
    assert created.status_code == 201, created.text
    assert client.get("/", headers={"host": "[::2]:8765"}).status_code == 400
    assert client.get("/", headers={"host": "attacker.example"}).status_code == 400


def test_the_matches_a_server_starts_and_the_files_they_write_are_bounded(tmp_path):
    """2,000 creations wrote 1,017 save files; a server now starts at most `created_limit` matches."""
    client, matches = server(save=str(tmp_path / "m.json"), created_limit=4)
    matches.get(client.post("/api/matches", json={}).json()["id"]).session.save()
    for _ in range(3):
        assert client.post("/api/matches", json={}).status_code == 201
    response = client.post("/api/matches", json={})
    assert response.status_code == 429 and "4 matches" in response.json()["error"], response.text
    assert len(list(tmp_path.iterdir())) == 4


def test_a_request_body_that_stalls_is_given_up_on(monkeypatch):
    """A client that sends its headers and then nothing held its connection (and a descriptor) for ever."""
    monkeypatch.setattr(web_app, "BODY_SECONDS", 0.2)

    async def stalled() -> dict:
        await asyncio.sleep(30)
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "method": "POST", "headers": [(b"content-type", b"application/json")]}
    with pytest.raises(web_app.RequestError) as refused:
        asyncio.run(read_body(Request(scope, stalled)))
    assert refused.value.status == 408 and "0.2" in refused.value.message


def test_the_icon_is_served_and_the_page_waits_for_its_data_with_a_note():
    """`/favicon.ico` was a 404 (a console error on every load); before its first data the page showed a Pass button
    and empty panels."""
    client, _ = server()
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert icon.content.startswith(b"<svg") and client.get("/static/favicon.svg").status_code == 200
    page = client.get("/").text
    assert '<body class="loading">' in page and 'id="loading"' in page and 'rel="icon"' in page
    assert re.search(r'<button[^>]*id="pass"[^>]*\bhidden\b', page), "the Pass button shows before any state"


def test_every_match_a_server_starts_plays_one_loaded_copy_of_its_bot(monkeypatch):
    """Twelve matches started on one server play the bot loaded once with the first match (a checkpoint's weights are
    held once, however many pages play it), not a copy each."""
    from hollywood_gin_env.play import session as play_session

    loaded = []
    load = play_session.load_agent
    monkeypatch.setattr(play_session, "load_agent", lambda spec, **kw: loaded.append(spec) or load(spec, **kw))
    client, matches = server()
    ids = [client.post("/api/matches", json={}).json()["id"] for _ in range(12)]
    assert loaded == ["greedy"] and len({id(matches.get(i).session.bot) for i in ids}) == 1
