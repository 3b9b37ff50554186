//! What a tool may import, with the signatures the host provides, and the load-time check of a
//! module's imports against them (issue 30 item 11). Engines link these functions at
//! instantiation, which is per call: without this check a module importing `sock_open`, or
//! `fd_write` with another signature, loaded and then failed every call with `tool_trap` and
//! the engine's own words. Each engine describes its module's imports as [`Import`]s; the check
//! itself is the same for every engine.
//!
//! The table is kept by hand beside the engines' linkers (wasmi_wasi's for wasmi, the
//! `link_wasi!` list for wasmtime); the suite runs a module importing every function of it
//! on each engine (`loading::a_module_importing_every_provided_function_runs`), so a table
//! that promised what a linker does not give fails there.

use super::host;
use crate::error::{ErrorCode, Result, WsfsError};
use std::fmt;

/// The WASI preview 1 import module.
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";

/// A value type in a function signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    I32,
    I64,
    F32,
    F64,
    V128,
    /// A reference type (funcref, externref, ...): no provided function takes one.
    Reference,
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ValueType::I32 => "i32",
            ValueType::I64 => "i64",
            ValueType::F32 => "f32",
            ValueType::F64 => "f64",
            ValueType::V128 => "v128",
            ValueType::Reference => "a reference",
        })
    }
}

use ValueType::{I32, I64};

/// A function signature: what it takes and what it returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<ValueType>,
    pub results: Vec<ValueType>,
}

/// Written as `(i32, i64) -> i32`, `() -> ()`.
fn write_signature(
    f: &mut fmt::Formatter<'_>,
    params: &[ValueType],
    results: &[ValueType],
) -> fmt::Result {
    let list = |types: &[ValueType]| {
        types
            .iter()
            .map(ValueType::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let results = match results {
        [one] => one.to_string(),
        many => format!("({})", list(many)),
    };
    write!(f, "({}) -> {results}", list(params))
}

impl fmt::Display for Signature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_signature(f, &self.params, &self.results)
    }
}

/// What a module imports under one name: a function with its signature, or something else.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportKind {
    Function(Signature),
    /// A memory, table, global or tag, by that word: the host provides none.
    NotAFunction(&'static str),
}

/// One import of a module, as an engine describes it.
#[derive(Debug, Clone)]
pub struct Import {
    pub module: String,
    pub name: String,
    pub kind: ImportKind,
}

/// A function the host provides.
pub struct ProvidedFunction {
    pub name: &'static str,
    pub params: &'static [ValueType],
    pub results: &'static [ValueType],
}

impl ProvidedFunction {
    fn matches(&self, signature: &Signature) -> bool {
        signature.params == self.params && signature.results == self.results
    }
}

impl fmt::Display for ProvidedFunction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_signature(f, self.params, self.results)
    }
}

macro_rules! provided {
    ($( $name:ident ( $($param:ident),* ) -> ( $($result:ident),* ); )*) => {
        &[$(ProvidedFunction {
            name: stringify!($name),
            params: &[$($param),*],
            results: &[$($result),*],
        }),*]
    };
}

