"""The docs site (mkdocs.yml, docs/): it builds with ``--strict`` (no warning), every
internal link of the built HTML resolves (page, file and anchor), and the generated
pages list every setting and every error code of the code they are generated from."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from cellwar.v1.codes import ErrorCode
from gateway.errors import Code
from services.common.settings import OTHER_VARIABLES, Settings

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import gen_api_docs  # noqa: E402
import gen_config_docs  # noqa: E402

README_LIMIT = 12 * 1024


class _Links(HTMLParser):
    """The ``href``/``src`` values and the element ids of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is None:
                continue
            if name == "id" or (tag == "a" and name == "name"):
                self.ids.add(value)
            elif name in ("href", "src") and tag != "link" or (tag == "link" and name == "href"):
                self.links.append(value)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built with ``mkdocs build --strict`` into a temporary folder."""
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("WARNING")]
    assert warnings == []
    return out


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _target(site: Path, page: Path, href: str) -> tuple[Path, str]:
    parts = urlsplit(href)
    base = page.parent
    path = unquote(parts.path)
    if path.startswith("/"):
        resolved = site / path.lstrip("/")
    else:
        resolved = (base / path) if path else page
    resolved = Path(os.path.normpath(resolved))
    if resolved.is_dir():
        resolved = resolved / "index.html"
    return resolved, unquote(parts.fragment)


def test_every_internal_link_resolves(site: Path) -> None:
    pages = sorted(site.rglob("*.html"))
    assert site / "index.html" in pages
    parsed = {page: _parse(page) for page in pages}
    broken = []
    checked = 0
    for page, links in parsed.items():
        if page.name == "404.html":  # material writes it with links from the site root
            continue
        for href in links.links:
            scheme = urlsplit(href).scheme
            if scheme or href.startswith("//") or href.startswith("data:"):
                continue
            target, anchor = _target(site, page, href)
            checked += 1
            where = f"{page.relative_to(site)} -> {href}"
            if not target.is_file():
                broken.append(f"{where}: no {target.relative_to(site) if target.is_relative_to(site) else target}")
                continue
            if anchor and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if anchor not in ids:
                    broken.append(f"{where}: no anchor #{anchor}")
    assert checked > 500
    assert broken == []


def test_the_pages_of_the_nav_exist(site: Path) -> None:
    for page in ("getting-started", "playing", "bots", "replays", "hosting",
                 "reference/configuration", "api", "api/openapi", "api/websocket",
                 "api/errors", "architecture", "benchmarks"):
        assert (site / page / "index.html").is_file(), page
    assert (site / "api" / "openapi.json").is_file()


def test_configuration_page_lists_every_setting(site: Path) -> None:
    text = gen_config_docs.render()
    html = (site / "reference" / "configuration" / "index.html").read_text(encoding="utf-8")
    for name in Settings.model_fields:
        var = "CELLWAR_" + name.upper()
        row = next((line for line in text.splitlines() if line.startswith(f"| `{var}` |")), None)
        assert row is not None, var
        assert row.count(" | ") >= 2 and "Read by: " in row
        assert var in html
    for var in OTHER_VARIABLES:
        assert f"| `{var}` |" in text
        assert var in html
    # the meanings come from the class's docstring, every field has one
    docs = gen_config_docs.attribute_docs(Settings)
    assert set(Settings.model_fields) <= set(docs)
    assert "`8000`" in next(line for line in text.splitlines() if "CELLWAR_HTTP_PORT`" in line)


def test_error_page_lists_every_code(site: Path) -> None:
    text = gen_api_docs.render_errors()
    html = (site / "api" / "errors" / "index.html").read_text(encoding="utf-8")
    rows = {row[0]: row for row in gen_api_docs.error_rows()}
    for code in {c.value for c in ErrorCode} | {c.value for c in Code}:
        assert f"| `{code}` |" in text
        assert code in html
    assert rows["OUT_OF_ZONE"][2:4] == ("FAILED_PRECONDITION", "409")
    assert rows["GAME_NOT_FOUND"][2:4] == ("NOT_FOUND", "404")
    assert rows["IDEMPOTENCY_KEY_REUSED"][3] == "422"
    assert rows["TOKEN_EXPIRED"][1:4] == ("gateway", "—", "401")


def test_openapi_page_renders_every_path(site: Path) -> None:
    document = gen_api_docs.openapi_document()
    html = (site / "api" / "openapi" / "index.html").read_text(encoding="utf-8")
    for path in document["paths"]:
        assert path.replace("{", "").split("/")[1] in html


def test_readme_is_short_and_links_into_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.encode("utf-8")) <= README_LIMIT
    for target in re.findall(r"\]\(((?:docs/)[^)#]+)", readme):
        assert (ROOT / target).exists(), target


def test_no_reference_to_documents_outside_the_repository() -> None:
    # the words are split so that this file does not match its own pattern
    pattern = re.compile("DESIGN( |\\.md|§)|\\bissue [0-9]+|" + "must" + "-show")
    files = [ROOT / "README.md", ROOT / "mkdocs.yml", *sorted((ROOT / "docs").rglob("*.md"))]
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []


def test_engine_versions_page_lists_every_version(site: Path) -> None:
    from engine.versions import ENGINE_VERSION, VERSIONS

    html = (site / "architecture" / "engine-versions" / "index.html").read_text(encoding="utf-8")
    assert "engine-versions --" not in html  # the marker was replaced
    for version in VERSIONS:
        assert f"<td><code>{version}</code></td>" in html
    assert f"The current version is <code>{ENGINE_VERSION}</code>" in html
