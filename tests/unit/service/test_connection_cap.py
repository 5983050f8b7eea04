"""The connection cap fits under the descriptor limit, leaving room for the pool and the rest."""

from __future__ import annotations

import resource

import pytest

from service.http.connections import RESERVED_DESCRIPTORS, connection_cap, raise_descriptor_limit

pytestmark = pytest.mark.unit


def test_the_wanted_cap_stands_when_descriptors_allow_it() -> None:
    assert connection_cap(4096, 65536, pool_size=10) == 4096


def test_the_cap_is_lowered_to_leave_descriptors_for_the_pool_and_the_process() -> None:
    assert connection_cap(4096, 1024, pool_size=10) == 1024 - RESERVED_DESCRIPTORS - 10


def test_the_soft_descriptor_limit_is_raised_to_the_hard_one() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft = raise_descriptor_limit()
    assert soft == resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if hard != resource.RLIM_INFINITY:
        assert soft == hard
