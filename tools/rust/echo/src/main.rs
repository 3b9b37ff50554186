//! echo: an example Wasm tool with no capability. Its arguments (one JSON object on stdin,
//! already checked by the host against the manifest's input_schema) come back on stdout as
//! `{"received": <the arguments>}`.

use std::io::Read;

fn main() {
    let mut args = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut args) {
        // A failure the tool explains: its code and message, and exit status 1.
        print!(
            r#"{{"error":{{"code":"io_error","message":"echo could not read its arguments: {}"}}}}"#,
            e.to_string().replace(['"', '\\'], "'")
        );
        std::process::exit(1);
    }
    // The host validated the arguments, so they are JSON as they are.
    print!(r#"{{"received":{}}}"#, args.trim());
}
