"""AI players through a local LLM (docs/llm-players.md).

:class:`ChatClient` talks to a chat model server over HTTP (httpx):

* any **OpenAI-compatible** server: ``POST {url}/chat/completions`` with
  ``response_format: {"type": "json_schema", "json_schema": {"name", "strict", "schema"}}``
  (llama.cpp's ``llama-server``, vLLM, LM Studio, Ollama at ``http://localhost:11434/v1``).
  A server that refuses that shape naming ``response_format`` (llama-cpp-python's server
  takes ``{"type": "json_object", "schema": ...}`` only and answers 500 to the other) is
  asked again in that second shape, which is then kept;
* **Ollama's native** ``POST {url}/api/chat`` with ``format`` (the JSON schema) and
  ``stream: false``, when ``api="ollama"`` or the URL is an Ollama base (``auto``: a URL
  ending in ``/api``, or one whose ``GET /api/version`` answers as Ollama does).

Both constrain decoding to the schema (a grammar), so the move field, an ``enum`` of the
legal moves, cannot be decoded as an illegal move.

:class:`LLMPolicy` is a CellWar policy (``act(observation) -> int``, as
:mod:`client.bots.policies`): each move it sends the rules in brief, the player's own
fog view as text and a schema whose ``move`` is an ``enum`` of the acting unit's legal
moves. An answer that still fails validation (not JSON, not in the enum) is asked again
(``retries`` times), then replaced by the heuristic's move
(:class:`client.bots.policies.HeuristicPolicy`); :class:`LLMStats` counts both.

:class:`LifePlacer` does the same for Life placement: a schema of up to ``max_cells``
cells whose ``x`` and ``y`` are ``enum`` s of the own zone's columns and rows, at most
the budget; cells on live or reserved cells fail validation.

Errors: :class:`LLMError` with an :class:`LLMErrorCode` (one line, no traceback, from
``python -m client.play``): the server is down (``UNREACHABLE``), did not answer in time
(``TIMEOUT``), does not serve the model (``MODEL_NOT_FOUND``), is not a chat server at
that URL (``NOT_A_CHAT_SERVER``) or answered an error (``HTTP_ERROR``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import httpx
import numpy as np

from client.bots.life import LifeBot
from client.rl.observation import (
    ENEMY_FACTORY,
    ENEMY_FORTIFICATION,
    ENEMY_INFANTRY,
    OWN_FACTORY,
    OWN_FORTIFICATION,
    OWN_INFANTRY,
    VECTORS,
    VISIBLE,
    acting_cell,
    action_kinds,
)
from client.sdk.core import tls_context

#: Compass names of the eight unit vectors (dx, dy); y grows downwards (row 0 on top).
DIRECTIONS: dict[tuple[int, int], str] = {
    (0, -1): "N", (1, -1): "NE", (1, 0): "E", (1, 1): "SE",
    (0, 1): "S", (-1, 1): "SW", (-1, 0): "W", (-1, -1): "NW",
}

#: The rules in brief, sent as the system message of every CellWar move (source:
#: engine/cellwar/actions.py and engine/cellwar/units.py, after the seed's rules).
CELLWAR_RULES = (
    "You play CellWar, a turn-based strategy game on a grid, against other players. "
    "Each turn every one of your units acts once. "
    "Infantry moves one cell in 8 directions, or attacks an enemy unit next to it "
    "(an attacked infantry or factory is destroyed and the attacker takes its cell; the "
    "first hit on a fortification destroys the attacker), or fortifies in place. "
    "A fortification that stands 2 more turns becomes a factory; a factory produces a "
    "new infantry on an empty cell next to it. You see only the cells near your units. "
    "You win when no enemy unit is left. Attack when you can, and move towards the enemy. "
    "The map has row y=0 on top and column x=0 on the left: I F C are your infantry, "
    "fortification, factory; i f c the enemy's; . an empty cell in sight; ? a cell out of sight. "
    "N is up (y-1), S down, E right (x+1), W left. "
    'Answer with JSON {"move": "<one of the legal moves>"}.'
)

#: The rules of Life placement in brief (B3/S23, LifeWiki "Conway's Game of Life").
LIFE_RULES = (
    "You play a colour game of Conway's Life (B3/S23): a dead cell with exactly 3 live "
    "neighbours is born, a live cell with 2 or 3 live neighbours survives, others die. "
    "You place live cells in your own zone, then the board runs; the player with the "
    "most live cells at the end wins. Stable shapes (a 2x2 block) survive; lone cells "
    "die. Answer with JSON {\"cells\": [{\"x\": X, \"y\": Y}, ...]}."
)


class LLMErrorCode(StrEnum):
    """Why a model server could not give a move (:class:`LLMError`)."""

    UNREACHABLE = "UNREACHABLE"
    TIMEOUT = "TIMEOUT"
    MODEL_NOT_FOUND = "MODEL_NOT_FOUND"
    NOT_A_CHAT_SERVER = "NOT_A_CHAT_SERVER"
    HTTP_ERROR = "HTTP_ERROR"


class LLMError(RuntimeError):
    """A model server failed: ``code`` (an :class:`LLMErrorCode`) and a one-line message."""

    def __init__(self, code: LLMErrorCode, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


@dataclass
class LLMStats:
    """What an LLM player counted.

    Attributes:
        moves: moves (or placements) decided.
        requests: chat requests sent.
        invalid: answers that failed validation (not JSON, not an allowed value).
        retries: requests sent again after an invalid answer.
        fallbacks: moves replaced by the heuristic's after the last invalid answer.
        seconds: wall time of all decisions, seconds (requests, validation, fallback).
    """

    moves: int = 0
    requests: int = 0
    invalid: int = 0
    retries: int = 0
    fallbacks: int = 0
    seconds: float = 0.0

    @property
    def seconds_per_move(self) -> float:
        """Mean seconds per decided move (0 without moves)."""
        return self.seconds / self.moves if self.moves else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The counters and ``seconds_per_move`` as a JSON-ready dict."""
        return {**asdict(self), "seconds_per_move": self.seconds_per_move}

    def summary(self) -> str:
        """One line, e.g. ``40 moves, 0 invalid answers, 0 retried, 0 replaced by the
        heuristic, 0.21 s per move``."""
        return (
            f"{self.moves} moves, {self.invalid} invalid answers, {self.retries} retried, "
            f"{self.fallbacks} replaced by the heuristic, {self.seconds_per_move:.2f} s per move"
        )


