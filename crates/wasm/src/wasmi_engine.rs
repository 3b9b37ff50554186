//! The wasmi engine: a pure-Rust interpreter with fuel metering whose calls can be resumed
//! after the fuel runs out, which is what makes the slices possible. The WASI preview 1
//! imports come from `wasmi_wasi` over the run's `WasiCtx`; the `wsfs` host functions are
//! defined here over [`GuestState::host`].

use super::engine::{check_interface, CompiledModule, Ended, Engine, RunReport, FUEL_SLICE};
use super::guest::GuestState;
use super::host::{self, MustStop};
use super::imports::{Import, ImportKind, Signature, ValueType};
use crate::error::{ErrorCode, Result, WsfsError};
use std::ops::Range;
use std::sync::Arc;
use wasmi::ResourceLimiter;
use wasmi::{Caller, Extern, Linker, Module, Store, TypedResumableCall};
use wasmi_core::LimiterError;

pub struct WasmiEngine {
    engine: wasmi::Engine,
    linker: Arc<Linker<GuestState>>,
}

impl WasmiEngine {
    pub fn new() -> Result<WasmiEngine> {
        let engine = wasmi::Engine::new(&config());
        let mut linker = Linker::new(&engine);
        let link_error = |e: &dyn std::fmt::Display| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("could not set up the Wasm host functions: {e}"),
            )
        };
        wasmi_wasi::add_to_linker(&mut linker, |state: &mut GuestState| &mut state.wasi)
            .map_err(|e| link_error(&e))?;
        add_host_functions(&mut linker).map_err(|e| link_error(&e))?;
        Ok(WasmiEngine {
            engine,
            linker: Arc::new(linker),
        })
    }
}

/// The engine's configuration: fuel metering, no start section, every function translated when
/// the module is compiled.
fn config() -> wasmi::Config {
    let mut config = wasmi::Config::default();
    // A start section would run at instantiation, outside the fuel slices.
    config.consume_fuel(true).allow_start_fn(false);
    // Eager, not wasmi's default lazy translation: with lazy translation wasmi 2.0.0 charges fuel
    // for translating a function on its first call, and when a fuel slice runs out there, inside
    // a call from an already running function, the resumable call ends with a plain out-of-fuel
    // error instead of `OutOfFuel` (https://github.com/wasmi-labs/wasmi/pull/2032, open; not
    // the root-function case #1859 fixed in #1916). The run then ended as fuel_exhausted at any
    // budget, wherever a slice boundary fell on a first call (the Rust inventory example on a
    // two-entry listing). Eager translation happens once in `Module::new`, outside the slices,
    // so every out-of-fuel pause is resumable. Test: `wasmi_engine::tests`.
    config.compilation_mode(wasmi::CompilationMode::Eager);
    config
}

impl Engine for WasmiEngine {
    fn name(&self) -> &'static str {
        "wasmi"
    }

    fn compile(&self, wasm: &[u8]) -> Result<Arc<dyn CompiledModule>> {
        let module = Module::new(&self.engine, wasm).map_err(|e| {
            WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!("the module is not valid WebAssembly the host can run: {e}"),
            )
        })?;
        let imports: Vec<Import> = module.imports().map(|i| import(&i)).collect();
        let exports: Vec<&str> = module.exports().map(|e| e.name()).collect();
        check_interface(&imports, &exports)?;
        Ok(Arc::new(WasmiModule {
            engine: self.engine.clone(),
            linker: self.linker.clone(),
            module,
        }))
    }
}

/// An import as wasmi declares it, in the engine-independent words of the load-time check.
fn import(import: &wasmi::ImportType<'_>) -> Import {
    let kind = match import.ty() {
        wasmi::ExternType::Func(func) => ImportKind::Function(Signature {
            params: func.params().iter().map(value_type).collect(),
            results: func.results().iter().map(value_type).collect(),
        }),
        wasmi::ExternType::Memory(_) => ImportKind::NotAFunction("memory"),
        wasmi::ExternType::Table(_) => ImportKind::NotAFunction("table"),
        wasmi::ExternType::Global(_) => ImportKind::NotAFunction("global"),
    };
    Import {
        module: import.module().to_string(),
        name: import.name().to_string(),
        kind,
    }
}

