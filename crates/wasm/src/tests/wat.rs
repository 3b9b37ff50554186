//! Inline WAT fixtures: a prelude of WASI imports and small helpers, strings placed in data
//! segments by [`Fixture::text`], and a `_start` body written per test.
//!
//! Memory layout: 0..64 scratch (iovecs, counts, fds), 64..80 a number's digits, 256..1024
//! poll_oneoff records, 1024.. the strings, 65536.. a buffer for reads and listings.

const PRELUDE: &str = r#"
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_filestat_get" (func $path_filestat_get (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_create_directory" (func $path_create_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_unlink_file" (func $path_unlink_file (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_remove_directory" (func $path_remove_directory (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_rename" (func $path_rename (param i32 i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wsfs" "model_generate" (func $model_generate (param i32 i32) (result i32)))
  (import "wsfs" "http_request" (func $http_request (param i32 i32) (result i32)))
  (import "wsfs" "response_len" (func $response_len (result i32)))
  (import "wsfs" "response_read" (func $response_read (param i32 i32) (result i32)))
  (memory (export "memory") 2)

  ;; Writes len bytes at ptr to stdout.
  (func $print (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))

  ;; Prints a non-negative number in decimal.
  (func $print_num (param $n i32) (local $p i32)
    (local.set $p (i32.const 80))
    (loop $digits
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digits (local.get $n)))
    (call $print (local.get $p) (i32.sub (i32.const 80) (local.get $p))))

  ;; Opens a path in /workspace (fd 3): the new fd, or -errno.
  (func $open (param $ptr i32) (param $len i32) (param $oflags i32) (param $rights i64) (result i32)
    (local $errno i32)
    (local.set $errno (call $path_open (i32.const 3) (i32.const 1) (local.get $ptr) (local.get $len)
      (local.get $oflags) (local.get $rights) (local.get $rights) (i32.const 0) (i32.const 32)))
    (if (result i32) (local.get $errno)
      (then (i32.sub (i32.const 0) (local.get $errno)))
      (else (i32.load (i32.const 32)))))

  ;; Reads fd to its end into the buffer: the byte count.
  (func $read_all (param $fd i32) (result i32) (local $total i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 65536) (local.get $total)))
        (i32.store (i32.const 4) (i32.sub (i32.const 65536) (local.get $total)))
        (br_if $done (call $fd_read (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $done (i32.eqz (i32.load (i32.const 8))))
        (local.set $total (i32.add (local.get $total) (i32.load (i32.const 8))))
        (br $more)))
    (local.get $total))

  ;; Prints a file's content, or E<errno> when it does not open.
  (func $cat (param $ptr i32) (param $len i32) (local $fd i32)
    (local.set $fd (call $open (local.get $ptr) (local.get $len) (i32.const 0) (i64.const 2)))
    (if (i32.lt_s (local.get $fd) (i32.const 0))
      (then
        (call $print (i32.const 1024) (i32.const 1))
        (call $print_num (i32.sub (i32.const 0) (local.get $fd))))
      (else
        (call $print (i32.const 65536) (call $read_all (local.get $fd)))
        (drop (call $fd_close (local.get $fd))))))

  ;; Creates or truncates a file and writes text to it: prints W<errno> (W0: written).
  (func $write (param $ptr i32) (param $len i32) (param $data i32) (param $data_len i32) (local $fd i32)
    (call $print (i32.const 1025) (i32.const 1))
    (local.set $fd (call $open (local.get $ptr) (local.get $len) (i32.const 9) (i64.const 66)))
    (if (i32.lt_s (local.get $fd) (i32.const 0))
      (then (call $print_num (i32.sub (i32.const 0) (local.get $fd))))
      (else
        (i32.store (i32.const 16) (local.get $data))
        (i32.store (i32.const 20) (local.get $data_len))
        (call $print_num (call $fd_write (local.get $fd) (i32.const 16) (i32.const 1) (i32.const 24)))
        (drop (call $fd_close (local.get $fd))))))

  ;; Lists a directory: its names, each followed by ',', or E<errno>.
  (func $list (param $ptr i32) (param $len i32) (local $fd i32) (local $used i32) (local $at i32) (local $name_len i32)
    (local.set $fd (call $open (local.get $ptr) (local.get $len) (i32.const 2) (i64.const 16384)))
    (if (i32.lt_s (local.get $fd) (i32.const 0))
      (then
        (call $print (i32.const 1024) (i32.const 1))
        (call $print_num (i32.sub (i32.const 0) (local.get $fd)))
        (return)))
    (local.set $used (call $fd_readdir (local.get $fd) (i32.const 65536) (i32.const 65536) (i64.const 0) (i32.const 40)))
    (if (local.get $used)
      (then
        (call $print (i32.const 1024) (i32.const 1))
        (call $print_num (local.get $used))
        (return)))
    (local.set $used (i32.load (i32.const 40)))
    (block $done
      (loop $entries
        (br_if $done (i32.gt_u (i32.add (local.get $at) (i32.const 24)) (local.get $used)))
        (local.set $name_len (i32.load (i32.add (i32.const 65552) (local.get $at))))
        (call $print (i32.add (i32.const 65560) (local.get $at)) (local.get $name_len))
        (call $print (i32.const 1026) (i32.const 1))
        (local.set $at (i32.add (local.get $at) (i32.add (i32.const 24) (local.get $name_len))))
        (br $entries)))
    (drop (call $fd_close (local.get $fd))))

  ;; Prints S<errno> for a stat of the path.
  (func $stat (param $ptr i32) (param $len i32)
    (call $print (i32.const 1027) (i32.const 1))
    (call $print_num (call $path_filestat_get (i32.const 3) (i32.const 1) (local.get $ptr) (local.get $len) (i32.const 128))))

  ;; Sleeps for the nanoseconds given (poll_oneoff on a relative monotonic clock).
  (func $sleep (param $ns i64)
    (i64.store (i32.const 256) (i64.const 0))
    (i32.store8 (i32.const 264) (i32.const 0))
    (i32.store (i32.const 272) (i32.const 1))
    (i64.store (i32.const 280) (local.get $ns))
    (i64.store (i32.const 288) (i64.const 0))
    (i32.store16 (i32.const 296) (i32.const 0))
    (drop (call $poll_oneoff (i32.const 256) (i32.const 512) (i32.const 1) (i32.const 48))))

  ;; Prints the pending host response.
  (func $print_response (local $len i32)
    (local.set $len (call $response_len))
    (drop (call $response_read (i32.const 65536) (local.get $len)))
    (call $print (i32.const 65536) (local.get $len)))
