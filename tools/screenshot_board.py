#!/usr/bin/env python3
"""Take the picture of the board page that the README and the site show (docs/board.png).

Starts ``c4engine gui --no-browser`` on a free loopback port, opens a 16-stone
position whose columns win, draw and lose, in headless Chromium (the OS
package, through Playwright), waits until every column's score is proven and
saves the page.  A dev tool, not a test: run it again when the page changes.

    python tools/screenshot_board.py docs/board.png
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
from playwright.sync_api import sync_playwright

POSITION = "7571473112654763"
VIEWPORT = {"width": 1100, "height": 760}
ALL_PROVEN = ("[...document.querySelectorAll('#scores .score')]"
              ".every(s => s.classList.contains('proven') || s.textContent === '–')")


@click.command()
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--chromium", default=lambda: shutil.which("chromium") or "/usr/bin/chromium", show_default="chromium")
def main(out: Path, chromium: str) -> None:
    server = subprocess.Popen([sys.executable, "-m", "c4engine", "gui", "--no-browser"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = re.search(r"http://127\.0\.0\.1:\d+/", server.stdout.readline())
        if url is None:
            raise click.ClickException("c4engine gui printed no address")
        with sync_playwright() as play:
            browser = play.chromium.launch(executable_path=chromium, args=["--headless", "--no-sandbox"])
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(f"{url.group(0)}?pos={POSITION}")
            page.select_option("#mode", "humans")
            page.check("#analysis")
            page.wait_for_function(ALL_PROVEN, timeout=120_000)
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.terminate()
        server.wait()
    click.echo(f"{out}: {out.stat().st_size} bytes")


if __name__ == "__main__":
    main()
