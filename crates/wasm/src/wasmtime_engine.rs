//! The wasmtime engine (cargo feature `wasmtime`): the same modules, limits, WASI and host
//! functions as [`super::wasmi_engine`], compiled to machine code by Cranelift instead of
//! interpreted.
//!
//! - **Fuel slices.** wasmtime's fuel cannot be resumed after it runs out, so a run is an async
//!   call with the whole budget as fuel that yields every [`FUEL_SLICE`] units
//!   (`fuel_async_yield_interval`). The call is polled here, on the caller's thread, with a
//!   waker that does nothing; each yield is one slice, after which the run's watch is asked
//!   whether to stop (the deadline, the cancel token, the tool's timeout). Stopping drops the
//!   call, which unwinds the guest.
//! - **Memory** is held by the same [`MemoryBudget`](super::guest::MemoryBudget) through
//!   wasmtime's `ResourceLimiter`.
//! - **WASI preview 1** is the same wasi-common context wasmi runs ([`GuestState::wasi`], with
//!   the workspace's `/workspace`, the bounded pipes and the watched scheduler): the 46
//!   functions wiggle generates for it are linked here by hand, one closure each, because
//!   wasi-common's own wasmtime glue is tied to the wasmtime of its own version.
//! - A start section is refused at load, as wasmi's `allow_start_fn(false)` does: it would run
//!   at instantiation, before the first slice.

use super::engine::{check_interface, CompiledModule, Ended, Engine, RunReport, FUEL_SLICE};
use super::guest::GuestState;
use super::host::{self, MustStop};
use super::imports::{Import, ImportKind, Signature, ValueType, WASI_MODULE};
use crate::error::{ErrorCode, Result, WsfsError};
use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use wasmi_wasi::wasi_common;
use wasmtime::{Caller, Extern, Linker, Module, Store};

pub struct WasmtimeEngine {
    engine: wasmtime::Engine,
    linker: Arc<Linker<GuestState>>,
}

fn link_error(e: impl std::fmt::Display) -> WsfsError {
    WsfsError::new(
        ErrorCode::IoError,
        format!("could not set up the Wasm host functions: {e}"),
    )
}

impl WasmtimeEngine {
    pub fn new() -> Result<WasmtimeEngine> {
        let mut config = wasmtime::Config::new();
        config.consume_fuel(true);
        let engine = wasmtime::Engine::new(&config).map_err(|e| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("could not set up the wasmtime engine: {e}"),
            )
        })?;
        let mut linker = Linker::new(&engine);
        add_wasi(&mut linker).map_err(link_error)?;
        add_host_functions(&mut linker).map_err(link_error)?;
        Ok(WasmtimeEngine {
            engine,
            linker: Arc::new(linker),
        })
    }
}

impl Engine for WasmtimeEngine {
    fn name(&self) -> &'static str {
        "wasmtime"
    }

    fn compile(&self, wasm: &[u8]) -> Result<Arc<dyn CompiledModule>> {
        let invalid = |e: &dyn std::fmt::Display| {
            WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!("the module is not valid WebAssembly the host can run: {e}"),
            )
        };
        if has_start_section(wasm) {
            return Err(invalid(
                &"the module has a start function, which the host does not run (a tool starts \
                  at its _start export)",
            ));
        }
        let module = Module::new(&self.engine, wasm).map_err(|e| invalid(&e))?;
        let imports: Vec<Import> = module.imports().map(|i| import(&i)).collect();
        let exports: Vec<&str> = module.exports().map(|e| e.name()).collect();
        check_interface(&imports, &exports)?;
        Ok(Arc::new(WasmtimeModule {
            engine: self.engine.clone(),
            linker: self.linker.clone(),
            module,
        }))
    }
}

/// An import as wasmtime declares it, in the engine-independent words of the load-time check.
fn import(import: &wasmtime::ImportType<'_>) -> Import {
    let ty = import.ty();
    // The accessors rather than a match: the kinds besides functions only need a word.
    let kind = match ty.func() {
        Some(func) => ImportKind::Function(Signature {
            params: func.params().map(|t| value_type(&t)).collect(),
            results: func.results().map(|t| value_type(&t)).collect(),
        }),
        None if ty.memory().is_some() => ImportKind::NotAFunction("memory"),
        None if ty.table().is_some() => ImportKind::NotAFunction("table"),
        None if ty.global().is_some() => ImportKind::NotAFunction("global"),
        None => ImportKind::NotAFunction("tag"),
    };
    Import {
        module: import.module().to_string(),
        name: import.name().to_string(),
        kind,
    }
}

