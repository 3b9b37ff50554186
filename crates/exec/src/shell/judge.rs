//! Judging a command line: parse it with a real shell grammar (brush-parser, bash's), walk the
//! tree, and allow it only if every part is plain words joined by `&& || ; |` (or a construct
//! the policy allows), every environment assignment is allowed, and every simple command, once
//! its wrappers are unwrapped, passes the deny rules and meets an allow rule.
//!
//! What runs is rebuilt from the tree, not the string the model sent: every word is re-quoted
//! from the value that was judged, so nothing bash might read differently from the parser
//! (a quirk of quoting, an alias, a stray expansion) can slip between the verdict and the run.

use super::options::Refusal;
use super::policy::{env_match, Rule, ShellRules};
use super::words::{literal, quote, Construct};
use super::wrappers::{unwrap, Unwrapped};
use brush_parser::ast::{
    AndOr, AssignmentName, AssignmentValue, Command, CommandPrefixOrSuffixItem, CompoundCommand,
    CompoundList, IoFileRedirectKind, IoFileRedirectTarget, IoRedirect, Pipeline,
    SeparatorOperator, SimpleCommand,
};
use brush_parser::{Parser, ParserOptions, SourceInfo};
use serde::Serialize;

/// Longest command judged.
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;
/// `sh -c` inside `sh -c` ...
const MAX_DEPTH: usize = 3;
const MAX_SIMPLE_COMMANDS: usize = 64;

/// Why a command is not run; the field names are safe_shell's result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Blocked {
    /// The kind of refusal, as a stable code; `reason` says it in words.
    pub reason_code: ReasonCode,
    pub reason: String,
    pub matched_pattern: String,
    pub suggested_safe_alternative: String,
    /// The deny rule that blocked it, if one did.
    #[serde(skip)]
    pub rule: Option<String>,
}

/// safe_shell's `reason_code`: why a command was blocked, in words a program can match on.
/// The deny rules are judged before the allow rules.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReasonCode {
    /// No allow rule names the program.
    NotInAllowlist,
    /// A deny rule matches the command.
    DenylistMatch,
    /// An option or operand the allowing rule (or a wrapper such as `env`) does not permit.
    OptionNotAllowed,
    /// An environment assignment that is denied, or not in the `[env]` allowlist.
    EnvNotAllowed,
    /// Shell syntax safe_shell does not rebuild: subshells, substitutions, here-documents,
    /// function definitions, and what does not parse.
    UnsupportedSyntax,
    /// Longer, or nested deeper, than safe_shell judges.
    TooComplex,
}

impl ReasonCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::NotInAllowlist => "NOT_IN_ALLOWLIST",
            ReasonCode::DenylistMatch => "DENYLIST_MATCH",
            ReasonCode::OptionNotAllowed => "OPTION_NOT_ALLOWED",
            ReasonCode::EnvNotAllowed => "ENV_NOT_ALLOWED",
            ReasonCode::UnsupportedSyntax => "UNSUPPORTED_SYNTAX",
            ReasonCode::TooComplex => "TOO_COMPLEX",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The command to hand to `bash -c`, rebuilt from what was judged.
    pub command: String,
    /// The allow rules that let its simple commands through.
    pub rules: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allowed(Allowed),
    Blocked(Blocked),
}

impl Verdict {
    pub fn describe(&self) -> String {
        match self {
            Verdict::Allowed(a) => format!("allowed by {:?}", a.rules),
            Verdict::Blocked(b) => format!("blocked ({}: {})", b.matched_pattern, b.reason),
        }
    }
}

pub fn judge(policy: &ShellRules, command: &str) -> Verdict {
    let mut j = Judge {
        policy,
        options: ParserOptions {
            enable_extended_globbing: false,
            posix_mode: false,
            sh_mode: false,
            tilde_expansion: true,
        },
        depth: 0,
        simple: 0,
        rules: Vec::new(),
    };
    match j.program(command) {
        Ok(command) => Verdict::Allowed(Allowed {
            command,
            rules: j.rules,
        }),
        Err(b) => Verdict::Blocked(b),
    }
}

struct Judge<'p> {
    policy: &'p ShellRules,
    options: ParserOptions,
    depth: usize,
    simple: usize,
    rules: Vec<String>,
}

type Judged<T> = Result<T, Blocked>;