fn value_type(ty: &wasmi::ValType) -> ValueType {
    match ty {
        wasmi::ValType::I32 => ValueType::I32,
        wasmi::ValType::I64 => ValueType::I64,
        wasmi::ValType::F32 => ValueType::F32,
        wasmi::ValType::F64 => ValueType::F64,
        wasmi::ValType::V128 => ValueType::V128,
        wasmi::ValType::FuncRef | wasmi::ValType::ExternRef => ValueType::Reference,
    }
}

struct WasmiModule {
    engine: wasmi::Engine,
    linker: Arc<Linker<GuestState>>,
    module: Module,
}

impl ResourceLimiter for GuestState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> std::result::Result<bool, LimiterError> {
        Ok(self.memory.memory_growing(desired, maximum))
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> std::result::Result<bool, LimiterError> {
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

impl CompiledModule for WasmiModule {
    fn run(&self, state: GuestState, fuel: u64) -> RunReport {
        let watch = state.watch.clone();
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| state as &mut dyn ResourceLimiter);
        // Fuel not yet handed to the store.
        let mut budget = fuel;
        let give = |store: &mut Store<GuestState>, budget: &mut u64, at_least: u64| {
            let slice = FUEL_SLICE.max(at_least).min(*budget);
            *budget -= slice;
            let held = store.get_fuel().unwrap_or(0);
            let _ = store.set_fuel(held.saturating_add(slice));
        };
        give(&mut store, &mut budget, 0);
        let ended = (|| {
            let instance = match self.linker.instantiate_and_start(&mut store, &self.module) {
                Ok(instance) => instance,
                Err(e) => return ended_by(&e),
            };
            let start = match instance.get_typed_func::<(), ()>(&store, "_start") {
                Ok(start) => start,
                Err(e) => return Ended::Trapped(format!("_start: {e}")),
            };
            let mut call = start.call_resumable(&mut store, ());
            loop {
                match call {
                    Ok(TypedResumableCall::Finished(())) => return Ended::Exited(0),
                    Ok(TypedResumableCall::HostTrap(trap)) => return ended_by(trap.host_error()),
                    Ok(TypedResumableCall::OutOfFuel(paused)) => {
                        if watch.check().is_err() {
                            return Ended::Stopped;
                        }
                        let needed = paused.required_fuel();
                        if budget == 0 || budget < needed {
                            return Ended::OutOfFuel;
                        }
                        give(&mut store, &mut budget, needed);
                        call = paused.resume(&mut store);
                    }
                    Err(e) => return ended_by(&e),
                }
            }
        })();
        let left = budget.saturating_add(store.get_fuel().unwrap_or(0));
        RunReport {
            ended,
            fuel_used: fuel.saturating_sub(left),
            state: store.into_data(),
        }
    }
}

/// How an error from wasmi ends the run.
fn ended_by(error: &wasmi::Error) -> Ended {
    if let Some(status) = error.i32_exit_status() {
        return Ended::Exited(status);
    }
    match error.as_trap_code() {
        Some(wasmi::TrapCode::OutOfFuel) => Ended::OutOfFuel,
        _ if error.downcast_ref::<StopError>().is_some() => Ended::Stopped,
        _ => Ended::Trapped(error.to_string()),
    }
}

/// The error a `wsfs` host function returns to stop the tool (the reason is in the watch).
#[derive(Debug)]
struct StopError;

impl std::fmt::Display for StopError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the host stopped the tool")
    }
}

impl wasmi::errors::HostError for StopError {}

fn stop(_: MustStop) -> wasmi::Error {
    wasmi::Error::host(StopError)
}

/// The guest's memory and the run's state, borrowed together.
fn memory_and_state<'a>(
    caller: &'a mut Caller<'_, GuestState>,
) -> std::result::Result<(&'a mut [u8], &'a mut GuestState), wasmi::Error> {
    let memory = caller
        .get_export("memory")
        .and_then(Extern::into_memory)
        .ok_or_else(|| wasmi::Error::new("the tool exports no memory"))?;
    Ok(memory.data_and_store_mut(caller))
}

/// `ptr..ptr+len` of guest memory, or a trap when it is out of bounds.
fn region(memory: &[u8], ptr: i32, len: i32) -> std::result::Result<Range<usize>, wasmi::Error> {
    let start = ptr as u32 as usize;
    let end = start.checked_add(len as u32 as usize);
    match end {
        Some(end) if end <= memory.len() => Ok(start..end),
        _ => Err(wasmi::Error::from(wasmi::TrapCode::MemoryOutOfBounds)),
    }
}

