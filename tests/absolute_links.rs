//! Issue 18 gap 2: a symlink whose absolute target lies inside the workspace (by the root's
//! real path) is followed, in the leaf position and on the way, and still resolved beneath the
//! root handle: the target is made relative to the root and opened beneath it like any path,
//! so `<root>/../outside`, a sibling prefix or a link swapped meanwhile never escape.

use crate::common::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::fs;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn abs(f: &Fixture, rel: &str) -> String {
    match rel {
        "" => f.root.to_str().unwrap().to_owned(),
        rel => format!("{}/{rel}", f.root.display()),
    }
}

#[test]
fn absolute_links_inside_the_workspace_are_followed() {
    let f = Fixture::new();
    f.write("real/target.txt", "TARGET\n");
    f.write("real/deeper/d.txt", "D\n");
    f.mkdir("a");
    f.symlink(abs(&f, "real/target.txt"), "leaf");
    f.symlink(abs(&f, "real"), "dirlink");
    f.symlink(abs(&f, ""), "a/rootlink");
    // Chains: absolute -> relative -> absolute.
    f.symlink("../dirlink", "a/rel_to_abs");
    f.symlink(abs(&f, "a/rel_to_abs"), "abs_to_rel");
    // `..` after an absolute link is the target's parent, as the kernel resolves it.
    f.symlink(abs(&f, "real/deeper"), "deeplink");
    for p in [
        "leaf",
        "dirlink/target.txt",
        "a/rootlink/real/target.txt",
        "a/rel_to_abs/target.txt",
        "abs_to_rel/target.txt",
        "deeplink/../target.txt",
        "a/rootlink/leaf",
    ] {
        let v = f.call("read_file", json!({ "path": p }));
        assert_eq!(assert_ok(&v)["content"], json!("TARGET\n"), "{p}: {v}");
    }
    for p in ["dirlink", "abs_to_rel", "a/rootlink/dirlink"] {
        let v = f.call("list_dir", json!({ "path": p }));
        assert_eq!(entry_names(&v), vec!["deeper", "target.txt"], "{p}: {v}");
    }
    let v = f.call("find_files", json!({"pattern": "*.txt", "path": "dirlink"}));
    assert_eq!(assert_ok(&v)["files"].as_array().unwrap().len(), 2, "{v}");
    let v = f.call("search_text", json!({"query": "TARGET", "path": "dirlink"}));
    assert_eq!(assert_ok(&v)["matches"].as_array().unwrap().len(), 1, "{v}");

    // Writers change the target, never the link.
    assert_ok(&f.call("write_file", json!({"path": "leaf", "content": "NEW1"})));
    assert!(f.is_symlink("leaf"));
    assert_eq!(f.read("real/target.txt"), b"NEW1");
    assert_ok(&f.call("append_file", json!({"path": "leaf", "content": "+"})));
    assert_ok(&f.call(
        "edit_file",
        json!({"path": "dirlink/target.txt", "old_text": "NEW1", "new_text": "NEW2"}),
    ));
    assert_eq!(f.read("real/target.txt"), b"NEW2+");
    assert_ok(&f.call(
        "write_file",
        json!({"path": "dirlink/newdir/n.txt", "content": "N"}),
    ));
    assert_eq!(f.read("real/newdir/n.txt"), b"N");
    assert!(f.is_symlink("dirlink"));
    assert_ok(&f.call("create_directory", json!({"path": "abs_to_rel/made/deep"})));
    assert!(f.is_dir("real/made/deep"));

    // get_path_info names where an inside absolute link leads.
    let v = f.call("get_path_info", json!({"path": "leaf"}));
    assert_eq!(
        assert_ok(&v)["symlink_target"],
        json!("real/target.txt"),
        "{v}"
    );
    let v = f.call("get_path_info", json!({"path": "dirlink/deeper/d.txt"}));
    assert_eq!(assert_ok(&v)["type"], json!("file"), "{v}");
}

#[test]
fn absolute_links_that_leave_the_root_stay_refused() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "SECRET\n").unwrap();
    // A sibling whose name starts with the root's: a string prefix would take it for inside.
    let evil = f.base.join(format!(
        "{}-evil",
        f.root.file_name().unwrap().to_str().unwrap()
    ));
    fs::create_dir_all(&evil).unwrap();
    fs::write(evil.join("secret.txt"), "SECRET\n").unwrap();
    f.mkdir("real");
    let links = [
        ("dotdot", format!("{}/../outside", f.root.display())),
        (
            "dotdot_leaf",
            format!("{}/../outside/secret.txt", f.root.display()),
        ),
        (
            "deep_dotdot",
            format!("{}/real/../../outside", f.root.display()),
        ),
        ("evil", evil.to_str().unwrap().to_owned()),
        ("evil_leaf", format!("{}/secret.txt", evil.display())),
        ("out", outside.to_str().unwrap().to_owned()),
        ("etc", "/etc".to_owned()),
        ("real/back", format!("{}/..", f.root.display())),
    ];
    for (name, target) in &links {
        f.symlink(target, name);
    }
    let before = snapshot(&f.base.join("outside"));
    let paths = [
        "dotdot/secret.txt",
        "dotdot_leaf",
        "deep_dotdot/secret.txt",
        "evil/secret.txt",
        "evil_leaf",
        "out/secret.txt",
        "etc/hostname",
        "real/back/outside/secret.txt",
    ];
    for p in paths {
        let v = f.call("read_file", json!({ "path": p }));
        assert_err(&v, "outside_workspace");
        assert!(!v.to_string().contains("SECRET"), "{p}: {v}");
        let v = f.call("write_file", json!({"path": p, "content": "PWNED"}));
        assert_err(&v, "outside_workspace");
    }
    for p in ["dotdot", "evil", "out", "real/back"] {
        assert_err(
            &f.call("list_dir", json!({ "path": p })),
            "outside_workspace",
        );
    }
    let v = f.call("get_path_info", json!({"path": "dotdot_leaf"}));
    assert!(assert_ok(&v).get("symlink_target").is_none(), "{v}");
    assert_eq!(snapshot(&f.base.join("outside")), before);
    assert_eq!(fs::read(evil.join("secret.txt")).unwrap(), b"SECRET\n");
}

