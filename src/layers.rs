//! The layer rule as a test: imports point down only, and no module imports itself back.
//!
//! It reads every `src/**/*.rs`, takes the `crate::` and `super::` paths outside comments and
//! string literals (grouped `use crate::{a, b::c}` included), maps each to the file of the
//! module it names, and fails on an edge that points up a layer (see [`LAYERS`]) or closes a
//! cycle between files. `cargo test --lib layers -- --nocapture` prints the counts.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer with its top-level modules, lowest first, and the layers it may import.
const LAYERS: &[(&str, &[&str], &[&str])] = &[
    (
        "base",
        &[
            "error", "control", "text", "lines", "names", "paths", "render", "json", "logging",
        ],
        &["base"],
    ),
    ("patch", &["patch"], &["base", "patch"]),
    ("sandbox", &["sandbox"], &["base", "sandbox"]),
    ("guard", &["guard"], &["base", "sandbox", "guard"]),
    (
        "commit",
        &["commit"],
        &["base", "sandbox", "guard", "commit"],
    ),
    (
        "overlay",
        &["overlay"],
        &["base", "sandbox", "guard", "commit", "overlay"],
    ),
    (
        "composition",
        &["config", "backend", "workspace"],
        &[
            "base",
            "patch",
            "sandbox",
            "guard",
            "commit",
            "overlay",
            "composition",
        ],
    ),
    (
        "exec",
        &["exec"],
        &[
            "base",
            "sandbox",
            "guard",
            "commit",
            "overlay",
            "composition",
            "exec",
        ],
    ),
    (
        "tools",
        &["tools"],
        &[
            "base",
            "patch",
            "sandbox",
            "guard",
            "commit",
            "overlay",
            "composition",
            "exec",
            "tools",
        ],
    ),
    (
        "wasm",
        &["wasm"],
        &["base", "sandbox", "guard", "composition", "tools", "wasm"],
    ),
    (
        "abi",
        &["abi"],
        &[
            "base",
            "patch",
            "sandbox",
            "guard",
            "commit",
            "overlay",
            "composition",
            "exec",
            "tools",
            "wasm",
            "abi",
        ],
    ),
];

/// Files whose code may name handles the tools must not touch (see [`TOOLS_STAY_ABOVE`]).
const TOOLS_DIR: &str = "tools";

/// The files of a Wasm tool's `/workspace`, held to [`TOOLS_STAY_ABOVE`] like the tools.
const GUEST_FS_DIR: [&str; 2] = ["wasm", "fs"];

/// What a file under `src/tools/` (or [`GUEST_FS_DIR`]) must never name: the tools reach the file system only
/// through the workspace's operations (the backend contract), never through the root's
/// handle, a directory listing or a walk of their own.
const TOOLS_STAY_ABOVE: &[&str] = &[
    "root_dir",
    "open_dir_nofollow",
    "open_dir(",
    "read_dir",
    "entries()",
    "RawDir",
    "open_ambient",
    "sandbox::walk::dfs",
    "sandbox::walk::tree",
    "sandbox::walk::remove",
    "unlinkat",
    "renameat",
    ".create_dir(",
    "sandbox::create_dirs",
    "sandbox::new_dirs",
    "sandbox::state_dir",
    "Root::",
];

/// The layer of a module path (`["sandbox", "walk", "dfs"]`); `None` for the crate root.
fn layer_of(module: &[String]) -> Option<&'static str> {
    let top = module.first()?;
    LAYERS
        .iter()
        .find(|(_, modules, _)| modules.contains(&top.as_str()))
        .map(|(name, _, _)| *name)
        .or_else(|| panic!("src/{top}: a module in no layer; add it to LAYERS"))
}

fn may_import(from: &str, to: &str) -> bool {
    LAYERS
        .iter()
        .find(|(name, _, _)| *name == from)
        .is_some_and(|(_, _, allowed)| allowed.contains(&to))
}

/// Every source file, with its module path (`src/tools/read_file/mod.rs` is
/// `tools::read_file`, `src/lib.rs` the crate root).
fn sources() -> BTreeMap<Vec<String>, PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = BTreeMap::new();
    let mut dirs = vec![src.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable") {
            let path = entry.expect("src is readable").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(&src).expect("under src");
            let mut module: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            out.insert(module, path);
        }
    }
    out
}

