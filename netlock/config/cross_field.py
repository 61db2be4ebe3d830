"""Rules that tie several config keys together.

Each rule returns the first :class:`Problem` it finds (the dotted key to blame and what is
wrong) or None; :func:`first_problem` runs them in schema order. Field-local checks (types,
ranges, choices) are declared on the dataclasses in :mod:`netlock.config.schema`.
"""

from __future__ import annotations

from collections.abc import Callable

from netlock.config.derived import lease_problem
from netlock.config.managers import RDMA_VERB_KINDS, SERVER_KINDS
from netlock.config.schema import Config
from netlock.config.typed import Problem


def _switch(cfg: Config) -> Problem | None:
    sw = cfg.switch
    for i, arr in enumerate(sw.arrays):
        if arr.stage >= sw.stages:
            return Problem(f"switch.arrays[{i}].stage",
                           f"{arr.stage} is outside the pipeline's stages 0..{sw.stages - 1}")
    try:
        geometry = cfg.geometry
    except ValueError as exc:
        path, _, message = str(exc).partition(": ")
        return Problem(path, message)
    if sw.slots > geometry.total_slots:
        return Problem("switch.slots", f"{sw.slots} slots do not fit the register arrays, "
                       f"which hold {geometry.total_slots} in total")
    if sw.slots == 0 and cfg.servers.count == 0:
        return Problem("servers.count", "0 lock servers and 0 switch slots: nothing could "
                       "grant a lock")
    if cfg.manager.kind == "netlock" and cfg.servers.count == 0:
        reason = _overflow_possible(cfg)
        if reason:
            return Problem("servers.count", f"0 lock servers, but {reason}: a request that "
                           f"finds its lock's switch queue full would go to no server and "
                           f"the lock would stay in overflow mode (set servers.count >= 1)")
    return None