def _short(text: str, limit: int = 200) -> str:
    return " ".join(text.split())[:limit]


class ChatClient:
    """A chat model server with schema-constrained answers (module docstring).

    Args:
        url: the server's base: ``http://127.0.0.1:8080/v1`` (OpenAI-compatible) or
            ``http://localhost:11434`` (Ollama).
        model: the model's name as the server knows it.
        api: ``"openai"``, ``"ollama"`` or ``"auto"`` (module docstring).
        timeout_s: seconds a request may take (connect, read) before ``TIMEOUT``.
        temperature: sampling temperature (0 = greedy: the same prompt, the same answer).
        seed: the sampling seed sent with each request.
        max_tokens: most tokens of one answer.
        http: an httpx.Client to use (else one of its own, closed by :meth:`close`).
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        api: str = "auto",
        timeout_s: float = 60.0,
        temperature: float = 0.0,
        seed: int = 0,
        max_tokens: int = 256,
        http: httpx.Client | None = None,
    ) -> None:
        if api not in ("auto", "openai", "ollama"):
            raise ValueError(f"api is 'auto', 'openai' or 'ollama', not {api!r}")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the model server URL must be http(s)://host[:port][/path], not {url!r}")
        self.url = url.rstrip("/")
        self.model = model
        self.api = api
        self.timeout_s = timeout_s
        self.temperature = temperature
        self.seed = seed
        self.max_tokens = max_tokens
        self._http = http or httpx.Client(
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0)), verify=tls_context()
        )
        self._own_http = http is None
        #: ``"json_schema"`` or ``"json_object"``: the response_format shape the server took.
        self.format_shape = "json_schema"
        self._checked = False

    def close(self) -> None:
        """Close the HTTP client (when it is the client's own)."""
        if self._own_http:
            self._http.close()

    # -- transport

    def _send(self, method: str, path: str, body: dict[str, Any] | None = None) -> httpx.Response:
        target = f"{self.url}{path}"
        try:
            return self._http.request(method, target, json=body)
        except httpx.ConnectError as err:
            raise LLMError(
                LLMErrorCode.UNREACHABLE,
                f"nothing answers at {self.url} ({_short(str(err), 80)}); is the model server started?",
            ) from None
        except httpx.TimeoutException:
            raise LLMError(
                LLMErrorCode.TIMEOUT, f"{target} did not answer within {self.timeout_s:g} s"
            ) from None
        except httpx.HTTPError as err:
            raise LLMError(LLMErrorCode.UNREACHABLE, f"{target}: {_short(str(err), 120)}") from None

    def _fail(self, response: httpx.Response, path: str) -> LLMError:
        text = _short(response.text)
        if "model" in text.lower() and (response.status_code == 404 or "not found" in text.lower()):
            return LLMError(
                LLMErrorCode.MODEL_NOT_FOUND, f"{self.url} does not serve model {self.model!r} ({text})"
            )
        if response.status_code in (404, 405):
            return LLMError(
                LLMErrorCode.NOT_A_CHAT_SERVER,
                f"{self.url}{path} answered {response.status_code}: no chat endpoint there "
                "(an OpenAI-compatible server is at .../v1, Ollama at its base URL)",
            )
        return LLMError(LLMErrorCode.HTTP_ERROR, f"{self.url}{path} answered {response.status_code}: {text}")

    def resolved_api(self) -> str:
        """``"openai"`` or ``"ollama"`` (resolving ``auto`` once, with one request at most).

        Raises:
            LLMError: the server cannot be reached (``UNREACHABLE``, ``TIMEOUT``).
        """
        if self.api != "auto":
            return self.api
        path = urlsplit(self.url).path
        if path.endswith("/v1"):
            self.api = "openai"
        elif path.endswith("/api"):
            self.url = self.url[: -len("/api")]
            self.api = "ollama"
        else:
            response = self._send("GET", "/api/version")
            try:
                is_ollama = response.status_code == 200 and "version" in response.json()
            except ValueError:
                is_ollama = False
            if is_ollama:
                self.api = "ollama"
            else:
                self.url += "/v1"
                self.api = "openai"
        return self.api

    def check(self) -> None:
        """Make sure the server answers and serves :attr:`model` (once).

        Raises:
            LLMError: ``UNREACHABLE``, ``TIMEOUT``, ``MODEL_NOT_FOUND`` (the server lists
                its models and this one is not among them), ``NOT_A_CHAT_SERVER``.
        """
        if self._checked:
            return
        if self.resolved_api() == "ollama":
            response = self._send("GET", "/api/tags")
            names = [m.get("name", "") for m in (self._json(response, "/api/tags").get("models") or [])]
            known = set(names) | {n.removesuffix(":latest") for n in names}
        else:
            response = self._send("GET", "/models")
            if response.status_code in (404, 405):  # a server without a model list: the chat tells
                self._checked = True
                return
            known = {str(m.get("id")) for m in (self._json(response, "/models").get("data") or [])}
            names = sorted(known)
        if self.model not in known:
            served = ", ".join(names[:8]) or "none"
            raise LLMError(
                LLMErrorCode.MODEL_NOT_FOUND, f"{self.url} does not serve model {self.model!r} (it serves: {served})"
            )
        self._checked = True

    def _json(self, response: httpx.Response, path: str) -> dict[str, Any]:
        if response.status_code >= 400:
            raise self._fail(response, path)
        try:
            data = response.json()
        except ValueError:
            raise LLMError(
                LLMErrorCode.NOT_A_CHAT_SERVER, f"{self.url}{path} answered {response.status_code} but not JSON"
            ) from None
        if not isinstance(data, dict):
            raise LLMError(LLMErrorCode.NOT_A_CHAT_SERVER, f"{self.url}{path} answered JSON of another shape")
        return data

    # -- chat

    def complete(self, messages: Sequence[Mapping[str, str]], schema: Mapping[str, Any], name: str = "answer") -> str:
        """The assistant's text for ``messages``, decoded under ``schema``.

        Raises:
            LLMError: the server failed (module docstring); an answer of another shape
                than a chat answer is ``NOT_A_CHAT_SERVER``.
        """
        if self.resolved_api() == "ollama":
            body = {
                "model": self.model,
                "messages": list(messages),
                "format": dict(schema),
                "stream": False,
                "options": {"temperature": self.temperature, "seed": self.seed, "num_predict": self.max_tokens},
            }
            data = self._json(self._send("POST", "/api/chat", body), "/api/chat")
            try:
                return str(data["message"]["content"])
            except (KeyError, TypeError):
                raise LLMError(LLMErrorCode.NOT_A_CHAT_SERVER, f"{self.url}/api/chat: no message in the answer") from None
        body = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
            "response_format": self._response_format(schema, name),
        }
        response = self._send("POST", "/chat/completions", body)
        if response.status_code in (400, 422, 500) and self.format_shape == "json_schema" and "response_format" in response.text:
            self.format_shape = "json_object"  # llama-cpp-python's shape
            body["response_format"] = self._response_format(schema, name)
            response = self._send("POST", "/chat/completions", body)
        data = self._json(response, "/chat/completions")
        try:
            return str(data["choices"][0]["message"]["content"])
        except (KeyError, IndexError, TypeError):
            raise LLMError(
                LLMErrorCode.NOT_A_CHAT_SERVER, f"{self.url}/chat/completions: no choices in the answer"
            ) from None

    def _response_format(self, schema: Mapping[str, Any], name: str) -> dict[str, Any]:
        if self.format_shape == "json_object":
            return {"type": "json_object", "schema": dict(schema)}
        return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": dict(schema)}}


