"""Training is reproducible from its seed (python -m client.rl.train), and what it writes
is a policy the bots load."""

from __future__ import annotations

import io

import numpy as np

from client.bots import load_policy
from client.rl.features import FEATURES
from client.rl.train import main, train

TINY = {"generations": 1, "popsize": 4, "games": 2, "holdout": 2}


def test_the_same_seed_trains_the_same_weights():
    first = train(seed=3, log=io.StringIO(), **TINY)
    again = train(seed=3, log=io.StringIO(), **TINY)
    other = train(seed=4, log=io.StringIO(), **TINY)
    assert first["weights"].shape == (FEATURES,)
    assert np.array_equal(first["weights"], again["weights"]) and first["history"] == again["history"]
    assert not np.array_equal(first["weights"], other["weights"])


def test_the_written_artifact_loads_as_the_trained_policy(tmp_path, capsys):
    out = tmp_path / "policy.npz"
    assert main(["--kind", "cellwar", "--seed", "1", "--generations", "1", "--popsize", "4",
                 "--games", "2", "--holdout", "2", "--out", str(out)]) == 0
    policy = load_policy("trained", path=out)
    assert policy.meta["seed"] == 1 and policy.meta["generations"] == 1
    assert policy.weights.shape == (FEATURES,)
    assert "wrote" in capsys.readouterr().err


def test_help_shows_defaults_and_the_default_output_is_not_the_shipped_policy(capsys):
    import pytest

    from client.rl.train import DEFAULT_OUT

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "(default: 12)" in text and f"(default: {DEFAULT_OUT})" in text
    assert DEFAULT_OUT != "client/rl/policies/cellwar.npz"
