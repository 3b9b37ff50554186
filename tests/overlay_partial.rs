//! Partial commits (issue 30, item 10): committing some paths of a session must leave the
//! rest of the session as it was, whatever directories the committed paths were made in.
use crate::common::*;
use crate::overlay_view::{changes, session, Overlay};

use serde_json::json;
use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// A file committed alone from new nested directories stays in the view, the session no
/// longer lists it (nor its directories) as a change, and a full commit of the rest neither
/// conflicts on those directories nor deletes the committed file.
#[test]
fn a_file_committed_from_new_nested_directories_stays_in_the_view() {
    let o = Overlay::new(&[("a.txt", "a\n")], json!({}));
    assert_ok(&o.call(
        "write_file",
        json!({"path": "new/deep/n.txt", "content": "n\n"}),
    ));
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "A\n"})));
    let v = session(o.ws, "commit", Some(json!({"paths": ["new/deep/n.txt"]})));
    assert_eq!(assert_ok(&v)["files"], json!(["new/deep/n.txt"]), "{v}");
    assert_eq!(o.base("new/deep/n.txt").as_deref(), Some("n\n"));
    assert_eq!(o.read("new/deep/n.txt"), "n\n");
    assert_eq!(changes(o.ws), vec![("a.txt".to_string(), "M".to_string())]);
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(o.base("new/deep/n.txt").as_deref(), Some("n\n"));
    assert_eq!(o.base("a.txt").as_deref(), Some("A\n"));
    assert!(changes(o.ws).is_empty(), "{:?}", changes(o.ws));
}

/// A tree as the tools show it or as it is on disk: path → (kind, content, mode `0644`).
type Tree = BTreeMap<String, (String, Vec<u8>, String)>;

/// The session's view, through the tools (`list_dir`, `read_file`, `get_path_info`).
fn view_tree(o: &Overlay) -> Tree {
    let mut out = Tree::new();
    view_into(o, "", &mut out);
    out
}

fn view_into(o: &Overlay, dir: &str, out: &mut Tree) {
    let shown = if dir.is_empty() { "." } else { dir };
    let listed = o.call(
        "list_dir",
        json!({"path": shown, "respect_gitignore": false}),
    );
    for entry in assert_ok(&listed)["entries"].as_array().unwrap() {
        let name = entry["name"].as_str().unwrap();
        let path = if dir.is_empty() {
            name.to_string()
        } else {
            format!("{dir}/{name}")
        };
        let info = o.call("get_path_info", json!({ "path": path }));
        let mode = assert_ok(&info)["mode"].as_str().unwrap().to_string();
        match entry["type"].as_str().unwrap() {
            "dir" => {
                out.insert(path.clone(), ("dir".into(), Vec::new(), mode));
                view_into(o, &path, out);
            }
            "file" => {
                let content = o.read(&path).into_bytes();
                out.insert(path, ("file".into(), content, mode));
            }
            other => panic!("{path}: unexpected {other}"),
        }
    }
}

/// The workspace on disk.
fn base_tree(root: &Path) -> Tree {
    snapshot(root)
        .into_iter()
        .map(|(p, (kind, bytes, mode, _))| {
            let p = p.to_str().unwrap().to_string();
            (p, (kind, bytes, format!("{:04o}", mode & 0o7777)))
        })
        .collect()
}

/// Every path below (or at) one of `paths`.
fn under(path: &str, paths: &[String]) -> bool {
    paths
        .iter()
        .any(|p| path == p || path.starts_with(&format!("{p}/")))
}

