//! Generates `include/wsfs.h` from `src/ffi.rs` with cbindgen. The header is committed;
//! `make test` fails when a build changes it.

fn main() {
    println!("cargo:rerun-if-changed=src/ffi.rs");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml"))
        .expect("cbindgen.toml is readable");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(format!("{crate_dir}/src/ffi.rs"))
        .generate()
        .expect("cbindgen can parse src/ffi.rs");
    bindings.write_to_file(format!("{crate_dir}/include/wsfs.h"));
}
