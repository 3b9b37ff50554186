//! Generates `include/wsfs.h` from `src/ffi.rs` with cbindgen: `make build` runs it
//! (`cargo run -p wsfs-header`), and `make test` fails when the committed header is not what
//! it generates. A program of its own rather than the library's build script, so a host that
//! builds the library does not compile cbindgen and its dependencies.

use std::path::Path;

fn main() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut config =
        cbindgen::Config::from_file(repo.join("cbindgen.toml")).expect("cbindgen.toml is readable");
    // The release's version, from the workspace's one version (Cargo.toml, [workspace.package]):
    // this crate's version is that one, as is the library's.
    config.after_includes = Some(format!(
        "\n/* The release this header belongs to (wsfs_version()'s \"version\"). */\n\
         #define WSFS_VERSION \"{}\"\n\
         #define WSFS_VERSION_MAJOR {}\n\
         #define WSFS_VERSION_MINOR {}\n\
         #define WSFS_VERSION_PATCH {}",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
    ));
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(repo.join("src/ffi.rs"))
        .generate()
        .expect("cbindgen can parse src/ffi.rs");
    bindings.write_to_file(repo.join("include/wsfs.h"));
}
