"""CellWar as a PettingZoo AEC environment (docs/vector-envs.md has its batched form).

One agent per seat, ``player_1`` .. ``player_N`` (the engine's player ids). The agent
whose turn it is acts for **one unit at a time**, in the engine's order (the first
unit of ``get_valid_actions``: combat units, then factories); when none of its units
can act any more the environment ends its turn (a blocked factory dies then, as the
rules say). Action: ``Discrete(9)``, an index into
:data:`client.rl.observation.VECTORS`. Observation: ``{"observation": (10, H, W)
uint8 fog planes, "action_mask": (9,) int8}`` (:mod:`client.rl.observation`), built
from the player's view only. Reward: +1 to the winner and -1 to each loser when the
game ends (a player knocked out earlier of a 3+ player game gets its -1 then), 0
otherwise; after ``max_rounds`` rounds every agent is truncated with 0.

Backends: ``backend="local"`` plays on the engine library in this process;
``backend="remote", url=...`` plays the same game through the REST API (every seat,
or with ``game_id=...`` the seats it joins of someone else's game), so a policy that
plays here plays online unchanged.

Search: :meth:`CellWarEnv.state` is a JSON-ready snapshot built on the event log
(the engine's events, replayed by :func:`engine.fold` in :meth:`CellWarEnv.set_state`)
plus the AEC bookkeeping (whose step, pending rewards, terminations); a restored env
continues exactly like the original (tested step by step, OpenSpiel #1277).
:meth:`CellWarEnv.clone` is the cheap copy for rollouts. These are not PettingZoo's
optional global-state ``state()`` array: the env defines no ``state_space``.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from client.rl.cellwar_backends import LocalCellWar, RemoteCellWar, first_unit, random_start
from client.rl.codes import SNAPSHOT_FORMAT, ErrorCode
from client.rl.observation import CHANNELS, VECTORS, action_mask, encode_view
from client.rl.render import to_rgb, to_text


class IllegalActionError(ValueError):
    """An action the mask forbids (or not an index 0..8); nothing changed.

    Attributes:
        code: ``"INVALID_ACTION"`` (the engine's code for a refused vector).
    """

    code = ErrorCode.INVALID_ACTION


def check_start_rounds(start: str, max_rounds: int) -> None:
    """The ``start`` and ``max_rounds`` arguments of the envs.

    Raises:
        ValueError: ``start`` not ``"default"`` or ``"random"``, ``max_rounds`` <= 0.
    """
    if start not in ("default", "random"):
        raise ValueError(f"start must be 'default' or 'random', got {start!r}")
    if max_rounds <= 0:
        raise ValueError(f"max_rounds must be > 0, got {max_rounds}")


def _agent(seat: int) -> str:
    return f"player_{seat}"


def _seat(agent: str) -> int:
    return int(agent.rsplit("_", 1)[1])


class CellWarEnv(AECEnv):
    """The CellWar AEC environment (module docstring). Build it with :func:`cellwar_env`.

    Args:
        width, height: board size in cells (4..64; default 8×8).
        players: seats (2..8).
        start: ``"default"`` (2 infantry each, corners first) or ``"random"`` (a
            seeded random start, point-symmetric with 2 players).
        max_rounds: rounds after which every agent is truncated (> 0).
        render_mode: None, ``"ansi"`` or ``"rgb_array"``.
        backend: ``"local"`` or ``"remote"``.
        url, game_id, join, tokens, client, poll_s, timeout_s, name: remote only (see
            :class:`client.rl.cellwar_backends.RemoteCellWar`).

    Raises:
        ValueError: an unknown backend, start or render mode, or a remote backend
            without ``url``.
    """

    metadata = {"name": "cellwar_v1", "render_modes": ["ansi", "rgb_array"], "is_parallelizable": False}

    def __init__(
        self,
        *,
        width: int = 8,
        height: int = 8,
        players: int = 2,
        start: str = "default",
        max_rounds: int = 100,
        render_mode: str | None = None,
        backend: str = "local",
        url: str | None = None,
        game_id: str | None = None,
        join: int = 1,
        tokens: dict[int, str] | None = None,
        client: Any = None,
        poll_s: float = 0.1,
        timeout_s: float = 600.0,
        name: str = "rl",
    ) -> None:
        super().__init__()
        check_start_rounds(start, max_rounds)
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        if backend == "local":
            self.backend: Any = LocalCellWar(width, height, players)
        elif backend == "remote":
            if not url and client is None:
                raise ValueError("backend='remote' needs url=...")
            self.backend = RemoteCellWar(
                url or "", width, height, players, game_id=game_id, join=join, tokens=tokens, name=name,
                poll_s=poll_s, timeout_s=timeout_s, client=client,
            )
        else:
            raise ValueError(f"backend must be 'local' or 'remote', got {backend!r}")
        self.backend_name = backend
        self.config = {
            "width": width, "height": height, "players": players, "start": start, "max_rounds": max_rounds,
        }
        self.render_mode = render_mode
        self.possible_agents = [_agent(i) for i in range(1, players + 1)]
        space = spaces.Dict(
            {
                "observation": spaces.Box(0, 1, (CHANNELS, height, width), dtype=np.uint8),
                "action_mask": spaces.MultiBinary(9),
            }
        )
        self.observation_spaces = {a: copy.deepcopy(space) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(9) for a in self.possible_agents}
        self._rng = np.random.default_rng()
        self._obs: dict[str, dict[str, np.ndarray]] = {}
        self.agents = []
        self._skip_agent_selection = None

    # -- spaces

    def observation_space(self, agent: str) -> spaces.Space:
        """``Dict(observation=Box(0, 1, (10, H, W), uint8), action_mask=MultiBinary(9))``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """``Discrete(9)``: the nine (dx, dy) vectors."""
        return self.action_spaces[agent]

    # -- the game

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Start a new game (``seed`` seeds the random start and the action spaces)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
            for i, agent in enumerate(self.possible_agents):
                self.action_spaces[agent].seed(seed + i)
                self.observation_spaces[agent].seed(seed + i)
        cfg = self.config
        units = random_start(cfg["width"], cfg["height"], cfg["players"], self._rng) if cfg["start"] == "random" else None
        self.backend.reset(units)
        self.agents = [_agent(s) for s in self.backend.seats]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._skip_agent_selection = None
        self._obs = {}
        self._advance()

    def _advance(self) -> None:
        """End turns nobody can act in, wait for others (remote), then settle rewards,
        terminations, truncations and whose step it is."""
        backend = self.backend
        seats = set(backend.seats)
        while True:
            turn = backend.turn()
            if turn == 0:
                break
            if turn not in seats:
                if not seats - backend.out():
                    break
                backend.wait()
                continue
            if backend.acting(turn) is None:
                backend.end_turn(turn)
                continue
            break
        self._obs = {}
        turn = backend.turn()
        if turn == 0:
            winner = backend.winner()
            for agent in self.agents:
                if not self.terminations[agent]:
                    self.terminations[agent] = True
                    self.rewards[agent] = 1.0 if _seat(agent) == winner else -1.0
        else:
            out = backend.out()
            for agent in self.agents:
                if _seat(agent) in out and not self.terminations[agent]:
                    self.terminations[agent] = True
                    self.rewards[agent] = -1.0
            if backend.round() > self.config["max_rounds"]:
                for agent in self.agents:
                    self.truncations[agent] = True
        dead = [a for a in self.agents if self.terminations[a] or self.truncations[a]]
        live_next = _agent(turn) if turn and _agent(turn) in self.agents and _agent(turn) not in dead else None
        if dead:
            self._skip_agent_selection = live_next
            self.agent_selection = dead[0]
        else:
            self._skip_agent_selection = None
            self.agent_selection = live_next if live_next is not None else self.agents[0]

    def step(self, action: Any) -> None:
        """Act for the unit that must act (action index 0..8), or None for an agent that
        is terminated or truncated.

        Raises:
            IllegalActionError: the action is masked out or not an index 0..8 (nothing
                changes).
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        seat = _seat(agent)
        acting = self.backend.acting(seat)
        try:
            index = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(f"an action is an index 0..8, got {action!r}") from None
        if acting is None or not 0 <= index < 9 or VECTORS[index] not in acting[1]:
            legal = [] if acting is None else sorted(VECTORS.index(v) for v in acting[1])
            raise IllegalActionError(f"action {action!r} is not legal for {agent} now (legal: {legal})")
        dx, dy = VECTORS[index]
        self._clear_rewards()
        self._cumulative_rewards[agent] = 0.0
        self.backend.act(seat, acting[0], dx, dy)
        self._advance()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation dict (from its own view; cached until the next step)."""
        obs = self._obs.get(agent)
        if obs is None:
            seat = _seat(agent)
            view = self.backend.view(seat)
            acting = self.backend.acting(seat) if self.backend.turn() == seat else None
            cell = first_unit(view, acting[0]) if acting else None
            mask = action_mask(acting[1]) if acting and cell is not None else np.zeros(9, dtype=np.int8)
            obs = self._obs[agent] = {"observation": encode_view(view, cell), "action_mask": mask}
        return obs

    def render(self) -> str | np.ndarray | None:
        """``"ansi"``: the board as text; ``"rgb_array"``: ``(16H, 16W, 3) uint8``. The
        local env draws the whole board, the remote one the view of its first seat."""
        if self.render_mode is None:
            return None
        view = self.backend.spectator_view()
        return to_text(view) if self.render_mode == "ansi" else to_rgb(view)

    def close(self) -> None:
        """Close the remote client (nothing to do locally)."""
        closer = getattr(self.backend, "close", None)
        if closer is not None:
            closer()

    # -- save, restore, copy (search)

    def _require_local(self, what: str) -> None:
        if not isinstance(self.backend, LocalCellWar):
            raise NotImplementedError(f"{what} needs backend='local': a game on a server cannot be rewound")

    def state(self) -> dict[str, Any]:
        """A JSON-ready snapshot: ``{"format", "config", "events": [[type, actor,
        payload], ...], "env": {agents, rewards, cumulative rewards, terminations,
        truncations, agent_selection, skip, rng}}``.

        Raises:
            NotImplementedError: a remote backend.
        """
        self._require_local("state()")
        return {
            "format": SNAPSHOT_FORMAT,
            "config": dict(self.config),
            "events": [[t, a, p] for t, a, p in self.backend.events()],
            "env": {
                "agents": list(self.agents),
                "rewards": dict(self.rewards),
                "cumulative_rewards": dict(self._cumulative_rewards),
                "terminations": dict(self.terminations),
                "truncations": dict(self.truncations),
                "agent_selection": self.agent_selection,
                "skip": self._skip_agent_selection,
                "rng": self._rng.bit_generator.state,
            },
        }

    def set_state(self, snapshot: dict[str, Any]) -> None:
        """Restore a :meth:`state` snapshot (also one that went through JSON): the events
        are folded by the engine, the bookkeeping is checked against the folded game.

        Raises:
            ValueError: another format or config, or bookkeeping that disagrees with
                the game (e.g. the agent to act is not the player whose turn it is);
                the env is unchanged then.
            NotImplementedError: a remote backend.
        """
        self._require_local("set_state()")
        if not isinstance(snapshot, dict) or snapshot.get("format") != SNAPSHOT_FORMAT:
            raise ValueError(f"not a {SNAPSHOT_FORMAT} snapshot")
        config = dict(snapshot.get("config") or {})
        if {k: config.get(k) for k in ("width", "height", "players")} != {
            k: self.config[k] for k in ("width", "height", "players")
        }:
            raise ValueError(f"snapshot of a {config} game; this env is {self.config}")
        env = snapshot["env"]
        backend = self.backend.copy()
        backend.load(snapshot["events"])
        selection, agents = env["agent_selection"], list(env["agents"])
        if selection not in agents and agents:
            raise ValueError(f"agent_selection {selection!r} is not one of the agents {agents}")
        dead = env["terminations"].get(selection) or env["truncations"].get(selection)
        turn = backend.turn()
        if agents and not dead and _agent(turn) != selection:
            raise ValueError(f"the snapshot says {selection} acts but the game says player {turn}")
        self.backend = backend
        self.config["start"] = config.get("start", self.config["start"])
        self.config["max_rounds"] = int(config.get("max_rounds", self.config["max_rounds"]))
        self.agents = agents
        self.rewards = {a: float(v) for a, v in env["rewards"].items()}
        self._cumulative_rewards = {a: float(v) for a, v in env["cumulative_rewards"].items()}
        self.terminations = {a: bool(v) for a, v in env["terminations"].items()}
        self.truncations = {a: bool(v) for a, v in env["truncations"].items()}
        self.infos = {a: {} for a in agents}
        self.agent_selection = selection
        self._skip_agent_selection = env.get("skip")
        self._rng = np.random.default_rng()
        self._rng.bit_generator.state = env["rng"]
        self._obs = {}

    def clone(self) -> CellWarEnv:
        """An independent copy at this point (shares the immutable engine state; no
        replay), for rollouts.

        Raises:
            NotImplementedError: a remote backend.
        """
        self._require_local("clone()")
        other = copy.copy(self)
        other.backend = self.backend.copy()
        other.config = dict(self.config)
        other.agents = list(self.agents)
        for name in ("rewards", "_cumulative_rewards", "terminations", "truncations", "infos", "_obs"):
            setattr(other, name, dict(getattr(self, name)))
        other._rng = copy.deepcopy(self._rng)
        return other

    def legal_actions(self) -> list[int]:
        """Indices the current agent may play now (empty for a dead step)."""
        agent = self.agent_selection
        if self.terminations.get(agent) or self.truncations.get(agent):
            return []
        acting = self.backend.acting(_seat(agent))
        return [] if acting is None else sorted(VECTORS.index(v) for v in acting[1])


def cellwar_env(**config: Any) -> CellWarEnv:
    """A CellWar AEC environment; ``config`` as :class:`CellWarEnv` (e.g. ``width=8,
    height=8, players=2, start="random", render_mode="ansi"``, or ``backend="remote",
    url="http://localhost:8000"``)."""
    return CellWarEnv(**config)
