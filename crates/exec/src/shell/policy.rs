//! The safe_shell policy: a TOML file (`config/safe_shell_policy.toml` is the one shipped),
//! not code. Deny rules first, then allow rules, both on the program a command finally runs
//! (after its wrappers) and a regular expression on its arguments; grammar constructs and
//! environment assignments are allowed by name. Every rule carries `match` and `not_match`
//! examples, and loading a policy judges every example: a rule that does not do what its
//! examples say is an error, so a policy cannot drift from its own documentation.

use super::options::{OptionRules, Permitted, Style};
use super::words::Construct;
use regex::Regex;
use serde::Deserialize;

/// The policy shipped with wsfs (loaded and checked by `load.rs`). The file lies in this crate,
/// so the crate builds from its package alone; `config/safe_shell_policy.toml` links to it.
pub const BUILTIN: &str = include_str!("../../safe_shell_policy.toml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    version: u32,
    default_suggestion: String,
    #[serde(default)]
    grammar: GrammarFile,
    #[serde(default)]
    env: EnvFile,
    #[serde(default)]
    options: OptionsFile,
    #[serde(default)]
    deny: Vec<RuleFile>,
    #[serde(default)]
    allow: Vec<RuleFile>,
    #[serde(default)]
    suggest: Vec<SuggestFile>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct GrammarFile {
    #[serde(default)]
    allow: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct EnvFile {
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    allow: Vec<String>,
    #[serde(default)]
    suggest: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionsFile {
    /// Long options refused for every allow rule that uses `deny_options`.
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    suggest: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    id: String,
    programs: Vec<String>,
    #[serde(default)]
    args: Option<String>,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    suggest: String,
    #[serde(rename = "match")]
    matches: Vec<String>,
    #[serde(default)]
    not_match: Vec<String>,
    /// Allow rules: the options permitted (`-n=` takes a value) ...
    #[serde(default)]
    options: Option<Vec<String>>,
    /// ... or the options refused, for programs with huge option sets.
    #[serde(default)]
    deny_options: Option<Vec<String>>,
    /// "gnu" (the default: `-la` is a cluster) or "single-dash" (`-cover` is one option).
    #[serde(default)]
    option_style: Option<String>,
    #[serde(default)]
    max_operands: Option<usize>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuggestFile {
    programs: Vec<String>,
    suggest: String,
}

/// A deny or allow rule.
#[derive(Debug)]
pub struct Rule {
    pub id: String,
    pub programs: Vec<String>,
    pub args: Option<Regex>,
    pub reason: String,
    pub suggest: String,
    pub(super) matches: Vec<String>,
    pub(super) not_match: Vec<String>,
    /// What the rule says about its programs' options (allow rules only).
    pub options: OptionRules,
}

impl Rule {
    pub fn applies(&self, program: &str, args: &str) -> bool {
        self.programs.iter().any(|p| p == program)
            && self.args.as_ref().is_none_or(|re| re.is_match(args))
    }

    /// The rule as `matched_pattern` shows it.
    pub fn pattern(&self, kind: &str) -> String {
        let args = self
            .args
            .as_ref()
            .map_or(String::new(), |re| format!(" /{}/", re.as_str()));
        format!(
            "{kind} rule '{}': {}{args}",
            self.id,
            self.programs.join("|")
        )
    }
}

#[derive(Debug)]
pub struct ShellRules {
    pub grammar: Vec<Construct>,
    pub env_deny: Vec<String>,
    pub env_allow: Vec<String>,
    pub env_suggest: String,
    pub deny: Vec<Rule>,
    pub allow: Vec<Rule>,
    /// Long options refused for every allow rule that uses `deny_options`.
    pub options_deny: Vec<String>,
    pub options_suggest: String,
    pub suggest: Vec<(Vec<String>, String)>,
    pub default_suggestion: String,
}

impl ShellRules {
    /// Parses a policy file without judging its examples (`load.rs` does that: it needs the
    /// judge, which needs this type).
    pub(super) fn parse_unchecked(text: &str) -> Result<ShellRules, String> {
        let file: File =
            toml::from_str(text).map_err(|e| format!("the safe_shell policy is not valid: {e}"))?;
        if file.version != 1 {
            return Err(format!(
                "safe_shell policy version {} is not known (1 is)",
                file.version
            ));
        }
        let mut grammar = Vec::new();
        for name in &file.grammar.allow {
            grammar.push(Construct::from_name(name).ok_or_else(|| {
                let known: Vec<&str> = Construct::ALL.iter().map(|c| c.name()).collect();
                format!(
                    "unknown grammar construct {name:?}; known: {}",
                    known.join(", ")
                )
            })?);
        }
        let rules = |list: Vec<RuleFile>, kind: &str| -> Result<Vec<Rule>, String> {
            list.into_iter()
                .map(|r| {
                    if r.matches.is_empty() {
                        return Err(format!("{kind} rule '{}' has no match example", r.id));
                    }
                    if kind == "deny" && (r.reason.is_empty() || r.suggest.is_empty()) {
                        return Err(format!("deny rule '{}' needs a reason and a suggest", r.id));
                    }
                    let args =
                        r.args.as_deref().map(Regex::new).transpose().map_err(|e| {
                            format!("{kind} rule '{}': bad args pattern: {e}", r.id)
                        })?;
                    let options = option_rules(&r, kind)
                        .map_err(|e| format!("{kind} rule '{}': {e}", r.id))?;
                    Ok(Rule {
                        id: r.id,
                        programs: r.programs,
                        args,
                        reason: r.reason,
                        suggest: r.suggest,
                        matches: r.matches,
                        not_match: r.not_match,
                        options,
                    })
                })
                .collect()
        };
        let policy = ShellRules {
            grammar,
            env_deny: file.env.deny,
            env_allow: file.env.allow,
            env_suggest: file.env.suggest,
            deny: rules(file.deny, "deny")?,
            allow: rules(file.allow, "allow")?,
            options_deny: file.options.deny,
            options_suggest: file.options.suggest,
            suggest: file
                .suggest
                .into_iter()
                .map(|s| (s.programs, s.suggest))
                .collect(),
            default_suggestion: file.default_suggestion,
        };
        Ok(policy)
    }

    pub fn allows(&self, c: Construct) -> bool {
        self.grammar.contains(&c)
    }

    /// The suggestion for a program no rule allows.
    pub fn suggestion_for(&self, program: &str) -> &str {
        self.suggest
            .iter()
            .find(|(programs, _)| programs.iter().any(|p| p == program))
            .map_or(self.default_suggestion.as_str(), |(_, s)| s.as_str())
    }
}

/// An allow rule must say which options it permits or which it refuses (an empty
/// `deny_options` says none of its programs' options runs a program or writes a file); a
/// deny rule says neither.
fn option_rules(r: &RuleFile, kind: &str) -> Result<OptionRules, String> {
    let stated = r.options.is_some() || r.deny_options.is_some();
    let extra = r.option_style.is_some() || r.max_operands.is_some();
    if kind == "deny" {
        if stated || extra {
            return Err(
                "options, deny_options, option_style and max_operands are for allow rules".into(),
            );
        }
        return Ok(OptionRules::default());
    }
    let style = match r.option_style.as_deref() {
        None | Some("gnu") => Style::Gnu,
        Some("single-dash") => Style::SingleDash,
        Some(other) => {
            return Err(format!(
                "option_style {other:?} is not known (gnu or single-dash are)"
            ))
        }
    };
    let permitted = match (&r.options, &r.deny_options) {
        (Some(_), Some(_)) => return Err("give options or deny_options, not both".into()),
        (None, None) => {
            return Err(
                "needs options (those permitted) or deny_options (those refused; [] when none runs a program or writes a file)"
                    .into(),
            )
        }
        (Some(list), None) => Some(
            list.iter()
                .map(|o| Permitted::parse(o))
                .collect::<Result<Vec<_>, _>>()?,
        ),
        (None, Some(_)) => {
            if r.max_operands.is_some() {
                return Err("max_operands needs an options list (operands are only told from option values by one)".into());
            }
            None
        }
    };
    let deny = r.deny_options.clone().unwrap_or_default();
    if let Some(bad) = deny.iter().find(|d| !d.starts_with('-') || d.len() < 2) {
        return Err(format!("deny_options entry {bad:?} is not an option"));
    }
    Ok(OptionRules {
        style,
        permitted,
        deny,
        max_operands: r.max_operands,
    })
}

/// `NAME` against a list of names and `PREFIX*` patterns; the pattern that matched.
pub fn env_match<'a>(name: &str, list: &'a [String]) -> Option<&'a str> {
    list.iter()
        .find(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => name == p.as_str(),
        })
        .map(String::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_policy_loads_and_its_examples_hold() {
        let p = ShellRules::builtin().unwrap_or_else(|e| panic!("{e}"));
        assert!(p.deny.len() >= 10 && p.allow.len() >= 10);
    }

    #[test]
    fn a_rule_whose_examples_lie_is_refused_at_load() {
        let text = r#"
version = 1
default_suggestion = "use the tools"
[[deny]]
id = "no-rm"
programs = ["rm"]
args = "-r"
reason = "recursive"
suggest = "delete_file"
match = ["rm -rf x", "rm file.txt"]
"#;
        let err = ShellRules::from_toml(text).unwrap_err();
        assert!(
            err.contains("deny rule 'no-rm' should block \"rm file.txt\""),
            "{err}"
        );
        let err = ShellRules::from_toml("version = 2\ndefault_suggestion = \"x\"").unwrap_err();
        assert!(err.contains("version 2"));
        let err = ShellRules::from_toml(
            "version = 1\ndefault_suggestion = \"x\"\n[grammar]\nallow = [\"magic\"]",
        )
        .unwrap_err();
        assert!(err.contains("unknown grammar construct"), "{err}");
    }

    #[test]
    fn an_allow_rule_must_say_what_options_it_permits() {
        let head = "version = 1\ndefault_suggestion = \"x\"\n[[allow]]\nid = \"cat\"\nprograms = [\"cat\"]\nmatch = [\"cat f\"]\n";
        let err = ShellRules::from_toml(head).unwrap_err();
        assert!(err.contains("rule 'cat': needs options"), "{err}");
        let err = ShellRules::from_toml(&format!("{head}options = [\"-n\"]\ndeny_options = []\n"))
            .unwrap_err();
        assert!(err.contains("not both"), "{err}");
        let err = ShellRules::from_toml(&format!("{head}deny_options = []\nmax_operands = 1\n"))
            .unwrap_err();
        assert!(err.contains("max_operands needs an options list"), "{err}");
        let err = ShellRules::from_toml(&format!("{head}options = [\"n\"]\n")).unwrap_err();
        assert!(err.contains("option \"n\""), "{err}");
        // An example the option judging disagrees with is refused at load.
        let err = ShellRules::from_toml(&format!(
            "{head}options = [\"-n\"]\nnot_match = [\"cat -n f\"]\n"
        ))
        .unwrap_err();
        assert!(err.contains("should not allow \"cat -n f\""), "{err}");
        let err = ShellRules::from_toml(
            "version = 1\ndefault_suggestion = \"x\"\n[[allow]]\nid = \"cat\"\nprograms = [\"cat\"]\nmatch = [\"cat -A f\"]\noptions = [\"-n\"]\n",
        )
        .unwrap_err();
        assert!(
            err.contains("option -A is not permitted by rule 'cat'"),
            "{err}"
        );
        assert!(ShellRules::from_toml(&format!(
            "{head}options = [\"-n\"]\nnot_match = [\"cat -A f\"]\n"
        ))
        .is_ok());
    }

    #[test]
    fn env_patterns() {
        let list = vec!["LD_*".to_string(), "PATH".to_string()];
        assert_eq!(env_match("LD_PRELOAD", &list), Some("LD_*"));
        assert_eq!(env_match("PATH", &list), Some("PATH"));
        assert_eq!(env_match("PATHX", &list), None);
    }
}