"#;

/// Fixed strings the helpers print: `E` (error), `W` (write), `,` (after a name), `S` (stat).
const FIXED: &[u8] = b"EW,S";

/// A fixture module under construction.
pub struct Fixture {
    data: Vec<u8>,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture {
            data: FIXED.to_vec(),
        }
    }

    /// Places `text` in memory: `(i32.const ptr) (i32.const len)` for a call.
    pub fn text(&mut self, text: &str) -> String {
        let (ptr, len) = self.place(text);
        format!("(i32.const {ptr}) (i32.const {len})")
    }

    /// Places `text` in memory: its address and length.
    pub fn place(&mut self, text: &str) -> (usize, usize) {
        let ptr = 1024 + self.data.len();
        self.data.extend_from_slice(text.as_bytes());
        assert!(
            ptr + text.len() < 65536,
            "fixture strings overflow their area"
        );
        (ptr, text.len())
    }

    /// The module, with `body` as `_start`.
    pub fn wat(&self, body: &str) -> String {
        let escaped: String = self.data.iter().map(|b| format!("\\{b:02x}")).collect();
        format!(
            "(module {PRELUDE}\n  (data (i32.const 1024) \"{escaped}\")\n  (func (export \"_start\")\n{body}))"
        )
    }
}

/// A module whose `_start` prints `{"log":"` + what `body` prints + `"}`: a JSON result the
/// tests read the steps' output from.
pub fn logging(build: impl FnOnce(&mut Fixture) -> String) -> String {
    let mut f = Fixture::new();
    let open = f.text("{\"log\":\"");
    let close = f.text("\"}");
    let body = build(&mut f);
    let (locals, body) = split_locals(&body);
    f.wat(&format!(
        "{locals}\n(call $print {open})\n{body}\n(call $print {close})"
    ))
}

/// The `(local ...)` declarations a body starts with (they must come first in a function),
/// and the rest.
fn split_locals(body: &str) -> (&str, &str) {
    let mut end = 0;
    loop {
        let rest = body[end..].trim_start();
        if !rest.starts_with("(local ") {
            break;
        }
        let start = body.len() - rest.len();
        let close = rest.find(')').expect("a local declaration ends");
        end = start + close + 1;
    }
    (&body[..end], &body[end..])
}
