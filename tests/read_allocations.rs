//! A plain read through the C ABI holds the file's content in memory once: the content is read
//! into the buffer that becomes the C string (`data_raw`/`text_raw`), which is neither copied,
//! grown nor shrunk on its way out, and freeing it needs no scan. Counted with a global
//! allocator that adds up, per thread, every byte asked for (`realloc` counts its new size:
//! shrinking a large buffer may copy it). The integration tests are one binary, so every
//! test runs under this allocator: it only forwards to `System` and adds to a thread-local.

use crate::common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static REQUESTED: Cell<usize> = const { Cell::new(0) };
}

fn count(bytes: usize) {
    // `try_with`: the thread-local may be gone while a thread shuts down.
    let _ = REQUESTED.try_with(|r| r.set(r.get() + bytes));
}

// SAFETY: every method forwards to `System` unchanged; counting has no effect on memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Bytes asked for by one `read_file` call through `wsfs_call_sized` in `output`, the result
/// freed with `wsfs_string_free`, and the result's length.
fn requested_by_read(ws: u64, path: &str, output: &str) -> (usize, usize) {
    let (tool, args, opts) = (
        cs("read_file"),
        cs(&format!(r#"{{"path":"{path}"}}"#)),
        cs(&format!(r#"{{"output":"{output}"}}"#)),
    );
    let mut len = 0usize;
    let before = REQUESTED.with(Cell::get);
    // SAFETY: valid C strings; a NULL content means no buffer; `len` is writable.
    let s = unsafe {
        ffi::wsfs_call_sized(
            ws,
            tool.as_ptr(),
            args.as_ptr(),
            opts.as_ptr(),
            std::ptr::null(),
            0,
            &mut len,
        )
    };
    assert!(!s.is_null());
    // SAFETY: returned by wsfs just now, NUL-terminated, freed once below.
    let head = unsafe { std::ffi::CStr::from_ptr(s) }.to_bytes()[..12].to_vec();
    assert_eq!(
        &head,
        br#"{"ok":true,""#,
        "{path}: {}",
        String::from_utf8_lossy(&head)
    );
    // SAFETY: as above.
    unsafe { ffi::wsfs_string_free(s) };
    (REQUESTED.with(Cell::get) - before, len)
}

#[test]
fn a_plain_read_holds_its_content_once() {
    let fx = Fixture::new();
    let line = "the quick brown fox jumps over the lazy dog 0123456789\n";
    let text = |n: usize| line.repeat(n / line.len() + 1)[..n].to_string();
    fx.write("f4k.txt", text(4 << 10));
    fx.write("f200k.txt", text(200 << 10));
    fx.write("capped.txt", text(1 << 20)); // read up to max_read_bytes (256 KiB)
    for (path, content) in [
        ("f4k.txt", 4 << 10),
        ("f200k.txt", 200 << 10),
        ("capped.txt", 256 << 10),
    ] {
        for output in ["data_raw", "text_raw"] {
            requested_by_read(fx.ws, path, output); // warm-up: lazily made state
            let (requested, len) = requested_by_read(fx.ws, path, output);
            assert!(len > content, "{path} {output}: result of {len} bytes");
            // The content once, plus small allocations (path, JSON head, hash): far less
            // than a second copy.
            assert!(
                requested < content + 8 * 1024,
                "{path} {output}: {requested} bytes allocated for {content} bytes of content"
            );
        }
    }
}
