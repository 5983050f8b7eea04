"""deploy/compose.yaml: valid against the Compose Specification's schema (vendored in
compose-spec/), with every service issue 20 asks for, and settings the service would take."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft201909Validator

from service.ops.settings import Settings
from tests.support.deployment import DEPLOY, compose_file, compose_variables, setting_names

pytestmark = pytest.mark.unit

SCHEMA = json.loads((Path(__file__).with_name("compose-spec") / "compose-spec.json").read_text())


def example_variables() -> dict[str, str]:
    """The variables deploy/env.example names (set or commented out), each given a value."""
    names = re.findall(r"^#?\s*([A-Z][A-Z0-9_]*)=", (DEPLOY / "env.example").read_text(), re.M)
    return {name: f"value{i}" for i, name in enumerate(names)}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return compose_file(example_variables())


def schema_errors(document: dict[str, Any]) -> list[str]:
    Draft201909Validator.check_schema(SCHEMA)
    found = Draft201909Validator(SCHEMA).iter_errors(document)
    return sorted(f"{list(error.absolute_path)}: {error.message}" for error in found)


def fairway_services(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The services that run the image built from deploy/Dockerfile."""
    return {
        name: service
        for name, service in compose["services"].items()
        if service.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
    }


def role(service: dict[str, Any]) -> str:
    """What a Fairway service runs: its command, or `serve` (the image's default)."""
    return str(service.get("command", ["serve"])[0])


def test_the_compose_file_is_valid_against_the_compose_schema(compose: dict[str, Any]) -> None:
    assert schema_errors(compose) == []


def test_the_schema_check_catches_a_misspelt_key(compose: dict[str, Any]) -> None:
    broken = copy.deepcopy(compose)
    broken["services"]["api-1"]["depend_on"] = broken["services"]["api-1"].pop("depends_on")
    assert any("depend_on" in error for error in schema_errors(broken))


def test_every_variable_it_interpolates_is_in_env_example() -> None:
    assert compose_variables() <= set(example_variables())


def test_it_runs_every_service_the_issue_asks_for(compose: dict[str, Any]) -> None:
    services = compose["services"]
    images = {name: str(service.get("image", "")) for name, service in services.items()}
    assert any(image.startswith("postgres:") for image in images.values())
    assert any(image.startswith("redis:") for image in images.values())
    roles = [role(service) for service in fairway_services(compose).values()]
    assert sorted(roles) == ["migrate", "projector", "referee", "serve", "serve"]
    (balancer,) = [name for name, image in images.items() if image.startswith("nginx:")]
    apis = {name for name, s in fairway_services(compose).items() if role(s) == "serve"}
    assert set(services[balancer]["depends_on"]) == apis


def test_the_load_balancer_sends_to_both_api_instances(compose: dict[str, Any]) -> None:
    config = (DEPLOY / "nginx.conf").read_text()
    (upstream,) = re.findall(r"upstream fairway \{(.*?)\}", config, re.S)
    servers = set(re.findall(r"server ([\w-]+):(\d+)", upstream))
    apis = {name for name, s in fairway_services(compose).items() if role(s) == "serve"}
    assert servers == {(name, str(Settings().port)) for name in apis}
    (mount,) = compose["services"]["lb"]["volumes"]
    assert mount.startswith("./nginx.conf:")


def test_the_api_waits_for_a_successful_migration(compose: dict[str, Any]) -> None:
    migrations = [n for n, s in fairway_services(compose).items() if role(s) == "migrate"]
    for name, service in fairway_services(compose).items():
        if role(service) in ("serve", "projector", "referee"):
            assert service["depends_on"][migrations[0]] == {
                "condition": "service_completed_successfully"
            }, name


def test_every_fairway_variable_it_sets_is_a_setting(compose: dict[str, Any]) -> None:
    for name, service in fairway_services(compose).items():
        assert set(service["environment"]) <= setting_names(), name


def test_every_service_environment_is_one_the_service_accepts(
    compose: dict[str, Any], read_settings: Callable[[Mapping[str, str]], Settings]
) -> None:
    for service in fairway_services(compose).values():
        settings = read_settings(service["environment"])
        assert settings.database_url is not None
        if role(service) == "serve":
            assert settings.redis_url is not None
            assert settings.referee is False
            assert settings.round_keeper is True
            assert settings.admin_key is not None
            assert settings.receipt_key is not None
        if role(service) == "projector":
            assert settings.redis_url is not None


def test_the_api_reads_its_receipt_key_from_a_compose_secret(compose: dict[str, Any]) -> None:
    for service in fairway_services(compose).values():
        if role(service) == "serve":
            path = service["environment"]["FAIRWAY_RECEIPT_KEY_FILE"]
            assert path.removeprefix("/run/secrets/") in service["secrets"]
            assert set(service["secrets"]) <= set(compose["secrets"])


def test_the_api_trusts_the_load_balancer_and_nothing_else(compose: dict[str, Any]) -> None:
    lb_address = compose["services"]["lb"]["networks"]["front"]["ipv4_address"]
    for service in fairway_services(compose).values():
        if role(service) == "serve":
            assert service["environment"]["FAIRWAY_TRUSTED_PROXIES"] == lb_address
