"""No forgeable tokens (docs/hosting.md "Security and limits"): the generated secret in the
data folder, known defaults refused, dated tokens that expire, renewal. Pure code and the
gateway process; the last tests run a real gateway in front of the real stack."""

from __future__ import annotations

import concurrent.futures
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from itsdangerous import URLSafeSerializer, URLSafeTimedSerializer

from client.sdk import AsyncCellWarClient
from gateway import tokens
from gateway.app import create_app
from gateway.errors import ApiError
from gateway.tokens import DEFAULT_TOKEN_MAX_AGE_S, TOKEN_SALT, TokenSigner
from services.common.settings import Settings
from services.common.signing_key import (
    KNOWN_DEFAULT_SECRETS,
    SECRET_FILE,
    SecretError,
    load_or_create_secret,
    resolve_secret,
)
from tests.api.conftest import TEST_SECRET, serve

ROOT = Path(__file__).resolve().parents[2]
DAY = 24 * 3600.0

# --------------------------------------------------------------------------- the secret


def test_without_a_secret_one_is_generated_once_in_the_data_folder(tmp_path: Path):
    first = resolve_secret(None, tmp_path)
    path = tmp_path / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) == 64 and first == path.read_text().strip()
    assert resolve_secret(None, tmp_path) == first  # kept, not regenerated
    assert resolve_secret(None, tmp_path / "other") != first  # another folder, another key
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", SECRET_FILE]  # no temp file


def _load(folder: str) -> str:
    return load_or_create_secret(folder)


def test_processes_starting_together_on_one_folder_share_one_secret(tmp_path: Path):
    """Eight processes race to create the file: one wins, all read its secret."""
    with concurrent.futures.ProcessPoolExecutor(8) as pool:
        secrets = list(pool.map(_load, [str(tmp_path)] * 8))
    assert len(set(secrets)) == 1
    assert [p.name for p in tmp_path.iterdir()] == [SECRET_FILE]


def test_two_gateways_on_one_data_folder_accept_each_others_tokens(tmp_path: Path):
    one = create_app(Settings(data_dir=str(tmp_path), web_dir="/nonexistent"))
    two = create_app(Settings(data_dir=str(tmp_path), web_dir="/nonexistent"))
    token = one.state.signer.issue("g1", 2)
    assert two.state.signer.verify(token, "g1").player_id == 2
    elsewhere = create_app(Settings(data_dir=str(tmp_path / "b"), web_dir="/nonexistent"))
    with pytest.raises(ApiError) as err:
        elsewhere.state.signer.verify(token, "g1")
    assert (err.value.status, err.value.code) == (401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    "secret",
    sorted(KNOWN_DEFAULT_SECRETS) + ["  dev-secret-change-me ", "CHANGE-ME", "   "],
)
def test_a_known_default_secret_is_refused_at_start(secret: str):
    with pytest.raises(SecretError) as err:
        create_app(Settings(secret=secret, web_dir="/nonexistent"))
    assert "CELLWAR_SECRET" in str(err.value) and "publicly known" in str(err.value)
    with pytest.raises(SecretError):
        TokenSigner(secret)


def test_a_secret_file_others_can_read_is_refused(tmp_path: Path):
    resolve_secret(None, tmp_path)
    (tmp_path / SECRET_FILE).chmod(0o644)
    with pytest.raises(SecretError) as err:
        resolve_secret(None, tmp_path)
    assert "chmod 600" in str(err.value)


def test_a_hand_written_weak_secret_file_is_refused(tmp_path: Path):
    path = tmp_path / SECRET_FILE
    path.write_text("change-me\n")
    path.chmod(0o600)
    with pytest.raises(SecretError) as default:
        resolve_secret(None, tmp_path)
    assert "publicly known" in str(default.value)
    path.write_text("short-but-not-known\n")
    with pytest.raises(SecretError) as short:
        resolve_secret(None, tmp_path)
    assert "at least 32" in str(short.value)


