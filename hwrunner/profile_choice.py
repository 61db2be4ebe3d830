"""Which switch profile a running program is: chosen from its tables, or a named one checked.

A BFRuntime device reports its program's tables, sizes and field widths. With no ``--profile``
the driver takes the shipped profile (``configs/switch``) whose every table, register field,
width, key and action parameter the program has; when several fit, the one naming the most
tables (the counters ``netlock stats`` reads are a superset of the public program). A named
profile is checked the same way. Either way a mismatch is one line saying what differs (a
missing or ambiguous table, a field name, a width, a size), and which shipped profile the
program does match, if any.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from hwrunner.bfrt_info import Schema
from hwrunner.profile import SwitchProfile
from hwrunner.validate import validate_profile
from netlock.errors import TargetError

SchemaOf = Callable[[SwitchProfile], Schema]
"""The program's tables a profile names, as the device reports them (TargetError: one is
missing or ambiguous)."""


@dataclass(frozen=True)
class ProfileChoice:
    """The profile a target runs with; ``reason`` says why (None: named on the command line)."""

    profile: SwitchProfile
    schema: Schema
    reason: str | None = None


def _problem(profile: SwitchProfile, schema_of: SchemaOf, source: str) -> str | Schema:
    """The profile's tables in the program, or the first difference without the source."""
    try:
        schema = schema_of(profile)
        validate_profile(profile, schema)
    except TargetError as exc:
        return str(exc).removeprefix(f"{source}: ")
    return schema


def _sizes(profile: SwitchProfile, schema: Schema) -> str:
    """Lock indices and queue slots the program holds under this profile."""
    locks = min(schema.table(r.register).size for r in profile.lock_registers.values())
    slots = min((schema.table(r.register).size for r in profile.slot_registers.values()),
                default=0)
    return (f"{locks - profile.lock_index_base} lock indices, "
            f"{max(slots - profile.slot_base, 0)} queue slots")


def choose_profile(program: str, candidates: Sequence[SwitchProfile], schema_of: SchemaOf,
                   source: str) -> ProfileChoice:
    """The candidate the program matches that names the most tables (ties: the first by name);
    else one TargetError line with each candidate's first difference. ``source`` prefixes
    the messages of ``schema_of`` (``grpc://HOST:PORT: program NAME``)."""
    fits: list[tuple[SwitchProfile, Schema]] = []
    missed: dict[str, list[str]] = {}
    for candidate in candidates:
        profile = replace(candidate, program=program)
        found = _problem(profile, schema_of, source)
        if isinstance(found, Schema):
            fits.append((profile, found))
        else:
            missed.setdefault(found, []).append(candidate.name)
    misses = [f"{', '.join(names)}: {why}" for why, names in missed.items()]
    if not fits:
        raise TargetError(f"{source} matches no shipped switch profile ("
                          + "; ".join(misses) + "); give --profile FILE for this program")
    fits.sort(key=lambda f: (-len(f[1].tables), f[0].name))
    profile, schema = fits[0]
    others = [f"{p.name} fits with fewer tables" for p, _ in fits[1:]]
    others += [f"{', '.join(names)} {'does' if len(names) == 1 else 'do'} not fit: {why}"
               for why, names in missed.items()]
    reason = (f"the program has all {len(schema.tables)} tables it names, with their fields "
              f"and widths ({_sizes(profile, schema)})"
              + (f"; {'; '.join(others)}" if others else ""))
    return ProfileChoice(profile, schema, reason)


def check_profile(profile: SwitchProfile, candidates: Sequence[SwitchProfile],
                  schema_of: SchemaOf, source: str,
                  how: str = "omit --profile to choose it") -> ProfileChoice:
    """A named profile checked against the program: its first difference as one TargetError
    line, with the shipped profile the program matches instead (if one does) and ``how`` to
    take it (``{name}``: that profile's name)."""
    found = _problem(profile, schema_of, source)
    if isinstance(found, Schema):
        return ProfileChoice(profile, found)
    others = [c for c in candidates if replace(c, program=profile.program) != profile]
    try:
        name = choose_profile(profile.program, others, schema_of, source).profile.name
        hint = f"; the program matches the shipped profile {name} ({how.format(name=name)})"
    except TargetError:
        hint = ""
    raise TargetError(f"{source}: {found} (profile {profile.name}){hint}")
