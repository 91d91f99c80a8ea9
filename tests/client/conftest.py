"""The client tests reuse the API tests' real gateway (uvicorn on port 0 + the stack)."""

from tests.api.conftest import api, gateway, gateway_settings  # noqa: F401
