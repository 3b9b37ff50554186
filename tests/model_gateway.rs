//! The configured model gateway (`model_gateway`, cargo feature `model-gateway-http`) through
//! the C ABI: a Wasm tool with `model_access` reaches a fake OpenAI-compatible provider on
//! loopback without any callback; a callback the host sets takes precedence; the provider's
//! failures reach the tool named; the key reaches no envelope, audit line, log or tool.
//! (crates/wasm's `host::provider` tests cover timeouts, retries and malformed answers.)

use crate::common::*;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const KEY_ENV: &str = "WSFS_TEST_GATEWAY_KEY";
const KEY: &str = "sk-gateway-Lm42secret";

/// A fake OpenAI-compatible provider on 127.0.0.1: each request is answered with `status` and
/// `content` (an error message for a status that is not 200, echoing the key either way);
/// `count` counts the requests that carried the key.
fn fake_provider(status: u16, content: &'static str) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let (mut length, mut keyed) = (0, false);
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                keyed |= line.contains(&format!("Bearer {KEY}"));
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            if keyed {
                seen.fetch_add(1, Ordering::SeqCst);
            }
            let text = format!("{content} (key {KEY})");
            let answer = match status {
                200 => json!({"model": "fake-4", "choices": [{"message": {"content": text},
                    "finish_reason": "stop"}]}),
                _ => json!({"error": {"message": text}}),
            }
            .to_string();
            let _ = write!(
                reader.into_inner(),
                "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                answer.len()
            );
        }
    });
    (url, count)
}

fn ask_model() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tools/ask_model")
        .to_string_lossy()
        .into_owned()
}

fn config(url: &str, audit: &Path) -> Value {
    // This binary's own variable, set once (no setenv beside the other tests' reads after that).
    static KEY_SET: std::sync::Once = std::sync::Once::new();
    KEY_SET.call_once(|| std::env::set_var(KEY_ENV, KEY));
    json!({"wasm_tools": [ask_model()],
        "policy": {"audit_log": audit, "audit_arguments": true},
        "model_gateway": {"provider": "openai-compatible", "base_url": url, "model": "fake-4",
            "api_key_env": KEY_ENV, "max_retries": 1}})
}

fn assert_no_key(what: &str, text: &str) {
    assert!(!text.contains(KEY), "the key is in {what}: {text}");
}

