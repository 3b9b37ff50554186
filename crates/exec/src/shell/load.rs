//! Loading a safe_shell policy: parse the file (`policy.rs`), then judge every rule's examples
//! with the judge (`judge.rs`). Kept apart from `policy.rs` because the judge reads the policy:
//! the examples check is the one place that needs both.

use super::judge::{judge, Verdict};
use super::policy::{ShellRules, BUILTIN};
use std::sync::OnceLock;

impl ShellRules {
    /// The shipped policy (loaded and checked once).
    pub fn builtin() -> Result<&'static ShellRules, String> {
        static BUILT: OnceLock<Result<ShellRules, String>> = OnceLock::new();
        BUILT
            .get_or_init(|| ShellRules::from_toml(BUILTIN))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses a policy file and checks every rule against its examples.
    pub fn from_toml(text: &str) -> Result<ShellRules, String> {
        let policy = ShellRules::parse_unchecked(text)?;
        policy.check_examples()?;
        Ok(policy)
    }

    /// Judges every example: a deny rule's `match` examples are blocked by that rule, its
    /// `not_match` ones are not; an allow rule's `match` examples are allowed with that rule
    /// among the ones that allowed them, its `not_match` ones are not allowed by it.
    fn check_examples(&self) -> Result<(), String> {
        let mut problems = Vec::new();
        for rule in &self.deny {
            for ex in &rule.matches {
                match judge(self, ex) {
                    Verdict::Blocked(b) if b.rule.as_deref() == Some(rule.id.as_str()) => {}
                    other => problems.push(format!(
                        "deny rule '{}' should block {ex:?}, but: {}",
                        rule.id,
                        other.describe()
                    )),
                }
            }
            for ex in &rule.not_match {
                if let Verdict::Blocked(b) = judge(self, ex) {
                    if b.rule.as_deref() == Some(rule.id.as_str()) {
                        problems.push(format!("deny rule '{}' should not block {ex:?}", rule.id));
                    }
                }
            }
        }
        for rule in &self.allow {
            for ex in &rule.matches {
                match judge(self, ex) {
                    Verdict::Allowed(a) if a.rules.contains(&rule.id) => {}
                    other => problems.push(format!(
                        "allow rule '{}' should allow {ex:?}, but: {}",
                        rule.id,
                        other.describe()
                    )),
                }
            }
            for ex in &rule.not_match {
                if let Verdict::Allowed(a) = judge(self, ex) {
                    if a.rules.contains(&rule.id) {
                        problems.push(format!("allow rule '{}' should not allow {ex:?}", rule.id));
                    }
                }
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "the safe_shell policy's examples disagree with its rules:\n{}",
                problems.join("\n")
            ))
        }
    }
}
