"""The client tests reuse the API tests' real gateway (uvicorn on port 0 + the stack);
``flavour`` runs a test against each SDK client (tests/client/flavours.py)."""

from tests.api.conftest import api, gateway, gateway_settings  # noqa: F401
from tests.client.flavours import flavour  # noqa: F401
