"""The ASGI app of `hollywood-gin play --web`: one page and a small JSON API over the server's matches.

    GET  /                               the page (static/index.html; its script, style and icon from /static)
    GET  /favicon.ico                    the icon (static/favicon.svg)
    POST /api/matches                    {} -> a new match: 201 {"id", "state"}
    GET  /api/matches/{id}               {"state"}: the match as the human may know it (view.page_view)
    POST /api/matches/{id}/move          {"seq", "action", "card"?} -> {"state"}: a click
    POST /api/matches/{id}/command       {"seq", "text"} -> {"state", "message"}: a typed terminal command
    GET  /api/matches/{id}/hint          {"lines"}: the terminal's `hint`

A click is turned into the terminal's command text and read by the same parser (`commands.parse_command`), so both
front ends accept and refuse exactly the same moves with the same words. What reads or changes a match (the bot's
moves, a hint, the state shown) runs in a worker thread, one request of a match at a time (the match's lock), so a
slow bot or a client asking for hint after hint never holds up the server's other pages; the matches share one
loaded bot (`Opponent`), used by one thread at a time. A client that leaves mid-request is no error: nothing is
logged. Every refusal is a 4xx with {"error": message} and leaves the match as it was: 400 a malformed request, 404
no such match, 409 a move that is not possible now (stale `seq`, not your turn, illegal), 413 a body over 4 KB, 415
not JSON, 408 a body that did not arrive within BODY_SECONDS, 429 the server's limit of matches started. Every POST
must be JSON (so a cross-site form or no-cors fetch, which cannot send it, is refused) and, if the browser names
where it comes from (`Origin`, `Sec-Fetch-Site`), come from the page's own address: 403 otherwise. The Host header
must name an allowed host (DNS rebinding; a bracketed IPv6 address such as `[::1]:8000` is read as `::1`): 400
otherwise.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from importlib import resources
from typing import Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from hollywood_gin_env.display.render import sheet_text
from hollywood_gin_env.display.words import hand_log
from hollywood_gin_env.play.commands import CommandError, help_lines, parse_command
from hollywood_gin_env.play.session import SessionError
from hollywood_gin_env.play.web.matches import Entry, Matches, MatchLimitError
from hollywood_gin_env.play.web.view import page_view
from hollywood_gin_env.rules.cards import card_name, parse_card
from hollywood_gin_env.support.messages import shown_value

MAX_BODY = 4096  # the largest real request is about 60 bytes
BODY_SECONDS = 10.0  # a real body arrives at once with its headers; a stalled one must not hold its connection
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")  # requests that change nothing: no origin check
SAME_ORIGIN_FETCHES = ("same-origin", "none")  # Sec-Fetch-Site values of the page's own requests (none: typed URL)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CLICKS = ("take", "pass", "draw", "discard", "knock", "next")
CARD_CLICKS = ("discard", "knock")  # a card is required; `take` may name the face-up card
STATIC = resources.files("hollywood_gin_env.play.web") / "static"
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


Result = TypeVar("Result")


class RequestError(Exception):
    """A request the server refuses: its HTTP status and a message for the player."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


def reply(data: dict[str, Any], status: int = 200) -> JSONResponse:
    """A JSON reply."""
    return JSONResponse(data, status_code=status)


class SecurityHeaders:
    """ASGI middleware adding HEADERS to every response (the page, its files, the API, the errors)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        async def send_with_headers(message: dict) -> None:
            if message["type"] == "http.response.start":
                extra = [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers if scope["type"] == "http" else send)


def host_name(authority: str) -> str:
    """The host of a Host header or an origin's authority, lower case and without the port: `[::1]:8000` -> `::1`."""
    value = authority.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def refusal(method: str, headers: Headers, allowed_hosts: Sequence[str] | None) -> RequestError | None:
    """Why the server refuses a request before reading it (a Host it does not serve, a cross-origin change); None."""
    host = headers.get("host", "")
    if allowed_hosts is not None and host_name(host) not in allowed_hosts:
        return RequestError(400, f"Host {shown_value(host)} is not served here: use {' or '.join(allowed_hosts)}.")
    if method in SAFE_METHODS:
        return None
    origin, site = headers.get("origin"), headers.get("sec-fetch-site")
    if origin is not None and origin.strip().lower() != f"http://{host.strip().lower()}":
        return RequestError(
            403, f"Refused a cross-origin request: Origin {origin:.80} is not this page's address (http://{host:.80})."
        )
    if site is not None and site.strip().lower() not in SAME_ORIGIN_FETCHES:
        return RequestError(403, f"Refused a cross-origin request: Sec-Fetch-Site {site:.40} (only the page may move).")
    return None