/// Every WASI preview 1 function, with the signature both engines link it with (the
/// `wasi_snapshot_preview1` witx, as wasi-common implements it).
pub const WASI_FUNCTIONS: &[ProvidedFunction] = provided! {
    args_get(I32, I32) -> (I32);
    args_sizes_get(I32, I32) -> (I32);
    environ_get(I32, I32) -> (I32);
    environ_sizes_get(I32, I32) -> (I32);
    clock_res_get(I32, I32) -> (I32);
    clock_time_get(I32, I64, I32) -> (I32);
    fd_advise(I32, I64, I64, I32) -> (I32);
    fd_allocate(I32, I64, I64) -> (I32);
    fd_close(I32) -> (I32);
    fd_datasync(I32) -> (I32);
    fd_fdstat_get(I32, I32) -> (I32);
    fd_fdstat_set_flags(I32, I32) -> (I32);
    fd_fdstat_set_rights(I32, I64, I64) -> (I32);
    fd_filestat_get(I32, I32) -> (I32);
    fd_filestat_set_size(I32, I64) -> (I32);
    fd_filestat_set_times(I32, I64, I64, I32) -> (I32);
    fd_pread(I32, I32, I32, I64, I32) -> (I32);
    fd_prestat_get(I32, I32) -> (I32);
    fd_prestat_dir_name(I32, I32, I32) -> (I32);
    fd_pwrite(I32, I32, I32, I64, I32) -> (I32);
    fd_read(I32, I32, I32, I32) -> (I32);
    fd_readdir(I32, I32, I32, I64, I32) -> (I32);
    fd_renumber(I32, I32) -> (I32);
    fd_seek(I32, I64, I32, I32) -> (I32);
    fd_sync(I32) -> (I32);
    fd_tell(I32, I32) -> (I32);
    fd_write(I32, I32, I32, I32) -> (I32);
    path_create_directory(I32, I32, I32) -> (I32);
    path_filestat_get(I32, I32, I32, I32, I32) -> (I32);
    path_filestat_set_times(I32, I32, I32, I32, I64, I64, I32) -> (I32);
    path_link(I32, I32, I32, I32, I32, I32, I32) -> (I32);
    path_open(I32, I32, I32, I32, I32, I64, I64, I32, I32) -> (I32);
    path_readlink(I32, I32, I32, I32, I32, I32) -> (I32);
    path_remove_directory(I32, I32, I32) -> (I32);
    path_rename(I32, I32, I32, I32, I32, I32) -> (I32);
    path_symlink(I32, I32, I32, I32, I32) -> (I32);
    path_unlink_file(I32, I32, I32) -> (I32);
    poll_oneoff(I32, I32, I32, I32) -> (I32);
    proc_exit(I32) -> ();
    proc_raise(I32) -> (I32);
    sched_yield() -> (I32);
    random_get(I32, I32) -> (I32);
    sock_accept(I32, I32, I32) -> (I32);
    sock_recv(I32, I32, I32, I32, I32, I32) -> (I32);
    sock_send(I32, I32, I32, I32, I32) -> (I32);
    sock_shutdown(I32, I32) -> (I32);
};

/// Every `wsfs` host function ([`host`]), with its signature.
pub const HOST_FUNCTIONS: &[ProvidedFunction] = provided! {
    model_generate(I32, I32) -> (I32);
    http_request(I32, I32) -> (I32);
    response_len() -> (I32);
    response_read(I32, I32) -> (I32);
};

/// The functions `module` provides, or `None` for a module the host does not provide.
fn provided_by(module: &str) -> Option<&'static [ProvidedFunction]> {
    match module {
        WASI_MODULE => Some(WASI_FUNCTIONS),
        host::MODULE => Some(HOST_FUNCTIONS),
        _ => None,
    }
}

fn refused(message: String) -> WsfsError {
    WsfsError::new(ErrorCode::ManifestInvalid, message)
}

/// Checks every import against what the host provides: `manifest_invalid` naming the first
/// import that is not a provided function with exactly the provided signature, and saying
/// what to change.
pub fn check_imports<'a>(imports: impl IntoIterator<Item = &'a Import>) -> Result<()> {
    for import in imports {
        let Import { module, name, kind } = import;
        let Some(functions) = provided_by(module) else {
            return Err(refused(format!(
                "the module imports {module}::{name}, but the host does not provide the module \
                 {module}: a tool imports only functions of {WASI_MODULE} (build it for \
                 wasm32-wasip1) and of {} ({})",
                host::MODULE,
                names(HOST_FUNCTIONS)
            )));
        };
        let signature = match kind {
            ImportKind::Function(signature) => signature,
            ImportKind::NotAFunction(what) => {
                return Err(refused(format!(
                    "the module imports a {what} as {module}::{name}, but the host provides \
                     only functions: a tool defines its own memory (and exports it as \
                     \"memory\"), tables and globals"
                )))
            }
        };
        let Some(provided) = functions.iter().find(|f| f.name == name) else {
            // What to do differs: a WASI import comes from the toolchain or a library built
            // for another WASI (sockets, threads); a wsfs import is the author's own.
            let advice = if module == WASI_MODULE {
                "build the tool for wasm32-wasip1 without what needs it (a tool reaches the \
                 network only through wsfs::http_request)"
            } else {
                "import only those"
            };
            return Err(refused(format!(
                "the module imports {module}::{name}, which the host does not provide: \
                 {module} has only {}; {advice}",
                names(functions)
            )));
        };
        if !provided.matches(signature) {
            return Err(refused(format!(
                "the module imports {module}::{name} as {signature}, but the host provides it \
                 as {provided}: declare the import with that signature"
            )));
        }
    }
    Ok(())
}

fn names(functions: &[ProvidedFunction]) -> String {
    functions
        .iter()
        .map(|f| f.name)
        .collect::<Vec<_>>()
        .join(", ")
}
