//! Judging an allowed program's options: an allow rule either names the options it permits
//! (`options`, an allowlist) or the ones it refuses (`deny_options`, for programs with huge
//! option sets), and the policy's `[options] deny` list names long options that run programs
//! or write files, refused for every `deny_options` rule. Options are what make an allowed
//! reader run a program (`sort --compress-program=sh`) or write a file (`sort -o f`), so they
//! are read the way the program reads them: clusters (`-la`), attached values (`-n20`,
//! `--lines=20`), `--` ending the options, and GNU's abbreviated long options (`--compress`).

/// How a rule's options are spelt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Style {
    /// getopt: `-abc` is three options, `--name[=value]` a long one (abbreviations accepted).
    #[default]
    Gnu,
    /// Go's flag package, find, xxd: `-name[=value]` and `--name[=value]` are one option.
    SingleDash,
}

/// One option a rule permits: its spelling (`-n`, `--lines`, `-cols`) and whether it takes a
/// value (`=` in the file: the next word or an attached one), may take one attached (`=?`),
/// or is the `-NUM` shorthand (`-#`: `head -20`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Permitted {
    pub name: String,
    pub value: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    None,
    Required,
    Optional,
}

impl Permitted {
    pub fn parse(spec: &str) -> Result<Permitted, String> {
        let (name, value) = if let Some(n) = spec.strip_suffix("=?") {
            (n, Value::Optional)
        } else if let Some(n) = spec.strip_suffix('=') {
            (n, Value::Required)
        } else {
            (spec, Value::None)
        };
        if !name.starts_with('-') || name.len() < 2 || name == "--" {
            return Err(format!(
                "option {spec:?} should be spelt -x, --name or -name (with = for a value)"
            ));
        }
        Ok(Permitted {
            name: name.to_string(),
            value,
        })
    }
}

/// What a rule says about options.
#[derive(Debug, Default)]
pub struct OptionRules {
    pub style: Style,
    /// Some: only these are permitted. None: any but `deny` and the policy's default list.
    pub permitted: Option<Vec<Permitted>>,
    pub deny: Vec<String>,
    /// Operands (words that are not options or their values) allowed at most.
    pub max_operands: Option<usize>,
}

impl OptionRules {
    /// Whether some option or operand of these programs is refused. A rule with an empty
    /// `deny_options` and no `max_operands` states that no option of its programs runs a
    /// program or writes a file (the policy's default list is a safety net for it).
    pub fn constrains(&self) -> bool {
        self.permitted.is_some() || !self.deny.is_empty() || self.max_operands.is_some()
    }

    /// The option or operand these arguments may not have, as "what: why".
    pub fn check(&self, args: &[String], default_deny: &[String]) -> Result<(), Refusal> {
        let mut operands = 0usize;
        let mut i = 0;
        while let Some(word) = args.get(i) {
            i += 1;
            if word == "--" {
                operands += args.len() - i;
                break;
            }
            if !word.starts_with('-') || word == "-" {
                operands += 1;
                continue;
            }
            let consumed = match &self.permitted {
                Some(permitted) => self.permitted_word(word, permitted)?,
                None => {
                    self.denied_word(word, default_deny)?;
                    false
                }
            };
            if consumed {
                i += 1;
            }
        }
        if let Some(max) = self.max_operands {
            if operands > max {
                return Err(Refusal::Operands { max });
            }
        }
        Ok(())
    }

    /// Judges one option word against the allowlist; true when its value is the next word.
    fn permitted_word(&self, word: &str, permitted: &[Permitted]) -> Result<bool, Refusal> {
        let find = |name: &str| permitted.iter().find(|p| p.name == name);
        let long = word.starts_with("--") || self.style == Style::SingleDash;
        if long {
            let (name, inline) = match word.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (word, None),
            };
            if let Some(p) = find(name) {
                return match (p.value, inline) {
                    (Value::None, Some(_)) => Err(Refusal::Option(word.to_string())),
                    (Value::Required, None) => Ok(true),
                    _ => Ok(false),
                };
            }
            // `-c8` in the single-dash style: a valued option with its value attached.
            if self.style == Style::SingleDash && !word.starts_with("--") && inline.is_none() {
                let attached = permitted.iter().any(|p| {
                    p.value != Value::None
                        && p.name.len() == 2
                        && word.starts_with(&p.name)
                        && word.len() > 2
                });
                if attached {
                    return Ok(false);
                }
            }
            if word[1..].chars().all(|c| c.is_ascii_digit()) && find("-#").is_some() {
                return Ok(false);
            }
            return Err(Refusal::Option(name.to_string()));
        }
        if word[1..].chars().all(|c| c.is_ascii_digit()) && find("-#").is_some() {
            return Ok(false);
        }
        for (at, c) in word.char_indices().skip(1) {
            let name = format!("-{c}");
            let Some(p) = find(&name) else {
                return Err(Refusal::Option(name));
            };
            if p.value != Value::None {
                // The rest of the word is the value; without one, the next word is.
                let rest = &word[at + c.len_utf8()..];
                return Ok(rest.is_empty() && p.value == Value::Required);
            }
        }
        Ok(false)
    }

    /// Judges one option word against the rule's and the policy's deny lists. Values are not
    /// known here, so every letter of a cluster counts: `-nO'cmd'` is refused for `-O`.
    fn denied_word(&self, word: &str, default_deny: &[String]) -> Result<(), Refusal> {
        let all = || self.deny.iter().chain(default_deny.iter());
        let name = word.split_once('=').map_or(word, |(n, _)| n);
        if let Some(long) = name.strip_prefix("--") {
            // GNU and git accept any unambiguous prefix: `--compress` is `--compress-program`.
            let hit = all().find(|d| {
                let d = d.strip_prefix("--").or_else(|| {
                    d.strip_prefix('-')
                        .filter(|_| self.style == Style::SingleDash)
                });
                d.is_some_and(|d| {
                    d == long
                        || (self.style == Style::Gnu && !long.is_empty() && d.starts_with(long))
                })
            });
            return hit.map_or(Ok(()), |d| Err(Refusal::Option(d.clone())));
        }
        if self.style == Style::SingleDash {
            let long = format!("-{name}");
            let hit = all().find(|d| *d == name || **d == long);
            return hit.map_or(Ok(()), |d| Err(Refusal::Option(d.clone())));
        }
        for c in word.chars().skip(1) {
            let short = format!("-{c}");
            if let Some(d) = all().find(|d| **d == short) {
                return Err(Refusal::Option(d.clone()));
            }
        }
        Ok(())
    }
}