/// `text` with comments, string and character literals blanked out (code keeps its shape).
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let skip = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or(rest.len(), |end| end + 2)
        } else if let Some(len) = raw_string_len(rest) {
            len
        } else if rest.starts_with('"') {
            string_len(rest)
        } else if rest.starts_with('\'') {
            char_len(rest)
        } else {
            0
        };
        if skip > 0 {
            out.push(' ');
            i += skip;
            continue;
        }
        let c = rest.chars().next().expect("not at the end");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The length of a raw string literal (`r"..."`, `r#"..."#`, `br"..."`) at the start of `s`.
fn raw_string_len(s: &str) -> Option<usize> {
    let after_b = s.strip_prefix('b').unwrap_or(s);
    let after_r = after_b.strip_prefix('r')?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some(s.len() - body.len() + end + close.len())
}

fn string_len(s: &str) -> usize {
    let mut escaped = false;
    for (k, c) in s.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return k + 1,
            _ => escaped = false,
        }
    }
    s.len()
}

/// A character literal's length, or 0 for a lifetime (`'a`), which is code.
fn char_len(s: &str) -> usize {
    let mut chars = s.char_indices().skip(1);
    match chars.next() {
        Some((_, '\\')) => s[2..].find('\'').map_or(0, |end| end + 3),
        Some((_, c)) => match chars.next() {
            Some((k, '\'')) if c != '\'' => k + 1,
            _ => 0,
        },
        None => 0,
    }
}

/// Every path the code names through `crate::`, `super::` or one of its `children` (the
/// modules declared in it), resolved against `module`, as segments (a `use` group gives one
/// path per leaf).
fn named_paths(code: &str, module: &[String], children: &[&str]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let at_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let at_path_start = at_word && !code[..i].ends_with("::");
        let rest = &code[i..];
        let child = children.iter().find_map(|child| {
            let after = rest.strip_prefix(child)?.strip_prefix("::")?;
            Some((child, after))
        });
        let start = if !at_path_start {
            None
        } else if let Some((child, after)) = child {
            let mut base = module.to_vec();
            base.push(child.to_string());
            Some((base, after))
        } else if let Some(after) = rest.strip_prefix("crate::") {
            Some((Vec::new(), after))
        } else if rest.starts_with("super::") {
            let mut base: Vec<String> = module.to_vec();
            let mut after = rest;
            while let Some(next) = after.strip_prefix("super::") {
                base.pop();
                after = next;
            }
            Some((base, after))
        } else {
            None
        };
        match start {
            Some((prefix, after)) => {
                let consumed = tree(after, prefix, &mut out);
                i = code.len() - after.len() + consumed;
            }
            None => i += rest.chars().next().map_or(1, char::len_utf8),
        }
    }
    out
}

/// Reads a use tree (`a::b`, `a::{b, c::d}`) at the start of `s` below `prefix`; returns the
/// bytes read.
fn tree(s: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut path = prefix;
    let mut i = 0;
    loop {
        let rest = &s[i..];
        let trimmed = rest.trim_start();
        i += rest.len() - trimmed.len();
        if let Some(inner) = trimmed.strip_prefix('{') {
            i += 1;
            let mut consumed = 0;
            loop {
                let part = &inner[consumed..];
                let t = part.trim_start();
                consumed += part.len() - t.len();
                if t.starts_with('}') {
                    consumed += 1;
                    break;
                }
                if t.starts_with(',') {
                    consumed += 1;
                    continue;
                }
                if t.is_empty() {
                    break;
                }
                let read = tree(t, path.clone(), out);
                consumed += read.max(1);
            }
            return i + consumed;
        }
        let len = trimmed
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(trimmed.len());
        if len == 0 {
            out.push(path);
            return i;
        }
        let word = &trimmed[..len];
        if word != "self" {
            path.push(word.to_string());
        }
        i += len;
        match s[i..].strip_prefix("::") {
            Some(_) => i += 2,
            None => {
                out.push(path);
                return i;
            }
        }
    }
}

/// The module a path names: its longest prefix that is a file's module.
fn module_named<'m>(
    path: &[String],
    modules: &'m BTreeMap<Vec<String>, PathBuf>,
) -> Option<&'m Vec<String>> {
    (1..=path.len())
        .rev()
        .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
}

