"""NetLock configuration: one immutable, validated :class:`Config` per run.

``load_config("configs/tpcc-low.yaml", {"switch.slots": "5000"})`` reads a YAML file
(following ``include:``), applies ``--set``-style overrides and checks every key;
``override_config(cfg, {"switch.slots": 5000})`` derives validated variants for sweeps.
Bad input raises :class:`netlock.errors.ConfigError` with one line:
``<file>: <dotted.path>: <what is wrong>``.
"""

from netlock.config.load import (
    config_from_dict,
    default_config,
    dump_yaml,
    load_config,
    override_config,
    parse_sets_typed,
)
from netlock.config.schema import (
    Clients,
    Config,
    Failures,
    Lease,
    NetworkConfig,
    Policy,
    ServerFailure,
    Servers,
    Sim,
    SlotArray,
    Switch,
    Tenant,
    Testbed,
    WorkloadConfig,
)
from netlock.config.typed import KeyInfo, walk_keys


def config_keys() -> list[KeyInfo]:
    """Every config key with its type, default and help text, in schema order."""
    return list(walk_keys(Config))


__all__ = [
    "Clients",
    "Config",
    "Failures",
    "KeyInfo",
    "Lease",
    "NetworkConfig",
    "Policy",
    "ServerFailure",
    "Servers",
    "Sim",
    "SlotArray",
    "Switch",
    "Tenant",
    "Testbed",
    "WorkloadConfig",
    "config_from_dict",
    "config_keys",
    "default_config",
    "dump_yaml",
    "load_config",
    "override_config",
    "parse_sets_typed",
]
