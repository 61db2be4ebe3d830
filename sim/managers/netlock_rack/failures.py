"""Failure handling of a NetLock rack (paper section 4.5, design notes "Failures").

Switch failure at ``switch_fail_s``: the switch loses all its state (lock table, queues,
holders) and every request queued in it is lost; clients recover by retrying. What happens
next is ``failures.switch_mode``:

- ``stop`` (the paper's Figure 15, section 6.5): the switch "stops processing any packets".
  Every packet through it is dropped, lock-server traffic included (it crosses the ToR), so
  throughput is zero until ``switch_restart_s``. It restarts with empty registers and the
  plan's lock table; requests the servers buffered as overflow before the failure become
  each lock's backlog (the switch "synchronizes its states with the lock servers"), pushed
  back first. A switch that restarts within a lease of failing keeps dropping until that
  lease is over: leases it granted before the failure may still be in use.
- ``backup``: a backup switch with the same plan takes over. It installs the
  locks paused, so for one lease their requests are buffered at the lock servers (leases
  granted by the failed switch may still be in use), then resumes them: the servers push
  the buffered requests back in order. When the original switch restarts (and not before
  that lease is over), the backup hands the locks back one by one, as a lock move between
  the two switches: the backup pauses every lock, so new acquires overflow to the lock
  servers behind the backup's own backlog, while releases of the holders the backup granted
  still reach it (packets are routed per lock to the switch serving it). A lock whose backup
  queues are empty, with no push-back on its way, is installed in the original switch with
  the backlog count the backup had at the server; the servers push that backlog into the
  original in order. Locks are polled every ``lease.sweep_us``; once the last lock is back,
  the backup is no longer used. (The paper queues new requests in the original while the
  backup drains; queueing them at the server instead keeps one FIFO order without two
  switches queueing the same lock.)
- ``servers``: the failed switch forwards every request to the lock servers (its lock table is
  empty), which serve all locks; they grant none of the switch's locks for one lease (the
  old switch's leases run out first; their overflow buffered at the servers goes first)
  and keep granting their own locks meanwhile.

Restart at ``switch_restart_s`` (``servers``): the switch comes back empty and takes
its locks back from the servers one by one, as a lock move: the server stops granting the
lock, waits until its holders are gone (released, or expired by their lease), keeps its
waiting requests as overflow and the switch installs the lock with that backlog, which the
server pushes back first; requests that reached the server while the lock table had no
entry yet are held aside and re-sent once it has. Locks are polled every
``lease.sweep_us``.

Lock-server failure: the server loses its state; its partition moves to the next live
server, which grants none of the adopted locks for one lease (their acquires wait at the
server in arrival order) and keeps granting its own locks meanwhile. Switch queues whose
overflow was buffered at the failed server forget that backlog (the control plane rewrites
the switch's count of requests held at the server to the new server's, which is empty) and
grant what waited behind it in lower classes.
"""

from __future__ import annotations

from netlock.config import Failures
from netlock.failover import SwitchTakeover, grace_end_us
from netlock.packets import ActionKind
from sim.managers.netlock_rack.manager import NetLockManager


def schedule_failures(m: NetLockManager, failures: Failures) -> None:
    """Arm the failures of the config on the manager's clock."""
    if failures.switch_fail_s is not None:
        mode = failures.switch_mode
        fail_us = failures.switch_fail_s * 1e6
        m.engine.call_later(fail_us, STOPS[mode], m)
        if failures.switch_restart_s is not None:
            restart_us = failures.switch_restart_s * 1e6
            if mode != "servers":
                restart_us = max(restart_us, grace_end_us(fail_us, m.lease_us))
            m.engine.call_later(restart_us, RESTARTS[mode], m)
    for failure in failures.server_failures:
        m.engine.call_later(failure.at_s * 1e6, fail_server, m, failure.server)


def _lose_switch_state(m: NetLockManager) -> None:
    node = m.switch
    node.dp.fail()
    node.waiting.clear()
    node.refresh_table()


def stop_switch(m: NetLockManager) -> None:
    """``stop``: the switch loses its state and drops every packet from now on."""
    _lose_switch_state(m)
    m.stopped = True
    m.packet_handlers[0] = m.drop_packets


def reactivate_switch(m: NetLockManager) -> None:
    """``stop``: the switch processes packets again, with empty registers and the plan's
    lock table; what the servers buffered for its locks is each queue's backlog."""
    node = m.switch
    actions = []
    for lock, parts in plan_regions(m).items():
        state = m.owner(lock).state
        for prio, left, right in parts:
            held = len(state.buffered(lock, prio))
            actions += node.dp.install(lock, prio, left, right, server_held=held)
    node.refresh_table()
    m.stopped = False
    m.packet_handlers[0] = node.on_packets
    notify(m, actions)


def fail_to_backup(m: NetLockManager) -> None:
    """``backup``: a backup switch with the same plan takes over after one lease."""
    _lose_switch_state(m)
    spare = m.new_switch()
    takeover = SwitchTakeover(spare.dp, m.env.now, m.lease_us)
    for lock, parts in plan_regions(m).items():
        takeover.install(lock, parts)
    spare.refresh_table()
    m.use_switch(spare)
    m.engine.call_at(takeover.until_us, resume_all, m, takeover)