struct Graph {
    edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
    /// Files under `src/tools/` with what they name of [`TOOLS_STAY_ABOVE`].
    tool_handles: Vec<String>,
}

fn graph() -> Graph {
    let modules = sources();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    let mut tool_handles = Vec::new();
    for (module, path) in &modules {
        let text = std::fs::read_to_string(path).expect("a source file is readable");
        let code = code_only(&text);
        // Unit tests (`#[cfg(test)] mod tests`, last in a file) may reach anything.
        let code = match code.find("#[cfg(test)]\nmod tests") {
            Some(at) => &code[..at],
            None => &code[..],
        };
        let children: Vec<&str> = modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .filter_map(|m| m.last().map(String::as_str))
            .collect();
        let targets = edges.entry(module.clone()).or_default();
        for named in named_paths(code, module, &children) {
            if let Some(target) = module_named(&named, &modules) {
                if target != module {
                    targets.insert(target.clone());
                }
            }
        }
        // The tools, and the workspace a Wasm tool sees (`/workspace`), which must go through
        // the same operations.
        if module.first().map(String::as_str) == Some(TOOLS_DIR)
            || module.starts_with(&GUEST_FS_DIR.map(String::from))
        {
            for word in TOOLS_STAY_ABOVE {
                if code.contains(word) {
                    tool_handles.push(format!("src/{}: {word}", module.join("/")));
                }
            }
        }
    }
    Graph {
        edges,
        tool_handles,
    }
}

/// The cycles of the graph: its strongly connected components of more than one file.
fn cycles(edges: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<Vec<String>>> {
    let reaches = |from: &Vec<String>| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![from.clone()];
        while let Some(at) = todo.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    todo.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<_, _> = edges.keys().map(|m| (m.clone(), reaches(m))).collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in edges.keys() {
        if done.contains(m) || !reach[m].contains(m) {
            continue;
        }
        let component: Vec<Vec<String>> = reach[m]
            .iter()
            .filter(|other| reach.get(*other).is_some_and(|r| r.contains(m)))
            .cloned()
            .collect();
        done.extend(component.iter().cloned());
        out.push(component);
    }
    out
}

fn shown(module: &[String]) -> String {
    match module {
        [] => "lib".to_string(),
        _ => module.join("::"),
    }
}

#[test]
fn imports_point_down_and_close_no_cycle() {
    let graph = graph();
    let mut upward = Vec::new();
    let mut count = 0;
    for (from, targets) in &graph.edges {
        for to in targets {
            count += 1;
            let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) else {
                continue; // the crate root names every module
            };
            if !may_import(a, b) {
                upward.push(format!("{} ({a}) -> {} ({b})", shown(from), shown(to)));
            }
        }
    }
    let cycles = cycles(&graph.edges);
    println!(
        "layers: {} files, {count} import edges between them, {} pointing up, {} cycles",
        graph.edges.len(),
        upward.len(),
        cycles.len()
    );
    let cycles: Vec<String> = cycles
        .iter()
        .map(|c| c.iter().map(|m| shown(m)).collect::<Vec<_>>().join(", "))
        .collect();
    for cycle in &cycles {
        println!("layers: cycle: {cycle}");
    }
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn the_reader_sees_imports_as_the_compiler_does() {
    let code = code_only(
        "use crate::{a::b, c::{self, d::E}};\n// crate::f\nlet s = \"crate::g\"; 'x'; \
         fn h<'a>() { super::i::J; r#\"crate::k\"# }",
    );
    let module = vec!["m".to_string(), "n".to_string()];
    let named = named_paths(&code, &module, &["i"]);
    let as_text: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    assert_eq!(as_text, ["a::b", "c", "c::d::E", "m::i::J"]);
    let named = named_paths("super::super::x; use o::P; q::o::R", &module, &["o"]);
    let as_text: Vec<String> = named.iter().map(|p| p.join("::")).collect();
    assert_eq!(as_text, ["x", "m::n::o::P"]);
}

#[test]
fn tools_reach_the_file_system_through_the_workspace() {
    let graph = graph();
    assert!(
        graph.tool_handles.is_empty(),
        "tools using handles or walks of their own instead of the workspace's operations:\n{}",
        graph.tool_handles.join("\n")
    );
}
