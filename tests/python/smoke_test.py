#!/usr/bin/env python3
"""ctypes smoke test of libwsfs.so: the C ABI as any dlopen-ing language sees it.

Library path: $WSFS_LIB, else target/release/libwsfs.so relative to the repository root.
Exits non-zero if any check fails; the last line is "python smoke: N passed, M failed".
"""
import ctypes
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB_PATH = os.environ.get("WSFS_LIB") or os.path.join(REPO, "target", "release", "libwsfs.so")

lib = ctypes.CDLL(LIB_PATH)
# Returned strings are owned by the caller: keep them as raw pointers so they can be freed.
for name in ("wsfs_version", "wsfs_tool_specs"):
    getattr(lib, name).argtypes = []
    getattr(lib, name).restype = ctypes.c_void_p
lib.wsfs_workspace_open.argtypes = [ctypes.c_char_p]
lib.wsfs_workspace_open.restype = ctypes.c_void_p
lib.wsfs_workspace_close.argtypes = [ctypes.c_uint64]
lib.wsfs_workspace_close.restype = ctypes.c_void_p
TOOLS = ("read_file", "write_file", "append_file", "list_dir", "edit_file")
# Tools without a function of their own, reached through wsfs_call.
NAMED_ONLY = ("get_path_info", "find_files", "search_text", "apply_patch", "create_directory", "move_file", "delete_file")
# The developer tools, also reached through wsfs_call, off unless the policy's exec_enabled.
EXEC_TOOLS = ("workspace_info", "git_status", "git_diff", "git_commit", "run_tests", "run_lint", "typecheck",
              "safe_shell", "shell")
for tool in TOOLS:
    fn = getattr(lib, "wsfs_" + tool)
    fn.argtypes = [ctypes.c_uint64, ctypes.c_char_p]
    fn.restype = ctypes.c_void_p
lib.wsfs_call.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p]
lib.wsfs_call.restype = ctypes.c_void_p
lib.wsfs_call_with_options.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p]
lib.wsfs_call_with_options.restype = ctypes.c_void_p
lib.wsfs_call_with_content.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                       ctypes.c_char_p, ctypes.c_size_t]
lib.wsfs_call_with_content.restype = ctypes.c_void_p
lib.wsfs_cancel_token_new.argtypes = []
lib.wsfs_cancel_token_new.restype = ctypes.c_uint64
lib.wsfs_cancel_token_cancel.argtypes = [ctypes.c_uint64]
lib.wsfs_cancel_token_cancel.restype = None
lib.wsfs_cancel_token_free.argtypes = [ctypes.c_uint64]
lib.wsfs_cancel_token_free.restype = None
lib.wsfs_call_sized.argtypes = [ctypes.c_uint64, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
                                ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]
lib.wsfs_call_sized.restype = ctypes.c_void_p
lib.wsfs_string_free.argtypes = [ctypes.c_void_p]
lib.wsfs_string_free.restype = None


def take(ptr):
    """Decode, free exactly once, parse."""
    assert ptr, "wsfs returned NULL"
    try:
        raw = ctypes.string_at(ptr)
    finally:
        lib.wsfs_string_free(ptr)
    return json.loads(raw.decode("utf-8"))


def enc(v):
    return json.dumps(v).encode("utf-8")


def tool(ws, name, args):
    return take(getattr(lib, "wsfs_" + name)(ws, enc(args)))


def ok(env):
    assert env.get("ok") is True, env
    assert isinstance(env["text"], str) and isinstance(env["warnings"], list), env
    return env["data"]


def err(env, code):
    assert env.get("ok") is False, env
    assert env["error"]["code"] == code, env
    assert env["text"].startswith(code + ": "), env
    return env["error"]["message"]


STATE = {}
TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
def version():
    v = take(lib.wsfs_version())
    assert v["abi"] == 1 and isinstance(v["version"], str), v


