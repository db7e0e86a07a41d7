;; Bulk memory helpers for the wasm backend: fill and copy inside the linear memory that every
;; generated kernel module shares, imported as ("env" "memory").
;; Assembled by build.py into pkg/webjax/_src/wasm_kernels/memory.wasm.
;;
;; Needs bulk memory (memory.fill/memory.copy) and SIMD128, both in every current engine.
;; The import is unshared: linking a shared memory needs `(memory 0 N shared)` instead.
(module
  (import "env" "memory" (memory 0))

  ;; fill32(dst, value, count): store the 32-bit `value` `count` times from byte offset `dst`
  ;; (any alignment). A value whose four bytes are equal (0, -1, ...) is a plain byte fill;
  ;; otherwise 16-byte SIMD stores, then the tail word by word.
  (func $fill32 (export "fill32") (param $dst i32) (param $value i32) (param $count i32)
    (local $end i32)
    (local $vec v128)
    (local.set $end (i32.add (local.get $dst) (i32.shl (local.get $count) (i32.const 2))))
    (if (i32.eq (local.get $value)
                (i32.mul (i32.and (local.get $value) (i32.const 0xff)) (i32.const 0x01010101)))
      (then
        (memory.fill (local.get $dst) (local.get $value) (i32.shl (local.get $count) (i32.const 2)))
        (return)))
    (local.set $vec (i32x4.splat (local.get $value)))
    ;; while end - dst >= 16 (subtraction, so dst + 16 cannot wrap)
    (block $simd_done
      (loop $simd
        (br_if $simd_done
          (i32.lt_u (i32.sub (local.get $end) (local.get $dst)) (i32.const 16)))
        (v128.store align=4 (local.get $dst) (local.get $vec))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (br $simd)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $dst) (local.get $end)))
        (i32.store (local.get $dst) (local.get $value))
        (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
        (br $tail))))

  ;; fill8(dst, byte, nbytes): memset.
  (func $fill8 (export "fill8") (param $dst i32) (param $byte i32) (param $nbytes i32)
    (memory.fill (local.get $dst) (local.get $byte) (local.get $nbytes)))

  ;; copy(dst, src, nbytes): memmove (overlapping ranges are fine).
  (func $copy (export "copy") (param $dst i32) (param $src i32) (param $nbytes i32)
    (memory.copy (local.get $dst) (local.get $src) (local.get $nbytes)))
)
