"""Switch profiles: how a plan's concepts are named in one data-plane program.

A profile (YAML in ``configs/switch/``) maps the lock-to-index table, the per-lock registers
(bounds, head, tail, free/server-held slots, holder counts, pause flag), the per-slot queue
registers, the tenant table and the lock-server partition table to BFRuntime names, with the
register fields (``f1``, ``lo``/``hi``, struct fields) and their widths. Names may be short:
they resolve against the program's bf-rt.json by unique dotted suffix, so one profile serves
the P4_14 (``pipe.left_bound_register``) and P4_16 (``pipe.Ingress.left_bound_register``)
builds of the same program.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from pathlib import Path

from netlock.errors import TargetError
from netlock.inputs import load_yaml

LOCK_REGISTERS = ("left", "right", "head", "tail", "free_slots", "server_held",
                  "exclusive_count", "shared_count", "paused")
"""Per-lock state, indexed by the lock's register index; all required in a profile."""
OPTIONAL_LOCK_REGISTERS = ("requests", "peak_occupancy")
"""Per-lock counters a program may lack, for ``netlock stats``: acquires seen, and the peak
queue occupancy (switch queue plus requests buffered at the server)."""
SLOT_REGISTERS = ("mode", "tid", "ip", "client_id", "timestamp_hi", "timestamp_lo")
"""Per-slot queue state, indexed by the slot's register index."""
PARTITION_MATCHES = ("ternary", "range")

PROFILE_DIR = Path(__file__).resolve().parents[1] / "configs" / "switch"
DEFAULT_PROFILE = "netlock-stats"
"""The emulated switch's profile when none is named and no state file names one: the public
program extended with the per-lock counters ``netlock stats`` and ``netlock autopilot`` read
(``netlock-public`` is the program without them). A BFRuntime target given no profile takes
the shipped one its running program matches (:mod:`hwrunner.profile_choice`)."""


@dataclass(frozen=True)
class RegisterField:
    """One field of a register table: ``register`` (table name) and ``field`` (``f1``, ``lo``)."""

    register: str
    field: str
    width: int

    @property
    def data_name(self) -> str:
        """The data-field name bf-p4c gives it, relative to the register's own name."""
        return f"{self.register.rsplit('.', 1)[-1]}.{self.field}"


@dataclass(frozen=True)
class LockTable:
    """Exact match on the lock id, action sets the lock's register index."""

    table: str
    key: str
    key_width: int
    action: str
    index_param: str


@dataclass(frozen=True)
class PartitionTable:
    """Which lock server a lock the switch does not own goes to; ``servers`` are IPv4 addresses."""

    table: str
    key: str
    key_width: int
    match: str
    action: str
    server_param: str
    servers: tuple[int, ...]


@dataclass(frozen=True)
class TenantTable:
    """Client IP -> tenant id and its quota (acquires per quota window)."""

    table: str
    key: str
    action: str
    tenant_param: str
    quota_param: str


@dataclass(frozen=True)
class SwitchProfile:
    """Everything the compiler and drivers need to know about one program's names.

    ``lock_index_base`` is the register index of the first lock and ``slot_base`` the register
    value of global queue slot 0 (the public program leaves index 0 unused for both).
    ``traffic_pipe`` is the pipe lock packets go through: the one whose queue state counts
    (writes go to every pipe; the others keep what was written).
    ``pipes``, ``lock_capacity`` and ``slot_capacity`` describe the emulated switch; a real
    device's sizes and pipe count are read from the device.
    """

    name: str
    program: str
    pipes: int
    lock_index_base: int
    slot_base: int
    lock_capacity: int
    slot_capacity: int
    batch_size: int
    lock_table: LockTable
    lock_registers: dict[str, RegisterField]
    slot_registers: dict[str, RegisterField]
    partition: PartitionTable
    tenant_table: TenantTable | None = None
    tenant_counter: RegisterField | None = None
    traffic_pipe: int = 0
    source: str = "<profile>"

    def register(self, concept: str) -> RegisterField:
        return self.lock_registers[concept]

    def has(self, concept: str) -> bool:
        return concept in self.lock_registers

    def register_tables(self) -> dict[str, list[RegisterField]]:
        """Per-lock register fields grouped by register table (one write batch per table)."""
        out: dict[str, list[RegisterField]] = {}
        for concept in (*LOCK_REGISTERS, *OPTIONAL_LOCK_REGISTERS):
            if concept in self.lock_registers:
                reg = self.lock_registers[concept]
                out.setdefault(reg.register, []).append(reg)
        return out


