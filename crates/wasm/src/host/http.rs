//! `http_request`: the one door to the network, for a tool whose manifest names the hosts and
//! only when the host allows direct network at all.
//!
//! Plain `http://` over `std::net`, HTTP/1.0 (so no chunked responses), one request per
//! connection, no redirects followed (a 3xx is returned as it is), every step bounded by the
//! tool's deadline and the response by a byte limit. HTTPS is not offered yet: it needs a TLS
//! dependency, which phase 2 decides on.

use crate::error::{ErrorCode, Result, WsfsError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Most bytes of a response's status line and headers.
const MAX_HEAD_BYTES: usize = 64 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpRequest {
    #[serde(default = "get")]
    pub method: String,
    pub url: String,
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    #[serde(default)]
    pub body: String,
}

fn get() -> String {
    "GET".into()
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct HttpResponse {
    pub status: u16,
    /// Names in lowercase; repeated headers joined with ", ".
    pub headers: BTreeMap<String, String>,
    /// The body as text (bytes that are not UTF-8 replaced).
    pub body: String,
}

/// Where a request goes, from its URL.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    path: String,
}

fn invalid(message: impl Into<String>) -> WsfsError {
    WsfsError::new(ErrorCode::InvalidArguments, message)
}

fn parse_url(url: &str) -> Result<Target> {
    let Some(rest) = url.strip_prefix("http://") else {
        return Err(invalid(format!(
            "http_request supports only http:// URLs for now, not {url:?}"
        )));
    };
    let rest = rest.split('#').next().unwrap_or("");
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if authority.contains('@') || authority.starts_with('[') {
        return Err(invalid(
            "http_request URLs take a host name or IPv4 address, without user info",
        ));
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) => {
            let port = port
                .parse::<u16>()
                .map_err(|_| invalid(format!("{url:?} has an invalid port")))?;
            (host, port)
        }
        None => (authority, 80),
    };
    if host.is_empty() || path.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return Err(invalid(format!("{url:?} is not a valid http:// URL")));
    }
    Ok(Target {
        host: host.to_ascii_lowercase(),
        port,
        path: path.to_string(),
    })
}

/// Whether the manifest's `allowed_hosts` lets the tool reach `target` (`name` allows any port,
/// `name:port` that port only).
fn allowed(target: &Target, allowed_hosts: &[String]) -> bool {
    allowed_hosts.iter().any(|pattern| {
        let pattern = pattern.to_ascii_lowercase();
        match pattern.rsplit_once(':') {
            Some((host, port)) => host == target.host && port == target.port.to_string(),
            None => pattern == target.host,
        }
    })
}

fn check_request(req: &HttpRequest) -> Result<()> {
    let method_ok = !req.method.is_empty()
        && req.method.len() <= 16
        && req.method.bytes().all(|b| b.is_ascii_uppercase());
    if !method_ok {
        return Err(invalid(format!(
            "http_request method {:?} must be an uppercase HTTP method such as GET or POST",
            req.method
        )));
    }
    for (name, value) in &req.headers {
        let name_ok = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_".contains(&b));
        if !name_ok || value.bytes().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
            return Err(invalid(format!(
                "http_request header {name:?} is not valid"
            )));
        }
        let reserved = ["host", "content-length", "connection", "transfer-encoding"];
        if reserved.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(invalid(format!(
                "http_request sets the {name} header itself; leave it out"
            )));
        }
    }
    Ok(())
}