def _ask(
    chat: ChatClient,
    stats: LLMStats,
    messages: list[dict[str, str]],
    schema: dict[str, Any],
    validate: Callable[[Any], Any],
    retries: int,
    name: str,
) -> Any:
    """The first valid answer (``validate(parsed JSON)``, which raises ValueError on an
    invalid one) of up to ``1 + retries`` requests, or None after the last invalid one."""
    for attempt in range(retries + 1):
        if attempt:
            stats.retries += 1
        stats.requests += 1
        text = chat.complete(messages, schema, name)
        try:
            return validate(json.loads(text))
        except (ValueError, TypeError, KeyError):
            stats.invalid += 1
    return None


# --------------------------------------------------------------------------- CellWar


def move_label(dx: int, dy: int, kind: str) -> str:
    """The enum value of a legal move: ``"attack NE"``, ``"move S"``, ``"produce W"``,
    or the kind alone for the stay vector (``"fortify"``, ``"stand"``, ``"become_factory"``)."""
    return kind if (dx, dy) == (0, 0) else f"{kind} {DIRECTIONS[(dx, dy)]}"


def legal_moves(observation: Mapping[str, Any]) -> dict[str, int]:
    """Enum value -> action index 0..8 of the acting unit's legal moves (in index order)."""
    return {
        move_label(dx, dy, kind): i
        for i, ((dx, dy), kind) in enumerate(zip(VECTORS, action_kinds(observation), strict=True))
        if kind is not None
    }