def fail_to_servers(m: NetLockManager) -> None:
    """``servers``: the lock servers serve the switch's locks after one lease."""
    _lose_switch_state(m)
    locks = frozenset(plan_regions(m))
    until_us = grace_end_us(m.env.now, m.lease_us)
    for server in m.servers:
        if server.alive:
            server.adopt_switch_locks(locks, until_us)
            m.engine.call_at(until_us, server.end_grace, until_us)


def resume_all(m: NetLockManager, takeover: SwitchTakeover) -> None:
    notify(m, takeover.resume_due(takeover.until_us))


def notify(m: NetLockManager, actions: list) -> None:
    for action in actions:
        if action.kind == ActionKind.NOTIFY_SERVER:
            m.notify_server(action.request.lock_id, action.request.priority, action.count, 0.0)


def plan_regions(m: NetLockManager) -> dict[int, list[tuple[int, int, int]]]:
    """Each switch-resident lock's regions in the plan: (class, left, right)."""
    entries = m.plan.entries
    regions: dict[int, list[tuple[int, int, int]]] = {}
    for lock, prio, left, right in zip(entries.lock_id.tolist(), entries.priority.tolist(),
                                       entries.left.tolist(), entries.right.tolist(),
                                       strict=True):
        regions.setdefault(lock, []).append((prio, left, right))
    return regions


def hand_back(m: NetLockManager) -> None:
    """The original switch is back while the backup serves: move the locks back to it."""
    backup = m.active
    if backup is m.switch:
        return
    m.backup = backup
    m.staying = set(backup.dp.resident_locks)
    for lock in m.staying:
        backup.dp.pause(lock)
    m.active = m.switch
    m.packet_handlers[0] = m.route
    m.engine.process(_hand_back(m, plan_regions(m)))


def _hand_back(m: NetLockManager, regions: dict[int, list[tuple[int, int, int]]]):
    backup, node = m.backup, m.switch
    while m.staying:
        moved = sorted(lock for lock in m.staying if backup.dp.is_quiet(lock))
        actions = []
        for lock in moved:
            for prio, left, right in regions[lock]:
                held = backup.dp.server_held(lock, prio)
                actions += node.dp.install(lock, prio, left, right, server_held=held)
            m.staying.discard(lock)
        if moved:
            node.refresh_table()
            notify(m, actions)
        if m.staying:
            yield m.env.timeout(m.cfg.lease.sweep_us)
    m.backup = None
    m.packet_handlers[0] = node.on_packets


def restart_switch(m: NetLockManager) -> None:
    """The switch is back: move its locks in from the servers as they become free."""
    regions = plan_regions(m)
    for lock in regions:
        m.owner(lock).state.begin_move_in(lock)
    m.engine.process(_move_in(m, regions))


def _move_in(m: NetLockManager, regions: dict[int, list[tuple[int, int, int]]]):
    node = m.switch
    priorities = m.cfg.geometry.priorities
    waiting = dict(regions)
    while waiting:
        moved = []
        for lock, parts in waiting.items():
            server = m.owner(lock)
            if not server.state.ready_to_move_in(lock):
                continue
            backlog = server.state.hand_over(lock, [p for p, _, _ in parts], priorities,
                                             until_mapped=True)
            for prio, left, right in parts:
                notify(m, node.dp.install(lock, prio, left, right,
                                          server_held=backlog.get(prio, 0)))
            moved.append(lock)
        for lock in moved:
            del waiting[lock]
        if moved:
            node.refresh_table()
            for lock in moved:
                server = m.owner(lock)
                server.control(server.state.mapped(lock))
        if waiting:
            yield m.env.timeout(m.cfg.lease.sweep_us)


def fail_server(m: NetLockManager, index: int) -> None:
    failed = m.servers[index]
    if not failed.alive:
        return
    node = m.active
    orphaned = [lock for lock in node.dp.resident_locks if m.owner(lock) is failed]
    failed.fail()
    alive = [s.index for s in m.servers if s.alive]
    if not alive:
        return
    heir = min(alive, key=lambda s: (s - index) % len(m.servers))
    parts = {part for part, owner in enumerate(m.owner_of) if owner == index}
    m.owner_of = [heir if owner == index else owner for owner in m.owner_of]
    until_us = grace_end_us(m.env.now, m.lease_us)
    m.servers[heir].adopt(parts, until_us)
    m.engine.call_at(until_us, m.servers[heir].end_grace, until_us)
    for lock in orphaned:
        node.forget_server_backlog(lock)


STOPS = {"stop": stop_switch, "backup": fail_to_backup, "servers": fail_to_servers}
"""What a switch failure does, per ``failures.switch_mode``."""
RESTARTS = {"stop": reactivate_switch, "backup": hand_back, "servers": restart_switch}
"""What the switch's restart does, per ``failures.switch_mode``."""
