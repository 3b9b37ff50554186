"""Cancel tokens: stop calls in flight from another thread."""

from __future__ import annotations

import threading

from . import _native


class CancelToken:
    """A library cancel token. Pass it as ``cancel=`` to any call; :meth:`cancel` (from any
    thread) makes every call using it stop at its next check with :class:`wsfs.Cancelled`,
    which means nothing was changed. A call past its commit point finishes and succeeds.

    Cancelling is permanent: calls started later with the token are cancelled at once. Use a
    new token per operation you may want to stop. :meth:`close` (or leaving a ``with`` block)
    releases it; calls already running keep their view of it.
    """

    __slots__ = ("_lib", "_id", "_cancelled", "_lock", "__weakref__")

    def __init__(self) -> None:
        self._lib = _native.load()
        self._lock = threading.Lock()
        self._cancelled = False
        self._id = self._lib.wsfs_cancel_token_new()

    @property
    def id(self) -> int:
        """The library's token number (0 once closed)."""
        return self._id

    @property
    def cancelled(self) -> bool:
        return self._cancelled

    def cancel(self) -> None:
        """Cancels every call using this token, now and later. Safe from any thread."""
        with self._lock:
            self._cancelled = True
            if self._id:
                self._lib.wsfs_cancel_token_cancel(self._id)

    def close(self) -> None:
        """Releases the token (idempotent). Using it in a later call is ``invalid_arguments``."""
        with self._lock:
            token, self._id = self._id, 0
        if token:
            self._lib.wsfs_cancel_token_free(token)

    def __enter__(self) -> CancelToken:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown may have torn down ctypes
            pass

    def __repr__(self) -> str:
        state = "cancelled" if self._cancelled else "active"
        return f"<CancelToken {self._id} {state}>"
