// The `wsfs` host functions: the model gateway and direct network, with and without their
// capability.

use super::wat::Fixture;
use super::*;
use crate::host::gateway::GatewayFailure;
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Calls `function` with `request` and prints `{"status": N, "response": <pending>}`.
fn caller(function: &str, request: &str) -> String {
    let mut f = Fixture::new();
    let req = f.text(request);
    let open = f.text("{\"status\":");
    let middle = f.text(",\"response\":");
    let close = f.text("}");
    f.wat(&format!(
        "(local $status i32) (local.set $status (call ${function} {req}))
         (call $print {open}) (call $print_num (local.get $status))
         (call $print {middle}) (call $print_response) (call $print {close})"
    ))
}

/// A gateway that counts its calls and answers with `answer`.
fn gateway(
    calls: Arc<AtomicUsize>,
    answer: impl Fn(&str) -> std::result::Result<String, GatewayFailure> + Send + Sync + 'static,
) -> Arc<dyn ModelGateway> {
    Arc::new(move |request: &str, _deadline: Instant| {
        calls.fetch_add(1, Ordering::SeqCst);
        answer(request)
    })
}

const MODEL_REQUEST: &str = r#"{"messages":[{"role":"user","content":"hi"}]}"#;

#[test]
fn a_model_call_without_the_capability_never_reaches_the_gateway() {
    let calls = Arc::new(AtomicUsize::new(0));
    let gw = gateway(calls.clone(), |_| Ok(r#"{"text":"hello"}"#.into()));
    let loaded = tool(&caller("model_generate", MODEL_REQUEST), "");
    let out = run_with(&loaded, "{}", &ctl(), None, Some(gw)).unwrap();
    assert_eq!(out.data["status"], 1);
    assert_eq!(out.data["response"]["error"]["code"], "capability_denied");
    assert_eq!(calls.load(Ordering::SeqCst), 0);
    assert_eq!(out.host_calls.denied, 1);
}

#[test]
fn a_model_call_with_the_capability_goes_through_the_gateway() {
    let calls = Arc::new(AtomicUsize::new(0));
    let gw = gateway(calls.clone(), |request| {
        let request: Value = serde_json::from_str(request).unwrap();
        Ok(json!({"text": request["messages"][0]["content"]}).to_string())
    });
    let with_access = r#","capabilities":{"model_access":true}"#;
    let loaded = tool(&caller("model_generate", MODEL_REQUEST), with_access);
    let out = run_with(&loaded, "{}", &ctl(), None, Some(gw)).unwrap();
    assert_eq!(out.data, json!({"status": 0, "response": {"text": "hi"}}));
    assert_eq!(calls.load(Ordering::SeqCst), 1);

    // A failing gateway, none at all, and a request that is not JSON.
    let failing = gateway(calls.clone(), |_| {
        Err(GatewayFailure::new(
            ErrorCode::GatewayError,
            "the provider said 503",
        ))
    });
    let out = run_with(&loaded, "{}", &ctl(), None, Some(failing)).unwrap();
    assert_eq!(out.data["status"], 2);
    assert_eq!(
        out.data["response"]["error"]["message"],
        "the provider said 503"
    );
    let out = run_with(&loaded, "{}", &ctl(), None, None).unwrap();
    assert_eq!(out.data["response"]["error"]["code"], "gateway_error");
    let before = calls.load(Ordering::SeqCst);
    let bad = tool(&caller("model_generate", "not json"), with_access);
    let gw = gateway(calls.clone(), |_| Ok("{}".into()));
    let out = run_with(&bad, "{}", &ctl(), None, Some(gw)).unwrap();
    assert_eq!(out.data["response"]["error"]["code"], "invalid_arguments");
    assert_eq!(calls.load(Ordering::SeqCst), before);
}

#[test]
fn a_gateway_answering_after_the_deadline_stops_the_tool() {
    let slow: Arc<dyn ModelGateway> = Arc::new(|_: &str, deadline: Instant| {
        std::thread::sleep(
            deadline.saturating_duration_since(Instant::now()) + Duration::from_millis(20),
        );
        Ok("{}".to_string())
    });
    let fields = r#","capabilities":{"model_access":true},"limits":{"timeout_ms":100}"#;
    let loaded = tool(&caller("model_generate", MODEL_REQUEST), fields);
    let result = run_with(&loaded, "{}", &ctl(), None, Some(slow));
    assert_eq!(
        code(&result),
        ErrorCode::Timeout,
        "{}",
        err_message(&result)
    );
}

/// A one-request HTTP server on 127.0.0.1: its port, and a handle to whether it was reached.
fn server(body: &'static str) -> (u16, std::thread::JoinHandle<Option<String>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let handle = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_millis(1500);
        while Instant::now() < until {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    stream.set_nonblocking(false).unwrap();
                    let mut request = vec![0u8; 4096];
                    let n = stream.read(&mut request).unwrap_or(0);
                    let reply = format!(
                        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(reply.as_bytes());
                    return Some(String::from_utf8_lossy(&request[..n]).into_owned());
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        None
    });
    (port, handle)
}

#[test]
fn a_network_attempt_without_the_capability_sends_nothing() {
    let (port, reached) = server("secret");
    let request = format!(r#"{{"url":"http://127.0.0.1:{port}/x"}}"#);
    let loaded = tool(&caller("http_request", &request), "");
    let out = run_with(&loaded, "{}", &ctl(), None, None).unwrap();
    assert_eq!(out.data["status"], 1);
    assert_eq!(out.data["response"]["error"]["code"], "capability_denied");
    assert_eq!(reached.join().unwrap(), None, "the server was reached");
}

#[test]
fn a_network_call_reaches_only_the_allowed_hosts() {
    let (port, reached) = server("pong");
    let allowed =
        format!(r#","capabilities":{{"network":{{"allowed_hosts":["127.0.0.1:{port}"]}}}}"#);
    let request =
        format!(r#"{{"method":"POST","url":"http://127.0.0.1:{port}/ping","body":"hi"}}"#);
    let loaded = tool(&caller("http_request", &request), &allowed);
    let out = run_with(&loaded, "{}", &ctl(), None, None).unwrap();
    assert_eq!(out.data["status"], 0, "{}", out.data);
    assert_eq!(out.data["response"]["status"], 200);
    assert_eq!(out.data["response"]["body"], "pong");
    let seen = reached.join().unwrap().expect("the server was reached");
    assert!(
        seen.starts_with("POST /ping HTTP/1.0\r\n") && seen.ends_with("\r\n\r\nhi"),
        "{seen}"
    );

    // Another port of the same host is not allowed.
    let (other, reached) = server("secret");
    let request = format!(r#"{{"url":"http://127.0.0.1:{other}/"}}"#);
    let loaded = tool(&caller("http_request", &request), &allowed);
    let out = run_with(&loaded, "{}", &ctl(), None, None).unwrap();
    assert_eq!(out.data["response"]["error"]["code"], "capability_denied");
    assert_eq!(reached.join().unwrap(), None, "the server was reached");
}

#[test]
fn the_hosts_policy_is_checked_again_at_each_call() {
    let (port, reached) = server("x");
    let allowed = r#","capabilities":{"network":{"allowed_hosts":["127.0.0.1"]}}"#;
    let request = format!(r#"{{"url":"http://127.0.0.1:{port}/"}}"#);
    let permissive = WasmCeiling {
        allow_direct_network: true,
        ..WasmCeiling::default()
    };
    let loaded = tool_with(&caller("http_request", &request), allowed, &permissive).unwrap();
    // The host turned direct network off after the tool was loaded.
    let result = runner::run(
        &loaded,
        "{}",
        RunContext {
            ctl: &ctl(),
            host: &WasmCeiling::default(),
            workspace: None,
            gateway: None,
        },
    );
    assert_eq!(code(&result), ErrorCode::CapabilityDenied);
    assert_eq!(reached.join().unwrap(), None, "the server was reached");
}