impl Judge<'_> {
    fn blocked(&self, code: ReasonCode, reason: String, pattern: String, suggest: &str) -> Blocked {
        Blocked {
            reason_code: code,
            reason,
            matched_pattern: pattern,
            suggested_safe_alternative: suggest.to_string(),
            rule: None,
        }
    }

    fn construct(&self, c: Construct) -> Judged<()> {
        if self.policy.allows(c) {
            return Ok(());
        }
        Err(self.blocked(
ReasonCode::UnsupportedSyntax,
            format!(
                "the command uses {}; safe_shell runs plain words joined by && || ; | only",
                c.describe()
            ),
            format!("grammar: {}", c.name()),
            "Write the command with plain words (quote literal text), or run each step as its own call",
        ))
    }

    fn program(&mut self, text: &str) -> Judged<String> {
        if text.len() > MAX_COMMAND_BYTES {
            return Err(self.blocked(
                ReasonCode::TooComplex,
                format!("the command is over {MAX_COMMAND_BYTES} bytes"),
                "limit: command length".into(),
                "Split it into shorter commands",
            ));
        }
        if text.contains('\0') {
            return Err(self.blocked(
                ReasonCode::UnsupportedSyntax,
                "the command has a NUL byte".into(),
                "grammar: NUL".into(),
                "Remove the NUL byte",
            ));
        }
        let options = self.options.clone();
        let parsed = std::panic::catch_unwind(|| {
            Parser::new(std::io::Cursor::new(text), &options, &SourceInfo::default())
                .parse_program()
        });
        let program = match parsed {
            Ok(Ok(p)) => p,
            Ok(Err(e)) => {
                return Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    format!("the command does not parse as a shell command: {e}"),
                    "grammar: syntax".into(),
                    "Check the quoting and the operators",
                ))
            }
            Err(_) => {
                return Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    "the command could not be parsed".into(),
                    "grammar: syntax".into(),
                    "Check the quoting and the operators",
                ))
            }
        };
        let mut parts = Vec::new();
        for list in &program.complete_commands {
            parts.push(self.list(list)?);
        }
        let rendered = parts.join("; ");
        if rendered.trim().is_empty() {
            return Err(self.blocked(
                ReasonCode::UnsupportedSyntax,
                "the command is empty".into(),
                "grammar: empty".into(),
                "Give a command to run",
            ));
        }
        Ok(rendered)
    }

    fn list(&mut self, list: &CompoundList) -> Judged<String> {
        let mut out = Vec::new();
        for item in &list.0 {
            if matches!(item.1, SeparatorOperator::Async) {
                self.construct(Construct::Background)?;
            }
            let mut s = self.pipeline(&item.0.first)?;
            for next in &item.0.additional {
                match next {
                    AndOr::And(p) => s = format!("{s} && {}", self.pipeline(p)?),
                    AndOr::Or(p) => s = format!("{s} || {}", self.pipeline(p)?),
                }
            }
            if matches!(item.1, SeparatorOperator::Async) {
                s.push_str(" &");
            }
            out.push(s);
        }
        Ok(out.join("; "))
    }

    fn pipeline(&mut self, p: &Pipeline) -> Judged<String> {
        if p.timed.is_some() {
            self.construct(Construct::Time)?;
        }
        if p.bang {
            self.construct(Construct::Negation)?;
        }
        let mut parts = Vec::new();
        for c in &p.seq {
            parts.push(self.command(c)?);
        }
        let s = parts.join(" | ");
        let prefix = match (p.timed.is_some(), p.bang) {
            (true, true) => "time ! ",
            (true, false) => "time ",
            (false, true) => "! ",
            (false, false) => "",
        };
        Ok(format!("{prefix}{s}"))
    }

    fn command(&mut self, c: &Command) -> Judged<String> {
        match c {
            Command::Simple(s) => self.simple(s),
            Command::Compound(CompoundCommand::Subshell(_) | CompoundCommand::BraceGroup(_), _) => {
                self.construct(Construct::Subshell)?;
                Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    "subshells and groups are not rebuilt by safe_shell".into(),
                    "grammar: subshell".into(),
                    "Run the commands one after another with && or ;",
                ))
            }
            Command::Compound(..) | Command::ExtendedTest(_) => {
                self.construct(Construct::Compound)?;
                Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    "compound commands are not rebuilt by safe_shell".into(),
                    "grammar: compound".into(),
                    "Run the steps as separate commands",
                ))
            }
            Command::Function(_) => {
                self.construct(Construct::Function)?;
                Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    "function definitions are not run by safe_shell".into(),
                    "grammar: function".into(),
                    "Run the commands directly",
                ))
            }
        }
    }

    fn word(&self, raw: &str) -> Judged<(String, String)> {
        let allow_glob = self.policy.allows(Construct::Glob);
        match literal(raw, &self.options, allow_glob) {
            Ok(l) => {
                let rendered = l.glob_source.clone().unwrap_or_else(|| quote(&l.value));
                Ok((l.value, rendered))
            }
            Err(c) => {
                self.construct(c)?;
                Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    format!("{} cannot be passed on literally", c.describe()),
                    format!("grammar: {}", c.name()),
                    "Write the value out as plain text",
                ))
            }
        }
    }

    fn simple(&mut self, s: &SimpleCommand) -> Judged<String> {
        self.simple += 1;
        if self.simple > MAX_SIMPLE_COMMANDS {
            return Err(self.blocked(
                ReasonCode::TooComplex,
                format!("the command has more than {MAX_SIMPLE_COMMANDS} simple commands"),
                "limit: simple commands".into(),
                "Split it into several calls",
            ));
        }
        let mut assignments: Vec<(String, String)> = Vec::new();
        let mut argv: Vec<(String, String)> = Vec::new();
        let mut redirects: Vec<String> = Vec::new();
        let prefix = s.prefix.iter().flat_map(|p| p.0.iter());
        let suffix = s.suffix.iter().flat_map(|p| p.0.iter());
        for item in prefix {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(a, _) => {
                    let (AssignmentName::VariableName(name), AssignmentValue::Scalar(w)) =
                        (&a.name, &a.value)
                    else {
                        self.construct(Construct::ArrayAssignment)?;
                        return Err(self.blocked(
                            ReasonCode::UnsupportedSyntax,
                            "array assignments are not passed on".into(),
                            "grammar: array_assignment".into(),
                            "Assign plain values",
                        ));
                    };
                    if a.append {
                        return Err(self.blocked(
                            ReasonCode::UnsupportedSyntax,
                            format!("{name}+= appends to a shell variable"),
                            "grammar: append_assignment".into(),
                            "Assign the whole value",
                        ));
                    }
                    let (value, _) = self.word(&w.value)?;
                    assignments.push((name.clone(), value));
                }
                other => self.item(other, &mut argv, &mut redirects)?,
            }
        }
        if let Some(w) = &s.word_or_name {
            argv.push(self.word(&w.value)?);
        }
        for item in suffix {
            match item {
                CommandPrefixOrSuffixItem::AssignmentWord(_, w) => argv.push(self.word(&w.value)?),
                other => self.item(other, &mut argv, &mut redirects)?,
            }
        }
        if argv.is_empty() {
            return Err(self.blocked(
                ReasonCode::UnsupportedSyntax,
                "an assignment or redirection without a command does nothing useful here".into(),
                "grammar: no command".into(),
                "Put the assignment in front of the command it is for",
            ));
        }
        let values: Vec<String> = argv.iter().map(|(v, _)| v.clone()).collect();
        let mut rendered: Vec<String> = argv.iter().map(|(_, r)| r.clone()).collect();
        let unwrapped = unwrap(&values).map_err(|why| {
            self.blocked(
                ReasonCode::OptionNotAllowed,
                why,
                "wrapper: options".into(),
                &self.policy.default_suggestion,
            )
        })?;
        for (name, _) in assignments.iter().chain(unwrapped.env.iter()) {
            self.env(name)?;
        }
        if let Some((index, inner)) = &unwrapped.shell_c {
            if self.depth >= MAX_DEPTH {
                return Err(self.blocked(
                    ReasonCode::TooComplex,
                    "shells inside shells are nested too deep".into(),
                    "limit: sh -c depth".into(),
                    "Run the inner command directly",
                ));
            }
            self.depth += 1;
            let inner_rendered = self.program(inner);
            self.depth -= 1;
            rendered[*index] = quote(&inner_rendered?);
        } else {
            self.rules_for(&unwrapped)?;
        }
        let mut out: Vec<String> = assignments
            .iter()
            .map(|(n, v)| format!("{n}={}", quote(v)))
            .collect();
        out.extend(rendered);
        out.extend(redirects);
        Ok(out.join(" "))
    }

    fn item(
        &self,
        item: &CommandPrefixOrSuffixItem,
        argv: &mut Vec<(String, String)>,
        redirects: &mut Vec<String>,
    ) -> Judged<()> {
        match item {
            CommandPrefixOrSuffixItem::Word(w) => argv.push(self.word(&w.value)?),
            CommandPrefixOrSuffixItem::IoRedirect(r) => redirects.push(self.redirect(r)?),
            CommandPrefixOrSuffixItem::ProcessSubstitution(..) => {
                self.construct(Construct::ProcessSubstitution)?;
                return Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    "process substitutions are not rebuilt".into(),
                    "grammar: process_substitution".into(),
                    "Write the output to a file first",
                ));
            }
            CommandPrefixOrSuffixItem::AssignmentWord(_, w) => argv.push(self.word(&w.value)?),
        }
        Ok(())
    }

    fn redirect(&self, r: &IoRedirect) -> Judged<String> {
        let fd = |n: &Option<i32>| n.map_or(String::new(), |n| n.to_string());
        match r {
            IoRedirect::File(n, kind, target) => {
                let op = match kind {
                    IoFileRedirectKind::Read => "<",
                    IoFileRedirectKind::Write => ">",
                    IoFileRedirectKind::Append => ">>",
                    IoFileRedirectKind::ReadAndWrite => "<>",
                    IoFileRedirectKind::Clobber => ">|",
                    IoFileRedirectKind::DuplicateInput => "<&",
                    IoFileRedirectKind::DuplicateOutput => ">&",
                };
                match target {
                    IoFileRedirectTarget::Fd(t) => {
                        self.construct(Construct::FdDuplicate)?;
                        Ok(format!("{}{op}{t}", fd(n)))
                    }
                    IoFileRedirectTarget::Duplicate(w) => {
                        let (value, _) = self.word(&w.value)?;
                        let ok = value == "-" || value.chars().all(|c| c.is_ascii_digit());
                        if !ok || value.is_empty() {
                            self.construct(Construct::RedirectWrite)?;
                            return Ok(format!("{}{op} {}", fd(n), quote(&value)));
                        }
                        self.construct(Construct::FdDuplicate)?;
                        Ok(format!("{}{op}{value}", fd(n)))
                    }
                    IoFileRedirectTarget::Filename(w) => {
                        let (value, _) = self.word(&w.value)?;
                        self.file_target(&value, matches!(kind, IoFileRedirectKind::Read))?;
                        Ok(format!("{}{op} {}", fd(n), quote(&value)))
                    }
                    IoFileRedirectTarget::ProcessSubstitution(..) => {
                        self.construct(Construct::ProcessSubstitution)?;
                        Err(self.blocked(
                            ReasonCode::UnsupportedSyntax,
                            "process substitutions are not rebuilt".into(),
                            "grammar: process_substitution".into(),
                            "Write the output to a file first",
                        ))
                    }
                }
            }
            IoRedirect::OutputAndError(w, append) => {
                let (value, _) = self.word(&w.value)?;
                self.file_target(&value, false)?;
                Ok(format!(
                    "{} {}",
                    if *append { "&>>" } else { "&>" },
                    quote(&value)
                ))
            }
            IoRedirect::HereDocument(..) | IoRedirect::HereString(..) => {
                self.construct(Construct::HereDocument)?;
                Err(self.blocked(
                    ReasonCode::UnsupportedSyntax,
                    "here-documents are not rebuilt".into(),
                    "grammar: here_document".into(),
                    "Write the text to a file with write_file and pass the file",
                ))
            }
        }
    }

    /// A redirection's file: /dev/null, or a relative path that stays below the directory.
    fn file_target(&self, path: &str, read: bool) -> Judged<()> {
        if path == "/dev/null" {
            return self.construct(Construct::RedirectDevNull);
        }
        self.construct(if read {
            Construct::RedirectRead
        } else {
            Construct::RedirectWrite
        })?;
        if path.starts_with('/') || path.split('/').any(|c| c == "..") || path.is_empty() {
            return Err(self.blocked(
                ReasonCode::UnsupportedSyntax,
                format!("the redirection target {path:?} is not a path inside the workspace"),
                "grammar: redirect target".into(),
                "Redirect to a relative path inside the workspace, or use write_file",
            ));
        }
        Ok(())
    }

    fn env(&self, name: &str) -> Judged<()> {
        let p = self.policy;
        if let Some(pattern) = env_match(name, &p.env_deny) {
            return Err(self.blocked(
                ReasonCode::EnvNotAllowed,
                format!("setting {name} can change what programs load or run"),
                format!("env deny: {pattern}"),
                &p.env_suggest,
            ));
        }
        if env_match(name, &p.env_allow).is_none() {
            return Err(self.blocked(
                ReasonCode::EnvNotAllowed,
                format!("setting {name} is not in the safe_shell policy's environment allowlist"),
                "env: not in [env] allow".into(),
                &p.env_suggest,
            ));
        }
        Ok(())
    }

    fn rules_for(&mut self, u: &Unwrapped) -> Judged<()> {
        let Some(first) = u.argv.first() else {
            return Ok(());
        };
        let program = first.rsplit('/').next().unwrap_or(first);
        let args: Vec<String> = u.argv[1..].iter().map(|a| quote(a)).collect();
        let args = args.join(" ");
        if let Some(rule) = self.policy.deny.iter().find(|r| r.applies(program, &args)) {
            return Err(Blocked {
                reason_code: ReasonCode::DenylistMatch,
                reason: rule.reason.clone(),
                matched_pattern: rule.pattern("deny"),
                suggested_safe_alternative: rule.suggest.clone(),
                rule: Some(rule.id.clone()),
            });
        }
        // An allow rule names a program, not a file: `./ls` in the workspace is not `ls`.
        let named = !first.contains('/') || SYSTEM_BIN.iter().any(|d| first.starts_with(d));
        if let Some(rule) = self
            .policy
            .allow
            .iter()
            .find(|r| named && r.applies(program, &args))
        {
            self.options(rule, program, &u.argv[1..], u.input_arguments)?;
            if !self.rules.contains(&rule.id) {
                self.rules.push(rule.id.clone());
            }
            return Ok(());
        }
        let shown = if args.is_empty() {
            program.to_string()
        } else {
            format!("{program} {args}")
        };
        Err(self.blocked(
            ReasonCode::NotInAllowlist,
            format!("no rule of the safe_shell policy allows `{shown}`"),
            format!("allowlist: nothing matches '{program}'"),
            self.policy.suggestion_for(program),
        ))
    }
}

