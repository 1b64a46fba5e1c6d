"""The built documentation site (scripts/docs.sh): every internal link resolves, the API page
names every public name, the options table is msim.METHODS, the gallery holds the notebooks'
plots, and headless Chromium renders the index and a gallery page.

The site takes minutes to build (it executes the notebooks), so these tests read a build made
before them: they skip when there is none, unless MSIM_DOCS_BUILT=1 (CI's docs step) says
there must be one.
"""

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest

import msim
from chromium import Browser, executable

SITE = Path(__file__).resolve().parent.parent / "docs" / "_build" / "html"

if not (SITE / "index.html").exists():
    if os.environ.get("MSIM_DOCS_BUILT") == "1":
        raise FileNotFoundError(f"{SITE / 'index.html'} missing: scripts/docs.sh did not build")
    pytest.skip("the site is not built: run `bash scripts/docs.sh`", allow_module_level=True)


class _Links(HTMLParser):
    """The href/src targets and the ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "a" and key == "src"):
                self.targets.append(attrs[key])


def _parse(page: Path) -> _Links:
    links = _Links()
    links.feed(page.read_text(encoding="utf-8", errors="replace"))
    return links


def test_every_internal_link_resolves():
    pages = sorted(p for p in SITE.rglob("*.html") if "_static" not in p.parts)
    parsed = {p: _parse(p) for p in pages}
    broken = []
    for page, links in parsed.items():
        for target in links.targets:
            url = urlsplit(target)
            if url.scheme or url.netloc or target.startswith(("mailto:", "javascript:")):
                continue  # external: not checked (the build machine reaches no web)
            path = page if not url.path else (page.parent / unquote(url.path)).resolve()
            if path.is_dir():
                path = path / "index.html"
            if not path.exists():
                broken.append(f"{page.relative_to(SITE)}: {target}")
            elif url.fragment and path.suffix == ".html":
                ids = parsed[path].ids if path in parsed else _parse(path).ids
                if unquote(url.fragment) not in ids:
                    broken.append(f"{page.relative_to(SITE)}: {target} (no such anchor)")
    assert not broken, "broken internal links:\n" + "\n".join(broken)


def test_api_reference_documents_every_public_name():
    api = (SITE / "api.html").read_text(encoding="utf-8")
    ids = _parse(SITE / "api.html").ids
    submodules = {"mesh", "accuracy", "experiments", "scenes", "strain"}
    for name in msim.__all__:
        wanted = f"module-msim.{name}" if name in submodules else f"msim.{name}"
        assert wanted in ids, f"api.html has no entry for msim.{name}"
    for name in ("view", "plot", "io", "reference"):
        assert f"module-msim.{name}" in ids or f"msim.{name}.view" in ids, name
    assert "msim.view.View.save_html" in ids and "msim.System.step" in ids
    assert "vertices (n,3) [m]; edges (m,2)" in api  # plain-text docstrings shown as written


def test_options_table_is_msim_methods():
    page = (SITE / "guide" / "methods.html").read_text(encoding="utf-8")
    for method, options in msim.METHODS.items():
        section = page.split(f"<code class=\"docutils literal notranslate\"><span class=\"pre\">"
                             f"{method}</span></code>", 1)
        assert len(section) == 2, f"no section for {method}"
        for option in options:
            assert re.search(rf"<span class=\"pre\">{option}</span>", section[1]), \
                f"option {option} of {method} missing from the table"


def test_gallery_pages_hold_the_executed_plots():
    for notebook in sorted((SITE.parent.parent.parent / "notebooks").glob("*.ipynb")):
        page = SITE / "gallery" / f"{notebook.stem}.html"
        images = [t for t in _parse(page).targets if t.endswith(".png")]
        assert images, f"{page.name} shows no plot: was the notebook executed?"
        for image in images:
            assert (page.parent / image).resolve().stat().st_size > 5000, image


class _Sources(HTMLParser):
    """What a page loads: (tag, url) of every script, stylesheet, frame, image and media."""

    LOADS = {"script": "src", "link": "href", "iframe": "src", "img": "src", "source": "src",
             "embed": "src", "video": "src", "audio": "src", "object": "data"}

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        url = dict(attrs).get(self.LOADS.get(tag, ""))
        if url and not (tag == "link" and dict(attrs).get("rel") in ("canonical", "author")):
            self.loads.append((tag, url))


def test_no_page_loads_anything_from_the_web():
    # the site works offline: MathJax, the theme, the animation players (matplotlib's jshtml
    # links Font Awesome from a CDN unless msim.plot.jshtml replaced it), the viewer exports
    external = []
    for page in sorted(SITE.rglob("*.html")):
        parser = _Sources()
        parser.feed(page.read_text(encoding="utf-8", errors="replace"))
        external += [f"{page.relative_to(SITE)}: <{tag}> {url}" for tag, url in parser.loads
                     if re.match(r"(https?:)?//", url)]
    assert not external, "pages that load from the web:\n" + "\n".join(external)


def test_gallery_shows_no_frozen_progress_bars():
    # a tqdm bar in an executed notebook is a widget: without a live kernel the page shows its
    # first state, "0%|          | 0/1500", for good
    for page in sorted((SITE / "gallery").glob("*.html")):
        text = page.read_text(encoding="utf-8")
        assert "FloatProgressModel" not in text, page.name
        assert not re.search(r"\d+%\|[^|]*\| *\d+/\d+", text), page.name


@pytest.mark.skipif(executable() is None,
                    reason="headless check needs Debian's chromium (apt-get install chromium)")
def test_api_reference_shows_every_docstring_line_whole():
    # each docstring is a block of plain text: a line wider than the column must wrap, not be
    # cut off behind a scroll bar (the browser here hides scroll bars: nothing shows it)
    with Browser(1200, 900) as browser:
        browser.screenshot((SITE / "api.html").as_uri(), Path(os.devnull),
                           ready="document.readyState == 'complete' && document.fonts.ready",
                           settle=0.2)
        blocks = browser.evaluate("document.querySelectorAll('.msim-docstring pre').length")
        clipped = browser.evaluate(
            "Array.from(document.querySelectorAll('pre')).filter(p => p.scrollWidth > "
            "p.clientWidth + 1).map(p => p.textContent.split('\\n')[0].slice(0, 60))")
    assert clipped == [], f"{len(clipped)} blocks cut off at the right: {clipped[:5]}"
    assert blocks > 100  # every docstring is such a block


@pytest.mark.skipif(executable() is None,
                    reason="headless check needs Debian's chromium (apt-get install chromium)")
@pytest.mark.parametrize("page", ["index.html", "gallery/01_quickstart.html"])
def test_page_renders_in_headless_chromium(page, tmp_path):
    from PIL import Image

    out = Path(os.environ.get("MSIM_SCREENSHOTS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    shot = out / (page.replace("/", "_").replace(".html", ".png"))
    with Browser(1200, 900) as browser:
        browser.screenshot((SITE / page).as_uri(), shot,
                           ready="document.readyState == 'complete' && document.fonts.ready")
        title = browser.evaluate("document.title")
        # every image on the page decoded (the gallery's plots are PNGs beside the page)
        broken = browser.evaluate("Array.from(document.images).filter(i => !i.complete || "
                                  "i.naturalWidth == 0).map(i => i.src)")
        width = browser.evaluate("document.querySelector('article').getBoundingClientRect()"
                                 ".width")
    assert "msim" in title
    assert broken == []
    assert width > 500  # the theme's layout applied: the article is a wide column
    image = np.asarray(Image.open(shot).convert("L"))
    assert image.shape == (900, 1200)
    dark = (image < 100).mean()  # text and plot lines
    assert 0.005 < dark < 0.5, f"{page}: {dark:.3f} of the screenshot is dark"