/// The base the workspace was seeded with: files at depths 1 to 4, modes other than the
/// default on a file and a directory.
fn seeded() -> Overlay {
    let o = Overlay::new(
        &[
            ("a.txt", "a\n"),
            ("top.sh", "run\n"),
            ("old/x.txt", "x\n"),
            ("old/sub/y.txt", "y\n"),
            ("old/sub/deep/z.txt", "z\n"),
            ("keep/k.txt", "k\n"),
            ("gone/g.txt", "g\n"),
            ("gone/in/h.txt", "h\n"),
            ("mv/m.txt", "m\n"),
            ("mvdir/q.txt", "q\n"),
            ("mvdir/r/s.txt", "s\n"),
        ],
        json!({}),
    );
    fs::set_permissions(o.root.join("top.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    fs::set_permissions(o.root.join("old"), fs::Permissions::from_mode(0o750)).unwrap();
    o
}

/// New files at depths 1 to 4 in new directories and in existing ones, new directories under
/// existing ones, renames into new directories and within existing ones, deletions in new and
/// existing directories, a deleted directory made again, empty new directories.
fn change(o: &Overlay) {
    let write = |path: &str, content: &str| {
        assert_ok(&o.call("write_file", json!({"path": path, "content": content})));
    };
    let mv = |src: &str, dst: &str| {
        assert_ok(&o.call("move_file", json!({"src": src, "dst": dst})));
    };
    let delete = |path: &str| {
        assert_ok(&o.call("delete_file", json!({"path": path, "recursive": true})));
    };
    write("new1.txt", "new1\n");
    write("n/n.txt", "n\n");
    write("new/deep/n.txt", "deep\n");
    write("new/deep/more/p.txt", "p\n");
    write("a.txt", "A\n");
    write("old/sub/new.txt", "new in old\n");
    write("old/fresh/deeper/f.txt", "f\n");
    mv("mv/m.txt", "new/deep/moved.txt");
    mv("old/sub/y.txt", "old/y2.txt");
    delete("old/sub/deep/z.txt");
    delete("gone");
    write("gone/again.txt", "again\n");
    write("gone/in/new.txt", "in again\n");
    assert_ok(&o.call("create_directory", json!({"path": "empty/e1/e2"})));
    write("n/tmp.txt", "tmp\n");
    delete("n/tmp.txt");
    mv("top.sh", "n/top.sh");
    write("new/deep/more/q.txt", "q\n");
    delete("new/deep/more/q.txt");
}

/// One partial commit of `selection`: the view does not change, the committed paths read
/// as before, the diff keeps exactly the other changes, and the workspace gains exactly the
/// committed ones.
fn commit_part(o: &Overlay, selection: &[String], why: &str) {
    let view = view_tree(o);
    let base = base_tree(&o.root);
    let before = changes(o.ws);
    let v = session(o.ws, "commit", Some(json!({ "paths": selection })));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{why}: {v}");
    assert_eq!(
        view_tree(o),
        view,
        "{why}: a partial commit changed the view"
    );
    for (path, (kind, content, _)) in view.iter().filter(|(p, _)| under(p, selection)) {
        if kind == "file" {
            assert_eq!(o.read(path).as_bytes(), &content[..], "{why}: {path}");
        }
    }
    // The diff: what was not selected, but the directories the commit made in the base.
    let after = changes(o.ws);
    let now_base = base_tree(&o.root);
    let want: Vec<(String, String)> = before
        .iter()
        .filter(|(p, s)| {
            let committed = under(p, selection);
            let made_by_the_commit = s == "A" && now_base.contains_key(p);
            !(committed || made_by_the_commit)
        })
        .cloned()
        .collect();
    assert_eq!(
        after, want,
        "{why}: the diff after committing {selection:?}"
    );
    // The workspace: each selected path (and what is below it) as the view has it, the
    // directories above a committed one made, the rest as before.
    for (path, entry) in &now_base {
        if under(path, selection) {
            assert_eq!(
                Some(entry),
                view.get(path),
                "{why}: {path} in the workspace"
            );
        } else if let Some(old) = base.get(path) {
            assert_eq!(entry, old, "{why}: {path} changed in the workspace");
        } else {
            assert!(
                entry.0 == "dir" && selection.iter().any(|s| s.starts_with(&format!("{path}/"))),
                "{why}: {path} appeared in the workspace"
            );
        }
    }
    for path in base.keys().chain(view.keys()) {
        if under(path, selection) {
            assert_eq!(
                now_base.get(path),
                view.get(path),
                "{why}: {path} in the workspace"
            );
        }
    }
}

/// Partial commits at every depth, of files and of whole directories (a table, then seeded
/// random selections); after each, the view is unchanged and the diff and the workspace hold
/// what they should. Then a rewind to a checkpoint taken before them and a commit of the
/// rest: the workspace ends equal to the session's view.
#[test]
fn partial_commits_at_every_depth_keep_the_view_and_the_rest_commits_after_a_rewind() {
    let table: &[&[&str]] = &[
        &["new/deep/n.txt"],
        &["n/n.txt"],
        &["new1.txt"],
        &["new/deep/more"],
        &["new"],
        &["old/fresh/deeper/f.txt"],
        &["old/fresh"],
        &["gone/again.txt"],
        &["gone/in/new.txt"],
        &["gone/g.txt"],
        &["old/sub/deep/z.txt"],
        &["old/sub/new.txt", "old/y2.txt"],
        &["new/deep/moved.txt"],
        &["mv/m.txt"],
        &["empty/e1"],
        &["n/top.sh", "a.txt"],
    ];
    let mut rng = 0x5eed_u64;
    let mut next = |bound: usize| {
        rng = rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (rng >> 33) as usize % bound.max(1)
    };
    let rounds = table.len() + 6;
    for round in 0..rounds {
        let o = seeded();
        change(&o);
        let view = view_tree(&o);
        let id = assert_ok(&session(o.ws, "checkpoint", None))["id"]
            .as_str()
            .unwrap()
            .to_string();
        let mut selections: Vec<Vec<String>> = Vec::new();
        if let Some(row) = table.get(round) {
            selections.push(row.iter().map(|p| p.to_string()).collect());
        }
        // Random parts of what the diff still lists.
        while selections.len() < 2 {
            let listed: Vec<String> = changes(o.ws).into_iter().map(|(p, _)| p).collect();
            let mut pick: Vec<String> = (0..1 + next(3))
                .map(|_| listed[next(listed.len())].clone())
                .collect();
            pick.sort();
            pick.dedup();
            selections.push(pick);
        }
        for (i, selection) in selections.iter().enumerate() {
            commit_part(&o, selection, &format!("round {round}, commit {i}"));
        }
        assert_ok(&session(o.ws, "rewind", Some(json!({ "id": id }))));
        assert_eq!(view_tree(&o), view, "round {round}: the rewound view");
        // A plain commit: the base changed since the checkpoint only by this session's own
        // commits, which are no conflict.
        let v = session(o.ws, "commit", None);
        assert_eq!(
            assert_ok(&v)["committed"],
            json!(true),
            "round {round}: {v}"
        );
        assert!(
            changes(o.ws).is_empty(),
            "round {round}: {:?}",
            changes(o.ws)
        );
        assert_eq!(
            view_tree(&o),
            view,
            "round {round}: the view after the commit"
        );
        assert_eq!(base_tree(&o.root), view, "round {round}: the workspace");
    }
}

/// The session's changes for the rewind tests: a changed file, a new file in a new
/// directory, and a file left for the later commit.
fn rewind_case() -> (Overlay, Tree, String) {
    let o = Overlay::new(&[("a.txt", "a\n"), ("b.txt", "b\n")], json!({}));
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "A\n"})));
    assert_ok(&o.call("write_file", json!({"path": "b.txt", "content": "B\n"})));
    assert_ok(&o.call(
        "write_file",
        json!({"path": "new/deep/n.txt", "content": "n\n"}),
    ));
    let view = view_tree(&o);
    let id = assert_ok(&session(o.ws, "checkpoint", None))["id"]
        .as_str()
        .unwrap()
        .to_string();
    let v = session(o.ws, "commit", Some(json!({"paths": ["a.txt", "new"]})));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    (o, view, id)
}