fn value_type(ty: &wasmtime::ValType) -> ValueType {
    match ty {
        wasmtime::ValType::I32 => ValueType::I32,
        wasmtime::ValType::I64 => ValueType::I64,
        wasmtime::ValType::F32 => ValueType::F32,
        wasmtime::ValType::F64 => ValueType::F64,
        wasmtime::ValType::V128 => ValueType::V128,
        _ => ValueType::Reference,
    }
}

/// Whether the binary module has a start section (id 8). Reads only the section headers; a
/// malformed module answers `false` and is refused by the compiler instead.
fn has_start_section(wasm: &[u8]) -> bool {
    fn leb_u32(bytes: &[u8], at: &mut usize) -> Option<usize> {
        let mut value = 0usize;
        for shift in (0..35).step_by(7) {
            let byte = *bytes.get(*at)?;
            *at += 1;
            value |= usize::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }
    let mut at = 8;
    while at < wasm.len() {
        let id = wasm[at];
        at += 1;
        let Some(size) = leb_u32(wasm, &mut at) else {
            return false;
        };
        if id == 8 {
            return true;
        }
        at = at.saturating_add(size);
    }
    false
}

struct WasmtimeModule {
    engine: wasmtime::Engine,
    linker: Arc<Linker<GuestState>>,
    module: Module,
}

/// The same budget wasmi's limiter keeps.
impl wasmtime::ResourceLimiter for GuestState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.memory.memory_growing(desired, maximum))
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.memory.table_growing(desired))
    }

    fn instances(&self) -> usize {
        1
    }

    fn tables(&self) -> usize {
        4
    }

    fn memories(&self) -> usize {
        1
    }
}

/// Polls `future` on this thread until it finishes, asking `stop` after every yield (one fuel
/// slice) whether to give up; `None` when it gave up (the future is dropped, unwinding the
/// guest).
fn drive<F: Future>(future: F, mut stop: impl FnMut() -> bool) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        match future.as_mut().poll(&mut cx) {
            Poll::Ready(output) => return Some(output),
            Poll::Pending => {
                if stop() {
                    return None;
                }
            }
        }
    }
}

impl CompiledModule for WasmtimeModule {
    fn run(&self, state: GuestState, fuel: u64) -> RunReport {
        let watch = state.watch.clone();
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| state as &mut dyn wasmtime::ResourceLimiter);
        let setup = store
            .set_fuel(fuel)
            .and_then(|()| store.fuel_async_yield_interval(Some(FUEL_SLICE)));
        let ended = match setup {
            Err(e) => Ended::Trapped(format!("could not set the fuel: {e}")),
            Ok(()) => {
                let call = async {
                    let instance = self
                        .linker
                        .instantiate_async(&mut store, &self.module)
                        .await?;
                    let start = instance
                        .get_typed_func::<(), ()>(&mut store, "_start")
                        .map_err(|e| e.context("_start"))?;
                    start.call_async(&mut store, ()).await
                };
                match drive(call, || watch.check().is_err()) {
                    None => Ended::Stopped,
                    Some(Ok(())) => Ended::Exited(0),
                    Some(Err(e)) => ended_by(&e),
                }
            }
        };
        let left = store.get_fuel().unwrap_or(0);
        RunReport {
            ended,
            fuel_used: fuel.saturating_sub(left),
            state: store.into_data(),
        }
    }
}

/// How an error from wasmtime ends the run.
fn ended_by(error: &wasmtime::Error) -> Ended {
    if let Some(GuestExit(status)) = error.downcast_ref::<GuestExit>() {
        return Ended::Exited(*status);
    }
    if error.downcast_ref::<StopError>().is_some() {
        return Ended::Stopped;
    }
    match error.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::OutOfFuel) => Ended::OutOfFuel,
        Some(trap) => Ended::Trapped(format!("wasm trap: {trap}")),
        None => Ended::Trapped(error.to_string()),
    }
}

/// `proc_exit`'s status, carried out of the guest as an error.
#[derive(Debug)]
struct GuestExit(i32);

impl std::fmt::Display for GuestExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the tool exited with status {}", self.0)
    }
}

impl std::error::Error for GuestExit {}

/// The error a `wsfs` host function returns to stop the tool (the reason is in the watch).
#[derive(Debug)]
struct StopError;

