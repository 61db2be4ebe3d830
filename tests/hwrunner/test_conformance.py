"""The BFRuntime driver through the SDE's real client, over real gRPC, against an in-memory
BFRuntime server serving bf-rt.json files shaped as bf-p4c emits them."""

from __future__ import annotations

import pytest

from hwrunner.push import push
from hwrunner.targets import open_target
from tests.hwrunner.conformance import (  # noqa: F401 (fixtures)
    sde_client,
    sde_install,
    serve,
    sized,
    target,
)
from tests.hwrunner.plans import make_plan

PLAN_A = make_plan([(10, 2), (11, 3), (12, 1), (13, 4)])


@pytest.mark.parametrize("p4_16", [False, True], ids=["p4_14", "p4_16"])
def test_push_and_repush(serve, profile, p4_16):
    server = serve(p4_16=p4_16)
    prof = sized(profile)
    driver = open_target(target(server), prof)
    try:
        result = push(driver, prof, PLAN_A)
        assert result.verified and result.outcome == "installed"
        assert [server.register("left_bound_register")[p][1] for p in range(4)] == [1] * 4
        again = push(driver, prof, PLAN_A)
        assert again.operations == 0 and again.verified
    finally:
        driver.close()