/// Sends `req` if `allowed_hosts` allows its host; the response is at most `max_body` bytes.
pub fn send(
    req: &HttpRequest,
    allowed_hosts: &[String],
    deadline: Instant,
    max_body: usize,
) -> Result<HttpResponse> {
    check_request(req)?;
    let target = parse_url(&req.url)?;
    if !allowed(&target, allowed_hosts) {
        return Err(WsfsError::new(
            ErrorCode::CapabilityDenied,
            format!(
                "{}:{} is not in this tool's network.allowed_hosts ({}); nothing was sent",
                target.host,
                target.port,
                allowed_hosts.join(", ")
            ),
        ));
    }
    let io = |e: std::io::Error| {
        let code = match e.kind() {
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => ErrorCode::Timeout,
            _ => ErrorCode::IoError,
        };
        WsfsError::new(
            code,
            format!("http_request to {}:{}: {e}", target.host, target.port),
        )
    };
    let remaining = || {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            Err(WsfsError::new(
                ErrorCode::Timeout,
                "http_request ran out of time before the response was complete",
            ))
        } else {
            Ok(left.max(Duration::from_millis(1)))
        }
    };
    let addrs = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .map_err(io)?;
    let mut last = None;
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, remaining()?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let mut stream = match (stream, last) {
        (Some(stream), _) => stream,
        (None, Some(e)) => return Err(io(e)),
        (None, None) => return Err(io(std::io::Error::other("the host name has no address"))),
    };
    let mut head = format!(
        "{} {} HTTP/1.0\r\nHost: {}\r\nConnection: close\r\nContent-Length: {}\r\n",
        req.method,
        target.path,
        target.host,
        req.body.len()
    );
    for (name, value) in &req.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.set_write_timeout(Some(remaining()?)).map_err(io)?;
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(req.body.as_bytes()).map_err(io)?;
    let limit = MAX_HEAD_BYTES + max_body;
    let mut raw = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    loop {
        stream.set_read_timeout(Some(remaining()?)).map_err(io)?;
        let n = stream.read(&mut chunk).map_err(io)?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&chunk[..n]);
        if raw.len() > limit {
            return Err(WsfsError::new(
                ErrorCode::TooLarge,
                format!("the response from {} is over {max_body} bytes", target.host),
            ));
        }
    }
    parse_response(&raw, max_body)
}

fn parse_response(raw: &[u8], max_body: usize) -> Result<HttpResponse> {
    let bad = || WsfsError::new(ErrorCode::IoError, "the server's response is not HTTP");
    let end = memchr::memmem::find(raw, b"\r\n\r\n").ok_or_else(bad)?;
    let head = std::str::from_utf8(&raw[..end]).map_err(|_| bad())?;
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse::<u16>().ok())
        .ok_or_else(bad)?;
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for line in lines {
        let (name, value) = line.split_once(':').ok_or_else(bad)?;
        let value = value.trim().to_string();
        headers
            .entry(name.trim().to_ascii_lowercase())
            .and_modify(|v| {
                v.push_str(", ");
                v.push_str(&value);
            })
            .or_insert(value);
    }
    let mut body = &raw[end + 4..];
    if let Some(len) = headers
        .get("content-length")
        .and_then(|v| v.parse::<usize>().ok())
    {
        body = &body[..len.min(body.len())];
    }
    if body.len() > max_body {
        return Err(WsfsError::new(
            ErrorCode::TooLarge,
            format!("the response body is over {max_body} bytes"),
        ));
    }
    Ok(HttpResponse {
        status,
        headers,
        body: String::from_utf8_lossy(body).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = parse_url("http://Example.com:8080/a?b#c").unwrap();
        assert_eq!(
            t,
            Target {
                host: "example.com".into(),
                port: 8080,
                path: "/a?b".into()
            }
        );
        assert_eq!(parse_url("http://x").unwrap().path, "/");
        for bad in [
            "https://x",
            "ftp://x",
            "http://u@x/",
            "http://x:99999/",
            "http://[::1]/",
        ] {
            assert_eq!(
                parse_url(bad).unwrap_err().code,
                ErrorCode::InvalidArguments,
                "{bad}"
            );
        }
    }

    #[test]
    fn allowed_hosts_match_by_name_and_port() {
        let t = parse_url("http://127.0.0.1:9000/").unwrap();
        assert!(allowed(&t, &["127.0.0.1".into()]));
        assert!(allowed(&t, &["127.0.0.1:9000".into()]));
        assert!(!allowed(&t, &["127.0.0.1:9001".into()]));
        assert!(!allowed(&t, &["localhost".into()]));
    }

    #[test]
    fn responses() {
        let raw = b"HTTP/1.0 200 OK\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 2\r\n\r\nhi there";
        let r = parse_response(raw, 100).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["x-a"], "1, 2");
        assert_eq!(r.body, "hi");
        assert_eq!(
            parse_response(b"garbage", 100).unwrap_err().code,
            ErrorCode::IoError
        );
    }
}
