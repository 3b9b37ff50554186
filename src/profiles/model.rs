//! A compiled profile: what `compile.rs` builds from a data file and the engine runs.

use super::format::{
    ArgData, ArtifactData, EnvelopeShape, ErrorCase, ErrorRule, FieldData, Ordered, Refusal,
    RefuseWhen, TextData,
};
use super::rewrite::Rewrites;
use serde_json::{Map, Value};

/// A compiled profile.
#[derive(Debug)]
pub struct Profile {
    pub name: String,
    #[allow(dead_code)] // for people, and the tests
    pub description: String,
    pub envelope: EnvelopeShape,
    pub error_case: ErrorCase,
    pub errors: Vec<ErrorRule>,
    pub dotdot: Option<Refusal>,
    pub warnings: Ordered<String>,
    /// Configuration merged under the host's at open (`ProfileData::defaults`).
    pub defaults: Map<String, Value>,
    /// `ProfileData::offer_refused_writes`.
    pub offer_refused_writes: bool,
    pub tools: Vec<ProfileTool>,
}

/// One public tool.
#[derive(Debug)]
pub struct ProfileTool {
    pub name: String,
    pub description: String,
    pub args: Ordered<ArgData>,
    pub one_of: Vec<Vec<String>>,
    /// The public JSON Schema (the native one, renamed, with the profile's defaults).
    pub parameters: Value,
    pub annotations: Value,
    pub selector: Option<String>,
    /// With a selector: one per selector value; without: exactly one, keyed "".
    pub ops: Vec<(String, Op)>,
    /// Another name for its native tool, which stays offered under its own name.
    pub alias: bool,
    /// Native tool and argument names in messages, as this tool's model knows them.
    pub rewrites: Rewrites,
}

/// One native call a public tool (or one of its operations) makes.
#[derive(Debug)]
pub struct Op {
    pub native: String,
    /// The public arguments it takes (the selector aside).
    pub args: Vec<String>,
    pub required: Vec<String>,
    pub fixed: Map<String, Value>,
    pub result: Option<Ordered<FieldData>>,
    pub text: Option<TextData>,
    pub errors: Vec<ErrorRule>,
    pub notices_as_warnings: bool,
    pub artifacts: Vec<ArtifactData>,
    pub refuse_when: Vec<RefuseWhen>,
}

impl ProfileTool {
    pub fn op(&self, key: &str) -> Option<&Op> {
        self.ops.iter().find(|(k, _)| k == key).map(|(_, op)| op)
    }
}

/// Native arguments that profiles already use and the native tools do not have yet (issue 18,
/// "behaviour gaps", closed in phase 2). Until then a profile may name them and the engine
/// leaves them out of the native call; `tests::gaps` fails once a native tool has one, so the
/// entry is removed with the change that adds it.
/// Empty since `list_dir` gained `include_files` / `include_dirs` (gap 5), the last ones.
pub const PENDING_NATIVE_ARGS: &[(&str, &str)] = &[];

pub fn pending_native_arg(tool: &str, arg: &str) -> bool {
    PENDING_NATIVE_ARGS.contains(&(tool, arg))
}
