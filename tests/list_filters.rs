//! Issue 18 gap 5: `list_dir`'s `include_files` / `include_dirs` (both default true), for one
//! level and for a tree; both false is `invalid_arguments`.

use crate::common::*;
use serde_json::{json, Value};

fn tree_names(node: &Value, prefix: &str, out: &mut Vec<String>) {
    for child in node["children"].as_array().into_iter().flatten() {
        let name = format!("{prefix}{}", child["name"].as_str().unwrap());
        out.push(name.clone());
        tree_names(child, &format!("{name}/"), out);
    }
}

fn fixture() -> Fixture {
    let f = Fixture::new();
    f.write("a.txt", "a");
    f.write("sub/b.txt", "b");
    f.write("sub/deeper/c.txt", "c");
    f.mkdir("empty");
    f.symlink("a.txt", "link");
    f
}

crate::backend_tests! {
    #[test]
    fn list_dir_leaves_out_files_or_directories() {
        let f = fixture();
        let v = f.call("list_dir", json!({"path": ".", "include_files": false}));
        assert_eq!(entry_names(&v), vec!["empty", "sub"]);
        assert_eq!(v["data"]["total"], json!(2), "{v}");
        assert!(!v["text"].as_str().unwrap().contains("a.txt"), "{v}");
        let v = f.call("list_dir", json!({"path": ".", "include_dirs": false}));
        assert_eq!(entry_names(&v), vec!["a.txt", "link"]);
        assert_eq!(v["data"]["total"], json!(2), "{v}");
        // Both true is the plain listing.
        let v = f.call(
            "list_dir",
            json!({"path": ".", "include_files": true, "include_dirs": true}),
        );
        assert_eq!(entry_names(&v), vec!["a.txt", "empty", "link", "sub"]);

        let mut names = Vec::new();
        let v = f.call("list_dir", json!({"path": ".", "depth": 3, "include_files": false}));
        tree_names(&assert_ok(&v)["tree"], "", &mut names);
        assert_eq!(names, vec!["empty", "sub", "sub/deeper"], "{v}");
        let mut names = Vec::new();
        let v = f.call("list_dir", json!({"path": ".", "depth": 3, "include_dirs": false}));
        tree_names(&assert_ok(&v)["tree"], "", &mut names);
        assert_eq!(names, vec!["a.txt", "link"], "{v}");
    }

    #[test]
    fn list_dir_with_neither_files_nor_directories_is_invalid() {
        let f = fixture();
        for depth in [1, 2] {
            let v = f.call(
                "list_dir",
                json!({"path": ".", "depth": depth, "include_files": false, "include_dirs": false}),
            );
            let message = assert_err(&v, "invalid_arguments");
            assert!(message.contains("both false"), "{message}");
        }
    }
}
