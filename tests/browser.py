"""A real headless Chromium for the tests (Debian's ``chromium`` and ``chromium-driver``; ``make
browser`` installs them, and ``make test`` depends on it), driven with selenium."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def find_chrome() -> tuple[str, str] | None:
    """(browser binary, chromedriver) when both are installed."""
    browser = next((p for p in map(shutil.which, BROWSERS) if p), None)
    driver = shutil.which("chromedriver") or next((p for p in ("/usr/lib/chromium/chromedriver",) if os.path.exists(p)), None)
    return (browser, driver) if browser and driver else None


def chrome(width: int = 1400, height: int = 1000):
    """A headless Chromium; the test is skipped, saying why, when none is installed."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[test]')")
    from selenium.webdriver.chrome.service import Service

    found = find_chrome()
    if found is None:
        pytest.skip("no Chromium here: `make browser` installs Debian's chromium and chromium-driver")
    opts = webdriver.ChromeOptions()
    opts.binary_location = found[0]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={width},{height}",
                "--lang=en-GB", "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        opts.add_argument(arg)
    return webdriver.Chrome(options=opts, service=Service(found[1]))


def wait(driver, cond: Callable, timeout: float, message: str = ""):
    """Wait for ``cond(driver)`` to be truthy (polling); fail with ``message`` and the page's text."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    # the page redraws a panel when its data changes: an element found just before is then gone
    # (stale) or not there yet; both mean "look again"
    ignored = (StaleElementReferenceException, NoSuchElementException)
    try:
        return WebDriverWait(driver, timeout, poll_frequency=0.25, ignored_exceptions=ignored).until(cond)
    except TimeoutException:
        body = driver.find_element("tag name", "body").text
        raise AssertionError(f"{message or 'condition'} not met within {timeout:g} s; the page says:\n{body[:4000]}") from None


def visible_text(driver, css: str) -> str:
    """The text of the visible elements matching ``css``, joined by newlines (read again when the
    page redrew them in between)."""
    from selenium.common.exceptions import StaleElementReferenceException

    for _ in range(50):
        try:
            return "\n".join(e.text for e in driver.find_elements("css selector", css) if e.is_displayed())
        except StaleElementReferenceException:
            continue
    raise AssertionError(f"{css} kept being redrawn while read")


def open_rule(driver, name: str, timeout: float = 30):
    """Open the published rule ``name``'s evidence (a click on it, as a person does) and return
    ``(evidence text, sample link targets, changed-URL link targets)``; None when the rule is no
    longer in the published set."""
    def opened(d):
        rules = [e for e in d.find_elements("css selector", "#published details.rule") if e.get_attribute("data-rule") == name]
        if not rules:
            return ("gone",)
        if rules[0].get_attribute("open") is None:
            rules[0].find_element("tag name", "summary").click()
        ev = rules[0].find_element("css selector", ".evidence")
        if not ev.is_displayed():
            return False
        hrefs = [[a.get_attribute("href") for a in ev.find_elements("css selector", f"ul.{k} a")] for k in ("samples", "changes")]
        return ev.text, hrefs[0], hrefs[1]
    got = wait(driver, opened, timeout, f"the evidence of {name}")
    return None if got == ("gone",) else got


def screenshot(driver, name: str, tmp_path: Path, width: int = 1400, publish: bool = True) -> Path:
    """A full-page PNG under ``tmp_path`` and, when ``publish`` and ``DUST_SCREENSHOTS`` names a
    folder (``make screenshots``: docs/img), there too."""
    driver.execute_script("window.scrollTo(0, 0)")
    height = driver.execute_script("return Math.ceil(document.documentElement.scrollHeight)")
    driver.set_window_size(width, min(max(int(height) + 40, 600), 5000))
    out = tmp_path / name
    driver.save_screenshot(str(out))
    target = os.environ.get("DUST_SCREENSHOTS")
    if target and publish:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(out, Path(target) / name)
    return out
