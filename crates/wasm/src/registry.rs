//! Loaded Wasm tools, by name: each a checked manifest, its limits under the host's policy and
//! its compiled module (compiled once, instantiated per call).

use super::engine::{CompiledModule, Engine};
use super::manifest::Manifest;
use super::policy::{FsCapability, WasmCeiling};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::sha256_hex;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The manifest's file name in a tool's folder.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The module's file names: binary, or text (fixtures and small tools).
pub const MODULE_FILES: [&str; 2] = ["module.wasm", "module.wat"];

const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// Most tools one registry holds.
pub const MAX_TOOLS: usize = 256;

pub struct LoadedTool {
    pub manifest: Manifest,
    /// The folder it was loaded from (a host path).
    pub dir: PathBuf,
    /// The engine that compiled it (`wasm_policy.engine`).
    pub engine: &'static str,
    module: Arc<dyn CompiledModule>,
}

impl LoadedTool {
    pub fn name(&self) -> &str {
        &self.manifest.name
    }

    pub fn module(&self) -> &Arc<dyn CompiledModule> {
        &self.module
    }

    /// Whether the tool can change nothing (for read-only workspaces and the annotations).
    pub fn read_only(&self) -> bool {
        self.manifest.capabilities.filesystem != FsCapability::Write
    }
}

pub struct WasmRegistry {
    engine: Arc<dyn Engine>,
    host: WasmCeiling,
    tools: Vec<LoadedTool>,
}

fn read_bounded(path: &Path, max: u64, what: &str) -> Result<Vec<u8>> {
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| {
        WsfsError::new(
            ErrorCode::ManifestInvalid,
            format!("cannot open {shown}: {e}"),
        )
    })?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| {
        WsfsError::new(
            ErrorCode::ManifestInvalid,
            format!("cannot read {shown}: {e}"),
        )
    })?;
    if bytes.len() as u64 > max {
        return Err(WsfsError::new(
            ErrorCode::ManifestInvalid,
            format!("{shown} is over {max} bytes, the largest {what} the host loads"),
        ));
    }
    Ok(bytes)
}

/// Loads the tool in `dir` (see the module documentation of `wasm`).
pub fn load_tool(dir: &Path, engine: &dyn Engine, host: &WasmCeiling) -> Result<LoadedTool> {
    let at = |e: WsfsError| WsfsError::new(e.code, format!("{}: {}", dir.display(), e.message));
    let manifest_bytes = read_bounded(&dir.join(MANIFEST_FILE), MAX_MANIFEST_BYTES, "manifest")?;
    let manifest_text = String::from_utf8(manifest_bytes).map_err(|_| {
        at(WsfsError::new(
            ErrorCode::ManifestInvalid,
            "manifest.json is not UTF-8",
        ))
    })?;
    let manifest = Manifest::parse(&manifest_text).map_err(at)?;
    // Refused here when it asks for more than the host allows; the runner asks again per call.
    manifest.limits_under(host).map_err(at)?;
    let present: Vec<&str> = MODULE_FILES
        .into_iter()
        .filter(|name| dir.join(name).is_file())
        .collect();
    let module_name = match present.as_slice() {
        [one] => *one,
        [] => {
            return Err(at(WsfsError::new(
                ErrorCode::ManifestInvalid,
                "no module.wasm or module.wat beside manifest.json",
            )))
        }
        _ => {
            return Err(at(WsfsError::new(
                ErrorCode::ManifestInvalid,
                "both module.wasm and module.wat are present; keep one",
            )))
        }
    };
    let bytes = read_bounded(
        &dir.join(module_name),
        host.max_module_bytes as u64,
        "module",
    )?;
    let actual = sha256_hex(&bytes);
    if actual != manifest.module_sha256 {
        return Err(at(WsfsError::new(
            ErrorCode::ModuleMismatch,
            format!(
                "{module_name} has SHA-256 {actual}, but the manifest's module_sha256 is {}; the \
                 module was not loaded. Rebuild the tool, or put the new hash in the manifest if \
                 this module is the one you meant",
                manifest.module_sha256
            ),
        )));
    }
    let wasm = match module_name {
        "module.wat" => wat::parse_bytes(&bytes)
            .map_err(|mut e| {
                // The message then points at `module.wat:LINE:COLUMN`.
                e.set_path(Path::new(module_name));
                at(WsfsError::new(
                    ErrorCode::ManifestInvalid,
                    format!("module.wat is not valid WebAssembly text: {e}"),
                ))
            })?
            .into_owned(),
        _ => bytes,
    };
    let module = engine.compile(&wasm).map_err(at)?;
    Ok(LoadedTool {
        manifest,
        dir: dir.to_path_buf(),
        engine: engine.name(),
        module,
    })
}

impl WasmRegistry {
    pub fn new(engine: Arc<dyn Engine>, host: WasmCeiling) -> Self {
        WasmRegistry {
            engine,
            host,
            tools: Vec::new(),
        }
    }

    /// Loads the tools of a folder from the config's `wasm_tools`: the folder itself when it
    /// holds a manifest, else each of its subfolders that does (in name order). Returns how
    /// many were loaded; the first that fails stops the load with its error.
    pub fn load_folder(&mut self, folder: &Path) -> Result<usize> {
        if folder.join(MANIFEST_FILE).is_file() {
            self.load_tool(folder)?;
            return Ok(1);
        }
        let entries = std::fs::read_dir(folder).map_err(|e| {
            WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!("cannot list the tool folder {}: {e}", folder.display()),
            )
        })?;
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.join(MANIFEST_FILE).is_file())
            .collect();
        dirs.sort();
        for dir in &dirs {
            self.load_tool(dir)?;
        }
        Ok(dirs.len())
    }

    /// Loads one tool folder. Its name may be neither a built-in tool's nor a loaded one's.
    pub fn load_tool(&mut self, dir: &Path) -> Result<&LoadedTool> {
        if self.tools.len() >= MAX_TOOLS {
            return Err(WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!(
                    "more than {MAX_TOOLS} Wasm tools; {} was not loaded",
                    dir.display()
                ),
            ));
        }
        let tool = load_tool(dir, self.engine.as_ref(), &self.host)?;
        let name = tool.name();
        let taken = match (crate::tools::find(name), self.get(name)) {
            (Some(_), _) => Some("a built-in tool".to_string()),
            (None, Some(other)) => Some(format!("the tool in {}", other.dir.display())),
            (None, None) => None,
        };
        if let Some(by) = taken {
            return Err(WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!(
                    "{}: the name {name} is taken by {by}; rename the tool",
                    dir.display()
                ),
            ));
        }
        self.tools.push(tool);
        Ok(&self.tools[self.tools.len() - 1])
    }

    pub fn get(&self, name: &str) -> Option<&LoadedTool> {
        self.tools.iter().find(|t| t.name() == name)
    }

    pub fn tools(&self) -> &[LoadedTool] {
        &self.tools
    }

    pub fn into_tools(self) -> Vec<LoadedTool> {
        self.tools
    }
}
