//! `agent-base` (003) against the real native tools. Fields the native tools do not report
//! yet (issue 18's gaps) are checked to be absent here, and present in phase 2.

use super::Ws;
use serde_json::{json, Value};

const P: &str = "agent-base";

#[test]
fn read_file_is_line_ranged_by_default() {
    let ws = Ws::open();
    let text: String = (1..=450).map(|i| format!("line {i}\n")).collect();
    ws.write("big.txt", &text);
    let r = ws.call(P, "read_file", json!({"path": "big.txt"}));
    assert_eq!(r["success"], true, "{r}");
    let res = &r["result"];
    assert_eq!(res["start_line"], 1);
    assert_eq!(res["end_line"], 200);
    assert_eq!(res["total_lines"], 450);
    assert_eq!(res["truncated"], true);
    assert_eq!(res["next_start_line"], 201);
    assert_eq!(res["encoding_errors"], false);
    assert!(res["content"].as_str().unwrap().ends_with("line 200\n"));
    assert_eq!(
        r["message"],
        "read big.txt: [lines 1-200 of 450; continue with start_line=201, max_lines=200]"
    );
    let r = ws.call(
        P,
        "read_file",
        json!({"path": "big.txt", "start_line": 401, "max_lines": 5000}),
    );
    assert_eq!(r["result"]["end_line"], 450);
    assert_eq!(r["result"]["truncated"], false);
    assert_eq!(r["result"]["next_start_line"], Value::Null);
    let r = ws.call(
        P,
        "read_file",
        json!({"path": "big.txt", "start_line": 451}),
    );
    assert_eq!(r["error"], "line_out_of_range");
}

#[test]
fn get_path_info_reports_absolute_path_and_unix_times() {
    let ws = Ws::open();
    ws.write("src/a.py", "x\n");
    std::os::unix::fs::symlink("src/a.py", ws.path("link")).expect("symlink");
    let r = ws.call(P, "get_path_info", json!({"path": "src/a.py"}));
    let res = &r["result"];
    assert_eq!(res["type"], "file");
    assert_eq!(res["size"], 2);
    assert!(res["modified"].as_f64().unwrap() > 1.6e9, "{res}");
    assert_eq!(res["absolute_path"], format!("{}/src/a.py", ws.root));
    let r = ws.call(P, "get_path_info", json!({"path": "src"}));
    assert_eq!(r["result"]["type"], "directory");
    assert_eq!(r["result"]["size"], Value::Null);
    let r = ws.call(P, "get_path_info", json!({"path": "link"}));
    assert_eq!(r["result"]["type"], "symlink");
    assert_eq!(
        r["result"]["absolute_path"],
        format!("{}/src/a.py", ws.root)
    );
    let r = ws.call(P, "get_path_info", json!({}));
    assert_eq!(r["result"]["absolute_path"], ws.root);
    let r = ws.call(P, "get_path_info", json!({"path": "gone"}));
    assert_eq!(r["success"], true);
    assert_eq!(r["result"]["exists"], false);
}

