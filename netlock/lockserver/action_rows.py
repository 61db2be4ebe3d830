"""The lock-server kernels' action rows (``A_*`` columns of ``ServerState.act``) as
:class:`netlock.packets.Action` values, and a request's ``FLAG_*`` bits: the readable form
:class:`netlock.lockserver.LockServer` gives its callers (the simulator reads the rows
themselves, :mod:`netlock.lockserver.request_path`)."""

from __future__ import annotations

from netlock.lockserver.server_state import FLAG_OVERFLOW, FLAG_PUSH_BACK, ServerState
from netlock.packets import Action, ActionKind, DropReason, LockRequest, Mode, Op

_KINDS = tuple(ActionKind)
_REASONS = tuple(DropReason)
_MODES = tuple(Mode)


def request_flags(req: LockRequest) -> int:
    """The ``FLAG_*`` bits of ``req`` as the kernels take them."""
    return FLAG_OVERFLOW * bool(req.overflow) + FLAG_PUSH_BACK * bool(req.push_back)


def actions_of(st: ServerState, n: int) -> list[Action]:
    """The first ``n`` action rows of ``st`` as actions (a DROP is about a release, unless
    it drops a duplicated acquire)."""
    out = []
    for kind, reason, lock, mode, txn, client, tenant, priority, ts, flags in (
            st.act[:n].tolist()):
        op = (Op.RELEASE if kind == ActionKind.DROP and reason != DropReason.DUPLICATE
              else Op.ACQUIRE)
        req = LockRequest(op, _MODES[mode], lock, txn, client, tenant, priority, ts,
                          overflow=bool(flags & FLAG_OVERFLOW),
                          push_back=bool(flags & FLAG_PUSH_BACK))
        out.append(Action(_KINDS[kind], req, reason=_REASONS[reason]))
    return out
