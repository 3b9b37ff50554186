//! `workspace_info`: what the machine offers the developer tools, cached per workspace.

use super::{control, files, state};
use crate::error::Result;
use crate::tools::contract::{Annotations, Call, Switch, Tool, ToolOutput, Warning};
use crate::workspace_info::{Probe, WorkspaceInfo, WorkspaceInfoArgs};
use serde::{Serialize, Serializer};
use std::borrow::Cow;
use std::sync::Arc;

pub struct WorkspaceInfoTool;

/// The cached answer, shared (not copied) with the cache.
pub struct InfoOutput(pub Arc<WorkspaceInfo>);

impl Serialize for InfoOutput {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl ToolOutput for InfoOutput {
    fn text(&self) -> Cow<'_, str> {
        let info = &self.0;
        let mut s = format!(
            "{} ({}); programs run under sandbox {} (network {})\n",
            info.os, info.platform, info.sandbox.sandbox, info.sandbox.network
        );
        let list =
            |s: &mut String, title: &str, probes: &std::collections::BTreeMap<&str, Probe>| {
                let shown: Vec<String> = probes
                    .iter()
                    .map(|(name, p)| match (&p.available, &p.version) {
                        (true, Some(v)) => format!("{name} {v}"),
                        (true, None) => name.to_string(),
                        (false, _) => format!("{name} (not available)"),
                    })
                    .collect();
                s.push_str(&format!("{title}: {}\n", shown.join(", ")));
            };
        list(&mut s, "runtimes", &info.runtimes);
        list(&mut s, "tools", &info.tools);
        match &info.git_repo_root {
            Some(root) => s.push_str(&format!("git repository at {root}\n")),
            None => s.push_str("not a git repository\n"),
        }
        if !info.project.is_empty() {
            s.push_str(&format!("project: {}\n", info.project.join(", ")));
        }
        for hint in &info.unreadable_toolchains {
            s.push_str(&hint.advice());
            s.push('\n');
        }
        Cow::Owned(s)
    }
}

impl Tool for WorkspaceInfoTool {
    const NAME: &'static str = "workspace_info";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    const SWITCH: Switch = Switch::Exec;
    type Args = WorkspaceInfoArgs;
    type Output = InfoOutput;

    fn description() -> String {
        format!("{} {}", "What this workspace offers for running code: the OS, runtimes (python, node, go, rust, \
         java) and tools (git, pytest, npm, ruff, eslint, mypy, pyright, tsc, cargo, go) with \
         their versions, whether they run inside the sandbox, the git repository's root and the \
         project's kind. Answered from a cache after the first call; pass refresh: true after \
         installing something.", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: WorkspaceInfoArgs) -> Result<(InfoOutput, Vec<Warning>)> {
        let dev = state(call.ws)?;
        let files = files(call);
        let info = dev
            .info
            .get(&dev.runner, &files, args.refresh, &control(call.ctl))?;
        Ok((InfoOutput(info), Vec::new()))
    }
}
