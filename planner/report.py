"""Readable terminal output of a plan (rich tables); the data comes from :class:`PlanReport`."""

from __future__ import annotations

import numpy as np
from rich.console import Group
from rich.table import Table
from rich.text import Text

from netlock.plan import SwitchEntries
from planner.migrate import PlanMigration
from planner.planning import PlanReport

TOP_LOCKS = 10
SHOWN_STEPS = 20


def _rate(rps: float) -> str:
    return f"{rps:,.0f} rps"


_RATES = {"trace": "the trace's rates",
          "closed-loop": "what the rack's clients offer, closed-loop model",
          "pilot": "measured in a warm-up run"}


def summary_table(report: PlanReport) -> Table:
    s = report.plan.summary
    table = Table(title=f"Plan ({s.policy}, c_i = {report.stats.statistic} concurrency)",
                  show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    share = s.switch_rps / s.total_rps if s.total_rps else 0.0
    rows = [
        ("switch slots used / budget", f"{s.slots_used:,} / {s.slots_total:,}"),
        ("locks in switch / total", f"{s.locks_in_switch:,} / {s.locks_total:,}"),
        ("total request rate", f"{_rate(s.total_rps)} ({_RATES.get(s.rates, s.rates)})"),
        ("switch guarantees (sum r s / c)", f"{_rate(s.switch_rps)} ({share:.1%})"),
        ("lock servers carry", _rate(s.server_rps)),
        ("lock servers needed", f"{s.servers_needed} (the model's 5 % rule; check: netlock "
         f"servers)" if s.rates.startswith(("closed-loop", "open-loop"))
         else f"{s.servers_needed} at {_rate(s.server_rate)} each"),
        ("hold time T", f"{report.hold_time_us:.3g} us ({report.hold_time_source})"),
        ("S/T bound", _rate(report.st_bound_rps)),
    ]
    if report.coarse_group > 1:
        rows.append(("locks per coarse lock", str(report.coarse_group)))
    for row in rows:
        table.add_row(*row)
    return table


def trace_table(report: PlanReport) -> Table:
    n = report.requests_total
    table = Table(title="Trace", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value", justify="right")
    table.add_row("lock requests", f"{n:,} over {report.stats.duration_s:.4g} s "
                                   f"({report.shared_requests / n:.0%} shared)")
    table.add_row("sent to servers by this plan", f"{report.requests_to_servers:,} "
                                                  f"({report.requests_to_servers / n:.1%})")
    table.add_row(f"over c_i ({report.stats.statistic}) if s_i = c_i",
                  f"{report.requests_over_contention:,} "
                  f"({report.requests_over_contention / n:.2%})")
    frag = report.fragmentation
    table.add_row("free slots / gaps / largest gap",
                  f"{frag.free_slots:,} / {frag.free_gaps} / {frag.largest_gap:,} "
                  f"(fragmentation {frag.ratio:.0%})")
    table.add_row("regions spanning two register arrays", f"{frag.regions_spanning_arrays:,}")
    return table


def top_locks_table(report: PlanReport, count: int = TOP_LOCKS) -> Table:
    stats = report.stats
    table = Table(title=f"Hottest {count} locks", title_justify="left")
    for name in ("lock", "priority", "r_i", "c_i", "slots", "region"):
        table.add_column(name, justify="right")
    entries = report.plan.entries
    where = {(int(k), int(p)): (int(lo), int(hi)) for k, p, lo, hi in
             zip(entries.lock_id, entries.priority, entries.left, entries.right, strict=True)}
    for i in np.argsort(-stats.rate_rps, kind="stable")[:count]:
        key = (int(stats.lock_id[i]), int(stats.priority[i]))
        region = where.get(key)
        table.add_row(str(key[0]), str(key[1]), _rate(float(stats.rate_rps[i])),
                      str(int(stats.contention[i])), str(int(report.slots[i])),
                      f"[{region[0]}, {region[1]}]" if region else "server")
    return table


def migration_table(migration: PlanMigration, shown: int = SHOWN_STEPS) -> Table:
    """The locks ``netlock push`` moves (leave and re-enter), evicts and admits, and the lock
    ranges that change lock server: exactly what the push will execute."""
    counts = migration.counts()
    table = Table(title=f"Migration from the live plan, as netlock push runs it: "
                        f"{counts['stay']} locks stay, {counts['move']} move, "
                        f"{counts['leave']} leave, {counts['enter']} enter; "
                        f"{counts['server_ranges']} lock ranges change server",
                  title_justify="left")
    for name in ("change", "lock", "priority", "from", "to"):
        table.add_column(name, justify="right")
    c, live, target = migration.changes, migration.live, migration.target

    def region(entries: SwitchEntries, row: int) -> str:
        return f"[{entries.left[row]}, {entries.right[row]}]"

    rows = ([("move", target, int(t), region(live, int(lv)), region(target, int(t)))
             for t, lv in zip(c.moved, c.moved_live, strict=True)]
            + [("leave", live, int(r), region(live, int(r)), "server") for r in c.leaving]
            + [("enter", target, int(r), "server", region(target, int(r)))
               for r in c.entering])
    for kind, entries, row, old, new in rows[:shown]:
        table.add_row(kind, str(entries.lock_id[row]), str(entries.priority[row]), old, new)
    if len(rows) > shown:
        table.add_row("...", f"{len(rows) - shown} more", "", "", "")
    for m in migration.moves:
        table.add_row("server", f"{m.lo}..{m.hi}", "", f"server {m.source}",
                      f"server {m.dest}")
    return table


def render(report: PlanReport) -> Group:
    """Everything a person wants to see after ``netlock plan``."""
    parts: list = [summary_table(report), trace_table(report), top_locks_table(report)]
    if report.migration is not None:
        parts.append(migration_table(report.migration))
    parts += [Text(f"warning: {w}", style="yellow") for w in report.warnings]
    return Group(*parts)
