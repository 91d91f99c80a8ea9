"""mkdocs hooks of the docs site (``hooks:`` in mkdocs.yml): the generated pages.

On every build (``make docs``, ``make docs-serve`` and tests/docs/test_site.py):

- ``docs/api/openapi.json`` is written from the gateway app (tools/gen_api_docs.py;
  ignored by git, rewritten only when it changed so ``mkdocs serve`` does not loop);
- ``reference/configuration.md`` (tools/gen_config_docs.py, from the settings class)
  and ``api/errors.md`` (tools/gen_api_docs.py, from the error-code enums) are added
  to the site as generated files, never written into docs/;
- the Benchmarks page's ``<!-- bench-report -->`` marker becomes the latest
  ``make bench`` report: ``.bench/report.md`` of a local run when there is one, else the
  snapshot committed in ``docs/bench/`` (``make docs-bench`` copies a run there), its
  plots added to the site under ``bench/``;
- the Engine versions page's ``<!-- engine-versions -->`` marker becomes the table of
  ``engine/versions.py``.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]

#: Where the latest benchmark report is looked for, newest kind first.
BENCH_DIRS = (ROOT / ".bench", ROOT / "docs" / "bench")
BENCH_MARKER = "<!-- bench-report -->"
VERSIONS_MARKER = "<!-- engine-versions -->"


def versions_table() -> str:
    """The table of engine versions of ``engine/versions.py``'s docstring (its
    reStructuredText table) as Markdown, newest last, with the current version named."""
    import engine.versions as versions

    rows: list[list[str]] = []
    for line in (versions.__doc__ or "").splitlines():
        match = re.match(r'^``"(\d+)"``\s+(.*)$', line)
        if match:
            rows.append([match.group(1), match.group(2).strip()])
        elif rows and line.startswith(" ") and line.strip() and not line.startswith("="):
            rows[-1][1] += " " + line.strip()
    out = [f"The current version is `{versions.ENGINE_VERSION}` (`engine.ENGINE_VERSION`);",
           "this table is read from `engine/versions.py` when the site is built.", "",
           "| version | what changed |", "| --- | --- |"]
    for number, text in rows:
        text = re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")
        text = text.replace("docs/game-end.md", "[How a game ends](../game-end.md)")
        out.append(f"| `{number}` | {text} |")
    return "\n".join(out)


def bench_dir() -> Path | None:
    """The folder of the report the Benchmarks page shows (None: no report anywhere)."""
    return next((d for d in BENCH_DIRS if (d / "report.md").is_file()), None)


def clean_report(text: str) -> str:
    """A report's text without references to documents outside the repository (the
    report of a run made before the report named its targets plainly: its heading and
    the row texts of its JSON results still cite them)."""
    text = re.sub(r"DESIGN(?:\.md)? ?§\s*\d+ targets", "Targets", text)
    text = re.sub(r",? ?DESIGN(?:\.md)? ?§\s*\d+", "", text)
    return re.sub(r"\bissue \d+:? ?", "", text)


def snapshot_bench(src: Path = ROOT / ".bench", dst: Path = ROOT / "docs" / "bench") -> None:
    """Copy the report of a ``make bench`` run and its plots into ``docs/bench/`` (the
    snapshot the site shows when no local run exists): ``make docs-bench``."""
    dst.mkdir(parents=True, exist_ok=True)
    (dst / "report.md").write_text(clean_report((src / "report.md").read_text(encoding="utf-8")),
                                   encoding="utf-8")
    for old in dst.glob("*.png"):
        old.unlink()
    for plot in sorted(src.glob("*.png")):
        (dst / plot.name).write_bytes(plot.read_bytes())


def bench_markdown(folder: Path | None) -> str:
    """The report of ``folder`` for embedding under a second-level heading: headings one
    level down, plots pointing at ``bench/``, references to documents outside the
    repository dropped."""
    if folder is None:
        return ("_No report yet: run `make bench` (or `make bench ARGS=--quick`), then "
                "`make docs`._")
    text = (folder / "report.md").read_text(encoding="utf-8")
    text = re.sub(r"^(#+) ", r"\1## ", text, flags=re.M)
    text = re.sub(r"\]\(([\w.-]+\.png)\)", r"](bench/\1)", text)
    text = clean_report(text)
    where = "a local run (`.bench/`)" if folder.name == ".bench" else "the snapshot in `docs/bench/`"
    return f"_From {where}._\n\n" + text


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_docs_{name}", ROOT / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def on_config(config, **kwargs):
    """Make the project importable by the hooks (the engine, the gateway)."""
    for entry in (ROOT, ROOT / "proto"):
        if str(entry) not in sys.path:
            sys.path.insert(0, str(entry))
    return config


def on_pre_build(config, **kwargs) -> None:
    """Write docs/api/openapi.json when the gateway's document changed."""
    api = _load("gen_api_docs")
    path = Path(config["docs_dir"]) / "api" / "openapi.json"
    text = api.openapi_json()
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def on_files(files, config, **kwargs):
    """Add the generated pages (configuration reference, error codes) to the site."""
    from mkdocs.structure.files import File

    generated = {
        "reference/configuration.md": _load("gen_config_docs").render(),
        "api/errors.md": _load("gen_api_docs").render_errors(),
    }
    folder = bench_dir()
    plots = {}
    if folder is not None:
        plots = {f"bench/{p.name}": p.read_bytes() for p in sorted(folder.glob("*.png"))}
    for uri, content in {**generated, **plots}.items():
        old = files.get_file_from_path(uri)
        if old is not None:
            files.remove(old)
        files.append(File.generated(config, uri, content=content))
    return files


def on_page_markdown(markdown, page, config, files, **kwargs):
    """Put the latest benchmark report where the Benchmarks page has its marker."""
    if BENCH_MARKER in markdown:
        markdown = markdown.replace(BENCH_MARKER, bench_markdown(bench_dir()))
    if VERSIONS_MARKER in markdown:
        markdown = markdown.replace(VERSIONS_MARKER, versions_table())
    return markdown


if __name__ == "__main__":  # python tools/docs_hooks.py snapshot-bench
    if sys.argv[1:] != ["snapshot-bench"]:
        sys.exit("usage: python tools/docs_hooks.py snapshot-bench")
    snapshot_bench()
