"""Install plans on a switch through BFRuntime, or on the emulated switch by default.

Layers, each importing only the ones before it:

- values: :mod:`.operations` (batched register writes and table entry changes),
  :mod:`.layout` (what a switch holds; the migration between two layouts, lock ranges that
  change lock server);
- schema: :mod:`.schema` (a program's bf-rt.json), :mod:`.profile` (a program's names for the
  plan's concepts), :mod:`.validate` (both checked before anything is sent),
  :mod:`.profile_choice` (the profile a running program matches, or why it matches none);
- operations: :mod:`.compile` (plan + live layout -> ordered, batched steps);
- drivers: :mod:`.driver` (the interface), :mod:`.emulator` (the ``netlock`` data-plane model
  behind it), :mod:`.bfrt_driver` (the only module that imports ``bfrt_grpc``) with
  :mod:`.bfrt_schema` (the program as the device describes it);
- orchestration: :mod:`.push` (move protocol, rollback or finish-forward, verification),
  :mod:`.journal`, :mod:`.servers`, :mod:`.stats`, :mod:`.autopilot` (the closed loop:
  counters -> the planner's allocation -> a push when the workload moved), :mod:`.replay`
  (workloads replayed into the emulator as NetLock packets), :mod:`.targets`, :mod:`.cli`.

``hwrunner.targets.push_plan(plan)`` installs a plan on a fresh emulated switch and verifies it.
"""