const LIB_PHASE: Duration = Duration::from_secs(2);

/// Two swaps at once: `abs` (an absolute link to `<root>/d`) is exchanged with `alt` (an
/// absolute link to the outside directory), and `d` itself with `s` (a symlink to outside).
/// Calls through `abs` on the way and in the leaf position must never read, list or change
/// the outside; they succeed only with the inside's content.
#[test]
fn swapped_absolute_links_never_escape() {
    let _heavy = cpu_heavy();
    let f = Fixture::new();
    let secret_tok = token();
    let outside = swap_pair(&f, &format!("OUTSIDE-{secret_tok}\n"));
    f.symlink(abs(&f, "d"), "abs");
    f.symlink(&outside, "alt");
    f.symlink(abs(&f, "d/f.txt"), "absleaf");
    f.symlink(outside.join("f.txt"), "altleaf");
    let before = snapshot(&outside);
    let base_before = sorted_names(&f.base);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swappers = [
        spawn_exchanger(&f.p("abs"), &f.p("alt"), stop.clone(), swaps.clone()),
        spawn_exchanger(
            &f.p("absleaf"),
            &f.p("altleaf"),
            stop.clone(),
            swaps.clone(),
        ),
        spawn_exchanger(&f.p("d"), &f.p("s"), stop.clone(), swaps.clone()),
    ];
    let leaks = Arc::new(Mutex::new(Vec::<String>::new()));
    let outcomes = Arc::new(Mutex::new(BTreeMap::<String, u64>::new()));
    let deadline = Instant::now() + LIB_PHASE;
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let (leaks, outcomes, secret_tok) =
                (leaks.clone(), outcomes.clone(), secret_tok.clone());
            let ws = f.ws;
            std::thread::spawn(move || {
                while Instant::now() < deadline {
                    let calls = [
                        ("read_file", json!({"path": "abs/f.txt"})),
                        ("read_file", json!({"path": "absleaf"})),
                        ("read_file", json!({"path": "abs/sub/../f.txt"})),
                        ("list_dir", json!({"path": "abs"})),
                        ("list_dir", json!({"path": "abs/sub"})),
                        ("get_path_info", json!({"path": "abs/f.txt"})),
                        (
                            "write_file",
                            json!({"path": format!("abs/w{w}.txt"), "content": "W\n"}),
                        ),
                        (
                            "write_file",
                            json!({"path": format!("abs/sub/new{w}/x.txt"), "content": "N\n"}),
                        ),
                        (
                            "write_file",
                            json!({"path": "absleaf", "content": "INSIDE\n"}),
                        ),
                        (
                            "append_file",
                            json!({"path": format!("abs/a{w}.txt"), "content": "A\n"}),
                        ),
                        (
                            "edit_file",
                            json!({"path": "absleaf", "old_text": "OUTSIDE-", "new_text": "PWNED"}),
                        ),
                    ];
                    for (tool, args) in calls {
                        let v = call(ws, tool, args.clone());
                        if v.to_string().contains(&secret_tok) {
                            leaks
                                .lock()
                                .unwrap()
                                .push(format!("{tool} {args} -> {}", short(&v)));
                        }
                        if tool == "read_file" && v["ok"] == json!(true) {
                            assert_eq!(v["data"]["content"], json!("INSIDE\n"), "{}", short(&v));
                        }
                        let key =
                            format!("{tool} {}:{}", args["path"], err_code(&v).unwrap_or("ok"));
                        *outcomes.lock().unwrap().entry(key).or_default() += 1;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker panicked");
    }
    stop.store(true, Ordering::Relaxed);
    for s in swappers {
        s.join().expect("swapper panicked");
    }
    let outcomes = outcomes.lock().unwrap().clone();
    eprintln!(
        "swaps: {}; outcomes: {outcomes:#?}",
        swaps.load(Ordering::Relaxed)
    );
    let leaks = leaks.lock().unwrap();
    assert!(
        leaks.is_empty(),
        "leaked outside data:\n{}",
        leaks.join("\n")
    );
    assert_eq!(
        snapshot(&outside),
        before,
        "the outside directory was changed"
    );
    assert_eq!(
        sorted_names(&f.base),
        base_before,
        "something was created beside the root"
    );
    // At least one swap, not a count: a slow machine swaps less in LIB_PHASE.
    assert!(swaps.load(Ordering::Relaxed) > 0, "the swappers never ran");
    // Both outcomes happened: the inside link was followed, and the swap was seen (refused).
    for path in ["abs/f.txt", "absleaf"] {
        let ok = outcomes
            .get(&format!("read_file \"{path}\":ok"))
            .copied()
            .unwrap_or(0);
        let refused = outcomes
            .get(&format!("read_file \"{path}\":outside_workspace"))
            .copied()
            .unwrap_or(0);
        assert!(ok > 0, "{path}: no read through the inside link succeeded");
        assert!(
            refused > 0,
            "{path}: no read saw the swap: the race proves nothing"
        );
    }
}