impl std::fmt::Display for StopError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the host stopped the tool")
    }
}

impl std::error::Error for StopError {}

fn stop(_: MustStop) -> wasmtime::Error {
    wasmtime::Error::new(StopError)
}

/// The guest's memory and the run's state, borrowed together.
fn memory_and_state<'a>(
    caller: &'a mut Caller<'_, GuestState>,
) -> wasmtime::Result<(&'a mut [u8], &'a mut GuestState)> {
    let memory = caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| wasmtime::Error::msg("the tool exports no memory"))?;
    Ok(memory.data_and_store_mut(caller))
}

/// `ptr..ptr+len` of guest memory, or a trap when it is out of bounds.
fn region(memory: &[u8], ptr: i32, len: i32) -> wasmtime::Result<Range<usize>> {
    let start = ptr as u32 as usize;
    let end = start.checked_add(len as u32 as usize);
    match end {
        Some(end) if end <= memory.len() => Ok(start..end),
        _ => Err(wasmtime::Error::new(wasmtime::Trap::MemoryOutOfBounds)),
    }
}

/// A wasi-common call's outcome as wasmtime sees it: `proc_exit` becomes [`GuestExit`], any
/// other failure (a trap the WASI layer raised: the stdout limit, a stop while sleeping) a
/// message.
fn wasi_result<R>(result: wiggle::anyhow::Result<R>) -> wasmtime::Result<R> {
    result.map_err(|e| match e.downcast::<wasi_common::I32Exit>() {
        Ok(wasi_common::I32Exit(status)) => wasmtime::Error::new(GuestExit(status)),
        Err(e) => wasmtime::Error::msg(e.to_string()),
    })
}

/// Runs a wasi-common call. Its futures never wait (the context's files and scheduler are
/// synchronous), so one poll finishes it.
fn finish_now<R>(future: impl Future<Output = wiggle::anyhow::Result<R>>) -> wasmtime::Result<R> {
    match drive(future, || true) {
        Some(result) => wasi_result(result),
        None => Err(wasmtime::Error::msg(
            "a WASI call waited, which this host does not support",
        )),
    }
}

macro_rules! link_wasi {
    ($linker:expr; $( fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty; )*) => {
        $(
            $linker.func_wrap(
                WASI_MODULE,
                stringify!($name),
                |mut caller: Caller<'_, GuestState>, $($arg: $ty),*| -> wasmtime::Result<$ret> {
                    let (memory, state) = memory_and_state(&mut caller)?;
                    let mut memory = wiggle::GuestMemory::Unshared(memory);
                    finish_now(
                        wasi_common::snapshots::preview_1::wasi_snapshot_preview1::$name(
                            &mut state.wasi,
                            &mut memory,
                            $($arg),*
                        ),
                    )
                },
            )?;
        )*
    };
}

