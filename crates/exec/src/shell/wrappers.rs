//! Commands that run another command (`env`, `timeout`, `nice`, `nohup`, `command`, `exec`,
//! `stdbuf`, `xargs`, `python -m`, `sh -c`): safe_shell judges what they finally run, with
//! the environment they set. An option a wrapper's grammar here does not know blocks the
//! command rather than being guessed at.

/// What a simple command finally runs.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Unwrapped {
    /// `NAME=VALUE` set by `env`.
    pub env: Vec<(String, String)>,
    /// The program and its arguments (`python -m pytest -q` is `pytest -q`).
    pub argv: Vec<String>,
    /// `sh -c STRING`: the index of STRING in the original words, and STRING.
    pub shell_c: Option<(usize, String)>,
    /// `xargs` adds arguments read from its input, which the judge never sees.
    pub input_arguments: bool,
}

fn base(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn is_python(name: &str) -> bool {
    name == "python"
        || name.strip_prefix("python3").is_some_and(|v| {
            v.is_empty() || v.starts_with('.') && v[1..].chars().all(|c| c.is_ascii_digit())
        })
}

fn is_env_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Skips a wrapper's options: `flags` take no value, `valued` take the next word (or
/// `--opt=value`). Returns the index of the first operand.
fn skip_options(
    argv: &[String],
    mut i: usize,
    flags: &[&str],
    valued: &[&str],
) -> Result<usize, String> {
    while let Some(a) = argv.get(i) {
        if a == "--" {
            return Ok(i + 1);
        }
        if !a.starts_with('-') || a == "-" {
            return Ok(i);
        }
        if flags.contains(&a.as_str()) {
            i += 1;
        } else if valued.contains(&a.as_str()) {
            i += 2;
        } else if valued
            .iter()
            .any(|v| v.starts_with("--") && a.starts_with(&format!("{v}=")))
            || valued
                .iter()
                .any(|v| v.len() == 2 && !v.starts_with("--") && a.starts_with(v) && a.len() > 2)
        {
            i += 1;
        } else {
            return Err(format!(
                "{} option {a:?} is not understood by safe_shell",
                base(&argv[0])
            ));
        }
    }
    Ok(i)
}

pub fn unwrap(argv: &[String]) -> Result<Unwrapped, String> {
    let mut u = Unwrapped::default();
    let mut i = 0;
    // Each wrapper consumes at least its own name, so this ends.
    while let Some(word) = argv.get(i) {
        let name = base(word);
        let next = match name {
            "env" => {
                let mut j = i + 1;
                while let Some(a) = argv.get(j) {
                    if a == "-i" || a == "--ignore-environment" || a == "-" {
                        j += 1;
                    } else if a == "-u" || a == "--unset" {
                        j += 2;
                    } else if a.starts_with("--unset=") || (a.starts_with("-u") && a.len() > 2) {
                        j += 1;
                    } else if let Some((k, v)) = a.split_once('=').filter(|(k, _)| is_env_name(k)) {
                        u.env.push((k.to_string(), v.to_string()));
                        j += 1;
                    } else if a.starts_with('-') {
                        return Err(format!("env option {a:?} is not understood by safe_shell"));
                    } else {
                        break;
                    }
                }
                if j >= argv.len() {
                    // `env` alone prints the environment.
                    break;
                }
                j
            }
            "timeout" => {
                let j = skip_options(
                    argv,
                    i + 1,
                    &["--preserve-status", "--foreground", "-v", "--verbose"],
                    &["-s", "--signal", "-k", "--kill-after"],
                )?;
                j + 1 // the duration
            }
            "nice" => skip_options(argv, i + 1, &[], &["-n", "--adjustment"]).or_else(|_| {
                // `nice -5 cmd`
                match argv.get(i + 1) {
                    Some(a) if a.len() > 1 && a[1..].chars().all(|c| c.is_ascii_digit()) => {
                        Ok(i + 2)
                    }
                    _ => Err("nice option is not understood by safe_shell".to_string()),
                }
            })?,
            "nohup" | "exec" => skip_options(argv, i + 1, &[], &[])?,
            "command" => {
                if argv.get(i + 1).is_some_and(|a| a == "-v" || a == "-V") {
                    break; // a lookup, not a run
                }
                skip_options(argv, i + 1, &["-p"], &[])?
            }
            "stdbuf" => skip_options(
                argv,
                i + 1,
                &[],
                &["-i", "-o", "-e", "--input", "--output", "--error"],
            )?,
            "xargs" => {
                u.input_arguments = true;
                skip_options(
                    argv,
                    i + 1,
                    &[
                        "-0",
                        "--null",
                        "-r",
                        "--no-run-if-empty",
                        "-t",
                        "--verbose",
                        "-x",
                        "--exit",
                        "-p",
                        "--interactive",
                    ],
                    &[
                        "-I",
                        "-n",
                        "--max-args",
                        "-P",
                        "--max-procs",
                        "-d",
                        "--delimiter",
                        "-L",
                        "--max-lines",
                        "-s",
                        "--max-chars",
                        "-E",
                        "-a",
                        "--arg-file",
                    ],
                )?
            }
            n if is_python(n) => {
                let mut j = i + 1;
                let mut module = None;
                while let Some(a) = argv.get(j) {
                    match a.as_str() {
                        "-m" => {
                            module = Some(j + 1);
                            break;
                        }
                        "-B" | "-E" | "-I" | "-O" | "-OO" | "-q" | "-s" | "-S" | "-u" | "-b"
                        | "-bb" => j += 1,
                        "-W" | "-X" => j += 2,
                        _ => break,
                    }
                }
                let Some(m) = module else {
                    break; // python itself: the rules judge `python script.py`, `python -c`
                };
                if m >= argv.len() {
                    return Err("python -m without a module".into());
                }
                m
            }
            "sh" | "bash" | "dash" | "zsh" => {
                let mut j = i + 1;
                let mut command = None;
                while let Some(a) = argv.get(j) {
                    if a == "-c" {
                        command = Some(j + 1);
                        break;
                    }
                    if a == "-o" || a == "+o" {
                        j += 2;
                    } else if a.len() > 1
                        && (a.starts_with('-') || a.starts_with('+'))
                        && a[1..].chars().all(|c| "euxvnfaEhBCTP".contains(c))
                    {
                        j += 1;
                    } else if a.starts_with('-')
                        && a[1..].contains('c')
                        && a[1..].chars().all(|c| "euxvc".contains(c))
                    {
                        // `-ec`
                        command = Some(j + 1);
                        break;
                    } else {
                        break;
                    }
                }
                if let Some(c) = command {
                    let Some(string) = argv.get(c) else {
                        return Err(format!("{name} -c without a command"));
                    };
                    u.shell_c = Some((c, string.clone()));
                    return Ok(u);
                }
                break; // a shell running a script or its stdin: the rules judge it
            }
            _ => break,
        };
        if next >= argv.len() {
            return Err(format!("{name} without a command to run"));
        }
        i = next;
    }
    u.argv = argv[i.min(argv.len())..].to_vec();
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_string).collect()
    }

    fn run(s: &str) -> Vec<String> {
        unwrap(&words(s)).unwrap().argv
    }

    #[test]
    fn wrappers_come_off() {
        assert_eq!(run("env A=1 B=2 pytest -q"), words("pytest -q"));
        assert_eq!(
            unwrap(&words("env A=1 pytest")).unwrap().env,
            [("A".into(), "1".into())]
        );
        assert_eq!(
            run("timeout -s KILL 5 nice -n 10 rm -rf x"),
            words("rm -rf x")
        );
        assert_eq!(run("timeout --signal=TERM 5s ls"), words("ls"));
        assert_eq!(run("python3 -B -m pytest tests"), words("pytest tests"));
        assert_eq!(
            run("/usr/bin/python3.11 -m http.server"),
            words("http.server")
        );
        assert_eq!(run("python -c print(1)"), words("python -c print(1)"));
        assert_eq!(run("xargs -0 -n 1 rm"), words("rm"));
        assert_eq!(run("command -v ls"), words("command -v ls"));
        assert_eq!(run("env"), words("env"));
        assert_eq!(run("nohup nice -5 ls"), words("ls"));
        let c = unwrap(&words("bash -eu -c ls")).unwrap();
        assert_eq!(c.shell_c, Some((3, "ls".to_string())));
        assert_eq!(
            unwrap(&words("sh -ec ls")).unwrap().shell_c,
            Some((2, "ls".into()))
        );
        assert_eq!(run("bash script.sh"), words("bash script.sh"));
    }

    #[test]
    fn what_is_not_understood_blocks() {
        assert!(unwrap(&words("timeout 5")).is_err());
        assert!(unwrap(&words("timeout --weird 5 ls")).is_err());
        assert!(unwrap(&words("env --split-string=ls")).is_err());
        assert!(unwrap(&words("python -m")).is_err());
        assert!(unwrap(&words("sh -c")).is_err());
    }
}