class RequestGuard:
    """ASGI middleware refusing, before the app reads anything, what `refusal` refuses (a JSON error reply)."""

    def __init__(self, app: Any, allowed_hosts: Sequence[str] | None) -> None:
        self.app, self.allowed_hosts = app, allowed_hosts

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        error = None
        if scope["type"] == "http":
            error = refusal(scope["method"], Headers(scope=scope), self.allowed_hosts)
        if error is None:
            await self.app(scope, receive, send)
        else:
            await reply({"error": error.message}, error.status)(scope, receive, send)


async def _collect(request: Request) -> bytes:
    """The request's body, at most MAX_BODY bytes; RequestError (413) beyond."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise RequestError(413, f"The request is over {MAX_BODY} bytes; a move is a few dozen.")
    return body


async def read_body(request: Request) -> dict[str, Any]:
    """The request's JSON object, at most MAX_BODY bytes, arrived within BODY_SECONDS; RequestError otherwise."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise RequestError(415, "Send the request as JSON (Content-Type: application/json).")
    try:
        body = await asyncio.wait_for(_collect(request), BODY_SECONDS)
    except TimeoutError:
        raise RequestError(408, f"The request's body did not arrive within {BODY_SECONDS:g} s.") from None
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise RequestError(400, "The request is not valid JSON.") from None
    if not isinstance(data, dict):
        raise RequestError(400, f"The request must be a JSON object, got {type(data).__name__}.")
    return data


def check_keys(data: dict[str, Any], allowed: Sequence[str]) -> None:
    """RequestError (400) if the request holds a key that is not allowed."""
    extra = sorted(str(k) for k in data if k not in allowed)
    if extra:
        holds = ", ".join(allowed) or "nothing ({})"
        raise RequestError(400, f"Unknown field {', '.join(extra)!s:.80}: this request holds {holds}.")


def check_seq(data: dict[str, Any], entry: Entry) -> None:
    """RequestError unless the request names the match's current state (an int, not a bool)."""
    seq = data.get("seq")
    if type(seq) is not int:
        raise RequestError(400, f"seq must be the integer state number the page shows, got {shown_value(seq)}.")
    if seq != entry.seq:
        raise RequestError(
            409,
            f"This move was made on state {seq}, but the match is at state {entry.seq} "
            "(a replayed or stale request): reload the page.",
        )


def click_text(data: dict[str, Any]) -> str:
    """The terminal command a click stands for ("discard 7h"); RequestError (400) if the click is malformed."""
    check_keys(data, ("seq", "action", "card"))
    action, card = data.get("action"), data.get("card")
    if not isinstance(action, str) or action not in CLICKS:
        raise RequestError(400, f"action {shown_value(action)} is not allowed: use one of {', '.join(CLICKS)}.")
    if card is None:
        if action in CARD_CLICKS:
            raise RequestError(400, f'{action} needs a card, e.g. {{"action": "{action}", "card": "7H"}}.')
        return action
    if action not in (*CARD_CLICKS, "take"):
        raise RequestError(400, f"{action} takes no card (got card {shown_value(card)}).")
    try:
        name = card_name(parse_card(card)) if isinstance(card, str) and len(card) <= 3 else None
    except ValueError:
        name = None
    if name is None:
        raise RequestError(
            400, f"card {shown_value(card)} is not a card name: a rank (A 2-9 T J Q K) and a suit (S H D C)."
        )
    return f"{action} {name}"


def the_match(matches: Matches, request: Request, match_id: str | None = None) -> Entry:
    """The match the URL names (or `match_id`); RequestError (404) if there is none (the id is never echoed back)."""
    entry = matches.get(match_id or request.path_params["match_id"])
    if entry is None:
        raise RequestError(404, "No such match on this server: start a new match.")
    return entry


def play(entry: Entry, text: str) -> None:
    """Play the human's command and let the bot answer; RequestError (409) if it cannot be played now."""
    session = entry.session
    if not session.humans_turn:
        raise RequestError(409, session.not_your_turn())
    try:
        command = parse_command(text, session.game, session.human)
        session.play(command.action)
    except (CommandError, SessionError) as error:
        raise RequestError(409, str(error)) from None
    entry.seq += 1
    session.advance()


def continue_play(entry: Entry) -> None:
    """Go on after a held hand's end; RequestError (409) if none is held."""
    try:
        entry.session.continue_play()
    except SessionError as error:
        raise RequestError(409, str(error)) from None
    entry.seq += 1