#[test]
fn list_directory_flat_and_recursive() {
    let ws = Ws::open();
    ws.write("a.txt", "aa");
    ws.write(".hidden", "");
    ws.write("src/m.py", "m");
    ws.write("src/deep/x.py", "x");
    let r = ws.call(P, "list_directory", json!({}));
    assert_eq!(
        r["result"],
        json!({"entries": [
            {"name": "a.txt", "relative_path": "a.txt", "type": "file", "size": 2},
            {"name": "src", "relative_path": "src", "type": "dir", "size": null}
        ], "truncated": false})
    );
    let r = ws.call(
        P,
        "list_directory",
        json!({"path": "src", "recursive": true}),
    );
    let paths: Vec<&str> = r["result"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["relative_path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["src/deep", "src/m.py", "src/deep/x.py"]);
    let r = ws.call(
        P,
        "list_directory",
        json!({"include_hidden": true, "max_entries": 2}),
    );
    assert_eq!(r["result"]["entries"].as_array().map(Vec::len), Some(2));
    assert_eq!(r["result"]["truncated"], true);
    let r = ws.call(P, "list_directory", json!({"path": "a.txt"}));
    assert_eq!(r["error"], "not_a_directory");
}

#[test]
fn search_text_echoes_its_query() {
    let ws = Ws::open();
    ws.write("a.py", "def f():\n    return 1\n");
    ws.write("b.md", "return policy\n");
    let r = ws.call(P, "search_text", json!({"query": "return"}));
    let res = &r["result"];
    assert_eq!(res["query"], "return");
    assert_eq!(res["use_regex"], false);
    assert_eq!(res["files_searched"], 2);
    assert_eq!(
        res["matches"][0],
        json!({"file": "a.py", "line": 2, "snippet": "    return 1", "match_start": 4, "match_end": 10})
    );
    let r = ws.call(P, "search_text", json!({"query": "return", "glob": "*.py"}));
    assert_eq!(r["result"]["matches"].as_array().map(Vec::len), Some(1));
    let r = ws.call(P, "search_text", json!({"query": "(", "use_regex": true}));
    assert_eq!(r["error"], "invalid_regex");
}

#[test]
fn write_file_creates_by_default() {
    let ws = Ws::open_with(json!({"policy": {"writes_enabled": true}}));
    let r = ws.call(P, "write_file", json!({"path": "a.txt", "content": "one"}));
    assert_eq!(
        r["result"],
        json!({"path": "a.txt", "bytes_written": 3, "mode": "create", "existed_before": false})
    );
    let r = ws.call(P, "write_file", json!({"path": "a.txt", "content": "two"}));
    assert_eq!(r["success"], false);
    assert_eq!(r["error"], "file_exists");
    assert_eq!(ws.read("a.txt").as_deref(), Some("one"));
    let r = ws.call(
        P,
        "write_file",
        json!({"path": "a.txt", "content": "two", "mode": "overwrite"}),
    );
    assert_eq!(r["result"]["existed_before"], true);
    let r = ws.call(
        P,
        "write_file",
        json!({"path": "a.txt", "content": "3", "mode": "append"}),
    );
    assert_eq!(r["result"]["mode"], "append");
    assert_eq!(ws.read("a.txt").as_deref(), Some("two3"));
}

#[test]
fn apply_text_edit_maps_its_codes() {
    let ws = Ws::open_with(json!({"policy": {"writes_enabled": true}}));
    ws.write("a.py", "x = 1\nx = 1\n");
    let edit = |expected: &str, replace_all: bool| {
        ws.call(
            P,
            "apply_text_edit",
            json!({"path": "a.py", "expected_text": expected, "replacement_text": "y = 2",
                "replace_all": replace_all}),
        )
    };
    assert_eq!(edit("z", false)["error"], "match_not_found");
    assert_eq!(edit("x = 1", false)["error"], "multiple_matches");
    assert_eq!(edit("", false)["error"], "empty_expected_text");
    let r = edit("x = 1", true);
    assert_eq!(r["success"], true, "{r}");
    assert_eq!(r["result"]["replacements"], 2);
    assert_eq!(ws.read("a.py").as_deref(), Some("y = 2\ny = 2\n"));
    // Issue 18 gap 5: the native edit reports its sizes and the lines it touched.
    let result = &r["result"];
    assert_eq!(
        (
            &result["original_size"],
            &result["new_size"],
            &result["bytes_written"]
        ),
        (&json!(12), &json!(12), &json!(12)),
        "{r}"
    );
    assert_eq!(result["lines_changed"], 2, "{r}");
}

#[test]
fn dotdot_and_the_workspace_boundary() {
    let ws = Ws::open();
    ws.write("sub/a.txt", "a");
    let r = ws.call(P, "read_file", json!({"path": "sub/../sub/a.txt"}));
    assert_eq!(r["error"], "path_traversal_attempt");
    let r = ws.call(P, "read_file", json!({"path": "/etc/passwd"}));
    assert_eq!(r["error"], "path_outside_workspace");
    let r = ws.call(
        P,
        "read_file",
        json!({"path": format!("{}/sub/a.txt", ws.root)}),
    );
    assert_eq!(
        r["success"], true,
        "an absolute path inside the workspace: {r}"
    );
    // A relative path (no '..': refused above) leads out only through a symlink.
    std::os::unix::fs::symlink("/etc/passwd", ws.path("out")).expect("symlink");
    let r = ws.call(P, "read_file", json!({"path": "out"}));
    assert_eq!(r["error"], "symlink_outside_workspace", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("out leads outside the workspace through a symlink"),
        "{r}"
    );
    std::os::unix::fs::symlink("/etc", ws.path("etc")).expect("symlink");
    let r = ws.call(P, "list_directory", json!({"path": "etc"}));
    assert_eq!(r["error"], "symlink_outside_workspace", "{r}");
    let r = ws.call(P, "read_file", json!({"path": "etc/passwd"}));
    assert_eq!(r["error"], "symlink_outside_workspace", "{r}");
}

/// The document: writes are off unless the configuration enables them, and each changing
/// tool then answers writes_disabled (it is still offered); reads are limited to 10 MB.
#[test]
fn writes_are_off_and_reads_10_mb_unless_the_config_says_otherwise() {
    let ws = Ws::open();
    let r = ws.call(P, "write_file", json!({"path": "a", "content": "x"}));
    assert_eq!(r["error"], "writes_disabled", "{r}");
    assert!(!ws.path("a").exists());
    let offered = ws.specs(P);
    let offered: Vec<&str> = offered
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    for tool in ["write_file", "apply_text_edit", "create_directory"] {
        assert!(offered.contains(&tool), "{offered:?}");
    }
    let info = ws.open_info(P);
    assert_eq!(info["policy"]["writes_enabled"], false, "{info}");
    assert_eq!(info["limits"]["max_read_bytes"], 10 * 1024 * 1024, "{info}");
    // What the host gives wins, key by key.
    let ws = Ws::open_with(
        json!({"policy": {"writes_enabled": true}, "limits": {"max_write_bytes": 4096}}),
    );
    let r = ws.call(P, "write_file", json!({"path": "a", "content": "x"}));
    assert_eq!(r["success"], true, "{r}");
    let info = ws.open_info(P);
    assert_eq!(info["limits"]["max_read_bytes"], 10 * 1024 * 1024, "{info}");
    assert_eq!(info["limits"]["max_write_bytes"], 4096, "{info}");
    // Natively, the same configuration keeps the native defaults.
    assert_eq!(ws.open_info("wsfs")["limits"]["max_read_bytes"], 256 * 1024);
}

/// A file over the read limit is file_too_large, whatever range is asked for.
#[test]
fn a_file_over_the_read_limit_is_file_too_large() {
    let ws = Ws::open_with(json!({"limits": {"max_read_bytes": 64}}));
    ws.write("big.txt", "x\n".repeat(40));
    ws.write("fits.txt", "y\n".repeat(32));
    for args in [
        json!({"path": "big.txt"}),
        json!({"path": "big.txt", "start_line": 39, "max_lines": 1}),
    ] {
        let r = ws.call(P, "read_file", args);
        assert_eq!(r["error"], "file_too_large", "{r}");
        let m = r["message"].as_str().unwrap();
        assert!(
            m.contains("big.txt is 80 bytes, over the read limit of 64 bytes"),
            "{m}"
        );
    }
    let r = ws.call(P, "read_file", json!({"path": "fits.txt"}));
    assert_eq!(r["success"], true, "{r}");
}

#[test]
fn writes_disabled_says_what_still_works() {
    let ws = Ws::open_with(json!({"policy": {"writes_enabled": false}}));
    for (tool, args) in [
        ("write_file", json!({"path": "a", "content": "x"})),
        (
            "apply_text_edit",
            json!({"path": "a", "expected_text": "x", "replacement_text": "y"}),
        ),
        ("create_directory", json!({"path": "d"})),
    ] {
        let r = ws.call(P, tool, args);
        assert_eq!(r["error"], "writes_disabled", "{tool}");
        let m = r["message"].as_str().unwrap();
        assert!(m.starts_with(&format!("{tool} is not available")), "{m}");
        assert!(m.contains("list_directory"), "{m}");
    }
    assert!(!ws.path("a").exists() && !ws.path("d").exists());
}