@test
def tool_specs():
    specs = take(lib.wsfs_tool_specs())
    assert sorted(s["name"] for s in specs) == sorted(TOOLS + NAMED_ONLY + EXEC_TOOLS), specs
    for s in specs:
        p = s["parameters"]
        assert p["type"] == "object" and isinstance(p["required"], list), s
        if s["name"] in EXEC_TOOLS:
            continue  # they take commands and working directories, not file paths
        # apply_patch names its files inside the patch, move_file has src and dst; every other
        # tool has a path.
        paths = {"src", "dst"} if s["name"] == "move_file" else {"path"}
        assert s["name"] == "apply_patch" or paths <= set(p["properties"]), s


@test
def open_workspace():
    tmp = os.path.join(tempfile.mkdtemp(prefix="wsfs-py-"), "base")
    os.mkdir(tmp)
    root = os.path.join(os.path.realpath(tmp), "ws")
    os.mkdir(root)
    data = ok(take(lib.wsfs_workspace_open(enc({"root": root, "limits": {"max_read_bytes": 1000}}))))
    assert data["root"] == root, data
    assert isinstance(data["workspace"], int) and data["workspace"] > 0, data
    assert data["limits"]["max_read_bytes"] == 1000, data
    STATE.update(ws=data["workspace"], root=root, base=os.path.dirname(root))


@test
def every_tool():
    ws, root = STATE["ws"], STATE["root"]
    d = ok(tool(ws, "write_file", {"path": "dir/a.txt", "content": "hello\r\nworld"}))
    assert d == {"path": "dir/a.txt", "bytes_written": 12, "created": True, "existed_before": False, "mode": "overwrite"}, d
    d = ok(tool(ws, "append_file", {"path": "dir/a.txt", "content": "\n"}))
    assert d["bytes_appended"] == 1 and d["size"] == 13, d
    d = ok(tool(ws, "edit_file", {"path": "dir/a.txt", "old_text": "world", "new_text": "wsfs"}))
    assert d["matches"] == 1 and d["replaced"] == 1, d
    d = ok(tool(ws, "read_file", {"path": "dir/a.txt"}))
    assert d["content"] == "hello\r\nwsfs\n" and d["truncated"] is False and d["total_bytes"] == 12, d
    with open(os.path.join(root, "dir", "a.txt"), "rb") as fh:
        assert fh.read() == b"hello\r\nwsfs\n"
    d = ok(tool(ws, "list_dir", {"path": "dir"}))
    assert d["entries"] == [{"name": "a.txt", "type": "file", "size": 12}], d
    assert d["total"] == 1 and d["truncated"] is False, d
    with open(os.path.join(root, "big.txt"), "w") as fh:
        fh.write("é" * 1000)
    env = tool(ws, "read_file", {"path": "big.txt"})
    d = ok(env)
    assert d["truncated"] is True and d["bytes"] == 1000 and d["total_bytes"] == 2000, d
    assert "[truncated: line 1 is longer than max_read_bytes (1000): only its first 1000 of 2000 bytes are shown; continue with start_line=2]" in env["text"], env
    err(tool(ws, "edit_file", {"path": "dir/a.txt", "old-text": "x", "new_text": "y"}), "invalid_arguments")
    err(tool(ws, "read_file", {"path": "nope.txt"}), "path_not_found")


@test
def call_by_name():
    ws = STATE["ws"]
    d = ok(take(lib.wsfs_call(ws, b"read_file", enc({"path": "dir/a.txt"}))))
    assert d["content"] == "hello\r\nwsfs\n", d
    err(take(lib.wsfs_call(ws, b"rm_rf", b"{}")), "unknown_tool")
    err(take(lib.wsfs_call(ws, b"read_file", None)), "invalid_arguments")


def named(ws, name, args):
    return take(lib.wsfs_call(ws, name.encode(), enc(args)))


