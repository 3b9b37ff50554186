//! The named value conversions result fields may ask for (`format::Transform`). Each takes the
//! source value (or the whole native `data` for the listing ones) and returns the public
//! value, or `None` when the source does not have the expected shape.

use super::format::Transform;
use serde_json::{json, Map, Value};

/// What a transform may need besides its source.
pub struct Context<'a> {
    /// The workspace root, absolute (for `absolute_path`).
    pub root: &'a str,
    /// The workspace's limits (for `refuse_when`).
    pub limits: &'a wsfs_core::config::Limits,
}

pub fn apply(
    transform: Transform,
    source: Option<&Value>,
    param: Option<&str>,
    cx: &Context<'_>,
) -> Option<Value> {
    match transform {
        Transform::IsPresent => Some(json!(source.is_some_and(|v| !v.is_null()))),
        Transform::Rfc3339ToUnix => {
            let t: jiff::Timestamp = source?.as_str()?.parse().ok()?;
            // Whole seconds, rounded down as Unix time is (before 1970 too).
            let floor = t.as_second() - i64::from(t.subsec_nanosecond() < 0);
            Some(json!(floor as f64))
        }
        Transform::AbsolutePath => Some(json!(absolute(cx.root, source?.as_str()?))),
        Transform::Pluck => {
            let field = param?;
            let items = source?.as_array()?;
            Some(Value::Array(
                items.iter().map(|i| i[field].clone()).collect(),
            ))
        }
        Transform::FlatListing => flat_listing(source?),
        Transform::TreeListing => tree_listing(source?),
    }
}

/// `root` joined with a workspace-relative path (`.` is the root itself).
fn absolute(root: &str, rel: &str) -> String {
    let rel = rel.trim_start_matches("./");
    let root = root.trim_end_matches('/');
    match rel {
        "" | "." => if root.is_empty() { "/" } else { root }.to_string(),
        _ if rel.starts_with('/') => rel.to_string(),
        _ => format!("{root}/{rel}"),
    }
}

/// `dir` joined with `name` as a workspace-relative path.
fn child(dir: &str, name: &str) -> String {
    match dir.trim_end_matches('/') {
        "" | "." => name.to_string(),
        dir => format!("{dir}/{name}"),
    }
}

/// `[{name, path, type, size}]` from `list_dir`'s data: its `entries`, or its `tree`
/// breadth-first (the order the tree was filled in).
fn flat_listing(data: &Value) -> Option<Value> {
    let base = data["path"].as_str()?;
    let mut out = Vec::new();
    if let Some(tree) = data.get("tree") {
        let mut level: Vec<(String, &Value)> = vec![(base.to_string(), tree)];
        while !level.is_empty() {
            let mut next = Vec::new();
            for (dir, node) in level {
                for entry in node["children"].as_array().into_iter().flatten() {
                    let path = child(&dir, entry["name"].as_str()?);
                    out.push(flat_entry(entry, &path));
                    if entry.get("children").is_some() {
                        next.push((path, entry));
                    }
                }
            }
            level = next;
        }
    } else {
        for entry in data["entries"].as_array()? {
            out.push(flat_entry(entry, &child(base, entry["name"].as_str()?)));
        }
    }
    Some(Value::Array(out))
}

fn flat_entry(entry: &Value, path: &str) -> Value {
    let mut item = Map::new();
    item.insert("name".into(), entry["name"].clone());
    item.insert("path".into(), json!(path));
    item.insert("type".into(), entry["type"].clone());
    if let Some(size) = entry.get("size") {
        item.insert("size".into(), size.clone());
    }
    Value::Object(item)
}

/// `{name, type: "dir", children}` from `list_dir`'s data: its `tree`, or its flat `entries`
/// as the root's children; the root is named after the listed directory.
fn tree_listing(data: &Value) -> Option<Value> {
    let path = data["path"].as_str()?;
    let name = path
        .trim_end_matches('/')
        .rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or(".");
    let mut tree = match data.get("tree") {
        Some(tree) => tree.clone(),
        None => json!({"type": "dir", "children": data["entries"].clone()}),
    };
    let root = tree.as_object_mut()?;
    root.insert("name".into(), json!(name));
    if data["truncated"] == true && !root.contains_key("truncated") {
        root.insert("truncated".into(), json!(true));
    }
    // Keep `name` first, as every other node has it.
    let mut ordered = Map::new();
    ordered.insert("name".into(), json!(name));
    for (k, v) in root.iter().filter(|(k, _)| *k != "name") {
        ordered.insert(k.clone(), v.clone());
    }
    Some(Value::Object(ordered))
}

#[cfg(test)]
mod tests {
    use super::*;

    static LIMITS: wsfs_core::config::Limits = wsfs_core::config::Limits {
        max_read_bytes: 256 * 1024,
        max_write_bytes: 1024 * 1024,
        max_list_entries: 500,
        operation_timeout_ms: 10_000,
    };

    fn cx() -> Context<'static> {
        Context {
            root: "/ws",
            limits: &LIMITS,
        }
    }

    #[test]
    fn times_paths_and_presence() {
        let t = apply(
            Transform::Rfc3339ToUnix,
            Some(&json!("2024-05-01T12:34:56Z")),
            None,
            &cx(),
        );
        assert_eq!(t, Some(json!(1714566896.0)));
        assert_eq!(
            apply(Transform::Rfc3339ToUnix, Some(&json!("x")), None, &cx()),
            None
        );
        let abs = |p: &str| apply(Transform::AbsolutePath, Some(&json!(p)), None, &cx());
        assert_eq!(abs("."), Some(json!("/ws")));
        assert_eq!(abs("a/b.txt"), Some(json!("/ws/a/b.txt")));
        assert_eq!(abs("./a"), Some(json!("/ws/a")));
        assert_eq!(
            apply(Transform::IsPresent, None, None, &cx()),
            Some(json!(false))
        );
        assert_eq!(
            apply(Transform::IsPresent, Some(&json!(3)), None, &cx()),
            Some(json!(true))
        );
        let items = json!([{"path": "a", "x": 1}, {"path": "b"}]);
        assert_eq!(
            apply(Transform::Pluck, Some(&items), Some("path"), &cx()),
            Some(json!(["a", "b"]))
        );
    }

    #[test]
    fn listings_flatten_and_grow_trees() {
        let flat = json!({"path": "src", "entries": [
            {"name": "a.rs", "type": "file", "size": 3}, {"name": "m", "type": "dir", "size": 4096}
        ], "truncated": false});
        assert_eq!(
            flat_listing(&flat),
            Some(json!([
                {"name": "a.rs", "path": "src/a.rs", "type": "file", "size": 3},
                {"name": "m", "path": "src/m", "type": "dir", "size": 4096}
            ]))
        );
        assert_eq!(
            tree_listing(&flat),
            Some(json!({"name": "src", "type": "dir", "children": flat["entries"]}))
        );
        let tree = json!({"path": ".", "entries": [], "truncated": false, "tree": {
        "name": ".", "type": "dir", "children": [
            {"name": "d", "type": "dir", "children": [{"name": "x", "type": "file", "size": 1}]},
            {"name": "f", "type": "file", "size": 2}
        ]}});
        assert_eq!(
            flat_listing(&tree),
            Some(json!([
                {"name": "d", "path": "d", "type": "dir"},
                {"name": "f", "path": "f", "type": "file", "size": 2},
                {"name": "x", "path": "d/x", "type": "file", "size": 1}
            ]))
        );
        assert_eq!(tree_listing(&tree).unwrap()["name"], ".");
    }
}
