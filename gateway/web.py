"""The browser client's files at ``/``, mounted after the API without hiding its routes.

Starlette tries a mount at ``/`` after every route; a request whose path belongs to an
API route but whose method does not (``GET /game/create``, ``PUT /games``) would fall
through to the files and be answered by them (404, or 405 with ``Allow: GET, HEAD``).
:class:`WebFiles` answers such a request as the API route would: 405
``METHOD_NOT_ALLOWED`` with the route's own methods in ``Allow``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from starlette.exceptions import HTTPException
from starlette.routing import BaseRoute, Match, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send


class WebFiles(StaticFiles):
    """``StaticFiles`` that first answers 405 for the paths of API routes.

    Args:
        api_routes: returns the app's routes (read at request time, so routes added
            after the mount count too).
        **kwargs: ``StaticFiles`` arguments (``directory``, ``html``).
    """

    def __init__(self, *, api_routes: Callable[[], Iterable[BaseRoute]], **kwargs) -> None:
        super().__init__(**kwargs)
        self.api_routes = api_routes

    def allowed_methods(self, scope: Scope) -> set[str]:
        """Methods of the API routes whose path matches the request's (empty: none)."""
        allowed: set[str] = set()
        for route in self.api_routes():
            if not isinstance(route, Route) or not route.methods:
                continue
            match, _ = route.matches(scope)
            if match != Match.NONE:
                allowed |= route.methods
        return allowed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """405 with the route's ``Allow`` for an API path, else the files."""
        if scope["type"] == "http":
            allowed = self.allowed_methods(scope)
            if allowed:
                raise HTTPException(
                    405,
                    f"{scope.get('method')} is not allowed here; allowed: {', '.join(sorted(allowed))}",
                    headers={"Allow": ", ".join(sorted(allowed))},
                )
        await super().__call__(scope, receive, send)
