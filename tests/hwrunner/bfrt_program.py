"""bf-rt.json documents shaped as bf-p4c emits them for the public NetLock program.

Two builds of the same program: the P4_14 original (``pipe.left_bound_register``, data field
``left_bound_register.f1``) and a P4_16 port with the state under one control
(``pipe.SwitchIngress.left_bound_register``, ``SwitchIngress.left_bound_register.f1``,
actions ``SwitchIngress.<action>``, header keys ``hdr.<header>.<field>``). Register data
fields are what bf-p4c writes: ``repeated: false``, ``mandatory: true`` and the annotation
``$bfrt_field_class = register_data``; a register wider than 32 bits is two fields ``lo`` and
``hi``. Sizes default to the public program's (defines.p4 and bf-p4c's default of 512 entries
for tables that declare none).
"""

from __future__ import annotations

from dataclasses import dataclass

LOCK_REGISTERS = {
    "left_bound_register": ("f1",), "right_bound_register": ("f1",),
    "head_register": ("f1",), "tail_register": ("f1",),
    "slots_two_sides_register": ("lo", "hi"),
    "shared_and_exclusive_count_register": ("lo", "hi"),
    "queue_size_op_register": ("f1",),
}
WIDTH = {"queue_size_op_register": 1, "mode_array_register": 8, "client_id_array_register": 8,
         "failure_status_register": 8}
SLOT_REGISTERS = ("mode_array_register", "tid_array_register", "ip_array_register",
                  "client_id_array_register", "timestamp_hi_array_register",
                  "timestamp_lo_array_register")
STATS_REGISTERS = ("lock_acq_counter_register", "occupancy_peak_register")


@dataclass(frozen=True)
class Sizes:
    """Entries per table: NUM_LOCKS, LENGTH_ARRAY, NUM_TENANTS and bf-p4c's default size."""

    locks: int = 55000
    slots: int = 130000
    tenants: int = 12
    default_table: int = 512


SMALL = Sizes(locks=64, slots=129, tenants=12, default_table=64)
"""Small enough that a conformance test pushes whole plans in a fraction of a second."""


def _register(name: str, table_id: int, size: int, fields: tuple[str, ...], width: int,
              prefix: str) -> dict:
    return {
        "name": f"pipe.{prefix}{name}", "id": table_id, "table_type": "Register",
        "size": size, "annotations": [], "depends_on": [],
        "key": [{"id": 65556, "name": "$REGISTER_INDEX", "repeated": False, "annotations": [],
                 "mandatory": True, "match_type": "Exact", "type": {"type": "uint32"}}],
        "data": [{"mandatory": True, "read_only": False, "singleton": {
            "id": i + 1, "name": f"{prefix}{name}.{f}", "repeated": False,
            "annotations": [{"name": "$bfrt_field_class", "value": "register_data"}],
            "type": {"type": "bytes", "width": width}}} for i, f in enumerate(fields)],
        "supported_operations": ["Sync"], "attributes": [],
    }


def _match(name: str, table_id: int, size: int, keys: list[tuple[str, str]],
           action: str, params: list[tuple[str, int]], prefix: str) -> dict:
    key = [{"id": i + 1, "name": k, "repeated": False, "annotations": [], "mandatory": False,
            "match_type": m, "type": {"type": "bytes", "width": 32}}
           for i, (k, m) in enumerate(keys)]
    if any(m == "Ternary" for _, m in keys):
        key.append({"id": 65537, "name": "$MATCH_PRIORITY", "repeated": False,
                    "annotations": [], "mandatory": True, "match_type": "Exact",
                    "type": {"type": "uint32"}})
    return {
        "name": f"pipe.{prefix}{name}", "id": table_id, "table_type": "MatchAction_Direct",
        "size": size, "annotations": [], "depends_on": [], "has_const_default_action": False,
        "key": key,
        "action_specs": [
            {"id": 1, "name": f"{prefix}{action}", "action_scope": "TableAndDefault",
             "annotations": [], "data": [
                 {"id": j + 1, "name": p, "repeated": False, "mandatory": True,
                  "read_only": False, "annotations": [], "type": {"type": "bytes", "width": w}}
                 for j, (p, w) in enumerate(params)]},
            {"id": 2, "name": f"{prefix}NoAction", "action_scope": "DefaultOnly",
             "annotations": [], "data": []}],
        "data": [], "supported_operations": [], "attributes": ["EntryScope"],
    }


def netlock_bfrt(p4_16: bool = False, sizes: Sizes = Sizes(), stats: bool = False) -> dict:
    """The program's bf-rt.json document; ``stats`` adds the two per-lock counters of the
    netlock-stats profile."""
    prefix = "SwitchIngress." if p4_16 else ""
    hdr = "hdr." if p4_16 else ""
    tables = []
    ids = iter(range(16777217, 16777217 + 100))
    registers = dict(LOCK_REGISTERS)
    if stats:
        registers.update({r: ("f1",) for r in STATS_REGISTERS})
    for name, fields in registers.items():
        tables.append(_register(name, next(ids), sizes.locks, fields, WIDTH.get(name, 32),
                                prefix))
    for name in SLOT_REGISTERS:
        tables.append(_register(name, next(ids), sizes.slots, ("f1",), WIDTH.get(name, 32),
                                prefix))
    tables.append(_register("tenant_acq_counter_register", next(ids), sizes.tenants,
                            ("lo", "hi"), 32, prefix))
    tables.append(_register("failure_status_register", next(ids), 1, ("f1",), 8, prefix))
    tables.append(_match("check_lock_exist_table", next(ids), sizes.locks,
                         [(f"{hdr}nlk_hdr.lock", "Exact")], "check_lock_exist_action",
                         [("index", 32)], prefix))
    tables.append(_match("forward_to_server_table", next(ids), sizes.default_table,
                         [(f"{hdr}nlk_hdr.lock", "Ternary")], "forward_to_server_action",
                         [("server_ip", 32)], prefix))
    tables.append(_match("get_tenant_inf_table", next(ids), sizes.default_table,
                         [(f"{hdr}ipv4.srcAddr", "Exact")], "get_tenant_inf_action",
                         [("tenant_id", 16), ("tenant_threshold", 32)], prefix))
    return {"schema_version": "1.0.0", "tables": tables, "learn_filters": []}
