//! The program's environment, built from nothing: `PATH`, `HOME` (the tools' home, never the
//! host's), `LANG`, `TMPDIR` (the run's private temp directory), the variables the host names
//! in `exec_env_allow`, then what the tool itself sets (git's hardening, a report file's path).
//! Nothing else of the host's environment reaches the program: no `LD_PRELOAD`,
//! `NODE_OPTIONS`, `PYTHONPATH`, `GIT_CONFIG_*` or API key the host happens to have.

use std::ffi::{OsStr, OsString};
use std::path::Path;

/// Used when the host itself has no `PATH`.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";
const DEFAULT_LANG: &str = "C.UTF-8";

/// What the environment is made of.
pub struct EnvSources<'a> {
    /// The host's environment (`std::env::vars_os()`; a list in tests).
    pub host: &'a [(OsString, OsString)],
    /// `exec_env_allow`: names, or prefixes ending in `*`.
    pub allow: &'a [String],
    pub home: &'a Path,
    pub tmp: &'a Path,
    /// Set by the tool; wins over everything else.
    pub tool: &'a [(OsString, OsString)],
}

pub fn build(src: &EnvSources<'_>) -> Vec<(OsString, OsString)> {
    let host = |name: &str| {
        src.host
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let mut vars: Vec<(OsString, OsString)> = Vec::new();
    let mut set = |k: &OsStr, v: OsString| {
        vars.retain(|(name, _)| name != k);
        vars.push((k.to_os_string(), v));
    };
    set(
        OsStr::new("PATH"),
        host("PATH").unwrap_or_else(|| DEFAULT_PATH.into()),
    );
    set(
        OsStr::new("LANG"),
        host("LANG").unwrap_or_else(|| DEFAULT_LANG.into()),
    );
    for (name, value) in src.host {
        if allowed(name, src.allow) {
            set(name, value.clone());
        }
    }
    set(OsStr::new("HOME"), src.home.as_os_str().to_os_string());
    set(OsStr::new("TMPDIR"), src.tmp.as_os_str().to_os_string());
    for (name, value) in src.tool {
        set(name, value.clone());
    }
    vars
}

fn allowed(name: &OsStr, allow: &[String]) -> bool {
    let Some(name) = name.to_str() else {
        return false;
    };
    allow.iter().any(|rule| match rule.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == rule,
    })
}

/// The value of `name` in a built environment.
pub fn lookup<'a>(vars: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    vars.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| ((*k).into(), (*v).into()))
            .collect()
    }

    #[test]
    fn only_the_allowlist_passes_and_the_tool_wins() {
        let host = pairs(&[
            ("PATH", "/usr/bin"),
            ("HOME", "/root"),
            ("LD_PRELOAD", "/tmp/evil.so"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("GOFLAGS", "-mod=mod"),
            ("GOPATH", "/go"),
            ("CARGO_HOME", "/cargo"),
        ]);
        let tool = pairs(&[("GIT_CONFIG_NOSYSTEM", "1"), ("PATH", "/tool/bin")]);
        let allow = vec!["GO*".to_string(), "HOME".to_string()];
        let env = build(&EnvSources {
            host: &host,
            allow: &allow,
            home: Path::new("/state/home"),
            tmp: Path::new("/state/tmp/run1"),
            tool: &tool,
        });
        let names: Vec<_> = env.iter().map(|(k, _)| k.to_str().unwrap()).collect();
        assert!(!names.contains(&"LD_PRELOAD"));
        assert!(!names.contains(&"OPENAI_API_KEY"));
        assert!(!names.contains(&"CARGO_HOME"));
        assert_eq!(lookup(&env, "GOFLAGS"), Some(OsStr::new("-mod=mod")));
        assert_eq!(lookup(&env, "HOME"), Some(OsStr::new("/state/home")));
        assert_eq!(lookup(&env, "TMPDIR"), Some(OsStr::new("/state/tmp/run1")));
        assert_eq!(lookup(&env, "PATH"), Some(OsStr::new("/tool/bin")));
        assert_eq!(lookup(&env, "LANG"), Some(OsStr::new("C.UTF-8")));
        assert_eq!(lookup(&env, "GIT_CONFIG_NOSYSTEM"), Some(OsStr::new("1")));
    }
}
