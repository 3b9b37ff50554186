//! The configured gateway against fake providers on loopback (std `TcpListener`, one thread
//! per test): answers, slowness, retries, malformed and misshapen bodies, and the key's secrecy.

use super::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

const KEY: &str = "sk-test-Zq8w1secret";

/// What the fake provider does with one request.
enum Reply {
    /// Status, extra header lines, body.
    Answer(u16, &'static str, String),
    /// Holds the connection this long without answering.
    Stall(Duration),
}

/// A fake provider on 127.0.0.1 answering each connection with the next reply (the last one
/// again when they run out); `requests` holds each request's head and body.
struct Fake {
    url: String,
    requests: Arc<Mutex<Vec<String>>>,
}

fn fake(replies: Vec<Reply>) -> Fake {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    std::thread::spawn(move || {
        for (next, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { return };
            let mut reader = BufReader::new(stream);
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&line);
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            seen.lock()
                .unwrap()
                .push(format!("{head}{}", String::from_utf8_lossy(&body)));
            let reply = &replies[next.min(replies.len() - 1)];
            let mut stream = reader.into_inner();
            match reply {
                Reply::Stall(d) => std::thread::sleep(*d),
                Reply::Answer(status, headers, body) => {
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n{headers}\
                         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            }
        }
    });
    Fake { url, requests }
}

fn openai_ok(text: &str) -> Reply {
    Reply::Answer(
        200,
        "",
        json!({"model": "fake-4", "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]})
            .to_string(),
    )
}

fn gateway(provider: &str, url: &str, extra: Value) -> ConfiguredGateway {
    // The key's variable is this test binary's own, set once (not by each test, so that no
    // setenv runs beside the others' reads more than that once).
    static KEY_SET: std::sync::Once = std::sync::Once::new();
    KEY_SET.call_once(|| std::env::set_var("WSFS_TEST_PROVIDER_KEY", KEY));
    let mut config = json!({"provider": provider, "base_url": url, "model": "fake-4",
        "api_key_env": "WSFS_TEST_PROVIDER_KEY", "timeout_ms": 10_000});
    for (k, v) in extra.as_object().unwrap() {
        config[k] = v.clone();
    }
    let config: ModelGatewayConfig = serde_json::from_value(config).unwrap();
    ConfiguredGateway::from_config(&config).unwrap()
}

fn in_secs(secs: u64) -> Instant {
    Instant::now() + Duration::from_secs(secs)
}

fn ask(g: &ConfiguredGateway, deadline: Instant) -> std::result::Result<Value, GatewayFailure> {
    g.generate(
        r#"{"prompt":"hi","system":"be brief","max_output_tokens":7}"#,
        deadline,
    )
    .map(|text| serde_json::from_str(&text).unwrap())
}

fn assert_no_key(text: &str) {
    assert!(!text.contains(KEY), "the key leaked: {text}");
}

#[test]
fn openai_compatible_answers_and_gets_the_request() {
    let f = fake(vec![openai_ok("hello")]);
    let g = gateway("openai-compatible", &format!("{}/v1", f.url), json!({}));
    let answer = ask(&g, in_secs(10)).unwrap();
    assert_eq!(
        answer,
        json!({"text": "hello", "finish_reason": "stop", "model": "fake-4"})
    );
    let requests = f.requests.lock().unwrap();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert!(r.starts_with("POST /v1/chat/completions "), "{r}");
    assert!(
        r.to_ascii_lowercase()
            .contains(&format!("authorization: bearer {KEY}").to_ascii_lowercase()),
        "{r}"
    );
    let body: Value = serde_json::from_str(&r[r.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["model"], "fake-4");
    assert_eq!(body["max_tokens"], 7);
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        body["messages"][1],
        json!({"role": "user", "content": "hi"})
    );
    assert_no_key(&format!("{g:?}"));
}

#[test]
fn anthropic_answers_and_gets_the_request() {
    let f = fake(vec![Reply::Answer(
        200,
        "",
        json!({"model": "claude-x", "stop_reason": "max_tokens",
               "content": [{"type": "text", "text": "he"}, {"type": "text", "text": "llo"}]})
        .to_string(),
    )]);
    let g = gateway("anthropic", &f.url, json!({}));
    let answer = ask(&g, in_secs(10)).unwrap();
    assert_eq!(
        answer,
        json!({"text": "hello", "finish_reason": "length", "model": "claude-x"})
    );
    let r = &f.requests.lock().unwrap()[0];
    assert!(r.starts_with("POST /v1/messages "), "{r}");
    let lower = r.to_ascii_lowercase();
    assert!(
        lower.contains(&format!("x-api-key: {}", KEY.to_ascii_lowercase())),
        "{r}"
    );
    assert!(lower.contains("anthropic-version: 2023-06-01"), "{r}");
    assert!(!lower.contains("authorization"), "{r}");
    let body: Value = serde_json::from_str(&r[r.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!(body["system"], "be brief");
    assert_eq!(body["max_tokens"], 7);
    assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
}

#[test]
fn a_slow_provider_is_cut_off_at_the_deadline() {
    let f = fake(vec![Reply::Stall(Duration::from_secs(30))]);
    let g = gateway("ollama", &f.url, json!({"max_retries": 3}));
    let started = Instant::now();
    let e = ask(&g, Instant::now() + Duration::from_millis(600)).unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.code, ErrorCode::Timeout, "{}", e.message);
    assert!(e.message.contains("ollama"), "{}", e.message);
    // Stopped by the deadline (a socket timeout), not by the 30 s stall; never retried.
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(f.requests.lock().unwrap().len(), 1);
    // The gateway's own timeout_ms bounds it likewise.
    let f = fake(vec![Reply::Stall(Duration::from_secs(30))]);
    let g = gateway("ollama", &f.url, json!({"timeout_ms": 500}));
    let started = Instant::now();
    assert_eq!(ask(&g, in_secs(60)).unwrap_err().code, ErrorCode::Timeout);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_429_is_retried_after_its_retry_after() {
    let f = fake(vec![
        Reply::Answer(
            429,
            "Retry-After: 1\r\n",
            r#"{"error":{"message":"slow down"}}"#.into(),
        ),
        openai_ok("at last"),
    ]);
    let g = gateway("openai-compatible", &f.url, json!({}));
    let started = Instant::now();
    assert_eq!(ask(&g, in_secs(20)).unwrap()["text"], "at last");
    assert_eq!(f.requests.lock().unwrap().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "Retry-After was not honored"
    );
    // A Retry-After past the deadline: no second request, and the error says why.
    let f = fake(vec![Reply::Answer(429, "Retry-After: 60\r\n", "{}".into())]);
    let g = gateway("openai-compatible", &f.url, json!({}));
    let e = ask(&g, in_secs(5)).unwrap_err();
    assert_eq!(e.code, ErrorCode::GatewayError);
    assert!(
        e.message.contains("HTTP 429") && e.message.contains("past the deadline"),
        "{}",
        e.message
    );
    assert_eq!(f.requests.lock().unwrap().len(), 1);
}

#[test]
fn a_500_forever_is_retried_a_bounded_number_of_times() {
    let f = fake(vec![Reply::Answer(
        503,
        "",
        format!(r#"{{"error":{{"message":"overloaded; your key {KEY} is fine"}}}}"#),
    )]);
    let g = gateway("anthropic", &f.url, json!({"max_retries": 2}));
    let e = ask(&g, in_secs(20)).unwrap_err();
    assert_eq!(e.code, ErrorCode::GatewayError);
    assert!(
        e.message.contains("anthropic at http://127.0.0.1:"),
        "{}",
        e.message
    );
    assert!(e.message.contains("HTTP 503: overloaded"), "{}", e.message);
    assert!(e.message.contains("after 3 attempts"), "{}", e.message);
    // The provider echoed the key: the message does not.
    assert_no_key(&e.message);
    assert_eq!(f.requests.lock().unwrap().len(), 3);
    // A 4xx other than 429 is not retried.
    let f = fake(vec![Reply::Answer(
        401,
        "",
        r#"{"error":{"message":"bad key"}}"#.into(),
    )]);
    let g = gateway("openai-compatible", &f.url, json!({}));
    let e = ask(&g, in_secs(20)).unwrap_err();
    assert!(
        e.message.contains("openai-compatible") && e.message.contains("HTTP 401: bad key"),
        "{}",
        e.message
    );
    assert_eq!(f.requests.lock().unwrap().len(), 1);
}

#[test]
fn malformed_and_misshapen_answers_are_gateway_errors() {
    for (provider, body, says) in [
        ("openai-compatible", "{not json", "not JSON"),
        (
            "openai-compatible",
            r#"{"choices": []}"#,
            "unexpected shape",
        ),
        (
            "openai-compatible",
            r#"{"choices": [{"message": {"content": 5}}]}"#,
            "unexpected shape",
        ),
        ("anthropic", r#"{"completion": "hi"}"#, "unexpected shape"),
    ] {
        let f = fake(vec![Reply::Answer(200, "", body.into())]);
        let g = gateway(provider, &f.url, json!({}));
        let e = ask(&g, in_secs(10)).unwrap_err();
        assert_eq!(e.code, ErrorCode::GatewayError, "{body}");
        assert!(
            e.message.contains(says) && e.message.contains(provider),
            "{body}: {}",
            e.message
        );
        assert_eq!(f.requests.lock().unwrap().len(), 1, "{body}");
    }
}

#[test]
fn a_request_of_the_wrong_shape_is_refused_before_any_send() {
    let f = fake(vec![openai_ok("x")]);
    let g = gateway("ollama", &f.url, json!({}));
    for request in [
        r#"{"messages":[]}"#,
        r#"{"prompt":1}"#,
        r#"{"prompt":"x","temperature":1}"#,
    ] {
        let e = g.generate(request, in_secs(10)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments, "{request}");
        assert!(e.message.contains("\"prompt\": string"), "{}", e.message);
    }
    assert!(f.requests.lock().unwrap().is_empty());
}

#[test]
fn an_unreachable_provider_is_retried_then_named() {
    // A port nothing listens on (bound, then closed).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let g = gateway(
        "ollama",
        &format!("http://127.0.0.1:{port}"),
        json!({"max_retries": 1}),
    );
    let e = ask(&g, in_secs(10)).unwrap_err();
    assert_eq!(e.code, ErrorCode::GatewayError);
    assert!(
        e.message.contains("ollama at http://127.0.0.1") && e.message.contains("after 2 attempts"),
        "{}",
        e.message
    );
}

#[test]
fn an_unset_key_variable_fails_naming_it() {
    let config: ModelGatewayConfig = serde_json::from_value(json!({"provider": "anthropic",
        "model": "m", "api_key_env": "WSFS_TEST_UNSET_KEY_VARIABLE"}))
    .unwrap();
    let e = ConfiguredGateway::from_config(&config).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArguments);
    assert!(
        e.message.contains("WSFS_TEST_UNSET_KEY_VARIABLE"),
        "{}",
        e.message
    );
}

#[test]
fn a_cancelled_call_returns_without_waiting_for_the_provider() {
    let f = fake(vec![Reply::Stall(Duration::from_secs(30))]);
    let g = gateway("ollama", &f.url, json!({}));
    let started = Instant::now();
    let cancelled = || started.elapsed() > Duration::from_millis(300);
    let e = g
        .generate_cancellable(r#"{"prompt":"hi"}"#, in_secs(20), &cancelled)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled, "{}", e.message);
    assert!(e.message.contains("ollama"), "{}", e.message);
    // Back long before the 20 s deadline and the 30 s stall.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // A wait between retries is cut short too.
    let f = fake(vec![Reply::Answer(429, "Retry-After: 5\r\n", "{}".into())]);
    let g = gateway("ollama", &f.url, json!({}));
    let started = Instant::now();
    let cancelled = || started.elapsed() > Duration::from_millis(300);
    let e = g
        .generate_cancellable(r#"{"prompt":"hi"}"#, in_secs(60), &cancelled)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled, "{}", e.message);
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(f.requests.lock().unwrap().len(), 1);
}