def move_schema(labels: Iterable[str]) -> dict[str, Any]:
    """The JSON Schema of an answer: ``{"move": one of labels}``, nothing else."""
    return {
        "type": "object",
        "properties": {"move": {"type": "string", "enum": list(labels)}},
        "required": ["move"],
        "additionalProperties": False,
    }


_UNIT_CHARS = (
    (OWN_INFANTRY, "I"), (OWN_FORTIFICATION, "F"), (OWN_FACTORY, "C"),
    (ENEMY_INFANTRY, "i"), (ENEMY_FORTIFICATION, "f"), (ENEMY_FACTORY, "c"),
)
_TYPE_NAMES = {"I": "infantry", "F": "fortification", "C": "factory"}


def fog_text(observation: Mapping[str, Any]) -> str:
    """The player's own fog view as text: a map (row 0 on top, ``x`` to the right) of
    ``I F C`` own infantry / fortification / factory, ``i f c`` the enemy's, ``.`` an
    empty cell in sight, ``?`` out of sight (the legend is in :data:`CELLWAR_RULES`);
    then the acting unit and its legal moves with the cell each reaches. Short: every
    token of it is read by the model each move."""
    planes = observation["observation"]
    _, h, w = planes.shape
    grid = [["?" if not planes[VISIBLE, y, x] else "." for x in range(w)] for y in range(h)]
    for plane, ch in _UNIT_CHARS:
        ys, xs = np.nonzero(planes[plane])
        for x, y in zip(xs.tolist(), ys.tolist(), strict=True):
            grid[y][x] = ch
    lines = [f"Map {w}x{h}:", *("".join(row) for row in grid)]
    here = acting_cell(planes)
    if here is not None:
        x, y = here
        moves = []
        for (dx, dy), kind in zip(VECTORS, action_kinds(observation), strict=True):
            if kind is not None:
                target = "" if (dx, dy) == (0, 0) else f" to x={x + dx} y={y + dy}"
                moves.append(move_label(dx, dy, kind) + target)
        lines.append(f"Your {_TYPE_NAMES.get(grid[y][x], 'unit')} at x={x} y={y} acts. Legal: " + "; ".join(moves))
    return "\n".join(lines)


