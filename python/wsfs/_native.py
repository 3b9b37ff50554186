"""The C ABI through ctypes: loading libwsfs, prototypes, and freeing every returned string.

Every ``char *`` the library returns is declared ``c_void_p`` (a ``c_char_p`` restype would
copy the string into ``bytes`` and lose the pointer, leaking it) and goes through
:func:`take`, which copies it out and frees it exactly once. Arguments that travel as C
strings are checked for NUL here, before they reach C, where a NUL would silently cut them.
"""

from __future__ import annotations

import ctypes
import json
import os
import threading
from pathlib import Path

from .errors import ERROR_CLASSES, LibraryError

LIB_ENV = "WSFS_LIB"
LIB_NAME = "libwsfs.so"
ABI = 1

_c_u64 = ctypes.c_uint64
_c_str = ctypes.c_char_p
_c_ptr = ctypes.c_void_p

# name -> (argtypes, restype): every function of include/wsfs.h.
PROTOTYPES: dict[str, tuple[list, object]] = {
    "wsfs_version": ([], _c_ptr),
    "wsfs_tool_specs": ([], _c_ptr),
    "wsfs_tool_instructions": ([], _c_ptr),
    "wsfs_workspace_open": ([_c_str], _c_ptr),
    "wsfs_workspace_close": ([_c_u64], _c_ptr),
    "wsfs_workspace_tool_specs": ([_c_u64], _c_ptr),
    "wsfs_set_model_gateway": ([_c_u64, _c_ptr, _c_ptr], _c_ptr),
    "wsfs_gateway_respond": ([_c_ptr, _c_str], ctypes.c_int32),
    "wsfs_set_approval_handler": ([_c_u64, _c_ptr, _c_ptr], _c_ptr),
    "wsfs_approval_respond": ([_c_ptr, _c_str], ctypes.c_int32),
    "wsfs_read_file": ([_c_u64, _c_str], _c_ptr),
    "wsfs_write_file": ([_c_u64, _c_str], _c_ptr),
    "wsfs_append_file": ([_c_u64, _c_str], _c_ptr),
    "wsfs_list_dir": ([_c_u64, _c_str], _c_ptr),
    "wsfs_edit_file": ([_c_u64, _c_str], _c_ptr),
    "wsfs_call": ([_c_u64, _c_str, _c_str], _c_ptr),
    "wsfs_call_with_options": ([_c_u64, _c_str, _c_str, _c_str], _c_ptr),
    "wsfs_call_with_content": ([_c_u64, _c_str, _c_str, _c_str, _c_str, ctypes.c_size_t], _c_ptr),
    "wsfs_call_sized": (
        [_c_u64, _c_str, _c_str, _c_str, _c_str, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)],
        _c_ptr,
    ),
    # The whole tool call: options_json may be None (NULL).
    "wsfs_dispatch": ([_c_u64, _c_str, _c_str], _c_ptr),
    "wsfs_cancel_token_new": ([], _c_u64),
    "wsfs_cancel_token_cancel": ([_c_u64], None),
    "wsfs_cancel_token_free": ([_c_u64], None),
    "wsfs_string_free": ([_c_ptr], None),
    # The overlay session operations: options_json may be None (NULL).
    "wsfs_session_diff": ([_c_u64, _c_str], _c_ptr),
    "wsfs_session_commit": ([_c_u64, _c_str], _c_ptr),
    "wsfs_session_checkpoint": ([_c_u64, _c_str], _c_ptr),
    "wsfs_session_rewind": ([_c_u64, _c_str], _c_ptr),
    "wsfs_session_checkpoints": ([_c_u64], _c_ptr),
    "wsfs_session_discard": ([_c_u64], _c_ptr),
    "wsfs_session_refresh": ([_c_u64], _c_ptr),
}

# wsfs_model_gateway_fn: (userdata, request_json, timeout_ms, response) -> status.
GATEWAY_FN = ctypes.CFUNCTYPE(ctypes.c_int32, _c_ptr, _c_str, _c_u64, _c_ptr)
GATEWAY_OK, GATEWAY_ERROR, GATEWAY_TIMEOUT, GATEWAY_INVALID_REQUEST = 0, 1, 2, 3
# wsfs_approval_handler_fn: (userdata, request_json, timeout_ms, response) -> status.
APPROVAL_FN = ctypes.CFUNCTYPE(ctypes.c_int32, _c_ptr, _c_str, _c_u64, _c_ptr)
APPROVAL_APPROVE, APPROVAL_DENY, APPROVAL_ERROR = 0, 1, 2

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def library_path() -> str:
    """The library this process loads: ``$WSFS_LIB`` if set, else the one bundled in the package."""
    return os.environ.get(LIB_ENV) or str(Path(__file__).with_name(LIB_NAME))


def load() -> ctypes.CDLL:
    """The loaded library (loaded once per process, on first use), with every prototype set."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            _lib = _open(library_path())
    return _lib


def _open(path: str) -> ctypes.CDLL:
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        source = f"${LIB_ENV}" if os.environ.get(LIB_ENV) else "the wsfs package"
        raise LibraryError(
            f"cannot load libwsfs from {path} ({source}): {e}. Install the package from a wsfs "
            "checkout with `pip install ./python` (it builds the library with cargo), or set "
            f"{LIB_ENV} to a built libwsfs.so (`make build` writes target/release/libwsfs.so)."
        ) from None
    for name, (argtypes, restype) in PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = restype
    version = json.loads(take(lib, lib.wsfs_version()))
    if version.get("abi") != ABI:
        raise LibraryError(
            f"{path} has C ABI {version.get('abi')}, this package needs ABI {ABI}: "
            "rebuild the library and the package from the same checkout"
        )
    return lib


def take(lib: ctypes.CDLL, ptr: int | None) -> bytes:
    """Copies a string the library returned and frees it, exactly once."""
    if not ptr:  # the ABI never returns NULL; refuse rather than crash if it ever did
        raise ERROR_CLASSES["io_error"]("io_error", "the wsfs library returned NULL")
    try:
        return ctypes.string_at(ptr)
    finally:
        lib.wsfs_string_free(ptr)


def c_string(value: str | bytes, what: str) -> bytes:
    """UTF-8 bytes for a C string argument; a NUL (which C would read as the end) is refused."""
    if ("\0" if isinstance(value, str) else b"\0") in value:
        raise ERROR_CLASSES["invalid_arguments"](
            "invalid_arguments", f"{what} contains a NUL byte, which a C string cannot hold"
        )
    return value if isinstance(value, bytes) else utf8(value, what)


def utf8(value: str, what: str) -> bytes:
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ERROR_CLASSES["invalid_arguments"](
            "invalid_arguments", f"{what} is not valid UTF-8 text ({e.reason} at {e.start})"
        ) from None
