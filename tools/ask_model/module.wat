;; ask_model: reaches a model only through the host's model gateway (capability
;; model_access). Its arguments ({"prompt": "..."}, validated by the host against the manifest's
;; schema) are the gateway request as they are; the gateway's JSON answer is the result. When
;; the host refuses or the gateway fails, the host's {"error": {"code", "message"}} is written
;; on stdout and the tool exits with status 1, so the caller gets that code
;; (capability_denied, gateway_error, timeout, ...).
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wsfs" "model_generate" (func $model_generate (param i32 i32) (result i32)))
  (import "wsfs" "response_len" (func $response_len (result i32)))
  (import "wsfs" "response_read" (func $response_read (param i32 i32) (result i32)))
  ;; 0..16: an iovec and a count; 65536..131072: stdin; 131072..: the response (up to 1 MiB).
  (memory (export "memory") 19)

  (func $print (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))

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

  (func (export "_start") (local $status i32) (local $len i32)
    (local.set $status (call $model_generate (i32.const 65536) (call $read_stdin)))
    (local.set $len (call $response_len))
    (if (i32.gt_u (local.get $len) (i32.const 1048576))
      (then (local.set $len (i32.const 1048576))))
    (local.set $len (call $response_read (i32.const 131072) (local.get $len)))
    (call $print (i32.const 131072) (local.get $len))
    (if (local.get $status) (then (call $proc_exit (i32.const 1))))))