@test
def read_range_and_path_info():
    ws, root = STATE["ws"], STATE["root"]
    with open(os.path.join(root, "lines.txt"), "w", newline="") as fh:
        fh.write("".join("line %d\r\n" % i for i in range(1, 201)))
    env = tool(ws, "read_file", {"path": "lines.txt", "start_line": 10, "max_lines": 2, "line_numbers": True})
    d = ok(env)
    assert d["content"] == "line 10\r\nline 11\r\n", d
    assert (d["start_line"], d["end_line"], d["total_lines"], d["next_start_line"]) == (10, 11, 200, 12), d
    with open(os.path.join(root, "lines.txt"), "rb") as fh:
        assert d["sha256"] == hashlib.sha256(fh.read()).hexdigest(), d
    assert env["text"] == "10| line 10\r\n11| line 11\r\n[lines 10-11 of 200; continue with start_line=12, max_lines=2, line_numbers=true]", env
    err(tool(ws, "read_file", {"path": "lines.txt", "start_line": 201}), "line_out_of_range")
    d = ok(named(ws, "get_path_info", {"path": "lines.txt"}))
    assert d["exists"] is True and d["type"] == "file" and d["size"] == os.path.getsize(os.path.join(root, "lines.txt")), d
    assert d["sha256"] == hashlib.sha256(open(os.path.join(root, "lines.txt"), "rb").read()).hexdigest(), d
    assert "line_count" not in d, d  # 1,892 bytes: over this workspace's max_read_bytes (1000)
    assert d["modified"].endswith("Z") and d["mode"] == "%04o" % (os.stat(os.path.join(root, "lines.txt")).st_mode & 0o7777), d
    d = ok(named(ws, "get_path_info", {"path": "dir/a.txt"}))
    assert d["line_count"] == 2 and d["readable"] is True, d
    env = named(ws, "get_path_info", {"path": "dir/b.txt"})
    assert ok(env) == {"path": "dir/b.txt", "exists": False}, env
    assert "did you mean dir/a.txt?" in env["text"], env
    err(named(ws, "get_path_info", {"path": "../x"}), "outside_workspace")


@test
def walking_tools():
    ws, root = STATE["ws"], STATE["root"]
    os.makedirs(os.path.join(root, "tree", "sub"))
    with open(os.path.join(root, "tree", "sub", "b.py"), "w") as fh:
        fh.write("import os\nneedle = 'ü'\n")
    os.symlink(STATE["base"], os.path.join(root, "tree", "up"))
    d = ok(take(lib.wsfs_call(ws, b"find_files", enc({"pattern": "**/*.py", "path": "tree"}))))
    assert d == {"files": ["tree/sub/b.py"], "truncated": False, "files_scanned": 2, "denied": 0}, d
    d = ok(take(lib.wsfs_call(ws, b"search_text", enc({"query": "NEEDLE", "case_sensitive": False, "context_lines": 1}))))
    assert d["matches"] == [{"file": "tree/sub/b.py", "line": 2, "column": 1, "snippet": "needle = 'ü'",
                             "match_start": 0, "match_end": 6, "before": ["import os"]}], d
    err(take(lib.wsfs_call(ws, b"search_text", enc({"query": "(", "use_regex": True}))), "invalid_regex")
    d = ok(tool(ws, "list_dir", {"path": "tree", "depth": 3}))
    assert d["tree"] == {"name": ".", "type": "dir", "children": [
        {"name": "sub", "type": "dir", "children": [{"name": "b.py", "type": "file", "size": 24}]},
        {"name": "up", "type": "symlink"}]}, d
    assert d["total"] == 3 and d["entries"] == [], d


@test
def move_and_delete():
    ws, root, base = STATE["ws"], STATE["root"], STATE["base"]
    os.makedirs(os.path.join(root, "mv"))
    with open(os.path.join(root, "mv", "a.txt"), "w") as fh:
        fh.write("moved\n")
    d = ok(named(ws, "move_file", {"src": "mv/a.txt", "dst": "mv/new/b.txt"}))
    assert d == {"moved_from": "mv/a.txt", "moved_to": "mv/new/b.txt", "type": "file", "replaced": False,
                 "dirs_created": ["mv/new"]}, d
    with open(os.path.join(root, "mv", "new", "b.txt")) as fh:
        assert fh.read() == "moved\n"
    assert not os.path.exists(os.path.join(root, "mv", "a.txt"))
    err(named(ws, "move_file", {"src": "mv/new/b.txt", "dst": "mv/new/b.txt"}), "invalid_arguments")
    err(named(ws, "move_file", {"src": ".", "dst": "x"}), "invalid_path")
    # A symlink to the outside is deleted itself; what it points to stays.
    outside = os.path.join(base, "keep")
    os.mkdir(outside)
    with open(os.path.join(outside, "canary"), "w") as fh:
        fh.write("c")
    os.symlink(outside, os.path.join(root, "mv", "new", "out"))
    err(named(ws, "delete_file", {"path": "mv"}), "recursive_required")
    env = named(ws, "delete_file", {"path": "mv", "recursive": True})
    assert ok(env) == {"path": "mv", "deleted": True, "was_directory": True, "entries_removed": 4}, env
    assert env["text"] == "deleted directory mv and everything in it (4 entries removed, the directory included)", env
    assert not os.path.exists(os.path.join(root, "mv"))
    assert os.listdir(outside) == ["canary"]


