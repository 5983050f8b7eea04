"""deploy/k8s/: every manifest valid against the Kubernetes schemas (kubernetes-validate,
offline), the API probed, bounded and unprivileged, and settings the service would take."""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

import kubernetes_validate
import pytest
import yaml

from service.ops.settings import Settings
from tests.support.deployment import K8S, image_env, manifest, manifests, setting_names

pytestmark = pytest.mark.unit

# The oldest release the manifests are meant for, and the newest the validator knows.
VERSIONS = ["1.30.0", kubernetes_validate.latest_version()]


def workloads() -> list[dict[str, Any]]:
    return [doc for _, doc in manifests() if doc["kind"] in ("Deployment", "Job")]


def container(workload: dict[str, Any]) -> dict[str, Any]:
    (only,) = workload["spec"]["template"]["spec"]["containers"]
    return only


def environment(workload: dict[str, Any]) -> dict[str, str]:
    """The environment the container gets: its ConfigMaps, then its own variables, values
    from the Secret as the Secret holds them, and from the pod's own fields as a pod name."""
    found: dict[str, str] = {}
    for source in container(workload).get("envFrom", []):
        found |= manifest("ConfigMap", source["configMapRef"]["name"])["data"]
    for variable in container(workload).get("env", []):
        if "value" in variable:
            found[variable["name"]] = variable["value"]
        elif "fieldRef" in variable["valueFrom"]:
            found[variable["name"]] = "fairway-api-5d9f7c-x2k4p"
        else:
            ref = variable["valueFrom"]["secretKeyRef"]
            found[variable["name"]] = manifest("Secret", ref["name"])["stringData"][ref["key"]]
    return found


def role(workload: dict[str, Any]) -> str:
    return str(container(workload)["args"][0])


def api() -> dict[str, Any]:
    (found,) = [w for w in workloads() if role(w) == "serve"]
    return found


@pytest.mark.parametrize("version", VERSIONS)
def test_every_manifest_is_valid_for_kubernetes(version: str) -> None:
    for name, doc in manifests():
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{name}: {doc['kind']} {doc['metadata']['name']}: {error.message}")


def test_the_validation_catches_a_misspelt_field() -> None:
    broken = copy.deepcopy(api())
    probe = container(broken).pop("readinessProbe")
    container(broken)["readinesProbe"] = probe
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, VERSIONS[-1], strict=True)


def test_the_kustomization_names_every_manifest() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    files = {path.name for path in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    assert sorted(kustomization["resources"]) == sorted(files)


def test_each_process_runs_once_in_its_own_workload() -> None:
    kinds = {role(w): w["kind"] for w in workloads()}
    assert kinds == {
        "serve": "Deployment",
        "projector": "Deployment",
        "referee": "Deployment",
        "migrate": "Job",
    }
    assert len(workloads()) == len(kinds)


def test_the_api_is_probed_on_health_and_ready() -> None:
    port = container(api())["ports"][0]
    for probe, path in (("livenessProbe", "/health"), ("readinessProbe", "/ready")):
        assert container(api())[probe]["httpGet"] == {"path": path, "port": port["name"]}
    assert port["containerPort"] == Settings().port


def test_every_container_has_requests_and_limits() -> None:
    for workload in workloads():
        resources = container(workload)["resources"]
        for bound in ("requests", "limits"):
            assert set(resources[bound]) == {"cpu", "memory"}, workload["metadata"]["name"]


def test_every_pod_runs_as_a_user_that_is_not_root_on_a_read_only_root() -> None:
    data_dir = image_env()["FAIRWAY_DATA_DIR"]
    for workload in workloads():
        pod = workload["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["runAsUser"] > 0
        security = container(workload)["securityContext"]
        assert security["readOnlyRootFilesystem"] is True
        assert security["allowPrivilegeEscalation"] is False
        assert security["capabilities"]["drop"] == ["ALL"]
        if workload["kind"] == "Deployment":  # the migration writes nothing
            mounts = {m["mountPath"] for m in container(workload)["volumeMounts"]}
            assert data_dir in mounts, workload["metadata"]["name"]


def test_every_fairway_variable_they_set_is_a_setting() -> None:
    for workload in workloads():
        assert set(environment(workload)) <= setting_names(), workload["metadata"]["name"]


def test_every_environment_is_one_the_service_accepts(
    read_settings: Callable[[Mapping[str, str]], Settings],
) -> None:
    for workload in workloads():
        settings = read_settings(environment(workload))
        assert settings.database_url is not None
    served = read_settings(environment(api()))
    assert served.referee is False
    assert served.round_keeper is True
    assert served.redis_url is not None
    assert served.admin_key is not None


def test_the_receipt_key_file_is_the_secret_mounted_in_the_api() -> None:
    pod = api()["spec"]["template"]["spec"]
    path = environment(api())["FAIRWAY_RECEIPT_KEY_FILE"]
    (mount,) = [m for m in container(api())["volumeMounts"] if path.startswith(m["mountPath"])]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    items = {item["path"]: item["key"] for item in volume["secret"]["items"]}
    key = items[path.removeprefix(mount["mountPath"]).strip("/")]
    secret = manifest("Secret", volume["secret"]["secretName"])
    assert {key, "admin-key"} <= set(secret["stringData"])


def test_the_autoscaler_budget_and_service_select_the_api() -> None:
    labels = api()["spec"]["template"]["metadata"]["labels"]
    name = api()["metadata"]["name"]
    assert manifest("HorizontalPodAutoscaler", name)["spec"]["scaleTargetRef"]["name"] == name
    budget = manifest("PodDisruptionBudget", name)["spec"]["selector"]["matchLabels"]
    service = manifest("Service", name)["spec"]
    assert budget.items() <= labels.items()
    assert service["selector"].items() <= labels.items()
    assert service["ports"][0]["targetPort"] == container(api())["ports"][0]["name"]


def test_only_the_api_may_be_reached() -> None:
    policies = [doc for _, doc in manifests() if doc["kind"] == "NetworkPolicy"]
    (deny,) = [p for p in policies if p["spec"]["podSelector"] == {}]
    assert sorted(deny["spec"]["policyTypes"]) == ["Egress", "Ingress"]
    assert "ingress" not in deny["spec"]
    assert "egress" not in deny["spec"]
    opened = [p for p in policies if "ingress" in p["spec"]]
    labels = api()["spec"]["template"]["metadata"]["labels"]
    others = [
        w["spec"]["template"]["metadata"]["labels"] for w in workloads() if role(w) != "serve"
    ]
    for policy in opened:
        selected = policy["spec"]["podSelector"]["matchLabels"].items()
        assert selected <= labels.items()
        assert not any(selected <= other.items() for other in others)
        for rule in policy["spec"]["ingress"]:
            assert rule["ports"] == [{"protocol": "TCP", "port": Settings().port}]
