"""The real `python play.py --web` in a subprocess: the address it prints, the warning off 127.0.0.1, the browser it
opens; and the page itself driven by clicks in headless Chromium (Debian's `chromium`, through Playwright).

The browser test is skipped only when Chromium or Playwright is missing on a developer's machine; under CI
(`CI=true`, or HOLLYWOOD_GIN_REQUIRE_BROWSER=1, both set by .ci/run) their absence fails it."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.play_helpers import E1_DECK, E1_SEAT, FIRST_WAIT, ROOT

pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")
httpx = pytest.importorskip("httpx2", reason="httpx2 is in the test extra")

URL = re.compile(r"Your match is at (http://\S+)")


def start(tmp_path: Path, *args: str, env: dict | None = None) -> tuple[subprocess.Popen, str, list[str]]:
    """play.py --web with args; (process, the page's URL, the lines printed before it)."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1", "COLUMNS": "200", **(env or {})}
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "play.py"), "--web", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        found = URL.search(line)
        if found:
            return process, found.group(1), lines
    process.wait(timeout=FIRST_WAIT)
    raise AssertionError(f"play.py --web printed no address: {lines}")


def stop(process: subprocess.Popen) -> str:
    """Ctrl-C the server; what it printed after the address. It must exit with status 0."""
    process.send_signal(signal.SIGINT)
    rest, _ = process.communicate(timeout=30)
    assert process.returncode == 0, rest
    return rest


def test_the_command_line_prints_the_address_opens_the_browser_and_warns_off_loopback(tmp_path):
    """Default: 127.0.0.1, a free port, no warning, the browser ($BROWSER here) opened on the page; --host 0.0.0.0
    --no-browser: a warning line, no browser. Both serve the page and the match the address names."""
    opened = tmp_path / "opened.txt"
    browser = f"{sys.executable} -c \"import sys; open({str(opened)!r}, 'w').write(sys.argv[1])\" %s"
    process, url, before = start(tmp_path, "--opponent", "random", "--seed", "1", env={"BROWSER": browser})
    try:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/#[A-Za-z0-9_-]{32}", url) and not any(
            "Warning" in b for b in before
        )
        page, match_id = url.split("#")
        assert "Hollywood Gin" in httpx.get(page).text
        assert httpx.get(f"{page}api/matches/{match_id}").json()["state"]["opponent"] == "random"
    finally:
        stop(process)
    assert opened.read_text() == url
    opened.unlink()
    process, url, before = start(tmp_path, "--opponent", "random", "--host", "0.0.0.0", "--no-browser")
    try:
        assert any(line.startswith("Warning: listening on 0.0.0.0, not 127.0.0.1") for line in before), before
        assert httpx.get(url.split("#")[0]).status_code == 200
    finally:
        stop(process)
    assert not opened.exists()


def test_ctrl_c_stops_the_server_at_once_and_says_so(tmp_path):
    """Ctrl-C with a page's connection open: the server stops answering and says so within a second or two (the
    process then exits 0), not seconds later in silence."""
    process, url, _ = start(tmp_path, "--opponent", "random", "--no-browser")
    with httpx.Client() as page:  # a keep-alive connection, as a browser's
        assert page.get(url.split("#")[0]).status_code == 200
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        said = process.stdout.readline()
        seconds = time.monotonic() - started
    rest, _ = process.communicate(timeout=30)
    assert said.strip() == "Server stopped." and seconds < 2.0, (said, seconds, rest)
    assert process.returncode == 0, rest


def test_sigterm_stops_the_server_promptly_while_nobody_reads_its_output(tmp_path):
    """With its output a pipe nobody reads (a service's), 3,000 malformed requests (a log line each, far more than
    the pipe holds) leave the server answering, and SIGTERM stops it within seconds."""
    process, url, _ = start(tmp_path, "--opponent", "random", "--no-browser")  # its output is not read from now on
    host, port = url.split("/")[2].rsplit(":", 1)
    try:
        for _ in range(3000):
            with socket.create_connection((host, int(port)), timeout=5) as bad:
                bad.sendall(b"NOT HTTP AT ALL \x01\r\n\r\n")
                bad.recv(100)
        assert httpx.get(url.split("#")[0], timeout=5).status_code == 200
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=10)
        assert time.monotonic() - started < 3.0
    finally:
        process.kill()
        process.communicate()


