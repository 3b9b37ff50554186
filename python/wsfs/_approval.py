"""The C callback around a Python approval handler (``Workspace.set_approval_handler``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from . import _native

# What a handler returns: True approves; False, or (False, reason), denies.
Answer = bool | tuple[bool, str]
ApprovalHandler = Callable[[dict[str, Any], float], Answer]


def callback(lib: Any, handler: ApprovalHandler) -> Callable[..., int]:
    """The C callback around ``handler``: never raises into C; an exception is the handler's
    failure (the call is denied with its text)."""

    def decide(_userdata: object, request_json: bytes, timeout_ms: int, response: int) -> int:
        try:
            try:
                request = json.loads(request_json.decode("utf-8"))
                answer = handler(request, timeout_ms / 1000)
                approved, reason = answer if isinstance(answer, tuple) else (answer, "")
                status = _native.APPROVAL_APPROVE if approved is True else _native.APPROVAL_DENY
                reason = str(reason)
            except Exception as e:  # noqa: BLE001 - every failure denies the call
                reason, status = f"{type(e).__name__}: {e}", _native.APPROVAL_ERROR
            if reason:
                lib.wsfs_approval_respond(response, reason.replace("\0", "").encode("utf-8"))
            return status
        except BaseException:  # noqa: BLE001 - nothing may unwind into C
            return _native.APPROVAL_ERROR

    return decide
