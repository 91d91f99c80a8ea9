"""CellWar's ``spectators`` config field (engine/cellwar/config.py, docs/spectators.md):
``"finished"`` by default and left out of the normalised config (old logs keep their
bytes and hashes), ``"live"`` recorded, refused in a rated game; the policy the session
acts on (engine/policy.py): a running game admits delayed spectators only when live."""

from __future__ import annotations

import math

import pytest

from engine import api as engine
from engine.cellwar.config import config_from_dict, config_to_dict
from engine.errors import GameError
from engine.policy import SPECTATOR_DELAY_MIN_S, policy


def test_the_default_is_finished_and_is_not_recorded() -> None:
    for given in ({}, {"spectators": None}, {"spectators": "finished"}):
        config = config_from_dict(given)
        assert config.spectators == "finished" and not config.live_spectators
        assert "spectators" not in config_to_dict(config)
    assert config_to_dict(config_from_dict({})) == config_to_dict(config_from_dict({"spectators": "finished"}))


def test_live_is_recorded_and_round_trips() -> None:
    config = config_from_dict({"spectators": "live", "turn_time_s": 60})
    assert config_to_dict(config)["spectators"] == "live"
    assert config_from_dict(config_to_dict(config)) == config


@pytest.mark.parametrize("value", ["always", "", 1, True, ["live"]])
def test_an_unknown_value_is_invalid_config(value) -> None:
    with pytest.raises(GameError) as err:
        config_from_dict({"spectators": value})
    assert err.value.code == "INVALID_CONFIG"


def test_live_spectators_in_a_rated_game_are_refused() -> None:
    with pytest.raises(GameError) as err:
        config_from_dict({"spectators": "live", "rated": True})
    assert err.value.code == "LIVE_SPECTATORS_RATED"
    assert config_from_dict({"spectators": "finished", "rated": True}).rated


def _started(config: dict) -> object:
    _, state = engine.decide(
        None, "create", 0, {"kind": "cellwar", "config": {"width": 8, "height": 8, **config}}
    )
    for name in ("a", "b"):
        _, state = engine.decide(state, "join", 0, {"name": name})
    return state


def test_the_policy_admits_delayed_spectators_of_a_running_game_only_when_live() -> None:
    hidden, live = _started({}), _started({"spectators": "live"})
    assert hidden.phase == live.phase == "playing"
    assert math.isinf(policy(hidden).spectator_delay_min_s)
    assert policy(live).spectator_delay_min_s == SPECTATOR_DELAY_MIN_S
    assert not policy(hidden).spectators_live and not policy(live).spectators_live
    assert policy(hidden).log_private and policy(live).log_private
