//! Benchmark of overlay mode's reads (issue 20; bench/run.sh runs it): `read_file` of a 4 KiB
//! file through `wsfs_call` in an overlay workspace against the same read in a host-mode
//! workspace on the same base, paired (host and overlay reads alternate, and the figure is
//! the median of the paired ratios):
//!
//! - an untouched file (the view reads it from the base), limit 1.1x;
//! - a touched file (written through the session, so it is in the upper tree), limit 1.2x
//!   (against the host reading a file of the same size).
//!
//! The overlay workspace uses the default refresh (1 s): about one call a second mounts the
//! view afresh, as in use. Environment: `WSFS_OVERLAY_VIEW_DIR` (required: scratch),
//! `WSFS_OVERLAY_VIEW_SAMPLES` (20000), `WSFS_OVERLAY_VIEW_OUT` (JSON lines).

use std::ffi::{CStr, CString};
use std::io::Write;
use std::path::Path;
use std::time::Instant;
use wsfs::ffi;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn take(p: *mut std::ffi::c_char) -> String {
    // SAFETY: every wsfs function returns a valid NUL-terminated string, freed once here.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    // SAFETY: as above.
    unsafe { ffi::wsfs_string_free(p) };
    s
}

fn open(config: serde_json::Value) -> u64 {
    let c = CString::new(config.to_string()).unwrap();
    // SAFETY: a NUL-terminated config string valid for the call.
    let out = take(unsafe { ffi::wsfs_workspace_open(c.as_ptr()) });
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    v["data"]["workspace"]
        .as_u64()
        .unwrap_or_else(|| panic!("open failed: {out}"))
}

fn call(ws: u64, tool: &CStr, args: &CStr) -> usize {
    // SAFETY: NUL-terminated strings valid for the call.
    let out = take(unsafe { ffi::wsfs_call(ws, tool.as_ptr(), args.as_ptr()) });
    assert!(out.starts_with("{\"ok\":true"), "{out}");
    out.len()
}

/// Median of paired ratios overlay/host over `n` alternating samples, and each median in ns.
fn paired(n: usize, host: impl Fn() -> usize, overlay: impl Fn() -> usize) -> (f64, f64, f64) {
    for _ in 0..n / 10 + 1 {
        host();
        overlay();
    }
    let (mut h, mut o, mut r) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        let time = |f: &dyn Fn() -> usize| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_nanos() as f64
        };
        let (th, to) = match i % 2 {
            0 => (time(&host), time(&overlay)),
            _ => {
                let to = time(&overlay);
                (time(&host), to)
            }
        };
        h.push(th);
        o.push(to);
        r.push(to / th);
    }
    let median = |xs: &mut Vec<f64>| {
        xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
        xs[xs.len() / 2]
    };
    (median(&mut r), median(&mut h), median(&mut o))
}

fn main() {
    let Some(dir) = env("WSFS_OVERLAY_VIEW_DIR") else {
        eprintln!("set WSFS_OVERLAY_VIEW_DIR to a scratch directory");
        return;
    };
    let samples: usize = env("WSFS_OVERLAY_VIEW_SAMPLES").map_or(20_000, |s| s.parse().unwrap());
    let scratch = Path::new(&dir).join("overlay-view");
    let _ = std::fs::remove_dir_all(&scratch);
    let root = scratch.join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    let text = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n".repeat(64);
    for name in ["untouched.txt", "touched.txt", "host-touched.txt"] {
        std::fs::write(root.join("src").join(name), &text).unwrap();
    }
    let state = scratch.join("state");
    let host = open(serde_json::json!({"root": root, "state_dir": state}));
    let overlay = open(serde_json::json!({"root": root, "state_dir": state, "mode": "overlay"}));
    let read = c"read_file";
    let write = c"write_file";
    let content = serde_json::to_string(&text).unwrap();
    let args = |p: &str| CString::new(format!(r#"{{"path":"src/{p}"}}"#)).unwrap();
    let put =
        |p: &str| CString::new(format!(r#"{{"path":"src/{p}","content":{content}}}"#)).unwrap();
    // The touched file is in the session's upper tree; the host's twin was rewritten too.
    call(overlay, write, &put("touched.txt"));
    call(host, write, &put("host-touched.txt"));
    let (untouched_h, untouched_o) = (args("untouched.txt"), args("untouched.txt"));
    let (touched_h, touched_o) = (args("host-touched.txt"), args("touched.txt"));
    let rows = [
        (
            "untouched",
            1.1,
            paired(
                samples,
                || call(host, read, &untouched_h),
                || call(overlay, read, &untouched_o),
            ),
        ),
        (
            "touched",
            1.2,
            paired(
                samples,
                || call(host, read, &touched_h),
                || call(overlay, read, &touched_o),
            ),
        ),
    ];
    let mut out = env("WSFS_OVERLAY_VIEW_OUT").map(|p| std::fs::File::create(p).unwrap());
    for (what, limit, (ratio, host_ns, overlay_ns)) in rows {
        let line = serde_json::json!({
            "bench": "overlay_read", "file": what, "bytes": text.len(), "samples": samples,
            "ratio": ratio, "host_ns": host_ns, "overlay_ns": overlay_ns, "limit": limit,
        });
        println!("{line}");
        if let Some(f) = out.as_mut() {
            writeln!(f, "{line}").unwrap();
        }
    }
    take(ffi::wsfs_workspace_close(host));
    take(ffi::wsfs_workspace_close(overlay));
}
