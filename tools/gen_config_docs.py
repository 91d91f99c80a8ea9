"""The configuration reference of the docs site (docs/reference/configuration.md),
generated from the settings class so that it cannot go stale.

Every field of :class:`services.common.settings.Settings` becomes one row: the
environment variable ``CELLWAR_<FIELD>``, its type (with the bounds the class checks),
its default, its meaning (the class docstring's ``Attributes:`` entry) and the processes
that read it (found by scanning each program's source for ``.<field>``). The variables
of :data:`services.common.settings.OTHER_VARIABLES` (read by the runner, the image
builder, the CLI and the tests, not by a service) follow in a second table.

Run ``python tools/gen_config_docs.py [OUT]`` (default: standard output); ``make docs``
runs it through the mkdocs hook (tools/docs_hooks.py) on every build.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from services.common.settings import OTHER_VARIABLES, Settings  # noqa: E402

#: Programs whose Python code reads a setting (``settings.<field>``), in table order.
READERS: list[tuple[str, list[str]]] = [
    ("engine", ["services/engine"]),
    ("session", ["services/session"]),
    ("matchmaker", ["services/matchmaker"]),
    ("gateway", ["gateway"]),
    ("every service (services/common)", ["services/common"]),
    ("runner", ["deploy/run.py", "deploy/harness.py", "deploy/ports.py", "deploy/topology.py",
                "deploy/supervisor.py", "deploy/nats.py", "deploy/chaos.py"]),
    ("containers", ["deploy/containers.py", "deploy/images.py", "deploy/nginx_start.py",
                    "deploy/healthcheck.py"]),
    ("`cellwar` CLI", ["client/cli"]),
    ("engine library", ["engine"]),
    ("tests", ["tests"]),
]

#: Deployment files that set a variable for the services (by its name).
SETTERS: list[tuple[str, list[str]]] = [
    ("`make run`", ["deploy/run.py", "deploy/harness.py", "deploy/topology.py", "deploy/ports.py"]),
    ("containers", ["deploy/containers.py", "deploy/compose.yaml"]),
    ("Kubernetes", ["deploy/k8s"]),
]

#: Files never scanned: the settings class names every variable.
_EXCLUDED = {"services/common/settings.py"}

#: What each variable outside the settings class means (the programs reading it are found
#: like the settings' readers, by the variable's name in their source).
OTHER_MEANINGS: dict[str, str] = {
    "CELLWAR_BASE_IMAGE": "base image of `deploy/Dockerfile` (`make images`; default the "
    "local `cellwar/base:bookworm`, e.g. `python:3.11-slim` on a host that can pull)",
    "CELLWAR_BROWSER_BASE_URL": "the browser tests run against this server instead of "
    "starting their own stack",
    "CELLWAR_CHROMIUM": "path of the Chromium binary of the browser tests "
    "(default `/usr/bin/chromium`)",
    "CELLWAR_DEBIAN_MIRROR": "Debian mirror of `make base-image` (default: the machine's "
    "apt sources)",
    "CELLWAR_DOC_SCREENSHOTS": "folder where the browser tests write the docs' pictures "
    "(`make screenshots`: `docs/screenshots`)",
    "CELLWAR_NATS_PORT": "client port of the NATS server `make run` starts (4222; a "
    "cluster's nodes take the next ports, see Hosting → Ports)",
    "CELLWAR_NGINX_GATEWAYS": "the nginx container's upstream gateways (`host:port`, comma "
    "separated)",
    "CELLWAR_NGINX_IP": "address of the nginx container on the compose network (the "
    "gateways' trusted proxy)",
    "CELLWAR_NGINX_LISTEN": "where the nginx container listens (`port` or `addr:port`)",
    "CELLWAR_NGINX_RUN_DIR": "nginx's run folder inside its container (pid, temp files)",
    "CELLWAR_NGINX_WAIT_S": "how long the nginx container waits for its gateways' names "
    "to resolve at start (seconds)",
    "CELLWAR_NGINX_WORKERS": "nginx worker processes in its container",
    "CELLWAR_SUBNET": "subnet of the compose network (`deploy/compose.yaml`)",
    "CELLWAR_TEST_NATS": "`container` or `subprocess`: which NATS the test suite starts",
    "CELLWAR_TEST_NATS_URL": "the test suite uses this NATS server instead of starting one",
    "CELLWAR_URL": "default `--url` of the `cellwar` CLI (else `http://localhost:8000`)",
}

_SKIP_DIRS = {"__pycache__", ".venv", "node_modules"}
_SOURCE_SUFFIXES = {".py", ".yaml", ".yml", ".conf", ".sh", ""}


def _sources(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for rel in paths:
        path = ROOT / rel
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(
                p for p in sorted(path.rglob("*"))
                if p.is_file() and p.suffix in _SOURCE_SUFFIXES
                and not _SKIP_DIRS & set(p.parts)
            )
    return files


def _texts(groups: list[tuple[str, list[str]]]) -> dict[str, str]:
    texts = {}
    for name, paths in groups:
        texts[name] = "\n".join(
            p.read_text(encoding="utf-8", errors="replace") for p in _sources(paths)
            if p.relative_to(ROOT).as_posix() not in _EXCLUDED
        )
    return texts


def attribute_docs(cls: type) -> dict[str, str]:
    """The ``Attributes:`` entries of ``cls``'s docstring, by field name (an entry
    ``a / b: text`` documents both fields), whitespace folded."""
    doc = cls.__doc__ or ""
    _, _, body = doc.partition("Attributes:")
    entries: dict[str, str] = {}
    current: list[str] = []
    text: list[str] = []

    def flush() -> None:
        for name in current:
            entries[name] = " ".join(" ".join(text).split())

    for line in body.splitlines():
        match = re.match(r"^ {8}([a-z_][a-z0-9_ /]*):\s*(.*)$", line)
        if match:
            flush()
            current = [n.strip() for n in match.group(1).split("/")]
            text = [match.group(2)]
        elif line.strip():
            text.append(line.strip())
    flush()
    return entries


def _type_text(field: Any) -> str:
    ann = field.annotation
    text = getattr(ann, "__name__", None) or str(ann)
    text = str(ann).replace("typing.", "") if text in ("Optional", "Union", "Literal") else text
    if str(ann).startswith("typing.Literal"):
        values = str(ann)[len("typing.Literal["):-1]
        text = "one of " + values.replace("'", "`")
    if "None" in str(ann) and "Literal" not in str(ann):
        text = "str, optional"
    bounds = []
    for meta in field.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(meta, attr, None)
            if value is not None:
                bounds.append(f"{sign} {value:g}" if isinstance(value, float) else f"{sign} {value}")
    return text + (f" ({', '.join(bounds)})" if bounds else "")


def _default_text(value: Any) -> str:
    if value is None:
        return "unset"
    if value == "":
        return "empty"
    if isinstance(value, float):
        return f"`{value:g}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def readers(needle: re.Pattern[str], texts: dict[str, str]) -> list[str]:
    """The names of ``texts`` (program → source) whose source matches ``needle``."""
    return [name for name, text in texts.items() if needle.search(text)]


def render() -> str:
    """The whole Markdown page."""
    reads = _texts(READERS)
    sets = _texts(SETTERS)
    docs = attribute_docs(Settings)
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated by tools/gen_config_docs.py from services/common/settings.py on every",
        "     `make docs`; edit the settings class's docstring, not this page. -->",
        "",
        "Every CellWar service and the runner read their settings from environment variables",
        "prefixed `CELLWAR_` (and from a `.env` file in their working folder), through one class,",
        "`Settings` in `services/common/settings.py`. A value a process cannot use stops it",
        "at start with the variable named (`make run failed: …`, or for a service started",
        "by itself `python -m services.session: CELLWAR_…='…': why` and exit code 2); a",
        "`CELLWAR_*` variable that no program reads is named in a warning at start, with",
        "the closest known name. The client tools (`cellwar`, `python -m client.play`) read",
        "the environment only (no `.env`) and warn the same way.",
        "",
        "Each entry gives the type (with the bounds checked at start), the meaning, the",
        "programs whose code reads the setting and the deployment files that set it (both",
        "found in the source when this page was built). Durations are in seconds.",
        "",
        "## Settings of the services",
        "",
        '<div class="cw-config" markdown>',
        "",
        "| variable | default | meaning |",
        "| --- | --- | --- |",
    ]
    for name, field in Settings.model_fields.items():
        var = "CELLWAR_" + name.upper()
        found = readers(re.compile(rf"\.{name}\b|\b{var}\b"), reads)
        who = ", ".join(n for n in found if n != "tests") or "—"
        setters = ", ".join(readers(re.compile(rf"\b{var}\b"), sets))
        meaning = docs.get(name, "") or "—"
        where = f"Read by: {who}" + (f"; set by: {setters}" if setters else "") + "."
        lines.append(
            f"| `{var}` | {_cell(_default_text(field.default))} "
            f"| *{_cell(_type_text(field))}.* {_cell(meaning)}<br>{_cell(where)} |"
        )
    lines += [
        "",
        "</div>",
        "",
        "## Other variables",
        "",
        "Read by the runner, the container tooling, the `cellwar` CLI or the test suite,",
        "not by the `Settings` class; known, so never warned about.",
        "",
        "| variable | meaning | read by |",
        "| --- | --- | --- |",
    ]
    for var in sorted(OTHER_VARIABLES):
        pattern = re.compile(rf"\b{var}\b")
        who = ", ".join(dict.fromkeys(readers(pattern, reads) + readers(pattern, sets)))
        who = who or "no program reads it today"
        lines.append(f"| `{var}` | {_cell(OTHER_MEANINGS.get(var, '—'))} | {_cell(who)} |")
    lines += [
        "",
        "## Examples",
        "",
        "A second `make run` beside the first needs its own data folder and ports:",
        "",
        "```bash",
        "CELLWAR_DATA_DIR=.data2 CELLWAR_NATS_PORT=4322 CELLWAR_HTTP_PORT=8100 \\",
        "CELLWAR_ENGINE_ADDR=127.0.0.1:50151 CELLWAR_SESSION_ADDR=127.0.0.1:50152 \\",
        "CELLWAR_MATCHMAKER_ADDR=127.0.0.1:50153 make run",
        "```",
        "",
        "Checks done at start: `CELLWAR_NATS_URL` takes `nats://` or `tls://` URLs (or",
        "`host:port`), comma separated; the `*_ADDR` variables take `host:port` (several",
        "comma separated, or gRPC's `ipv4:a,b`; a target with a scheme such as `dns:///`",
        "is taken as it is); `CELLWAR_TRUSTED_PROXIES` takes IP addresses, CIDR networks",
        "or `*`; numbers must be finite and within the bounds above.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write the page to ``argv[0]`` (only when it changed) or to standard output."""
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if not args:
        sys.stdout.write(text)
        return 0
    out = Path(args[0])
    if not out.exists() or out.read_text(encoding="utf-8") != text:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