def answer_command(entry: Entry, kind: str) -> list[str]:
    """The answer to a typed command that is no move (hint, sheet, log, help, quit) as lines."""
    session = entry.session
    if kind == "hint":
        try:
            return session.hint()
        except SessionError as error:
            raise RequestError(409, str(error)) from None
    if kind == "sheet":
        return sheet_text(session.game.position(), session.names, session.human).plain.splitlines()
    if kind == "log":
        return [line.plain for line in hand_log(session.game.events, session.human, session.names)]
    if kind == "help":
        return [
            *help_lines(terminal=False),
            "On the page: click a card to discard it, the stock to draw, the face-up card "
            "to take it; the knock buttons under your cards knock.",
        ]
    return ["To leave, close the tab: the match stays on the server, and in its save file if it has one."]


async def in_turn(entry: Entry, work: Callable[[], Result]) -> Result:
    """`work` (which reads or changes the match) in a worker thread, after the match's earlier requests are done."""
    async with entry.lock:
        return await run_in_threadpool(work)


def create_app(matches: Matches, allowed_hosts: Sequence[str] | None = LOOPBACK_HOSTS) -> Starlette:
    """The app serving `matches`; requests naming another host than allowed_hosts (None: any) are refused (DNS
    rebinding), and so are cross-origin requests that would change something."""

    def state(entry: Entry) -> dict[str, Any]:
        return page_view(entry.session, entry.seq)

    async def page(request: Request) -> Response:
        return HTMLResponse((STATIC / "index.html").read_text(encoding="utf-8"))

    async def favicon(request: Request) -> Response:  # browsers ask for it whatever the page links
        return Response((STATIC / "favicon.svg").read_bytes(), media_type="image/svg+xml")

    creating = asyncio.Lock()  # matches are made one at a time (their numbers, their save files)

    async def new_match(request: Request) -> Response:
        check_keys(await read_body(request), ())  # JSON only: a cross-site simple request cannot start matches
        try:
            async with creating:
                match_id = matches.add(await run_in_threadpool(matches.make))
        except MatchLimitError as error:
            raise RequestError(429, str(error)) from None
        entry = the_match(matches, request, match_id)
        return reply({"id": match_id, "state": await in_turn(entry, lambda: state(entry))}, 201)

    async def show(request: Request) -> Response:
        entry = the_match(matches, request)
        return reply({"state": await in_turn(entry, lambda: state(entry))})

    async def move(request: Request) -> Response:
        entry = the_match(matches, request)
        data = await read_body(request)
        text = click_text(data)

        def moved() -> dict[str, Any]:
            check_seq(data, entry)
            continue_play(entry) if text == "next" else play(entry, text)
            return {"state": state(entry)}

        return reply(await in_turn(entry, moved))

    async def command(request: Request) -> Response:
        entry = the_match(matches, request)
        data = await read_body(request)
        check_keys(data, ("seq", "text"))
        return reply(await in_turn(entry, lambda: typed(entry, data)))

    async def hint(request: Request) -> Response:
        entry = the_match(matches, request)
        return reply({"lines": await in_turn(entry, lambda: answer_command(entry, "hint"))})

    def typed(entry: Entry, data: dict[str, Any]) -> dict[str, Any]:
        check_seq(data, entry)
        session = entry.session
        try:
            parsed = parse_command(data.get("text"), session.game, session.human)
        except CommandError as error:  # the parser's own words: what was wrong and what is legal
            raise RequestError(400, str(error)) from None
        if parsed.kind != "play":
            return {"state": state(entry), "message": answer_command(entry, parsed.kind)}
        play(entry, data["text"])
        return {"state": state(entry), "message": []}

    async def left(request: Request, error: Exception) -> Response:  # no one reads it: nothing to log either
        return Response(status_code=499)

    async def refused(request: Request, error: Exception) -> Response:
        if isinstance(error, RequestError):
            return reply({"error": error.message}, error.status)
        assert isinstance(error, HTTPException)
        return reply({"error": error.detail}, error.status_code)

    async def failed(request: Request, error: Exception) -> Response:
        return reply({"error": "The server failed on this request (a bug; its terminal shows the details)."}, 500)

    routes = [
        Route("/", page, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
        Route("/api/matches", new_match, methods=["POST"]),
        Route("/api/matches/{match_id}", show, methods=["GET"]),
        Route("/api/matches/{match_id}/move", move, methods=["POST"]),
        Route("/api/matches/{match_id}/command", command, methods=["POST"]),
        Route("/api/matches/{match_id}/hint", hint, methods=["GET"]),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ]
    middleware = [Middleware(SecurityHeaders), Middleware(RequestGuard, allowed_hosts=allowed_hosts)]
    handlers = {RequestError: refused, HTTPException: refused, ClientDisconnect: left, Exception: failed}
    return Starlette(routes=routes, middleware=middleware, exception_handlers=handlers)