class LLMPolicy:
    """A CellWar policy played by a chat model (module docstring), with the
    ``act``/``reset`` of :class:`client.bots.registry.Policy`.

    Args:
        url, model, api, timeout_s, temperature, max_tokens: as :class:`ChatClient`.
        seed: seeds the fallback heuristic and the model's sampling.
        retries: requests sent again after an invalid answer, before the fallback.
        fallback: the policy whose move replaces an invalid answer (default: the
            heuristic, :class:`client.bots.policies.HeuristicPolicy`).
        chat: a :class:`ChatClient` to use instead of one made from ``url``/``model``.

    Attributes:
        stats: an :class:`LLMStats` over every game of the object (``reset`` keeps it).
    """

    name = "llm"

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080/v1",
        model: str = "smollm2",
        *,
        api: str = "auto",
        timeout_s: float = 60.0,
        temperature: float = 0.0,
        max_tokens: int = 32,
        seed: int = 0,
        retries: int = 1,
        fallback: Any = None,
        chat: ChatClient | None = None,
    ) -> None:
        from client.bots.policies import HeuristicPolicy

        if retries < 0:
            raise ValueError("retries must be >= 0")
        self.chat = chat or ChatClient(
            url, model, api=api, timeout_s=timeout_s, temperature=temperature, seed=seed, max_tokens=max_tokens
        )
        self.retries = retries
        self.fallback = fallback if fallback is not None else HeuristicPolicy(seed=seed)
        self.stats = LLMStats()

    def check(self) -> None:
        """Fail now, with one clear :class:`LLMError`, when the server or model is missing."""
        self.chat.check()

    def reset(self) -> None:
        """A new game: the fallback forgets its memory (the counters go on)."""
        self.fallback.reset()

    def close(self) -> None:
        """Close the HTTP client."""
        self.chat.close()

    def messages(self, observation: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat messages of one move: the rules, then the fog view and legal moves."""
        return [
            {"role": "system", "content": CELLWAR_RULES},
            {"role": "user", "content": fog_text(observation)},
        ]

    def schema(self, legal: Mapping[str, int]) -> dict[str, Any]:
        """The answer's schema for the legal moves (label -> index): :func:`move_schema`."""
        return move_schema(legal)

    def act(self, observation: Mapping[str, Any]) -> int:
        """A legal action index 0..8 for the acting unit: the model's, else the fallback's.

        Raises:
            NoLegalActionError: the mask is all zeros.
            LLMError: the server failed (module docstring).
        """
        from client.bots.policies import NoLegalActionError

        started = time.perf_counter()
        legal = legal_moves(observation)
        if not legal:
            raise NoLegalActionError("no legal action in this observation: it is not this player's move")
        self.check()

        def validate(answer: Any) -> int:
            return legal[answer["move"]]

        try:
            index = _ask(
                self.chat, self.stats, self.messages(observation), self.schema(legal), validate, self.retries, "cellwar_move"
            )
            if index is None:
                self.stats.fallbacks += 1
                index = int(self.fallback.act(observation))
            return int(index)
        finally:
            self.stats.moves += 1
            self.stats.seconds += time.perf_counter() - started


# --------------------------------------------------------------------------- Life


def cells_schema(zone: Sequence[int], most: int) -> dict[str, Any]:
    """The JSON Schema of a Life placement: ``{"cells": [{"x", "y"}, ...]}`` with 1 to
    ``most`` cells, ``x`` an enum of the zone's columns ``x0..x1-1`` and ``y`` of its rows
    ``y0..y1-1`` (``zone`` = ``(x0, y0, x1, y1)``, cells, end exclusive)."""
    x0, y0, x1, y1 = (int(v) for v in zone)
    cell = {
        "type": "object",
        "properties": {
            "x": {"type": "integer", "enum": list(range(x0, x1))},
            "y": {"type": "integer", "enum": list(range(y0, y1))},
        },
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"cells": {"type": "array", "items": cell, "minItems": 1, "maxItems": int(most)}},
        "required": ["cells"],
        "additionalProperties": False,
    }


def zone_text(zone: Sequence[int], taken: set[tuple[int, int]], budget: int, most: int) -> str:
    """The player's zone as text (``#`` live or reserved, ``.`` free), with the budget."""
    x0, y0, x1, y1 = (int(v) for v in zone)
    lines = [
        f"Your zone: x from {x0} to {x1 - 1}, y from {y0} to {y1 - 1}. You may place up to "
        f"{min(budget, most)} cells now (budget left {budget}), on free cells only.",
    ]
    if taken:
        lines.append("Taken cells (#) of your zone:")
        for y in range(y0, y1):
            row = "".join("#" if (x, y) in taken else "." for x in range(x0, x1))
            if "#" in row:
                lines.append(f"y={y:>3} " + row)
    return "\n".join(lines)


