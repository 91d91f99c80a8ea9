"""The Kubernetes base (deploy/k8s; docs/hosting.md "Kubernetes"): every manifest validates
against the Kubernetes 1.30 schemas (kubernetes-validate, strict), the kustomization lists
every file, and the pieces the hosting docs name are there with the right wiring."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"

#: The Kubernetes version the manifests are validated for (pinned).
KUBERNETES_VERSION = "1.30.0"

#: Kinds that live outside a namespace.
CLUSTER_SCOPED = {"Namespace"}


def kustomization() -> dict[str, Any]:
    return yaml.safe_load((K8S / "kustomization.yaml").read_text())


def manifest_files() -> list[Path]:
    return sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def build() -> list[dict[str, Any]]:
    """What ``kustomize build deploy/k8s`` gives, by a small YAML walk: the resources in
    order, the namespace set on namespaced objects, the image tags applied."""
    k = kustomization()
    tags = {i["name"]: i["newTag"] for i in k.get("images", [])}
    out = []
    for name in k["resources"]:
        for doc in documents(K8S / name):
            if doc["kind"] not in CLUSTER_SCOPED:
                doc["metadata"]["namespace"] = k["namespace"]
            for spec in _pod_specs(doc):
                for container in spec.get("containers", []):
                    image = container["image"]
                    if image in tags:
                        container["image"] = f"{image}:{tags[image]}"
            out.append(doc)
    return out


def _pod_specs(doc: dict[str, Any]) -> list[dict[str, Any]]:
    template = doc.get("spec", {}).get("template")
    return [template["spec"]] if template else []


def by_kind(docs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {d["metadata"]["name"]: d for d in docs if d["kind"] == kind}


def test_kustomization_lists_every_manifest_and_nothing_else():
    listed = kustomization()["resources"]
    assert sorted(listed) == [p.name for p in manifest_files()]
    assert len(set(listed)) == len(listed)


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: p.name)
def test_every_manifest_validates_for_kubernetes_1_30(path: Path):
    docs = documents(path)
    assert docs, f"{path.name} holds no manifest"
    for doc in docs:
        # strict: unknown fields are errors too. Raises ValidationError with the path.
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)


def test_the_built_base_validates_and_matches_kustomize():
    docs = build()
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
    assert {d["metadata"].get("namespace") for d in docs if d["kind"] != "Namespace"} == {"cellwar"}
    kubectl = shutil.which("kubectl")
    if kubectl:  # the real kustomize agrees with the walk on what the base holds
        built = subprocess.run([kubectl, "kustomize", str(K8S)], capture_output=True, text=True, check=True)
        real = [d for d in yaml.safe_load_all(built.stdout) if d]
        assert sorted((d["kind"], d["metadata"]["name"]) for d in real) == sorted(
            (d["kind"], d["metadata"]["name"]) for d in docs
        )


def test_nats_is_a_three_node_jetstream_cluster_on_volumes():
    docs = build()
    sts = by_kind(docs, "StatefulSet")["nats"]
    assert sts["spec"]["replicas"] == 3
    assert sts["spec"]["serviceName"] == "nats-headless"
    assert by_kind(docs, "Service")["nats-headless"]["spec"]["clusterIP"] == "None"
    claim = sts["spec"]["volumeClaimTemplates"][0]
    mounts = {m["name"]: m["mountPath"] for m in sts["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]}
    assert mounts[claim["metadata"]["name"]] == "/data"
    conf = by_kind(docs, "ConfigMap")["nats-config"]["data"]["nats.conf"]
    assert "sync_interval: always" in conf and "store_dir: /data" in conf
    for k in range(3):
        assert f"nats-route://nats-{k}.nats-headless:6222" in conf
    assert by_kind(docs, "PodDisruptionBudget")["nats"]["spec"]["minAvailable"] == 2
    config = by_kind(docs, "ConfigMap")["cellwar-config"]["data"]
    assert config["CELLWAR_STREAM_REPLICAS"] == "3"
    assert config["CELLWAR_NATS_URL"].count("nats://") == 3


def test_services_have_probes_requests_budgets_and_autoscalers():
    docs = build()
    deployments = by_kind(docs, "Deployment")
    assert set(deployments) >= {"engine", "session", "gateway"}
    for name, port in (("engine", 50051), ("session", 50052)):
        c = deployments[name]["spec"]["template"]["spec"]["containers"][0]
        assert c["readinessProbe"]["grpc"]["port"] == port
        assert c["livenessProbe"]["grpc"]["port"] == port
    gw = deployments["gateway"]["spec"]["template"]["spec"]["containers"][0]
    assert gw["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert gw["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for d in deployments.values():
        for c in d["spec"]["template"]["spec"]["containers"]:
            assert c["resources"]["requests"]["cpu"] and c["resources"]["requests"]["memory"]
    assert set(by_kind(docs, "PodDisruptionBudget")) >= {"nats", "engine", "session", "gateway"}
    hpas = by_kind(docs, "HorizontalPodAutoscaler")
    assert {h["spec"]["scaleTargetRef"]["name"] for h in hpas.values()} == {"engine", "gateway"}
    assert all(h["apiVersion"] == "autoscaling/v2" for h in hpas.values())
    assert set(by_kind(docs, "Service")) >= {"engine", "session", "gateway", "nats"}


def test_each_session_pod_is_its_own_instance():
    session = build_deployment("session")
    env = {e["name"]: e for e in session["env"]}
    assert env["CELLWAR_INSTANCE_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"


def build_deployment(name: str) -> dict[str, Any]:
    return by_kind(build(), "Deployment")[name]["spec"]["template"]["spec"]["containers"][0]


def test_the_token_secret_comes_from_a_secret_never_committed():
    gateway = build_deployment("gateway")
    env = {e["name"]: e for e in gateway["env"]}
    assert env["CELLWAR_SECRET"]["valueFrom"]["secretKeyRef"] == {"name": "cellwar-secret", "key": "CELLWAR_SECRET"}
    docs = build()
    assert not by_kind(docs, "Secret"), "no Secret with a value belongs in the repository"
    assert "CELLWAR_SECRET" not in by_kind(docs, "ConfigMap")["cellwar-config"]["data"]


def test_ingress_reaches_the_gateways_with_websocket_timeouts():
    ingress = by_kind(build(), "Ingress")["cellwar"]
    notes = ingress["metadata"]["annotations"]
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    assert int(notes["nginx.ingress.kubernetes.io/proxy-send-timeout"]) >= 3600
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == "gateway"


def test_images_are_the_ones_make_images_builds():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    images = {
        c["image"]
        for d in build()
        for spec in _pod_specs(d)
        for c in spec["containers"]
    }
    assert images == {f"cellwar/platform:{version}", f"cellwar/nats:{version}"}