@test
def call_with_options():
    ws = STATE["ws"]
    env = take(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": "dir/a.txt"}), b'{"output":"text"}'))
    assert env["ok"] is True and "data" not in env and "wsfs" in env["text"], env
    env = take(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": "dir/a.txt"}), b'{"output":"data"}'))
    assert "text" not in env and env["data"]["content"] == "hello\r\nwsfs\n", env
    ok(take(lib.wsfs_call_with_options(ws, b"list_dir", b"{}", None)))
    err(take(lib.wsfs_call_with_options(ws, b"list_dir", b"{}", b'{"output":"xml"}')), "invalid_arguments")
    tok = lib.wsfs_cancel_token_new()
    lib.wsfs_cancel_token_cancel(tok)
    opts = enc({"cancel_token": tok})
    err(take(lib.wsfs_call_with_options(ws, b"write_file", enc({"path": "c.txt", "content": "x"}), opts)), "cancelled")
    lib.wsfs_cancel_token_free(tok)
    assert not os.path.exists(os.path.join(STATE["root"], "c.txt"))


def named(ws, name, args):
    return take(lib.wsfs_call(ws, name.encode(), enc(args)))


@test
def create_directory():
    ws, root = STATE["ws"], STATE["root"]
    d = ok(named(ws, "create_directory", {"path": "new/deep/er"}))
    assert d == {"path": "new/deep/er", "created": True, "parents_created": 2}, d
    assert os.path.isdir(os.path.join(root, "new", "deep", "er"))
    d = ok(named(ws, "create_directory", {"path": "new/deep/er"}))
    assert d["created"] is False and d["parents_created"] == 0, d
    err(named(ws, "create_directory", {"path": "dir/a.txt"}), "not_a_directory")
    err(named(ws, "create_directory", {"path": "nope/x", "parents": False}), "path_not_found")
    err(named(ws, "create_directory", {"path": "../escape"}), "outside_workspace")
    assert not os.path.exists(os.path.join(root, "nope"))


@test
def write_modes():
    ws, root = STATE["ws"], STATE["root"]
    d = ok(tool(ws, "write_file", {"path": "once.txt", "content": "first", "mode": "create"}))
    assert d["created"] is True and d["existed_before"] is False, d
    err(tool(ws, "write_file", {"path": "once.txt", "content": "second", "mode": "create"}), "file_exists")
    # The content buffer works for every mode.
    env = take(lib.wsfs_call_with_content(ws, b"write_file", enc({"path": "once.txt", "mode": "append"}), None,
                                          b"+more", 5))
    d = ok(env)
    assert d["existed_before"] is True and d["bytes_written"] == 5, d
    env = take(lib.wsfs_call_with_content(ws, b"write_file", enc({"path": "once.txt", "mode": "create"}), None,
                                          b"x", 1))
    err(env, "file_exists")
    with open(os.path.join(root, "once.txt")) as fh:
        assert fh.read() == "first+more"


@test
def policy_and_audit_log():
    base = STATE["base"]
    root = os.path.join(base, "policed")
    log = os.path.join(base, "audit.jsonl")
    os.makedirs(os.path.join(root, ".git"))
    with open(os.path.join(root, ".env"), "w") as fh:
        fh.write("TOKEN=1\n")
    cfg = {"root": root, "policy": {"deny_read": [".env"], "audit_log": log}}
    ws = ok(take(lib.wsfs_workspace_open(enc(cfg))))["workspace"]
    os.symlink(".env", os.path.join(root, "link"))
    msg = err(tool(ws, "read_file", {"path": "link"}), "policy_denied")
    assert "'.env'" in msg, msg
    err(tool(ws, "write_file", {"path": ".git/config", "content": "x"}), "policy_denied")
    ok(tool(ws, "write_file", {"path": "a.txt", "content": "a"}))
    ok(take(lib.wsfs_workspace_close(ws)))
    with open(log) as fh:
        lines = [json.loads(line) for line in fh]
    assert [line["outcome"] for line in lines] == ["policy_denied", "policy_denied", "ok"], lines
    assert lines[2]["changes"][0]["path"] == "a.txt", lines
    ro = ok(take(lib.wsfs_workspace_open(enc({"root": root, "policy": {"writes_enabled": False}}))))["workspace"]
    err(named(ro, "create_directory", {"path": "x"}), "writes_disabled")
    ok(tool(ro, "read_file", {"path": "a.txt"}))
    ok(take(lib.wsfs_workspace_close(ro)))
def take_raw(ptr):
    """A raw-mode result: the JSON head, and the bytes after the first newline (None if none)."""
    try:
        raw = ctypes.string_at(ptr)
    finally:
        lib.wsfs_string_free(ptr)
    head, nl, rest = raw.partition(b"\n")
    return json.loads(head), (rest if nl else None)


@test
def fast_read_path():
    """The documented way to read from C or Python: "data_raw", the content after the JSON."""
    ws, root = STATE["ws"], STATE["root"]
    for name, content in (("fast.txt", "line \"one\"\n\\two\t\u00e9\n"), ("empty.txt", "")):
        with open(os.path.join(root, name), "w", encoding="utf-8") as fh:
            fh.write(content)
        env, raw = take_raw(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": name}), b'{"output":"data_raw"}'))
        data = content.encode("utf-8")
        assert env["ok"] is True and raw == data and "content" not in env["data"], (env, raw)
        assert env["data"]["bytes"] == len(data) and env["data"]["sha256"] == hashlib.sha256(data).hexdigest(), env
        env, text = take_raw(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": name}), b'{"output":"text_raw"}'))
        assert env == {"ok": True, "warnings": []}, env
        assert text.decode("utf-8") == (content or "(empty file)"), text
    # A truncated read: the text_raw text ends with the notice, data_raw carries only the content.
    env, raw = take_raw(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": "big.txt"}), b'{"output":"data_raw"}'))
    assert env["data"]["truncated"] is True and raw.decode("utf-8") == "é" * 500, env
    env, text = take_raw(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": "big.txt"}), b'{"output":"text_raw"}'))
    assert text.decode("utf-8").endswith("bytes are shown; continue with start_line=2]"), text
    # wsfs_call_sized gives the result's length; a content buffer works as with_content's.
    n = ctypes.c_size_t(0)
    ptr = lib.wsfs_call_sized(ws, b"read_file", enc({"path": "fast.txt"}), b'{"output":"data_raw"}', None, 0, ctypes.byref(n))
    raw = ctypes.string_at(ptr, n.value)
    assert n.value == len(ctypes.string_at(ptr)) and raw.endswith(b"\n\\two\t\xc3\xa9\n"), raw
    lib.wsfs_string_free(ptr)
    d = ok(take(lib.wsfs_call_sized(ws, b"write_file", enc({"path": "sized.txt"}), None, b"abc", 3, None)))
    assert d["bytes_written"] == 3, d
    # Failures are plain envelopes, without a newline.
    env, rest = take_raw(lib.wsfs_call_with_options(ws, b"read_file", enc({"path": "../x"}), b'{"output":"data_raw"}'))
    assert rest is None and env["error"]["code"] == "outside_workspace", env


@test
def escape_is_refused():
    ws, base = STATE["ws"], STATE["base"]
    outside = os.path.join(base, "outside")
    os.mkdir(outside)
    with open(os.path.join(outside, "secret.txt"), "w") as fh:
        fh.write("TOPSECRET")
    os.symlink(outside, os.path.join(STATE["root"], "out"))
    for path in ("../outside/secret.txt", outside + "/secret.txt", "out/secret.txt"):
        env = tool(ws, "read_file", {"path": path})
        err(env, "outside_workspace")
        assert "TOPSECRET" not in json.dumps(env), env
        err(tool(ws, "write_file", {"path": path, "content": "pwned"}), "outside_workspace")
    err(tool(ws, "list_dir", {"path": "out"}), "outside_workspace")
    with open(os.path.join(outside, "secret.txt")) as fh:
        assert fh.read() == "TOPSECRET"
    assert os.listdir(outside) == ["secret.txt"]


@test
def threads_share_a_handle():
    ws, errors = STATE["ws"], []

    def work(i):
        try:
            for j in range(20):
                ok(tool(ws, "append_file", {"path": "t.log", "content": "%d-%d\n" % (i, j)}))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    with open(os.path.join(STATE["root"], "t.log")) as fh:
        assert sorted(fh.read().splitlines()) == sorted("%d-%d" % (i, j) for i in range(4) for j in range(20))


@test
def close_and_use_after_close():
    ws = STATE["ws"]
    ok(take(lib.wsfs_workspace_close(ws)))
    args = {
        "read_file": {"path": "dir/a.txt"},
        "write_file": {"path": "dir/a.txt", "content": "x"},
        "append_file": {"path": "dir/a.txt", "content": "x"},
        "list_dir": {"path": "dir"},
        "edit_file": {"path": "dir/a.txt", "old_text": "hello", "new_text": "y"},
    }
    for name in TOOLS:
        err(tool(ws, name, args[name]), "invalid_workspace")
    with open(os.path.join(STATE["root"], "dir", "a.txt"), "rb") as fh:
        assert fh.read() == b"hello\r\nwsfs\n"
    err(take(lib.wsfs_call(ws, b"read_file", b'{"path":"dir/a.txt"}')), "invalid_workspace")
    err(take(lib.wsfs_workspace_close(ws)), "invalid_workspace")
    err(take(lib.wsfs_workspace_close(0)), "invalid_workspace")


@test
def apply_patch_commits_files_together():
    base = STATE["base"]
    root = os.path.join(base, "patched")
    os.mkdir(root)
    cfg = {"root": root, "state_dir": os.path.join(base, "state")}
    ws = ok(take(lib.wsfs_workspace_open(enc(cfg))))["workspace"]
    with open(os.path.join(root, "a.txt"), "wb") as fh:
        fh.write(b"one\r\ntwo\r\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n one\n-two\n+TWO\n*** Add File: b/c.txt\n+new\n*** End Patch\n"
    d = ok(take(lib.wsfs_call(ws, b"apply_patch", enc({"patch": patch}))))
    assert d["applied"] is True and d["rejected_hunks"] == [], d
    assert [(f["action"], f["path"]) for f in d["files_changed"]] == [("update", "a.txt"), ("add", "b/c.txt")], d
    with open(os.path.join(root, "a.txt"), "rb") as fh:
        assert fh.read() == b"one\r\nTWO\r\n"
    with open(os.path.join(root, "b", "c.txt"), "rb") as fh:
        assert fh.read() == b"new\n"
    ok(take(lib.wsfs_workspace_close(ws)))


@test
def free_null_and_bad_input():
    lib.wsfs_string_free(None)
    err(take(lib.wsfs_workspace_open(None)), "invalid_arguments")
    err(take(lib.wsfs_workspace_open(b"{not json")), "invalid_arguments")


def main():
    passed = failed = 0
    for fn in TESTS:
        try:
            fn()
            passed += 1
            print("ok   " + fn.__name__)
        except Exception:  # noqa: BLE001
            failed += 1
            print("FAIL " + fn.__name__)
            traceback.print_exc()
    if "base" in STATE:
        shutil.rmtree(os.path.dirname(STATE["base"]), ignore_errors=True)
    print("python smoke: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