def chromium() -> str | None:
    """Debian's chromium, or None (a skip locally, a failure under CI)."""
    required = os.environ.get("CI") == "true" or os.environ.get("HOLLYWOOD_GIN_REQUIRE_BROWSER") == "1"
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        path = None
    if path is None and required:
        pytest.fail(
            "CI needs chromium and playwright for the browser test: .ci/run installs them (apt-get install "
            "chromium; the test extra)"
        )
    if path is None:
        pytest.skip("no chromium or playwright here: apt-get install -y chromium (CI installs it and fails without)")
    return path


@contextmanager
def browser_page(executable: str, url: str, viewport: dict):
    """A page of `viewport` size in headless Chromium (`executable`), at url once loaded; the browser closed after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport=viewport)
            page.goto(url)
            yield page
        finally:
            browser.close()


#: play.py's arguments for E1 against expert, the human its non-dealer (the upcard 2C offered first)
E1_ARGS = ("--no-browser", "--opponent", "expert", "--seed", "0", "--seat", E1_SEAT, "--deck", E1_DECK)


def click(page, selector: str) -> None:
    """Click an enabled move element and wait for the page to show the server's answer."""
    with page.expect_response(lambda r: "/api/matches" in r.url and r.request.method == "POST"):
        page.click(selector)
    # the response is in, but the page renders it a moment later (a stale Pass button could be clicked): the page
    # drops its busy mark only after it has shown the answer
    page.wait_for_selector("body:not(.busy)", state="attached")


def play_hand_by_clicks(page) -> int:
    """Pass, draw, knock when the page offers it, else discard what leaves least deadwood; the clicks made."""
    clicks = 0
    while page.locator("#hand-end").is_hidden():
        assert clicks < 200, "the hand did not end"
        knocks = page.locator("[data-action=knock]")
        if knocks.count():
            click(page, f"[data-action=knock][data-card='{knocks.first.get_attribute('data-card')}']")
        elif page.locator("[data-action=pass]:enabled").count():
            click(page, "[data-action=pass]")
        elif page.locator("[data-action=draw]:enabled").count():
            click(page, "[data-action=draw]")
        else:
            cards = page.locator("[data-action=discard]:enabled")
            best = min(range(cards.count()), key=lambda i: int(cards.nth(i).get_attribute("title").split()[-1]))
            click(page, f"[data-action=discard][data-card='{cards.nth(best).get_attribute('data-card')}']")
        clicks += 1
    return clicks


