"""A receipt key file for the deployment tests: the manifests name a mounted secret."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from service.ops.settings import Settings


@pytest.fixture
def read_settings(tmp_path: Path) -> Callable[[Mapping[str, str]], Settings]:
    """Settings from the environment a deployment file gives a process, read as the service
    reads them; the receipt key file it names (a mounted secret) is stood in for by a real
    one, so that every other value is checked as given."""
    key_file = tmp_path / "receipt-key"
    key_file.write_text(base64.b64encode(bytes(range(32))).decode())

    def read(environment: Mapping[str, str]) -> Settings:
        given = dict(environment)
        if "FAIRWAY_RECEIPT_KEY_FILE" in given:
            given["FAIRWAY_RECEIPT_KEY_FILE"] = str(key_file)
        return Settings.from_env(given)

    return read
