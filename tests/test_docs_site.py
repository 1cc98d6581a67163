"""The documentation site builds with every warning an error, and works offline.

``mkdocs build --strict`` fails on a broken link or anchor between pages, a
page left out of the navigation, a docstring mkdocstrings cannot read and a
missing ``protocol.md`` include (mkdocs.yml's ``validation`` and snippets'
``check_paths``).  The built pages are then checked to load nothing from
another host: no web fonts, no CDN script or style, in the HTML and in a real
browser opening them from disk.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("C4ENGINE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
README_LINK = re.compile(r"\]\((docs/[^)#]+)(#[^)]*)?\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as the README's build command makes it, into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                          cwd=REPOSITORY, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    return out


def test_the_site_has_every_page_with_generated_references(site: Path) -> None:
    protocol = (site / "reference" / "protocol.html").read_text(encoding="utf-8")
    assert "The c4engine protocol" in protocol and "setoption name" in protocol  # included, not copied
    cli = (site / "reference" / "cli.html").read_text(encoding="utf-8")
    for command in ("bench", "book", "connectx", "connectx bundle", "gui", "match", "play", "review", "solve",
                    "strength"):
        assert f"Usage: c4engine {command} [OPTIONS]" in cli, command
    api = (site / "reference" / "python.html").read_text(encoding="utf-8")
    import c4engine

    for name in set(c4engine.__all__) - {"__version__"}:
        assert f'id="c4engine.{name}"' in api, name


class ResourceLinks(HTMLParser):
    """Every address a page loads by itself: scripts, styles, images, icons, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        if tag in ("script", "img", "iframe", "source", "audio", "video") and named.get("src"):
            self.loaded.append(named["src"] or "")
        if tag == "link" and named.get("href") and named.get("rel") not in ("canonical",):
            self.loaded.append(named["href"] or "")


def test_no_page_loads_anything_from_another_host(site: Path) -> None:
    for page in site.rglob("*.html"):
        parser = ResourceLinks()
        parser.feed(page.read_text(encoding="utf-8"))
        remote = [address for address in parser.loaded if re.match(r"(https?:)?//", address)]
        assert not remote, f"{page.relative_to(site)} loads {remote}"
    for style in site.rglob("*.css"):
        assert not re.search(r"url\(\s*['\"]?(https?:)?//", style.read_text(encoding="utf-8")), style
        assert "@import" not in style.read_text(encoding="utf-8"), style


@pytest.mark.skipif(not os.access(CHROMIUM, os.X_OK) and os.environ.get("CI") != "true",
                    reason=f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does)")
def test_the_pages_open_from_disk_with_no_network(site: Path) -> None:
    """Chromium opens the built pages as files; any request to a host is recorded and refused."""
    from playwright.sync_api import sync_playwright

    requested: list[str] = []

    def refuse(route) -> None:  # type: ignore[no-untyped-def]
        requested.append(route.request.url)
        route.abort()

    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox"])
        page = browser.new_page()
        page.route(re.compile(r"^(?!file:).*"), refuse)
        for name in ("reference/python.html", "guides/playing.html", "index.html"):
            page.goto((site / name).as_uri())
            page.wait_for_load_state("load")
            assert page.title().endswith("c4engine"), name
        pictures = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.naturalWidth)")
        browser.close()
    assert requested == []
    assert pictures and all(width > 0 for width in pictures)  # the board page's picture, from disk


def test_the_readme_links_into_the_site(site: Path) -> None:
    """Each link of the README into docs/ names a page that exists, and its section if it names one."""
    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    links = README_LINK.findall(readme)
    assert links
    for target, anchor in links:
        assert (REPOSITORY / target).is_file(), target
        built = site / Path(target).relative_to("docs").with_suffix(".html")
        if target.endswith(".md") and anchor:
            assert f'id="{anchor[1:]}"' in built.read_text(encoding="utf-8"), target + anchor
