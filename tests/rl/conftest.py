"""The remote-backend tests reuse the API tests' real gateway (uvicorn on port 0 in front
of the engine + session stack on a real NATS)."""

from tests.api.conftest import api, gateway, gateway_settings  # noqa: F401
