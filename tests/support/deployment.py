"""The files under deploy/, read as the deployment tests (tests/unit/deploy/) check them."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from service.ops.settings import Settings

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
K8S = DEPLOY / "k8s"


class _Reading(dict[str, str]):
    """An empty environment that notes every name looked up in it."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.names.add(key)
        return default


def setting_names() -> frozenset[str]:
    """Every environment variable `Settings.from_env` reads (service/ops/settings.py)."""
    environment = _Reading()
    Settings.from_env(environment)
    return frozenset(environment.names)


def image_env() -> dict[str, str]:
    """The variables the image's runtime stage (deploy/Dockerfile) sets with ENV."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    runtime = text.split("\nFROM ")[-1]
    found: dict[str, str] = {}
    for line in runtime.splitlines():
        if line.startswith("ENV "):
            for pair in line.split()[1:]:
                name, _, value = pair.partition("=")
                found[name] = value
    return found


# ${NAME}, ${NAME:-default}, ${NAME-default}, ${NAME:?error}, ${NAME?error}
_INTERPOLATION = re.compile(r"\$\{(?P<name>\w+)(?:(?P<op>:?[-?])(?P<rest>[^}]*))?\}")


def compose_variables() -> set[str]:
    """The variables deploy/compose.yaml interpolates."""
    text = (DEPLOY / "compose.yaml").read_text()
    return {match["name"] for match in _INTERPOLATION.finditer(text)}


def compose_file(variables: dict[str, str]) -> dict[str, Any]:
    """deploy/compose.yaml as Compose reads it: variables interpolated, then YAML (with its
    anchors and merge keys) loaded."""

    def value(match: re.Match[str]) -> str:
        given = variables.get(match["name"])
        if given is None and (match["op"] or "").endswith("?"):
            raise KeyError(f"compose.yaml needs {match['name']}: {match['rest']}")
        return given if given is not None else (match["rest"] or "")

    text = _INTERPOLATION.sub(value, (DEPLOY / "compose.yaml").read_text())
    loaded: dict[str, Any] = yaml.safe_load(text)
    return loaded


@cache
def manifests() -> tuple[tuple[str, dict[str, Any]], ...]:
    """Every Kubernetes object in deploy/k8s/ with the file it is in (the kustomization is
    kustomize's own file, not an object). Read once: copy an object before changing it."""
    found = []
    for path in sorted(K8S.glob("*.yaml")):
        if path.name != "kustomization.yaml":
            found += [(path.name, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    return tuple(found)


def manifest(kind: str, name: str) -> dict[str, Any]:
    (found,) = [
        doc for _, doc in manifests() if doc["kind"] == kind and doc["metadata"]["name"] == name
    ]
    return found