def _overflow_possible(cfg: Config) -> str | None:
    """Why a lock's switch queue could fill in a run with no lock server, or None when it
    cannot: the even split (``policy.allocation: even``) of a micro workload's locks gives
    every lock ``switch.slots // locks`` slots, and a lock has at most one queued request
    per client (a closed-loop client's transaction takes a lock once; an open-loop context
    that skips a lock it waits for, ``clients.skip_held``, sends one at a time), so a share
    of at least ``workload.clients`` slots cannot overflow. Every other plan fits locks to
    a measured or sampled concurrency, which a run can exceed."""
    wl, pol = cfg.workload, cfg.policy
    if wl.kind != "micro" or pol.allocation != "even" or pol.plan or cfg.switch.priorities > 1:
        return ("only the even split of a micro workload's locks (policy.allocation even, "
                "no plan file, one priority) bounds every lock's queue")
    if cfg.clients.send_limit_per_ms > 0 and not cfg.clients.skip_held:
        return ("open-loop contexts that do not skip a lock they wait for "
                "(clients.skip_held false) can queue any number of requests on a lock")
    locks = -(-wl.locks // pol.coarse_group)
    share = cfg.switch.slots // locks
    if share < wl.clients:
        return (f"the even split gives each of the {locks} locks {share} slots, fewer than "
                f"the {wl.clients} clients that can queue on one")
    return None


def _workload(cfg: Config) -> Problem | None:
    wl = cfg.workload
    if wl.ol_cnt_min > wl.ol_cnt_max:
        return Problem("workload.ol_cnt_min", f"must be <= workload.ol_cnt_max "
                       f"({wl.ol_cnt_max}), got {wl.ol_cnt_min}")
    if wl.kind == "trace" and not wl.trace:
        return Problem("workload.trace", "required when workload.kind is trace")
    if wl.kind != "trace" and wl.trace is not None:
        return Problem("workload.trace", f"only used when workload.kind is trace, "
                       f"but it is {wl.kind} (remove it or set it to null)")
    if wl.kind == "micro" and wl.locks_per_txn > wl.locks:
        return Problem("workload.locks_per_txn", f"a transaction cannot take "
                       f"{wl.locks_per_txn} distinct locks out of workload.locks = {wl.locks}")
    return None


def _open_loop(cfg: Config) -> Problem | None:
    cl, wl = cfg.clients, cfg.workload
    if cl.send_limit_per_ms == 0:
        if cl.skip_held:
            return Problem("clients.skip_held", "only used by open-loop clients "
                           "(clients.send_limit_per_ms > 0)")
        return None
    if wl.kind != "micro" or wl.locks_per_txn != 1 or wl.think_time_us > 0:
        return Problem("clients.send_limit_per_ms", "open-loop clients run the "
                       "microbenchmark: workload.kind micro, locks_per_txn 1, think_time_us 0")
    if cfg.manager.kind != "netlock":
        return Problem("clients.send_limit_per_ms", f"open-loop clients are modelled for "
                       f"manager.kind netlock only, not {cfg.manager.kind}")
    if wl.rate_rps > 0:
        return Problem("clients.send_limit_per_ms", "set either an open-loop send limit or "
                       "workload.rate_rps (a closed loop's cap), not both")
    if cfg.network.duplicate > 0 or cfg.network.reorder > 0:
        return Problem("clients.send_limit_per_ms", "open-loop clients are not modelled on a "
                       "network that duplicates or reorders packets")
    if any(t.quota_rps > 0 for t in cfg.tenants):
        return Problem("clients.send_limit_per_ms", "open-loop clients do not resend "
                       "deferred requests: no tenant quotas")
    return None


def _tenants(cfg: Config) -> Problem | None:
    if not cfg.tenants:
        return Problem("tenants", "at least one tenant is needed")
    seen: set[int] = set()
    rest_tenant: int | None = None
    for i, tenant in enumerate(cfg.tenants):
        path = f"tenants[{i}]"
        if tenant.id in seen:
            return Problem(f"{path}.id", f"tenant {tenant.id} is listed twice")
        seen.add(tenant.id)
        if tenant.priority >= cfg.switch.priorities:
            return Problem(f"{path}.priority", f"must be < switch.priorities "
                           f"({cfg.switch.priorities}), got {tenant.priority}")
        if tenant.start_s >= cfg.sim.end_s:
            return Problem(f"{path}.start_s", f"must be before the run ends (sim.warmup_s + "
                           f"sim.duration_s = {cfg.sim.end_s:g} s), got {tenant.start_s}")
        if tenant.clients == 0:
            if rest_tenant is not None:
                return Problem(f"{path}.clients", f"only one tenant may take the remaining "
                               f"clients (0), tenants[{rest_tenant}] already does")
            rest_tenant = i
    claimed = sum(t.clients for t in cfg.tenants)
    total = cfg.workload.clients
    if rest_tenant is None and claimed != total:
        return Problem("tenants", f"the tenants' clients add up to {claimed}, but "
                       f"workload.clients is {total}")
    if rest_tenant is not None and claimed >= total:
        return Problem(f"tenants[{rest_tenant}].clients", f"0 takes the clients other "
                       f"tenants leave, but they claim {claimed} of workload.clients = {total}")
    return None


_ENDS = "sim.warmup_s + sim.duration_s"


def _failures(cfg: Config) -> Problem | None:
    fl, end = cfg.failures, cfg.sim.end_s
    if fl.switch_fail_s is not None and fl.switch_fail_s >= end:
        return Problem("failures.switch_fail_s", f"must be before the run ends "
                       f"({_ENDS} = {end:g} s), got {fl.switch_fail_s}")
    if fl.switch_restart_s is not None:
        if fl.switch_fail_s is None:
            return Problem("failures.switch_restart_s", "a restart needs "
                           "failures.switch_fail_s")
        if not fl.switch_fail_s < fl.switch_restart_s < end:
            return Problem("failures.switch_restart_s", f"must be after failures."
                           f"switch_fail_s ({fl.switch_fail_s}) and before the run ends "
                           f"({_ENDS} = {end:g} s), got {fl.switch_restart_s}")
    for i, failure in enumerate(fl.server_failures):
        path = f"failures.server_failures[{i}]"
        if failure.server >= cfg.servers.count:
            return Problem(f"{path}.server", f"must be < servers.count "
                           f"({cfg.servers.count}), got {failure.server}")
        if failure.at_s >= end:
            return Problem(f"{path}.at_s", f"must be before the run ends "
                           f"({_ENDS} = {end:g} s), got {failure.at_s}")
    return None


def _manager(cfg: Config) -> Problem | None:
    kind = cfg.manager.kind
    if kind == "netlock":
        return None
    if kind in SERVER_KINDS and cfg.servers.count == 0:
        return Problem("servers.count", f"manager.kind {kind} keeps its locks on the lock "
                       f"servers: at least one is needed")
    fl = cfg.failures
    if fl.switch_fail_s is not None or fl.server_failures:
        return Problem("failures", f"failures are modelled for manager.kind netlock only, "
                       f"not {kind}")
    if kind in RDMA_VERB_KINDS and cfg.network.loss > 0:
        return Problem("network.loss", f"manager.kind {kind} issues RDMA verbs over reliable "
                       f"connections, whose RNIC retransmits a lost packet after its ACK "
                       f"timeout; the model has no sourced value for that delay, so a loss "
                       f"would be ignored, not measured: set network.loss=0 for {kind}")
    if any(t.quota_rps > 0 or t.priority > 0 for t in cfg.tenants):
        return Problem("tenants", f"priorities and quotas are NetLock policies; "
                       f"manager.kind {kind} has none")
    return None


RULES: tuple[Callable[[Config], Problem | None], ...] = (
    _switch, _workload, _open_loop, _tenants, _failures, _manager, lease_problem,
)


def first_problem(cfg: Config) -> Problem | None:
    """The first cross-key rule ``cfg`` breaks, or None when it is consistent."""
    for rule in RULES:
        problem = rule(cfg)
        if problem is not None:
            return problem
    return None