@pytest.mark.browser
def test_a_whole_hand_clicked_in_chromium_shows_its_result(tmp_path):
    """E1 by two clicks (take 2C, knock with 9D) ends the one-game match: the page stops there (the table set aside)
    and shows both hands, the layoffs, the score and the series result. Then a new match is played by clicks to the
    end of its first hand. No console error (a missing favicon was one) on the way; before its data arrives the page
    shows a loading note, not an empty table with a Pass button."""
    executable = chromium()
    from playwright.sync_api import sync_playwright

    process, url, _ = start(
        tmp_path,
        "--no-browser",
        "--opponent",
        "expert",
        "--seed",
        "0",
        "--seat",
        E1_SEAT,
        "--deck",
        E1_DECK,
        "--rules",
        "num_games=1",
        "game_target=30",
    )
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            page = browser.new_page(viewport={"width": 1280, "height": 860})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: m.type == "error" and errors.append(m.text))  # e.g. a 404 favicon
            page.goto(url)
            page.wait_for_selector("[data-action=take][data-card='2C']:enabled")
            assert page.locator("[data-action=discard]:enabled").count() == 0  # only legal moves are enabled
            assert page.locator("#bot-hand .card").count() == 10 and page.locator("#bot-hand .face").count() == 0
            click(page, "[data-action=take][data-card='2C']")
            # the answer has arrived; the page renders it just after: wait for the knock it must offer (a CI run
            # on a busy machine once read the count before the render)
            page.wait_for_selector("[data-action=knock][data-card='9D']")
            assert page.locator("[data-action=knock]").count() >= 1
            assert "knock \u00b7 2" in page.locator("[data-action=knock][data-card='9D']").inner_text()
            click(page, "[data-action=knock][data-card='9D']")
            dialog = page.locator("#hand-end")
            dialog.wait_for(state="visible")
            assert page.locator("#your-hand").is_hidden()  # the page stops at the hand's end: no next deal behind
            text = dialog.inner_text()
            assert "Knock: 38 \u2212 2 = 36 points to you, entered in game 1." in text
            assert "Match over: You win the series" in text and "laid off" in text
            assert dialog.locator(".spread").count() == 2 and dialog.locator(".spread .card").count() == 20
            page.screenshot(path=str(tmp_path / "web-hand-end.png"))

            click(page, "#again[data-action=new-match]")
            page.wait_for_selector("#hand-end", state="hidden")
            clicks = play_hand_by_clicks(page)
            text = page.locator("#hand-end").inner_text()
            assert clicks >= 1 and re.search(r"points to (you|Expert)|Dead hand", text), text
            page.screenshot(path=str(tmp_path / "web-second-hand-end.png"))
            assert not errors, errors
            icon = page.request.get(url.split("#")[0] + "favicon.ico")
            assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")

            before_data = browser.new_page(java_script_enabled=False)  # the page as it is before any data arrives
            before_data.goto(url)
            assert before_data.locator("#loading").is_visible() and before_data.locator("#pass").is_hidden()
            assert before_data.locator("#sheet").is_hidden()
            browser.close()
    finally:
        stop(process)
    assert (tmp_path / "web-hand-end.png").stat().st_size > 10_000


@pytest.mark.parametrize("ci", [{"CI": "true"}, {"HOLLYWOOD_GIN_REQUIRE_BROWSER": "1"}, {}])
def test_a_missing_chromium_fails_under_ci_and_skips_elsewhere(monkeypatch, ci):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("HOLLYWOOD_GIN_REQUIRE_BROWSER", raising=False)
    for key, value in ci.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    outcome = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(outcome, match="chromium"):
        chromium()


# The page at 1280x900: with Hints on and `help` typed, the side column grows but the table does not, so your hand
# stays in the window; a refused command's error shows under the command box (replacing the previous answer).
VIEWPORT = {"width": 1280, "height": 900}


def typed(page, text: str) -> None:
    """Type a command in the box and send it; wait until the page has shown the answer."""
    page.fill("#command", text)
    with page.expect_response(lambda r: r.url.endswith("/command")):
        page.click("#command-form button[type=submit]")
    page.wait_for_selector("body:not(.busy)", state="attached")


@pytest.mark.browser
def test_hints_and_help_leave_the_hand_in_the_window_and_errors_show_by_the_command_box(tmp_path):
    """At 1280x900: the hand's place is the same before and after Hints and `help` (and inside the window); `xyz`
    then shows its refusal as the only line under the box, and nothing under the hand."""
    executable = chromium()
    process, url, _ = start(tmp_path, *E1_ARGS)
    try:
        with browser_page(executable, url, VIEWPORT) as page:
            page.wait_for_selector("[data-action=take][data-card='2C']:enabled")
            before = page.locator("#your-hand").bounding_box()
            page.check("#hint-toggle")
            page.wait_for_selector("#hint li")
            typed(page, "help")
            assert page.locator("#answer li").count() > 5
            after = page.locator("#your-hand").bounding_box()
            assert after == before, (before, after)
            assert after["y"] + after["height"] <= VIEWPORT["height"], after

            typed(page, "xyz")
            answer = page.locator("#answer li")
            assert answer.count() == 1 and "'xyz' is not a command or a card" in answer.inner_text()
            assert "refused" in answer.get_attribute("class")
            assert page.locator("#message").inner_text() == ""
            assert page.input_value("#command") == "xyz"  # kept, to be corrected
            assert "vs expert" in page.locator("#matchup").inner_text()
            assert "seat" not in page.locator("#matchup").inner_text()
    finally:
        stop(process)


