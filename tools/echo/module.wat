;; echo: the smallest Wasm tool. No capability: it reads its arguments (one JSON object) on
;; stdin and writes {"received": <the arguments>} on stdout, then returns (exit status 0).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  ;; 0..16: an iovec and a count; 1024: fixed text; 65536..: stdin.
  (data (i32.const 1024) "{\"received\":}")

  (func $print (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))

  ;; Reads stdin to its end (at most 64 KiB) into 65536..: the byte count.
  (func $read_stdin (result i32) (local $total i32)
    (block $done
      (loop $more
        (i32.store (i32.const 0) (i32.add (i32.const 65536) (local.get $total)))
        (i32.store (i32.const 4) (i32.sub (i32.const 65536) (local.get $total)))
        (br_if $done (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 8)))
        (br_if $done (i32.eqz (i32.load (i32.const 8))))
        (local.set $total (i32.add (local.get $total) (i32.load (i32.const 8))))
        (br $more)))
    (local.get $total))

  (func (export "_start") (local $len i32)
    (local.set $len (call $read_stdin))
    (call $print (i32.const 1024) (i32.const 12))
    (call $print (i32.const 65536) (local.get $len))
    (call $print (i32.const 1036) (i32.const 1))))