def test_the_gateway_process_stops_with_a_clear_error_on_a_default_secret(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELLWAR_")}
    env.update(
        CELLWAR_SECRET="dev-secret-change-me",
        CELLWAR_DATA_DIR=str(tmp_path),
        CELLWAR_HTTP_PORT="9",
        CELLWAR_LOG_FORMAT="json",
    )
    done = subprocess.run(
        [sys.executable, "-m", "gateway"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert "gateway_refused_secret" in done.stderr and "publicly known default" in done.stderr


# --------------------------------------------------------------------------- tokens


class Clock:
    """A settable clock (seconds since the epoch)."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_token_expires_after_its_max_age():
    clock = Clock(1_800_000_000.0)
    signer = TokenSigner("k" * 40, max_age_s=DEFAULT_TOKEN_MAX_AGE_S, clock=clock)
    token = signer.issue("g1", 1)
    clock.now += 7 * DAY - 1
    assert signer.verify(token, "g1").player_id == 1
    clock.now += 2
    with pytest.raises(ApiError) as err:
        signer.verify(token, "g1")
    assert (err.value.status, err.value.code) == (401, "TOKEN_EXPIRED")
    assert signer.player_of(token) is None  # an expired token keys no rate-limit bucket


def test_remembered_tokens_are_checked_like_new_ones():
    """A token verified once is remembered (not HMAC-checked again), but its game, its age
    and a forged copy are checked as before; the memory is bounded."""
    clock = Clock(1_800_000_000.0)
    signer = TokenSigner("k" * 40, max_age_s=100.0, clock=clock)
    token = signer.issue("g1", 2)
    assert signer.verify(token, "g1") == signer.verify(token, "g1")
    with pytest.raises(ApiError) as err:
        signer.verify(token, "g2")
    assert (err.value.status, err.value.code) == (403, "FORBIDDEN")
    forged = token[:-2] + ("AA" if token[-2:] != "AA" else "BB")
    with pytest.raises(ApiError) as err:
        signer.verify(forged, "g1")
    assert err.value.code == "UNAUTHORIZED"
    clock.now += 101
    with pytest.raises(ApiError) as err:
        signer.verify(token, "g1")
    assert err.value.code == "TOKEN_EXPIRED"
    for i in range(tokens.VERIFIED_CACHE_SIZE + 10):
        signer.player_of(signer.issue(f"g{i}", 1))
    assert len(signer._verified) == tokens.VERIFIED_CACHE_SIZE


def test_a_token_dated_far_ahead_is_refused_a_little_ahead_is_taken():
    clock = Clock(1_800_000_000.0)
    ahead = TokenSigner("k" * 40, clock=Clock(clock.now + 60)).issue("g1", 1)
    assert TokenSigner("k" * 40, clock=clock).verify(ahead, "g1").player_id == 1
    far = TokenSigner("k" * 40, clock=Clock(clock.now + DAY)).issue("g1", 1)
    with pytest.raises(ApiError) as err:
        TokenSigner("k" * 40, clock=clock).verify(far, "g1")
    assert (err.value.status, err.value.code) == (401, "UNAUTHORIZED")


def test_an_undated_token_of_the_old_shape_is_expired():
    old = URLSafeSerializer("k" * 40, salt=TOKEN_SALT).dumps({"g": "g1", "p": 1})
    with pytest.raises(ApiError) as err:
        TokenSigner("k" * 40).verify(old, "g1")
    assert (err.value.status, err.value.code) == (401, "TOKEN_EXPIRED")


# --------------------------------------------------------------------------- on the stack


@pytest.mark.integration
async def test_tokens_signed_with_any_known_default_are_refused(gateway):
    async with AsyncCellWarClient(gateway, timeout=30) as api, httpx.AsyncClient(
        base_url=gateway, timeout=30
    ) as http:
        game_id = await api.create_game("life", {"width": 20, "height": 20})
        await api.join(game_id, "alice")
        for secret in sorted(KNOWN_DEFAULT_SECRETS):
            forged = URLSafeTimedSerializer(secret, salt=TOKEN_SALT).dumps({"g": game_id, "p": 1})
            answer = await http.get(f"/game/{game_id}/state", headers={"Authorization": f"Bearer {forged}"})
            assert answer.status_code == 401, (secret, answer.text)
            assert answer.json()["error"]["code"] == "UNAUTHORIZED"


@pytest.mark.integration
async def test_an_expired_token_is_401_and_a_live_one_renews(stack):
    settings = Settings(session_addr=stack.session_target, secret=TEST_SECRET, token_max_age_s=3600)
    async with serve(create_app(settings)) as url, AsyncCellWarClient(url, timeout=30) as api, httpx.AsyncClient(
        base_url=url, timeout=30
    ) as http:
        game_id = await api.create_game("life", {"width": 20, "height": 20})
        seat = await api.join(game_id, "alice")
        stale = TokenSigner(TEST_SECRET, clock=lambda: time.time() - 3601).issue(game_id, seat.player_id)
        for method, path in (("GET", "state"), ("POST", "end_turn"), ("POST", "token")):
            answer = await http.request(method, f"/game/{game_id}/{path}", headers={"Authorization": f"Bearer {stale}"})
            assert answer.status_code == 401 and answer.json()["error"]["code"] == "TOKEN_EXPIRED", answer.text
        old = TokenSigner(TEST_SECRET, clock=lambda: time.time() - 3000).issue(game_id, seat.player_id)
        renewed = await http.post(f"/game/{game_id}/token", headers={"Authorization": f"Bearer {old}"})
        assert renewed.status_code == 200, renewed.text
        assert renewed.json()["player_id"] == seat.player_id
        fresh = renewed.json()["player_token"]
        assert fresh != old
        assert (await api.state(game_id, fresh))["you"] == seat.player_id