class LifePlacer:
    """Life placement by a chat model (module docstring).

    Args:
        url, model, api, timeout_s, temperature, seed: as :class:`ChatClient`.
        retries: requests sent again after an invalid answer.
        max_cells: most cells asked in one request (a small model writes ~15 tokens a cell).
        chat: a :class:`ChatClient` to use instead of one made from ``url``/``model``.
    """

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080/v1",
        model: str = "smollm2",
        *,
        api: str = "auto",
        timeout_s: float = 120.0,
        temperature: float = 0.0,
        seed: int = 0,
        retries: int = 1,
        max_cells: int = 24,
        chat: ChatClient | None = None,
    ) -> None:
        self.chat = chat or ChatClient(
            url, model, api=api, timeout_s=timeout_s, temperature=temperature, seed=seed,
            max_tokens=16 * max_cells + 32,
        )
        self.retries = retries
        self.max_cells = max_cells
        self.stats = LLMStats()

    def check(self) -> None:
        """As :meth:`LLMPolicy.check`."""
        self.chat.check()

    def close(self) -> None:
        """Close the HTTP client."""
        self.chat.close()

    def place(
        self,
        zone: Sequence[int],
        budget: int,
        taken: set[tuple[int, int]],
        fallback: Callable[[], list[tuple[int, int]]],
    ) -> list[tuple[int, int]]:
        """Up to ``min(budget, max_cells)`` free cells of ``zone`` chosen by the model
        (duplicates dropped), else ``fallback()`` after the last invalid answer (a cell on
        a taken one, more than the budget). ``[]`` when ``budget`` is 0.

        Raises:
            LLMError: the server failed.
        """
        if budget <= 0:
            return []
        started = time.perf_counter()
        most = min(budget, self.max_cells)
        x0, y0, x1, y1 = (int(v) for v in zone)
        self.check()

        def validate(answer: Any) -> list[tuple[int, int]]:
            cells: list[tuple[int, int]] = []
            for item in answer["cells"]:
                x, y = item["x"], item["y"]
                if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, int) or not isinstance(y, int):
                    raise ValueError("a coordinate is not an integer")
                if not (x0 <= x < x1 and y0 <= y < y1) or (x, y) in taken:
                    raise ValueError("a cell outside the zone or on a taken cell")
                if (x, y) not in cells:
                    cells.append((x, y))
            if not cells or len(cells) > most:
                raise ValueError("no cell, or more than allowed")
            return cells

        messages = [
            {"role": "system", "content": LIFE_RULES},
            {"role": "user", "content": zone_text(zone, taken, budget, most) + "\nYour cells?"},
        ]
        try:
            cells = _ask(self.chat, self.stats, messages, cells_schema(zone, most), validate, self.retries, "life_cells")
            if cells is None:
                self.stats.fallbacks += 1
                cells = list(fallback())
            return cells
        finally:
            self.stats.moves += 1
            self.stats.seconds += time.perf_counter() - started



# --------------------------------------------------------------------------- the Life API bot


class LLMLifeBot(LifeBot):
    """A :class:`client.bots.life.LifeBot` whose placements come from a chat model
    (:class:`LifePlacer`; the bot's own figures are the fallback). No library stamp: the
    model places every cell.

    Args:
        placer: the :class:`LifePlacer` (its ``stats`` count the placements).
        others: as :class:`client.bots.life.LifeBot`.
    """

    def __init__(self, *args: Any, placer: LifePlacer, **kwargs: Any) -> None:
        kwargs.setdefault("stamps", False)
        super().__init__(*args, **kwargs)
        self.placer = placer

    async def choose_cells(
        self,
        view: dict[str, Any],
        budget: int,
        *,
        board: list[list[int]] | None,
        reserved: Iterable[tuple[int, int]] = (),
    ) -> list[tuple[int, int]]:
        """The model's cells (in a thread: the request blocks), else the bot's figures."""
        zone = view.get("zone") or [0, 0, int(view["width"]), int(view["height"])]
        x0, y0, x1, y1 = (int(v) for v in zone)
        taken = set(reserved)
        if board is not None:
            taken |= {(x, y) for y in range(y0, y1) for x in range(x0, x1) if board[y][x]}

        def fallback() -> list[tuple[int, int]]:
            return self.pick_cells(view, budget, board=board, reserved=reserved)

        return await asyncio.to_thread(self.placer.place, zone, budget, taken, fallback)