/// The host's callback: answers `{"text": "from the callback"}`.
unsafe extern "C" fn callback(
    _userdata: *mut std::ffi::c_void,
    _request: *const std::ffi::c_char,
    _timeout_ms: u64,
    response: *mut ffi::wsfs_gateway_response,
) -> i32 {
    let text = cs(r#"{"text":"from the callback"}"#);
    unsafe { ffi::wsfs_gateway_respond(response, text.as_ptr()) };
    ffi::WSFS_GATEWAY_OK
}

#[test]
fn the_configured_gateway_answers_tools_and_a_callback_takes_precedence() {
    let audit = tempfile::tempdir().unwrap();
    let audit = audit.path().join("audit.jsonl");
    let (url, count) = fake_provider(200, "hello");
    let f = Fixture::with_config(config(&url, &audit));
    let ask = || call_named(f.ws, "ask_model", r#"{"prompt":"hi"}"#);
    let v = ask();
    let data = assert_ok(&v);
    assert_eq!(data["model"], "fake-4");
    assert_eq!(data["finish_reason"], "stop");
    // The provider echoed the key in its answer: the tool got it redacted.
    assert_eq!(data["text"], "hello (key [redacted])");
    assert_eq!(count.load(Ordering::SeqCst), 1, "the key was not sent");
    assert_no_key("the envelope", &v.to_string());
    // The host's callback wins while it is set, and nothing reaches the provider.
    let set = take_envelope(ffi::wsfs_set_model_gateway(
        f.ws,
        Some(callback),
        std::ptr::null_mut(),
    ));
    assert_ok(&set);
    assert_eq!(assert_ok(&ask())["text"], "from the callback");
    assert_eq!(count.load(Ordering::SeqCst), 1);
    // Removed: the configured gateway again.
    take_envelope(ffi::wsfs_set_model_gateway(
        f.ws,
        None,
        std::ptr::null_mut(),
    ));
    assert_eq!(assert_ok(&ask())["model"], "fake-4");
    assert_eq!(count.load(Ordering::SeqCst), 2);
    drop(f);
    let lines = std::fs::read_to_string(&audit).unwrap();
    assert!(lines.contains("ask_model"), "{lines}");
    assert_no_key("the audit log", &lines);
}

#[test]
fn a_failing_provider_is_named_with_its_status_without_the_key() {
    let audit = tempfile::tempdir().unwrap();
    let audit = audit.path().join("audit.jsonl");
    let (url, count) = fake_provider(500, "it broke");
    let f = Fixture::with_config(config(&url, &audit));
    let v = call_named(f.ws, "ask_model", r#"{"prompt":"hi"}"#);
    let message = assert_err(&v, "gateway_error");
    assert!(
        message.contains("openai-compatible") && message.contains("HTTP 500: it broke"),
        "{message}"
    );
    assert!(message.contains("after 2 attempts"), "{message}");
    assert_eq!(count.load(Ordering::SeqCst), 2);
    assert_no_key("the envelope", &v.to_string());
    drop(f);
    assert_no_key("the audit log", &std::fs::read_to_string(&audit).unwrap());
}

/// The call's cancel token stops a call waiting on a provider that does not answer.
#[test]
fn a_cancel_token_stops_a_call_waiting_on_the_provider() {
    // Accepts, never answers (the connections are kept until the test ends).
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let held: Vec<_> = listener.incoming().collect();
        drop(held);
    });
    let audit = tempfile::tempdir().unwrap();
    let f = Fixture::with_config(config(&url, &audit.path().join("a.jsonl")));
    let token = ffi::wsfs_cancel_token_new();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(300));
        ffi::wsfs_cancel_token_cancel(token);
    });
    let started = std::time::Instant::now();
    let v = call_opts(
        f.ws,
        "ask_model",
        r#"{"prompt":"hi"}"#,
        Some(&format!(r#"{{"cancel_token":{token}}}"#)),
    );
    // Back long before ask_model's 30 s limit and the gateway's 60 s.
    let took = started.elapsed();
    canceller.join().unwrap();
    assert_err(&v, "cancelled");
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    ffi::wsfs_cancel_token_free(token);
}

/// Runs [`gateway_log_child`] with every log line on stderr, and finds no key there.
#[test]
fn the_key_never_reaches_a_log() {
    let log = run_child_test(&crate::test_name!(gateway_log_child), "WSFS_LOG", "trace");
    assert!(
        log.contains("model gateway attempt failed"),
        "no log line was captured: {log}"
    );
    assert!(log.contains("tool=ask_model"), "{log}");
    assert_no_key("the log", &log);
}

#[test]
#[ignore = "run by the_key_never_reaches_a_log, with WSFS_LOG set"]
fn gateway_log_child() {
    let audit = tempfile::tempdir().unwrap();
    let (ok_url, _) = fake_provider(200, "fine");
    let (bad_url, _) = fake_provider(503, "overloaded");
    for url in [ok_url, bad_url] {
        let f = Fixture::with_config(config(&url, &audit.path().join("a.jsonl")));
        let v = call_named(f.ws, "ask_model", r#"{"prompt":"hi"}"#);
        println!("{v}");
    }
}

#[test]
fn a_bad_model_gateway_is_refused_at_open_naming_the_key() {
    let root = tempfile::tempdir().unwrap();
    let open = |gateway: Value| {
        open_raw(&json!({"root": root.path(), "model_gateway": gateway}).to_string())
    };
    for (gateway, key) in [
        (
            json!({"provider": "gpt", "model": "m"}),
            "model_gateway.provider",
        ),
        (
            json!({"provider": "anthropic", "model": "m", "base_url": "http://api.example.com"}),
            "model_gateway.base_url",
        ),
        (
            json!({"provider": "ollama", "model": "m", "timeout_ms": 0}),
            "model_gateway.timeout_ms",
        ),
        (
            json!({"provider": "ollama", "model": "m", "api_key_env": "WSFS_TEST_NO_SUCH_KEY_VAR"}),
            "WSFS_TEST_NO_SUCH_KEY_VAR",
        ),
    ] {
        let message = assert_err(&open(gateway.clone()), "invalid_arguments");
        assert!(message.contains(key), "{gateway}: {message}");
    }
}