PLACEHOLDER_FITS = """() => {
  const box = document.getElementById("command"), style = getComputedStyle(box);
  const context = document.createElement("canvas").getContext("2d");
  context.font = style.font;
  const room = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return context.measureText(box.placeholder).width <= room;
}"""
CARD_TOPS = "() => [...document.querySelectorAll('#your-hand .slot .card')].map(c => c.getBoundingClientRect().top)"


@pytest.mark.browser
@pytest.mark.parametrize("width", [1024, 1280])
def test_the_page_shows_an_eleven_card_hand_in_one_row_and_speaks_in_clicks(tmp_path, width):
    """After taking the upcard (E1: 11 cards in four groups) the hand is one row at 1024 and 1280 pixels wide, the
    drawn card beside the others; the status line says what to click, with the cards as their faces show them
    (no terminal letters such as "(t)"), and the command box's example fits the box."""
    executable = chromium()
    process, url, _ = start(tmp_path, *E1_ARGS)
    try:
        with browser_page(executable, url, {"width": width, "height": 860}) as page:
            page.wait_for_selector("[data-action=take][data-card='2C']:enabled")
            offer = page.locator("#prompt").inner_text()
            assert offer == "Your turn: the upcard 2\u2663 is offered: click it to take it, or Pass.", offer
            assert page.evaluate(PLACEHOLDER_FITS)
            click(page, "[data-action=take][data-card='2C']")
            page.wait_for_selector("[data-action=knock][data-card='9D']")
            tops = page.evaluate(CARD_TOPS)
            assert len(tops) == 11 and len(set(tops)) == 1, tops
            prompt = page.locator("#prompt").inner_text()
            assert "click one to discard it" in prompt and not re.search(r"\((t|p|d)\)|knock \d|e\.g\.", prompt)
    finally:
        stop(process)


@pytest.mark.browser
def test_move_numbers_past_nine_show_whole(tmp_path):
    """Twelve moves into a hand the list of its moves numbers them 1 to 12, each number whole and inside the list
    (not "0.", "1." with the tens cut off)."""
    executable = chromium()
    process, url, _ = start(tmp_path, "--no-browser", "--opponent", "greedy", "--seed", "1", "--seat", "0")
    try:
        api = url.replace("/#", "/api/matches/")
        state = httpx.get(api).json()["state"]
        while len(state["moves"]) < 12:  # pass, draw and discard what was drawn: the hand goes on
            legal = {m["action"]: m for m in state["legal"]}
            move = legal.get("pass") or legal.get("draw") or legal["discard"]
            card = {"card": state["hand"]["drawn"] or move["card"]} if move["action"] == "discard" else {}
            state = httpx.post(f"{api}/move", json={"seq": state["seq"], "action": move["action"], **card}).json()
            state = state["state"]
        with browser_page(executable, url, VIEWPORT) as page:
            page.wait_for_selector("#moves li")
            numbers = page.locator("#moves .number")
            assert numbers.all_inner_texts()[:12] == [f"{n}." for n in range(1, 13)]
            listed = page.locator("#moves").bounding_box()
            for n in (8, 9, 10, 11):
                box = numbers.nth(n).bounding_box()
                assert box["x"] >= listed["x"] and box["x"] + box["width"] <= listed["x"] + listed["width"], box
    finally:
        stop(process)