class _Reader:
    """Reads one profile document, naming the file and dotted field of any problem."""

    def __init__(self, doc: dict, source: str) -> None:
        self.doc = doc
        self.source = source

    def fail(self, where: str, what: str) -> TargetError:
        return TargetError(f"{self.source}: {where}: {what}")

    def section(self, doc: dict, key: str, where: str) -> dict:
        value = doc.get(key)
        if not isinstance(value, dict):
            raise self.fail(f"{where}{key}", "missing or not a mapping")
        return value

    def text(self, doc: dict, key: str, where: str, default: str | None = None) -> str:
        value = doc.get(key, default)
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{where}{key}", "missing or not a non-empty string")
        return value.strip()

    def integer(self, doc: dict, key: str, where: str, default: int | None = None,
                low: int = 0) -> int:
        value = doc.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise self.fail(f"{where}{key}", f"expected an integer >= {low}, got {value!r}")
        return value

    def register(self, doc: object, where: str) -> RegisterField:
        if not isinstance(doc, dict):
            raise self.fail(where, "expected a mapping with register, field, width")
        width = self.integer(doc, "width", f"{where}.", default=32, low=1)
        if width > 64:
            raise self.fail(f"{where}.width", f"{width} bits is wider than a register field")
        return RegisterField(self.text(doc, "register", f"{where}."),
                             self.text(doc, "field", f"{where}.", default="f1"), width)

    def registers(self, key: str, required: tuple[str, ...],
                  optional: tuple[str, ...] = ()) -> dict[str, RegisterField]:
        section = self.section(self.doc, key, "")
        unknown = sorted(set(section) - set(required) - set(optional))
        if unknown:
            raise self.fail(f"{key}.{unknown[0]}", f"unknown; expected one of "
                                                   f"{', '.join(required + optional)}")
        out = {}
        for concept in required + optional:
            if concept in section:
                out[concept] = self.register(section[concept], f"{key}.{concept}")
            elif concept in required:
                raise self.fail(f"{key}.{concept}", "missing")
        return out

    def servers(self, items: object, where: str) -> tuple[int, ...]:
        if not isinstance(items, list) or not items:
            raise self.fail(where, "expected a non-empty list of IPv4 addresses")
        out = []
        for i, item in enumerate(items):
            try:
                out.append(int(ipaddress.IPv4Address(str(item))))
            except ValueError:
                raise self.fail(f"{where}[{i}]", f"{item!r} is not an IPv4 address") from None
        return tuple(out)


def profile_from_dict(doc: object, source: str) -> SwitchProfile:
    """Validate a profile document; any problem is a one-line TargetError naming the field."""
    if not isinstance(doc, dict):
        raise TargetError(f"{source}: not a switch profile (expected a YAML mapping)")
    r = _Reader(doc, source)
    lt = r.section(doc, "lock_table", "")
    part = r.section(doc, "partition_table", "")
    match = r.text(part, "match", "partition_table.", default="ternary")
    if match not in PARTITION_MATCHES:
        raise r.fail("partition_table.match", f"expected one of {', '.join(PARTITION_MATCHES)}")
    tenant = doc.get("tenant_table")
    if tenant is not None and not isinstance(tenant, dict):
        raise r.fail("tenant_table", "expected a mapping")
    pipes = r.integer(doc, "pipes", "", default=1, low=1)
    traffic_pipe = r.integer(doc, "traffic_pipe", "", default=0)
    if traffic_pipe >= pipes:
        raise r.fail("traffic_pipe", f"must be below pipes ({pipes}), got {traffic_pipe}")
    return SwitchProfile(
        name=r.text(doc, "name", ""),
        program=r.text(doc, "program", ""),
        pipes=pipes,
        lock_index_base=r.integer(doc, "lock_index_base", "", default=0),
        slot_base=r.integer(doc, "slot_base", "", default=0),
        lock_capacity=r.integer(doc, "lock_capacity", "", default=65536, low=1),
        slot_capacity=r.integer(doc, "slot_capacity", "", default=131072, low=1),
        batch_size=r.integer(doc, "batch_size", "", default=4096, low=1),
        lock_table=LockTable(
            table=r.text(lt, "table", "lock_table."),
            key=r.text(lt, "key", "lock_table."),
            key_width=r.integer(lt, "key_width", "lock_table.", default=32, low=1),
            action=r.text(lt, "action", "lock_table."),
            index_param=r.text(lt, "index_param", "lock_table."),
        ),
        lock_registers=r.registers("lock_registers", LOCK_REGISTERS, OPTIONAL_LOCK_REGISTERS),
        slot_registers=r.registers("slot_registers", (), SLOT_REGISTERS),
        partition=PartitionTable(
            table=r.text(part, "table", "partition_table."),
            key=r.text(part, "key", "partition_table."),
            key_width=r.integer(part, "key_width", "partition_table.", default=32, low=1),
            match=match,
            action=r.text(part, "action", "partition_table."),
            server_param=r.text(part, "server_param", "partition_table."),
            servers=r.servers(part.get("servers"), "partition_table.servers"),
        ),
        tenant_table=None if tenant is None else TenantTable(
            table=r.text(tenant, "table", "tenant_table."),
            key=r.text(tenant, "key", "tenant_table."),
            action=r.text(tenant, "action", "tenant_table."),
            tenant_param=r.text(tenant, "tenant_param", "tenant_table."),
            quota_param=r.text(tenant, "quota_param", "tenant_table."),
        ),
        tenant_counter=(r.register(doc["tenant_counter"], "tenant_counter")
                        if doc.get("tenant_counter") is not None else None),
        traffic_pipe=traffic_pipe,
        source=source,
    )


def profile_path(name_or_path: str | Path) -> Path:
    """A profile file: an existing path, or the name of a profile shipped in configs/switch."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        return path
    return PROFILE_DIR / f"{name_or_path}.yaml"


def load_profile(name_or_path: str | Path = DEFAULT_PROFILE) -> SwitchProfile:
    """Read and validate a switch profile (a file path or a shipped profile's name)."""
    path = profile_path(name_or_path)
    if not path.exists():
        shipped = sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))
        hint = f" (shipped profiles: {', '.join(shipped)})" if shipped else ""
        raise TargetError(f"{path}: cannot read switch profile: no such file{hint}")
    return profile_from_dict(load_yaml(path, TargetError, "switch profile"), str(path))


def shipped_profiles() -> list[SwitchProfile]:
    """Every profile in configs/switch, by name."""
    return [load_profile(path) for path in sorted(PROFILE_DIR.glob("*.yaml"))]
