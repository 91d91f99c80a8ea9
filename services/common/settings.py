"""One settings class for every CellWar process: environment variables ``CELLWAR_*``."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """Configuration read from ``CELLWAR_*`` environment variables (and a ``.env`` file).

    Attributes:
        nats_url: NATS server URL (``CELLWAR_NATS_URL``).
        engine_addr: host:port of the engine gRPC service.
        session_addr: host:port of the session gRPC service.
        http_host / http_port: where the gateway listens.
        secret: HMAC key that signs player tokens; set it in production.
        log_format: ``json`` (services) or ``console`` (people).
        log_level: ``debug``, ``info``, ``warning``, ``error``.
        generations_per_second: base Life tick rate (DESIGN §3: 8), times the speed multiplier.
        instance_id: name of this session instance in the lease bucket.
        lease_ttl_s: seconds a ticking lease lives without renewal (seconds).
        data_dir: where the local runner keeps NATS data.
        web_dir: folder of the browser client served at ``/`` (empty: the packaged one).
    """

    model_config = SettingsConfigDict(env_prefix="CELLWAR_", env_file=".env", extra="ignore")

    nats_url: str = "nats://127.0.0.1:4222"
    engine_addr: str = "127.0.0.1:50051"
    session_addr: str = "127.0.0.1:50052"
    http_host: str = "127.0.0.1"
    http_port: int = 8000
    secret: str = "dev-secret-change-me"
    log_format: str = "json"
    log_level: str = "info"
    generations_per_second: float = Field(8.0, gt=0)
    instance_id: str = "session-1"
    lease_ttl_s: float = Field(10.0, gt=0)
    data_dir: str = ".data"
    web_dir: str = ""


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (read once)."""
    return Settings()
