"""The images of `make images`: built here with no registry pull, up to date on a
second build, non-root, with health checks; the NATS image holds the repository's
JetStream config."""

from __future__ import annotations

import io
import tarfile

import docker
import pytest

from deploy.images import INPUTS_LABEL, ROOT, ImageNames, build_all, image_inspect

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def client():
    c = docker.from_env()
    yield c
    c.close()


def test_no_layer_comes_from_a_registry(images: ImageNames, client):
    base = client.images.get(images.base)
    base_history = base.history()
    assert len(base_history) == 1 and base_history[0]["Comment"].startswith("debootstrap --variant=minbase")
    for tag in (images.base, images.nats, images.platform, images.nginx):
        image = client.images.get(tag)
        assert image.attrs["RepoDigests"] == [], f"{tag} came from a registry"
        assert image.labels.get(INPUTS_LABEL), tag
    for tag in (images.platform, images.nginx):
        ids = [layer["Id"] for layer in client.images.get(tag).history()]
        assert ids[-1] == base.id, f"{tag} is not built on {images.base}"
    nats_history = client.images.get(images.nats).history()
    assert "/nats-server" in nats_history[-1]["CreatedBy"]  # FROM scratch: the binary first


def test_a_second_build_finds_every_image_up_to_date(images: ImageNames, capfd):
    before = {tag: image_inspect(tag)["Id"] for tag in (images.base, images.nats, images.platform, images.nginx)}
    capfd.readouterr()
    build_all()
    out = capfd.readouterr().out
    assert {tag: image_inspect(tag)["Id"] for tag in before} == before
    for tag in before:
        assert f"[images] {tag}: up to date" in out
    assert "docker build" not in out and "debootstrap" not in out


def test_images_run_as_non_root_with_health_checks(images: ImageNames, client):
    platform = client.images.get(images.platform).attrs["Config"]
    assert platform["User"] == "cellwar"
    assert platform["Healthcheck"]["Test"] == ["CMD", "python", "-m", "deploy.healthcheck"]
    nginx = client.images.get(images.nginx).attrs["Config"]
    assert nginx["User"] == "cellwar"
    assert "deploy.healthcheck" in nginx["Healthcheck"]["Test"]
    nats = client.images.get(images.nats).attrs["Config"]
    assert nats["User"] == "10001:10001"
    assert "/data" in nats["Volumes"]


def test_nats_image_runs_the_repository_config(images: ImageNames, client):
    container = client.containers.create(images.nats)
    try:
        stream, _ = container.get_archive("/etc/nats/nats.conf")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            text = tar.extractfile("nats.conf").read().decode()
    finally:
        container.remove(force=True, v=True)
    assert text == (ROOT / "deploy" / "nats-single.conf").read_text()
    assert "sync_interval: always" in text and "store_dir: /data" in text
