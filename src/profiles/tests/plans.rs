//! Runs the design documents' ported test plans (`tests/profiles/plans/`, format in
//! `tests/profiles/README.md`) through the C ABI (`wsfs_call`, `wsfs_workspace_tool_specs`) on
//! workspaces opened with the plan's profile. A case marked
//! `gap` must fail until phase 2 closes that gap; host checks, inapplicable cases and, as
//! root, permission cases are skipped.

use super::Ws;
use serde::Deserialize;
use serde_json::{Map, Value};
use std::os::unix::fs::PermissionsExt;

const PLANS: &[(&str, &str)] = &[
    (
        "miniclaw",
        include_str!("../../../tests/profiles/plans/miniclaw.json"),
    ),
    (
        "filesystem-tool",
        include_str!("../../../tests/profiles/plans/filesystem-tool.json"),
    ),
    (
        "agent-base",
        include_str!("../../../tests/profiles/plans/agent-base.json"),
    ),
    (
        "capability-plan",
        include_str!("../../../tests/profiles/plans/capability-plan.json"),
    ),
    (
        "capability-plan",
        include_str!("../../../tests/profiles/plans/capability-plan-devtools.json"),
    ),
];

/// The programs the `devtools` cases run, found on the PATH programs get (`make test` puts
/// target/venv and target/devtools-node there).
const DEVTOOLS: &[&str] = &["git", "pytest", "ruff", "mypy", "pyright", "eslint", "tsc"];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Plan {
    profile: String,
    #[allow(dead_code)]
    document: String,
    #[serde(default)]
    config: Map<String, Value>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    #[allow(dead_code)]
    source: String,
    #[serde(default)]
    config: Map<String, Value>,
    #[serde(default)]
    setup: Vec<Setup>,
    #[serde(default)]
    steps: Vec<Step>,
    #[serde(default)]
    gap: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    deviation: Option<String>,
    #[serde(default)]
    host: Option<String>,
    #[serde(default)]
    check: Option<String>,
    #[serde(default)]
    requires: Option<String>,
    #[serde(default)]
    skip: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Setup {
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    hex: Option<String>,
    #[serde(default)]
    lines: Option<u64>,
    #[serde(default)]
    line: Option<String>,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    dir: Option<String>,
    #[serde(default)]
    symlink: Option<String>,
    #[serde(default)]
    target: Option<String>,
    #[serde(default)]
    outside_file: Option<String>,
    #[serde(default)]
    git: Option<Vec<String>>,
    #[serde(default)]
    git_repo: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    #[serde(default)]
    call: Option<String>,
    #[serde(default)]
    args: Option<Value>,
    #[serde(default)]
    specs: bool,
    expect: Value,
    #[serde(default)]
    files: Map<String, Value>,
    #[serde(default)]
    modes: Map<String, Value>,
}

#[test]
fn the_documents_test_plans_pass() {
    let root = rustix::process::geteuid().is_root();
    let mut failures = Vec::new();
    let mut counts = (0, 0, 0); // run, gaps, skipped
    for (name, text) in PLANS {
        let plan: Plan = serde_json::from_str(text).unwrap_or_else(|e| panic!("plan {name}: {e}"));
        assert_eq!(plan.profile, *name, "plan {name}");
        for case in &plan.cases {
            let at = format!("{name} / {}", case.name);
            if case.host.is_some() || case.skip.is_some() {
                assert!(
                    case.host.is_none() || case.check.is_some(),
                    "{at}: a host case says what to check"
                );
                assert!(case.steps.is_empty(), "{at}: a skipped case has no steps");
                counts.2 += 1;
                continue;
            }
            if case.requires.as_deref() == Some("non_root") && root {
                counts.2 += 1;
                continue;
            }
            if case.requires.as_deref() == Some("devtools") {
                if let Err(why) = devtools_here() {
                    if std::env::var_os("WSFS_REQUIRE_DEVTOOLS").is_some() {
                        failures.push(format!("{at}: {why}"));
                    } else {
                        eprintln!("SKIPPED {at}: {why}");
                        counts.2 += 1;
                    }
                    continue;
                }
            }
            assert!(!case.steps.is_empty(), "{at}: no steps");
            let outcome = run_case(&plan, case);
            match (&case.gap, outcome) {
                (None, Ok(())) => counts.0 += 1,
                (None, Err(e)) => failures.push(format!("{at}: {e}")),
                (Some(_), Err(e)) => {
                    eprintln!("gap case {at} fails as expected: {e}");
                    counts.1 += 1
                }
                (Some(gap), Ok(())) => {
                    failures.push(format!("{at}: passes now; remove its gap marker ({gap})"))
                }
            }
        }
    }
    eprintln!(
        "profile plans: {} cases passed, {} gap cases fail as expected, {} skipped",
        counts.0, counts.1, counts.2
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

/// Whether this build has the developer tools and the PATH the programs get has the programs
/// the `devtools` cases run.
fn devtools_here() -> Result<(), String> {
    if !cfg!(feature = "exec") {
        return Err("this build has no developer tools (feature exec)".into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing: Vec<&str> = DEVTOOLS
        .iter()
        .copied()
        .filter(|tool| !std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} not on the PATH (make venv devtools-node installs them; make test puts them on PATH)",
            missing.join(", ")
        ))
    }
}

/// Runs git in the workspace as a person would, with an identity and no system or user
/// configuration.
fn git(ws: &Ws, args: &[&str]) -> Result<(), String> {
    let out = std::process::Command::new("git")
        .args(["-c", "user.email=plan@example.com", "-c", "user.name=plan"])
        .args(args)
        .current_dir(ws.path("."))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", ws.path("."))
        .output()
        .map_err(|e| format!("git {args:?}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn merge(base: &mut Map<String, Value>, over: &Map<String, Value>) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(Value::Object(b)), Value::Object(o)) if k == "limits" || k == "policy" => {
                b.extend(o.clone())
            }
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

fn run_case(plan: &Plan, case: &Case) -> Result<(), String> {
    let mut config = plan.config.clone();
    merge(&mut config, &case.config);
    let ws = Ws::try_open_with(Value::Object(config)).map_err(|e| format!("open: {e}"))?;
    let subst = |s: &str| {
        s.replace("$root", &ws.root)
            .replace("$outside", &ws.outside.to_string_lossy())
    };
    for item in &case.setup {
        setup(&ws, item, &subst)?;
    }
    for (i, step) in case.steps.iter().enumerate() {
        run_step(&ws, &plan.profile, step, &subst).map_err(|e| format!("step {}: {e}", i + 1))?;
    }
    Ok(())
}

fn setup(ws: &Ws, item: &Setup, subst: &dyn Fn(&str) -> String) -> Result<(), String> {
    let content = || -> Result<Vec<u8>, String> {
        if let Some(hex) = &item.hex {
            return (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).map_err(|e| e.to_string()))
                .collect();
        }
        if let (Some(n), Some(line)) = (item.lines, &item.line) {
            return Ok((1..=n)
                .map(|i| format!("{}\n", line.replace("{n}", &i.to_string())))
                .collect::<String>()
                .into_bytes());
        }
        Ok(item.content.clone().unwrap_or_default().into_bytes())
    };
    if let Some(file) = &item.file {
        ws.write(file, content()?);
        if let Some(mode) = &item.mode {
            let bits = u32::from_str_radix(mode, 8).map_err(|e| e.to_string())?;
            std::fs::set_permissions(ws.path(file), std::fs::Permissions::from_mode(bits))
                .map_err(|e| e.to_string())?;
        }
    } else if let Some(dir) = &item.dir {
        std::fs::create_dir_all(ws.path(dir)).map_err(|e| e.to_string())?;
    } else if let (Some(link), Some(target)) = (&item.symlink, &item.target) {
        let path = ws.path(link);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
        }
        std::os::unix::fs::symlink(subst(target), path).map_err(|e| e.to_string())?;
    } else if let Some(name) = &item.outside_file {
        std::fs::write(ws.outside.join(name), content()?).map_err(|e| e.to_string())?;
    } else if let Some(args) = &item.git {
        git(ws, &args.iter().map(String::as_str).collect::<Vec<_>>())?;
    } else if let Some(message) = &item.git_repo {
        git(ws, &["init", "-q", "-b", "main"])?;
        git(ws, &["add", "-A"])?;
        git(ws, &["commit", "-q", "--allow-empty", "-m", message])?;
    } else {
        return Err(
            "a setup item creates a file, dir, symlink, outside_file, git_repo or runs git".into(),
        );
    }
    Ok(())
}

fn run_step(
    ws: &Ws,
    profile: &str,
    step: &Step,
    subst: &dyn Fn(&str) -> String,
) -> Result<(), String> {
    let actual = match (&step.call, step.specs) {
        (Some(tool), false) => {
            let args = match &step.args {
                Some(Value::String(raw)) => raw.clone(),
                Some(args) => substitute(args, subst).to_string(),
                None => "{}".to_string(),
            };
            ws.call_json(profile, tool, &args)
        }
        (None, true) => ws.specs(profile),
        _ => return Err("a step is a call or specs".into()),
    };
    let expect = substitute(&step.expect, subst);
    matches(&expect, Some(&actual), "").map_err(|e| format!("{e}\n  got {actual}"))?;
    for (file, want) in &step.files {
        let got = ws.read(file);
        let want = want.as_str().map(str::to_string);
        if got != want {
            return Err(format!("file {file}: want {want:?}, got {got:?}"));
        }
    }
    for (file, want) in &step.modes {
        let meta = std::fs::metadata(ws.path(file)).map_err(|e| format!("{file}: {e}"))?;
        let got = format!("{:04o}", meta.permissions().mode() & 0o7777);
        if Some(got.as_str()) != want.as_str() {
            return Err(format!("mode of {file}: want {want}, got {got}"));
        }
    }
    Ok(())
}

/// Every string value (not key) with `$root` / `$outside` filled in.
fn substitute(v: &Value, subst: &dyn Fn(&str) -> String) -> Value {
    match v {
        Value::String(s) => Value::String(subst(s)),
        Value::Array(items) => Value::Array(items.iter().map(|i| substitute(i, subst)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, subst)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The matching rules of `tests/profiles/README.md`.
fn matches(expect: &Value, actual: Option<&Value>, at: &str) -> Result<(), String> {
    let fail = |why: String| {
        Err(format!(
            "at {}: {why}",
            if at.is_empty() { "." } else { at }
        ))
    };
    if let Some(map) = expect.as_object() {
        if let (1, Some((key, arg))) = (map.len(), map.iter().next()) {
            if key.starts_with('$') {
                return matcher(key, arg, actual, at).or_else(&fail);
            }
        }
        let Some(Value::Object(got)) = actual else {
            return fail(format!("want an object, got {actual:?}"));
        };
        for (k, want) in map {
            matches(want, got.get(k), &format!("{at}.{k}"))?;
        }
        return Ok(());
    }
    let Some(got) = actual else {
        return fail(format!("missing, want {expect}"));
    };
    if let Value::Array(want) = expect {
        let Some(items) = got.as_array() else {
            return fail(format!("want an array, got {got}"));
        };
        if items.len() != want.len() {
            return fail(format!("want {} items, got {}", want.len(), items.len()));
        }
        for (i, (w, g)) in want.iter().zip(items).enumerate() {
            matches(w, Some(g), &format!("{at}[{i}]"))?;
        }
        return Ok(());
    }
    if got != expect {
        return fail(format!("want {expect}, got {got}"));
    }
    Ok(())
}

fn matcher(key: &str, arg: &Value, actual: Option<&Value>, at: &str) -> Result<(), String> {
    let text = || {
        actual
            .and_then(Value::as_str)
            .ok_or("want a string".to_string())
    };
    let needle = || arg.as_str().ok_or("the matcher takes a string".to_string());
    let holds = match key {
        "$absent" => actual.is_none(),
        "$contains" => text()?.contains(needle()?),
        "$not_contains" => !text()?.contains(needle()?),
        "$starts_with" => text()?.starts_with(needle()?),
        "$nonempty" => {
            let nonempty = match actual {
                Some(Value::String(s)) => !s.is_empty(),
                Some(Value::Array(a)) => !a.is_empty(),
                _ => return Err("want a string or an array".into()),
            };
            Some(nonempty) == arg.as_bool()
        }
        "$type" => {
            let kind = match actual {
                None => "missing",
                Some(Value::Null) => "null",
                Some(Value::Bool(_)) => "boolean",
                Some(Value::Number(_)) => "number",
                Some(Value::String(_)) => "string",
                Some(Value::Array(_)) => "array",
                Some(Value::Object(_)) => "object",
            };
            Some(kind) == arg.as_str()
        }
        "$len" => {
            let len = match actual {
                Some(Value::Array(a)) => a.len(),
                Some(Value::String(s)) => s.chars().count(),
                _ => return Err("want an array or a string".into()),
            };
            Some(len as u64) == arg.as_u64()
        }
        "$json" => {
            let parsed: Value = serde_json::from_str(text()?).map_err(|e| e.to_string())?;
            return matches(arg, Some(&parsed), at);
        }
        "$any" | "$all" => {
            let options = arg.as_array().ok_or("$any and $all take an array")?;
            let mut each = options.iter().map(|o| matches(o, actual, at).is_ok());
            if key == "$any" {
                each.any(|ok| ok)
            } else {
                each.all(|ok| ok)
            }
        }
        "$some" | "$none" => {
            let items = actual.and_then(Value::as_array).ok_or("want an array")?;
            let found = items.iter().any(|i| matches(arg, Some(i), at).is_ok());
            found == (key == "$some")
        }
        other => return Err(format!("unknown matcher {other}")),
    };
    if holds {
        Ok(())
    } else {
        Err(format!("{key} {arg} does not hold for {actual:?}"))
    }
}
