"""deploy/compose.yaml: valid against the Compose Specification's JSON schema and in step
with the container stack of deploy/containers.py (images, commands, environment, health
checks, the NATS volume). Pure file checks: no Docker needed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from deploy.containers import SERVICES, StackConfig, service_env
from deploy.images import ROOT, image_names

COMPOSE = ROOT / "deploy" / "compose.yaml"
SCHEMA = ROOT / "tests" / "fixtures" / "compose-spec.json"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def dockerfile_healthcheck(path: Path) -> list[str]:
    """The exec form of a Dockerfile's HEALTHCHECK CMD."""
    text = path.read_text().replace("\\\n", " ")
    match = re.search(r"^HEALTHCHECK .*?CMD (\[.*\])\s*$", text, re.MULTILINE)
    assert match, f"no HEALTHCHECK in {path}"
    return json.loads(match.group(1))


def test_compose_file_validates_against_the_compose_spec_schema(compose: dict):
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(compose, schema, cls=jsonschema.Draft7Validator)


def test_the_schema_refuses_a_broken_compose_file(compose: dict):
    schema = json.loads(SCHEMA.read_text())
    broken = {**compose, "services": {**compose["services"], "engine": {**compose["services"]["engine"], "ports": "8000"}}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema, cls=jsonschema.Draft7Validator)


def test_compose_runs_the_stack_of_deploy_containers(compose: dict):
    services = compose["services"]
    names = image_names()
    assert list(services) == list(SERVICES)
    assert services["nats"]["image"] == names.nats
    assert services["nginx"]["image"] == names.nginx
    envs = service_env(StackConfig(), "x" * 32, "10.0.0.0/24")
    for name, command in SERVICES.items():
        service = services[name]
        if command is not None:
            assert service["image"] == names.platform, name
            assert service["command"] == command, name
        # Same variables (values may be placeholders: secret, subnet, tick rate).
        assert set(service.get("environment") or {}) >= set(envs[name]) - {"CELLWAR_LOG_LEVEL"}, name
        assert service["pull_policy"] == "never", name


def test_compose_health_checks_are_the_images_own(compose: dict):
    services = compose["services"]
    platform = dockerfile_healthcheck(ROOT / "deploy" / "Dockerfile")
    nginx = dockerfile_healthcheck(ROOT / "deploy" / "Dockerfile.nginx")
    for name in ("engine", "session", "matchmaker", "gateway"):
        assert services[name]["healthcheck"]["test"] == ["CMD", *platform]
    assert services["nginx"]["healthcheck"]["test"] == ["CMD", *nginx]


def test_compose_keeps_nats_data_on_a_volume_needs_a_secret_and_trusts_only_nginx(compose: dict):
    assert "nats-data:/data" in compose["services"]["nats"]["volumes"]
    assert "nats-data" in compose["volumes"]
    secret = compose["services"]["gateway"]["environment"]["CELLWAR_SECRET"]
    assert secret.startswith("${CELLWAR_SECRET:?"), "the secret must have no default"
    assert all(p.startswith("127.0.0.1:") for p in compose["services"]["nginx"]["ports"])
    nginx_address = compose["services"]["nginx"]["networks"]["cellwar"]["ipv4_address"]
    assert compose["services"]["gateway"]["environment"]["CELLWAR_TRUSTED_PROXIES"] == nginx_address
    assert compose["networks"]["cellwar"]["ipam"]["config"][0]["subnet"].startswith("${CELLWAR_SUBNET:-172.30.57.")