fn add_host_functions(
    linker: &mut Linker<GuestState>,
) -> std::result::Result<(), wasmi::errors::LinkerError> {
    linker.func_wrap(
        host::MODULE,
        "model_generate",
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| {
            let (memory, state) = memory_and_state(&mut caller)?;
            let request = &memory[region(memory, ptr, len)?];
            state.host.model_generate(request).map_err(stop)
        },
    )?;
    linker.func_wrap(
        host::MODULE,
        "http_request",
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| {
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
        |mut caller: Caller<'_, GuestState>, ptr: i32, len: i32| {
            let (memory, state) = memory_and_state(&mut caller)?;
            let range = region(memory, ptr, len)?;
            Ok::<i32, wasmi::Error>(state.host.response_read(&mut memory[range]))
        },
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use wasmi::{Linker, Module, Store, TypedResumableCall};

    /// `run` spends some fuel, then calls `callee` for the first time (its body large enough that
    /// translating it lazily costs fuel), and returns 42.
    const FIRST_CALL: &str = r#"
        (module
          (func $callee (param i32) (result i32)
            local.get 0 i32.const 1 i32.add i32.const 2 i32.mul i32.const 3 i32.sub
            i32.const 5 i32.xor i32.const 7 i32.or i32.const 11 i32.and i32.const 13 i32.add
            i32.const 17 i32.mul i32.const 19 i32.rem_u i32.const 23 i32.add i32.const 29 i32.sub
            i32.const 31 i32.xor i32.const 37 i32.or i32.const 41 i32.and i32.const 43 i32.add
            drop i32.const 42)
          (func (export "run") (result i32)
            (local $i i32)
            (loop $spin
              (local.set $i (i32.add (local.get $i) (i32.const 1)))
              (br_if $spin (i32.lt_u (local.get $i) (i32.const 20))))
            (call $callee (local.get $i))))
    "#;

    /// `run` called resumably with `first` fuel, then `slice` more (or what it needs) after
    /// each pause, as `WasmiModule::run` does.
    fn run_in_slices(first: u64, slice: u64) -> Result<i32, String> {
        let engine = wasmi::Engine::new(&super::config());
        let wasm = wat::parse_str(FIRST_CALL).map_err(|e| e.to_string())?;
        let module = Module::new(&engine, &wasm).map_err(|e| e.to_string())?;
        let mut store = Store::new(&engine, ());
        store.set_fuel(first).map_err(|e| e.to_string())?;
        let instance = Linker::new(&engine)
            .instantiate_and_start(&mut store, &module)
            .map_err(|e| e.to_string())?;
        let run = instance
            .get_typed_func::<(), i32>(&store, "run")
            .map_err(|e| e.to_string())?;
        let mut call = run.call_resumable(&mut store, ());
        for _ in 0..10_000 {
            match call {
                Ok(TypedResumableCall::Finished(value)) => return Ok(value),
                Ok(TypedResumableCall::OutOfFuel(paused)) => {
                    let held = store.get_fuel().map_err(|e| e.to_string())?;
                    let give = slice.max(paused.required_fuel());
                    store.set_fuel(held + give).map_err(|e| e.to_string())?;
                    call = paused.resume(&mut store);
                }
                Ok(TypedResumableCall::HostTrap(_)) => return Err("host trap".into()),
                Err(e) => return Err(e.to_string()),
            }
        }
        Err("never finished".into())
    }

    /// Whatever fuel the call starts with, and so wherever a slice runs out, the call resumes to
    /// its result. With wasmi's lazy translation (before `config` asked for eager) every start
    /// below 175 fuel failed translating `run` itself (wasmi issue #1859: by design) and every
    /// start from 175 failed translating `callee` on its first call with "ran out of fuel while
    /// calling a resumable function: required_fuel=364" (wasmi PR #2032): the Rust inventory's
    /// fuel_exhausted.
    #[test]
    fn a_call_resumes_wherever_its_fuel_runs_out() {
        for first in 1..400 {
            for slice in [1, 50] {
                assert_eq!(
                    run_in_slices(first, slice),
                    Ok(42),
                    "starting with {first} fuel, slices of {slice}"
                );
            }
        }
    }
}