/// WASI preview 1 on the run's wasi-common context: the same functions, signatures and
/// context wasmi_wasi links for wasmi, and the signatures [`super::imports::WASI_FUNCTIONS`]
/// checks a module's imports against at load.
fn add_wasi(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    link_wasi! { linker;
        fn args_get(argv: i32, argv_buf: i32) -> i32;
        fn args_sizes_get(offset0: i32, offset1: i32) -> i32;
        fn environ_get(environ: i32, environ_buf: i32) -> i32;
        fn environ_sizes_get(offset0: i32, offset1: i32) -> i32;
        fn clock_res_get(id: i32, offset0: i32) -> i32;
        fn clock_time_get(id: i32, precision: i64, offset0: i32) -> i32;
        fn fd_advise(fd: i32, offset: i64, len: i64, advice: i32) -> i32;
        fn fd_allocate(fd: i32, offset: i64, len: i64) -> i32;
        fn fd_close(fd: i32) -> i32;
        fn fd_datasync(fd: i32) -> i32;
        fn fd_fdstat_get(fd: i32, offset0: i32) -> i32;
        fn fd_fdstat_set_flags(fd: i32, flags: i32) -> i32;
        fn fd_fdstat_set_rights(fd: i32, base: i64, inheriting: i64) -> i32;
        fn fd_filestat_get(fd: i32, offset0: i32) -> i32;
        fn fd_filestat_set_size(fd: i32, size: i64) -> i32;
        fn fd_filestat_set_times(fd: i32, atim: i64, mtim: i64, fst_flags: i32) -> i32;
        fn fd_pread(fd: i32, iov: i32, iov_len: i32, offset: i64, offset0: i32) -> i32;
        fn fd_prestat_get(fd: i32, offset0: i32) -> i32;
        fn fd_prestat_dir_name(fd: i32, path: i32, path_len: i32) -> i32;
        fn fd_pwrite(fd: i32, ciov: i32, ciov_len: i32, offset: i64, offset0: i32) -> i32;
        fn fd_read(fd: i32, iov: i32, iov_len: i32, offset1: i32) -> i32;
        fn fd_readdir(fd: i32, buf: i32, buf_len: i32, cookie: i64, offset0: i32) -> i32;
        fn fd_renumber(fd: i32, to: i32) -> i32;
        fn fd_seek(fd: i32, offset: i64, whence: i32, offset0: i32) -> i32;
        fn fd_sync(fd: i32) -> i32;
        fn fd_tell(fd: i32, offset0: i32) -> i32;
        fn fd_write(fd: i32, ciov: i32, ciov_len: i32, offset0: i32) -> i32;
        fn path_create_directory(fd: i32, offset: i32, length: i32) -> i32;
        fn path_filestat_get(fd: i32, flags: i32, offset: i32, length: i32, offset0: i32) -> i32;
        fn path_filestat_set_times(
            fd: i32, flags: i32, offset: i32, length: i32, atim: i64, mtim: i64, fst_flags: i32,
        ) -> i32;
        fn path_link(
            old_fd: i32, old_flags: i32, old_offset: i32, old_length: i32, new_fd: i32,
            new_offset: i32, new_length: i32,
        ) -> i32;
        fn path_open(
            fd: i32, dirflags: i32, offset: i32, length: i32, oflags: i32, base: i64,
            inheriting: i64, fdflags: i32, offset0: i32,
        ) -> i32;
        fn path_readlink(
            fd: i32, offset: i32, length: i32, buf: i32, buf_len: i32, offset0: i32,
        ) -> i32;
        fn path_remove_directory(fd: i32, offset: i32, length: i32) -> i32;
        fn path_rename(
            fd: i32, old_offset: i32, old_length: i32, new_fd: i32, new_offset: i32,
            new_length: i32,
        ) -> i32;
        fn path_symlink(
            old_offset: i32, old_length: i32, fd: i32, new_offset: i32, new_length: i32,
        ) -> i32;
        fn path_unlink_file(fd: i32, offset: i32, length: i32) -> i32;
        fn poll_oneoff(in_: i32, out: i32, nsubscriptions: i32, offset0: i32) -> i32;
        fn proc_exit(rval: i32) -> ();
        fn proc_raise(sig: i32) -> i32;
        fn sched_yield() -> i32;
        fn random_get(buf: i32, buf_len: i32) -> i32;
        fn sock_accept(fd: i32, flags: i32, offset0: i32) -> i32;
        fn sock_recv(
            fd: i32, iov: i32, iov_len: i32, ri_flags: i32, offset0: i32, offset1: i32,
        ) -> i32;
        fn sock_send(fd: i32, ciov: i32, ciov_len: i32, si_flags: i32, offset0: i32) -> i32;
        fn sock_shutdown(fd: i32, how: i32) -> i32;
    }
    Ok(())
}

fn add_host_functions(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    linker.func_wrap(
        host::MODULE,
        "model_generate",
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| -> wasmtime::Result<i32> {
            let (memory, state) = memory_and_state(&mut caller)?;
            let request = &memory[region(memory, ptr, len)?];
            state.host.model_generate(request).map_err(stop)
        },
    )?;
    linker.func_wrap(
        host::MODULE,
        "http_request",
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| -> wasmtime::Result<i32> {
            let (memory, state) = memory_and_state(&mut caller)?;
            let request = &memory[region(memory, ptr, len)?];
            state.host.http_request(request).map_err(stop)
        },
    )?;
    linker.func_wrap(
        host::MODULE,
        "response_len",
        |caller: Caller<'_, GuestState>| -> i32 { caller.data().host.response_len() },
    )?;
    linker.func_wrap(
        host::MODULE,
        "response_read",
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| -> wasmtime::Result<i32> {
            let (memory, state) = memory_and_state(&mut caller)?;
            let range = region(memory, ptr, len)?;
            Ok(state.host.response_read(&mut memory[range]))
        },
    )?;
    Ok(())
}