/// Why a rule refuses a command's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    Option(String),
    Operands { max: usize },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    fn allowlist(specs: &[&str], style: Style, max: Option<usize>) -> OptionRules {
        OptionRules {
            style,
            permitted: Some(
                specs
                    .iter()
                    .map(|s| Permitted::parse(s).unwrap_or_else(|e| panic!("{e}")))
                    .collect(),
            ),
            deny: Vec::new(),
            max_operands: max,
        }
    }

    #[test]
    fn an_allowlist_reads_clusters_values_and_the_end_of_options() {
        let r = allowlist(&["-n=", "--lines=", "-l", "-a", "-#"], Style::Gnu, Some(1));
        for ok in [
            "-n 20 f",
            "-n20 f",
            "--lines=20 f",
            "--lines 20 f",
            "-la f",
            "-ln5 f",
            "-20 f",
            "-- -o",
            "-n -o f",
        ] {
            assert_eq!(r.check(&words(ok), &[]), Ok(()), "{ok}");
        }
        assert_eq!(
            r.check(&words("-lo f"), &[]),
            Err(Refusal::Option("-o".into()))
        );
        assert_eq!(
            r.check(&words("--lines"), &[]),
            Ok(()),
            "a missing value is the program's error"
        );
        assert_eq!(
            r.check(&words("--line=5 f"), &[]),
            Err(Refusal::Option("--line".into())),
            "abbreviations are not in an allowlist"
        );
        assert_eq!(
            r.check(&words("-l=5"), &[]),
            Err(Refusal::Option("-=".into()))
        );
        assert_eq!(
            r.check(&words("in out"), &[]),
            Err(Refusal::Operands { max: 1 })
        );
        assert_eq!(
            r.check(&words("in -- out"), &[]),
            Err(Refusal::Operands { max: 1 })
        );
    }

    #[test]
    fn a_single_dash_allowlist_reads_whole_words() {
        let r = allowlist(&["-c=", "-cols=", "-ps", "-r"], Style::SingleDash, Some(1));
        for ok in ["-ps f", "-c 8 f", "-c8 f", "-cols=8 f", "-r f"] {
            assert_eq!(r.check(&words(ok), &[]), Ok(()), "{ok}");
        }
        assert_eq!(
            r.check(&words("-r in out"), &[]),
            Err(Refusal::Operands { max: 1 })
        );
        assert_eq!(
            r.check(&words("-rx f"), &[]),
            Err(Refusal::Option("-rx".into()))
        );
    }

    #[test]
    fn a_deny_list_reads_every_letter_and_abbreviations() {
        let r = OptionRules {
            deny: vec!["-O".into(), "--open-files-in-pager".into()],
            ..OptionRules::default()
        };
        let default = vec!["--compress-program".to_string(), "--output".to_string()];
        for bad in [
            "-Otouch",
            "-nOx",
            "--open-files-in-pager=x",
            "--open",
            "--compress-program=sh",
            "--compress=sh",
            "--output=f",
            "--out f",
        ] {
            assert!(r.check(&words(bad), &default).is_err(), "{bad}");
        }
        for ok in ["-n -e x", "--output-indicator-new=+", "-- --output=f", "x"] {
            assert_eq!(r.check(&words(ok), &default), Ok(()), "{ok}");
        }
        let go = OptionRules {
            style: Style::SingleDash,
            deny: vec!["-o".into(), "-toolexec".into()],
            ..OptionRules::default()
        };
        for bad in ["-o x", "-o=x", "--o=x", "-toolexec=x", "--toolexec x"] {
            assert!(go.check(&words(bad), &[]).is_err(), "{bad}");
        }
        for ok in ["-cover", "-overlay-free", "-run X"] {
            assert_eq!(go.check(&words(ok), &[]), Ok(()), "{ok}");
        }
    }
}