/// A rewind to a checkpoint taken before a partial commit does not make the session's own
/// commit a conflict: a plain commit of the rest succeeds and the workspace equals the view.
#[test]
fn after_a_rewind_past_a_partial_commit_the_rest_commits_without_conflicts() {
    let (o, view, id) = rewind_case();
    // A change after the checkpoint, committed, then undone by the rewind.
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "A2\n"})));
    let v = session(o.ws, "commit", Some(json!({"paths": ["a.txt"]})));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_ok(&session(o.ws, "rewind", Some(json!({ "id": id }))));
    assert_eq!(view_tree(&o), view, "the rewound view");
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(assert_ok(&v)["conflicts"], json!([]), "{v}");
    assert!(changes(o.ws).is_empty(), "{:?}", changes(o.ws));
    assert_eq!(view_tree(&o), view, "the view after the commit");
    assert_eq!(base_tree(&o.root), view, "the workspace");
}

/// The control: another writer's change of the base after the checkpoint (of a path the
/// session committed, and of one it did not) is still a conflict after the rewind.
#[test]
fn after_a_rewind_past_a_partial_commit_another_writers_change_is_a_conflict() {
    let (o, _view, id) = rewind_case();
    fs::write(o.root.join("a.txt"), "other\n").unwrap();
    fs::write(o.root.join("b.txt"), "other b\n").unwrap();
    assert_ok(&session(o.ws, "rewind", Some(json!({ "id": id }))));
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(false), "{v}");
    let mut conflicted: Vec<&str> = assert_ok(&v)["conflicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    conflicted.sort_unstable();
    assert_eq!(conflicted, vec!["a.txt", "b.txt"], "{v}");
    assert_eq!(o.base("a.txt").as_deref(), Some("other\n"));
    assert_eq!(o.base("b.txt").as_deref(), Some("other b\n"));
}
