"""The page at 1280x900 in headless Chromium: with Hints on and `help` typed, the side column grows but the table
does not, so your hand stays in the window; a refused command's error shows under the command box (replacing the
previous answer), not under the hand. Skipped without Chromium on a developer's machine (tests/test_web_browser.py)."""

from __future__ import annotations

import pytest

from tests.test_play import E1_DECK
from tests.test_web import E1_SEAT
from tests.test_web_browser import chromium, start, stop

pytest.importorskip("starlette", reason="the web server needs the [web] extra (in the test extra)")

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
    from playwright.sync_api import sync_playwright

    args = ("--no-browser", "--opponent", "expert", "--seed", "0", "--seat", E1_SEAT, "--deck", E1_DECK)
    process, url, _ = start(tmp_path, *args)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(url)
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
            browser.close()
    finally:
        stop(process)
