// Figures for the engine decision, per engine (run by hand: `cargo test --release --lib
// [--features wasmtime] measure_the_engine -- --ignored --nocapture`); `make bench` and
// `make bench-wasmtime` report the same cases through wsfs_call (benches/wasm.rs).

use super::wat::Fixture;
use super::*;
use std::time::Instant;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(runs: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..runs.min(20) {
        f();
    }
    let samples = (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .collect();
    median(samples)
}

#[test]
#[ignore = "a measurement, not a check"]
fn measure_the_engine() {
    let mut f = Fixture::new();
    let ok = f.text("{}");
    let noop = f.wat(&format!("(call $print {ok})"));
    let wasm = ::wat::parse_str(&noop).unwrap();
    let engine = engine();
    let compile = time(200, || {
        engine.compile(&wasm).unwrap();
    });
    let loaded = tool(&noop, "");
    let call = ctl();
    let run = time(2000, || {
        run_with(&loaded, "{}", &call, None, None).unwrap();
    });
    // The same run without the protocol and WASI set-up: instantiate + _start.
    let host = test_host();
    let bare = time(2000, || {
        let watch = Arc::new(crate::watch::Watch::new("m", &call, 1000));
        let (state, _) = crate::guest::GuestState::new(crate::guest::GuestSetup {
            stdin: b"{}".to_vec(),
            env: Vec::new(),
            workspace: None,
            grants: Default::default(),
            gateway: None,
            watch,
            limits: loaded.manifest.limits_under(&host).unwrap(),
        })
        .unwrap();
        loaded.module().run(state, 1_000_000);
    });
    // Fuel throughput of a busy loop, and so the time one slice takes.
    let mut f = Fixture::new();
    let done = f.text("{}");
    let spin = tool(
        &f.wat(&format!(
            "(local $i i32)
             (loop $l (local.set $i (i32.add (local.get $i) (i32.const 1)))
               (br_if $l (i32.lt_u (local.get $i) (i32.const 50000000))))
             (call $print {done})"
        )),
        "",
    );
    let started = Instant::now();
    let out = run_with(&spin, "{}", &call, None, None).unwrap();
    let spun = started.elapsed();
    let slice = crate::engine::FUEL_SLICE as f64;
    let per_slice = spun.mul_f64(slice / out.fuel_used as f64);
    eprintln!(
        "{ENGINE}: compile the no-op module {compile:?}; instantiate + _start {bare:?}; \
         through the runner (input, WASI set-up, output) {run:?}"
    );
    eprintln!("{ENGINE}: a 50M-iteration loop {spun:?}, about {per_slice:?} per fuel slice");
}