impl Judge<'_> {
    /// An allowed program's options and operands, as its rule says: options can make a
    /// reader run a program or write a file.
    fn options(&self, rule: &Rule, program: &str, args: &[String], from_input: bool) -> Judged<()> {
        let p = self.policy;
        let suggest = if rule.suggest.is_empty() {
            p.options_suggest.as_str()
        } else {
            rule.suggest.as_str()
        };
        // An args pattern or an option list judges words xargs would add unseen.
        if from_input && (rule.args.is_some() || rule.options.constrains()) {
            return Err(self.blocked(
ReasonCode::OptionNotAllowed,
                format!(
                    "xargs would add arguments from its input to `{program}`, and rule '{}' judges {program}'s arguments, which the judge cannot do for words read from input",
                    rule.id
                ),
                format!("allow rule '{}': arguments from xargs input", rule.id),
                &format!("Run `{program}` with its arguments written out, one call per file if need be"),
            ));
        }
        match rule.options.check(args, &p.options_deny) {
            Ok(()) => Ok(()),
            Err(Refusal::Option(option)) => Err(self.blocked(
ReasonCode::OptionNotAllowed,
                format!(
                    "`{program}` option {option} is not permitted by rule '{}' of the safe_shell policy (options that run programs or write files are refused, and an allowlist rule refuses every option it does not name)",
                    rule.id
                ),
                format!("allow rule '{}': option {option}", rule.id),
                &format!("Run `{program}` without {option}. {suggest}"),
            )),
            Err(Refusal::Operands { max }) => Err(self.blocked(
ReasonCode::OptionNotAllowed,
                format!(
                    "`{program}` takes at most {max} file operand(s) under rule '{}' of the safe_shell policy: another one would be a file it writes",
                    rule.id
                ),
                format!("allow rule '{}': max_operands {max}", rule.id),
                &format!("Give `{program}` one input and read its output from stdout. {suggest}"),
            )),
        }
    }
}

const SYSTEM_BIN: &[&str] = &[
    "/usr/bin/",
    "/bin/",
    "/usr/local/bin/",
    "/usr/sbin/",
    "/sbin/",
];

#[cfg(test)]
mod tests;
