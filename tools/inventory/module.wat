;; inventory: reads and writes the workspace (capability filesystem: write). It lists the
;; workspace's top directory through /workspace (fd 3), writes the names, one per line, to
;; INVENTORY.txt (created or replaced atomically when the file is closed), and returns
;; {"written": "INVENTORY.txt", "entries": N}. Every access goes through wsfs's resolver and
;; policy: a deny_write rule on INVENTORY.txt, or a read-only workspace, makes it fail with the
;; workspace's code.
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_readdir" (func $fd_readdir (param i32 i32 i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  ;; 0..64 scratch; 64..80 digits; 1024.. fixed text; 65536..131072 the listing;
  ;; 131072.. the file's content.
  (memory (export "memory") 4)
  (data (i32.const 1024) "INVENTORY.txt")
  (data (i32.const 1040) "{\"written\":\"INVENTORY.txt\",\"entries\":}")
  (data (i32.const 1100) "{\"error\":{\"code\":\"io_error\",\"message\":\"the workspace refused the listing or the write\"}}")

  (func $write_fd (param $fd i32) (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)))

  (func $fail
    (drop (call $write_fd (i32.const 1) (i32.const 1100) (i32.const 88)))
    (call $proc_exit (i32.const 1)))

  ;; Prints a non-negative number in decimal.
  (func $print_num (param $n i32) (local $p i32)
    (local.set $p (i32.const 80))
    (loop $digits
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digits (local.get $n)))
    (drop (call $write_fd (i32.const 1) (local.get $p) (i32.sub (i32.const 80) (local.get $p)))))

  (func (export "_start")
    (local $dir i32) (local $used i32) (local $at i32) (local $name_len i32)
    (local $out i32) (local $count i32) (local $file i32)
    ;; "." opened as a directory (oflags 2), rights fd_readdir.
    (i32.store8 (i32.const 48) (i32.const 46))
    (if (call $path_open (i32.const 3) (i32.const 1) (i32.const 48) (i32.const 1)
          (i32.const 2) (i64.const 16384) (i64.const 16384) (i32.const 0) (i32.const 32))
      (then (call $fail)))
    (local.set $dir (i32.load (i32.const 32)))
    (if (call $fd_readdir (local.get $dir) (i32.const 65536) (i32.const 65536) (i64.const 0) (i32.const 40))
      (then (call $fail)))
    (local.set $used (i32.load (i32.const 40)))
    (drop (call $fd_close (local.get $dir)))
    (local.set $out (i32.const 131072))
    ;; dirent: d_next u64, d_ino u64, d_namlen u32, d_type u8 (+3), then the name.
    (block $done
      (loop $entries
        (br_if $done (i32.gt_u (i32.add (local.get $at) (i32.const 24)) (local.get $used)))
        (local.set $name_len (i32.load (i32.add (i32.const 65552) (local.get $at))))
        (br_if $done (i32.gt_u (i32.add (i32.add (local.get $at) (i32.const 24)) (local.get $name_len)) (local.get $used)))
        (memory.copy (local.get $out) (i32.add (i32.const 65560) (local.get $at)) (local.get $name_len))
        (local.set $out (i32.add (local.get $out) (local.get $name_len)))
        (i32.store8 (local.get $out) (i32.const 10))
        (local.set $out (i32.add (local.get $out) (i32.const 1)))
        (local.set $count (i32.add (local.get $count) (i32.const 1)))
        (local.set $at (i32.add (local.get $at) (i32.add (i32.const 24) (local.get $name_len))))
        (br $entries)))
    ;; INVENTORY.txt created or truncated (oflags CREAT|TRUNC = 9), rights fd_write (64).
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 1024) (i32.const 13)
          (i32.const 9) (i64.const 64) (i64.const 64) (i32.const 0) (i32.const 32))
      (then (call $fail)))
    (local.set $file (i32.load (i32.const 32)))
    (if (call $write_fd (local.get $file) (i32.const 131072) (i32.sub (local.get $out) (i32.const 131072)))
      (then (call $fail)))
    ;; Closing commits the file: a refusal then is the call's error.
    (if (call $fd_close (local.get $file)) (then (call $fail)))
    (drop (call $write_fd (i32.const 1) (i32.const 1040) (i32.const 37)))
    (call $print_num (local.get $count))
    (drop (call $write_fd (i32.const 1) (i32.const 1077) (i32.const 1)))))
