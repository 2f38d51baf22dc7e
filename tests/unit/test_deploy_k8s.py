"""deploy/k8s: every manifest valid against the Kubernetes schemas (offline), and the
properties the deployment depends on: no secret values, reader-only serve, Forbid, probes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from kubernetes_validate import utils as kv

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KUBERNETES_VERSIONS = ("1.30.0", kv.latest_version())
WRITER_ONLY = {"RELORE_DATABASE_URL", "GITHUB_TOKEN"}


def _docs(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _kustomization() -> dict:
    return _docs(K8S / "kustomization.yaml")[0]


def _applied() -> list[dict]:
    return [doc for name in _kustomization()["resources"] for doc in _docs(K8S / name)]


def _one(kind: str) -> dict:
    found = [d for d in _applied() if d["kind"] == kind]
    assert len(found) == 1, f"expected one {kind}, found {len(found)}"
    return found[0]


def _pod_spec(doc: dict) -> dict:
    if doc["kind"] == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return doc["spec"]["template"]["spec"]


def _env(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


MANIFESTS = sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_manifest_is_valid_against_the_kubernetes_schema(path, version):
    for doc in _docs(path):
        kv.validate(doc, version, strict=True)  # raises ValidationError with the path


def test_kustomization_lists_every_manifest_but_the_secret_example():
    listed = set(_kustomization()["resources"])
    on_disk = {p.name for p in MANIFESTS}
    assert listed == on_disk - {"secret.example.yaml"}
    assert not any(d["kind"] == "Secret" for d in _applied()), "a Secret would be applied"


def test_no_secret_values_anywhere_in_the_repository_manifests():
    for doc in _applied():
        for pod in [_pod_spec(doc)] if doc["kind"] in ("Job", "CronJob", "Deployment") else []:
            for container in pod["containers"]:
                for name, entry in _env(container).items():
                    if any(w in name for w in ("TOKEN", "URL", "PASSWORD", "KEY")):
                        assert "value" not in entry, f"{name} has a literal value"
                        assert "secretKeyRef" in entry["valueFrom"], name
    for doc in _docs(K8S / "secret.example.yaml"):
        for value in doc["stringData"].values():
            assert "CHANGE_ME" in value, "secret.example.yaml holds a placeholder only"


def test_serve_gets_the_reader_credentials_only():
    deployment = _one("Deployment")
    container = _pod_spec(deployment)["containers"][0]
    env = _env(container)
    assert env["RELORE_READER_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "relore-reader"
    # one session key for every replica, from the Secret: a rules session may move pods
    assert env["RELORE_SESSION_KEY"]["valueFrom"]["secretKeyRef"] == {
        "name": "relore-reader",
        "key": "session-key",
    }
    assert not WRITER_ONLY & set(env), "the serving pod must never see the writer"
    assert "envFrom" not in container
    assert container["command"][:2] == ["relored", "serve"]
    assert "0.0.0.0" in container["command"]


def test_serve_is_ready_only_with_its_index_and_alive_while_its_database_answers():
    """Readiness on /healthz sent a new pod searches before its index was built; liveness
    on /readyz would restart a pod for building its index."""
    container = _pod_spec(_one("Deployment"))["containers"][0]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["port"] in ("http", 8080)
    index_dir = _env(container)["RELORE_INDEX_DIR"]["value"]
    assert index_dir in {m["mountPath"] for m in container["volumeMounts"]}
    assert container["resources"]["requests"] and container["resources"]["limits"]
    service = _one("Service")
    assert service["spec"]["selector"] == _one("Deployment")["spec"]["selector"]["matchLabels"]


def test_extract_cronjob_never_overlaps_and_runs_the_loop_with_writer_credentials():
    cron = _one("CronJob")
    assert cron["spec"]["concurrencyPolicy"] == "Forbid"
    assert cron["spec"]["startingDeadlineSeconds"] > 0
    assert cron["spec"]["jobTemplate"]["spec"]["backoffLimit"] >= 0
    container = _pod_spec(cron)["containers"][0]
    assert container["command"] == ["relore-loop"]
    assert set(_env(container)) >= WRITER_ONLY
    config = _one("ConfigMap")
    assert {"configMapRef": {"name": config["metadata"]["name"]}} in container["envFrom"]
    assert "RELORE_REPOS" in config["data"]


def test_migrate_job_runs_relored_migrate_as_the_writer():
    job = _one("Job")
    container = _pod_spec(job)["containers"][0]
    assert container["command"] == ["relored", "migrate"]
    ref = _env(container)["RELORE_DATABASE_URL"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == "relore-writer"
    assert job["spec"]["backoffLimit"] >= 0


def test_every_pod_runs_as_the_image_user_without_root():
    for doc in _applied():
        if doc["kind"] not in ("Job", "CronJob", "Deployment"):
            continue
        pod = _pod_spec(doc)
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] == 10001
        for container in pod["containers"]:
            assert container["image"] == "relore"  # kustomize's images: rewrites it
            assert container["securityContext"]["allowPrivilegeEscalation"] is False


def test_a_drain_keeps_a_serve_pod_ready_and_can_still_proceed():
    budget, deployment = _one("PodDisruptionBudget"), _one("Deployment")
    assert budget["spec"]["selector"] == deployment["spec"]["selector"]
    assert 1 <= budget["spec"]["minAvailable"] < deployment["spec"]["replicas"]


def test_the_cronjob_leaves_the_search_index_to_the_serve_pods():
    """The loop's `relored index` in a CronJob pod builds an index nobody reads."""
    assert _one("ConfigMap")["data"]["RELORE_INDEX"] == "0"
