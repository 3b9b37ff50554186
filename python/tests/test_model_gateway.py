"""The configured model gateway (``model_gateway``; the MODEL_* variables) through the Python
package: a Wasm tool reaches a fake OpenAI-compatible provider on loopback (http.server) with no
callable set; a callable takes precedence; a failing provider is named with its status; the key
is in no result."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import wsfs

from conftest import REPO

ASK_MODEL = REPO / "tools" / "ask_model"
KEY = "sk-py-gateway-Hb37secret"


@pytest.fixture
def provider():
    """A fake provider answering each request with ``state["status"]``; ``state["keyed"]`` counts
    the requests that carried the key."""
    state = {"status": 200, "keyed": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            if self.headers.get("Authorization") == f"Bearer {KEY}":
                state["keyed"] += 1
            text = f"you said {body['messages'][-1]['content']} with {KEY}"
            if state["status"] == 200:
                answer = {"model": body["model"], "choices": [{"message": {"content": text}, "finish_reason": "stop"}]}
            else:
                answer = {"error": {"message": f"it broke ({KEY})"}}
            data = json.dumps(answer).encode()
            self.send_response(state["status"])
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    server.shutdown()
    server.server_close()


def test_the_configured_gateway_needs_no_callable(root, provider, monkeypatch):
    monkeypatch.setenv("WSFS_PY_TEST_KEY", KEY)
    gateway = {"provider": "openai-compatible", "base_url": provider["url"], "model": "fake-4",
               "api_key_env": "WSFS_PY_TEST_KEY", "max_retries": 0}
    with wsfs.Workspace(root, wasm_tools=[ASK_MODEL], model_gateway=gateway) as ws:
        env = ws.call("ask_model", prompt="hi")
        assert env["ok"], env
        assert env["data"] == {"text": "you said hi with [redacted]", "finish_reason": "stop", "model": "fake-4"}
        assert provider["keyed"] == 1
        ws.set_model_gateway(lambda request, timeout: {"text": "from the callable"})
        assert ws.call("ask_model", prompt="hi")["data"] == {"text": "from the callable"}
        assert provider["keyed"] == 1
        ws.set_model_gateway(None)
        provider["status"] = 503
        env = ws.call("ask_model", prompt="hi")
        assert env["error"]["code"] == "gateway_error", env
        message = env["error"]["message"]
        assert "openai-compatible" in message and "HTTP 503" in message, message
        assert KEY not in json.dumps(env)


def test_the_model_variables_configure_it(root, provider, monkeypatch):
    monkeypatch.setenv("WSFS_PY_TEST_KEY", KEY)
    env = {"MODEL_PROVIDER": "ollama", "MODEL_BASE_URL": provider["url"], "MODEL_NAME": "llama3.2",
           "MODEL_API_KEY_ENV": "WSFS_PY_TEST_KEY", "MODEL_TIMEOUT_SECS": "2.5"}
    cfg = wsfs.apply_tool_env({"root": str(root), "wasm_tools": [str(ASK_MODEL)]}, env)
    assert cfg["model_gateway"] == {"provider": "ollama", "base_url": provider["url"], "model": "llama3.2",
                                    "api_key_env": "WSFS_PY_TEST_KEY", "timeout_ms": 2500}
    with wsfs.Workspace.from_config(cfg) as ws:
        assert ws.call("ask_model", prompt="yo")["data"]["model"] == "llama3.2"
    for name, value in (("MODEL_PROVIDER", "openai"), ("MODEL_TIMEOUT_SECS", "-1")):
        with pytest.raises(wsfs.InvalidArguments, match=name):
            wsfs.apply_tool_env({"root": str(root)}, {name: value})
    with pytest.raises(wsfs.InvalidArguments, match="model_gateway.provider"):
        wsfs.Workspace(root, model_gateway={"provider": "gpt", "model": "m"})
