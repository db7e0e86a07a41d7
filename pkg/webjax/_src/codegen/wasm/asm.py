"""A small WebAssembly binary assembler: LEB128, sections, types, functions, instructions.

Only what the wasm codegen needs: one imported memory ("env", "memory"), functions with typed
locals, exports, and instructions named by their text-format mnemonics. It is written for speed
under Pyodide: instructions append precomputed bytes to one bytearray, immediates are encoded
with small table-driven helpers, and no intermediate instruction objects are built.
"""

from __future__ import annotations

import struct

# value types
I32, I64, F32, F64, V128 = 0x7F, 0x7E, 0x7D, 0x7C, 0x7B
VOID = 0x40  # empty block type
MAX_PAGES = 65536  # 64 KiB pages of a wasm32 memory: 4 GiB

_F32 = struct.Struct("<f")
_F64 = struct.Struct("<d")


def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if (n == 0 and not b & 0x40) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


_ULEB_SMALL = [uleb(i) for i in range(256)]


def _u(n: int) -> bytes:
    return _ULEB_SMALL[n] if 0 <= n < 256 else uleb(n)


# ---- opcode tables ------------------------------------------------------------------------------
# Plain single-byte instructions (no immediates).
_PLAIN_NAMES = """
unreachable=00 nop=01 else=05 end=0B return=0F drop=1A select=1B
i32.eqz=45 i32.eq=46 i32.ne=47 i32.lt_s=48 i32.lt_u=49 i32.gt_s=4A i32.gt_u=4B i32.le_s=4C
i32.le_u=4D i32.ge_s=4E i32.ge_u=4F
i64.eqz=50 i64.eq=51 i64.ne=52 i64.lt_s=53 i64.lt_u=54 i64.gt_s=55 i64.gt_u=56 i64.le_s=57
i64.le_u=58 i64.ge_s=59 i64.ge_u=5A
f32.eq=5B f32.ne=5C f32.lt=5D f32.gt=5E f32.le=5F f32.ge=60
f64.eq=61 f64.ne=62 f64.lt=63 f64.gt=64 f64.le=65 f64.ge=66
i32.clz=67 i32.ctz=68 i32.popcnt=69 i32.add=6A i32.sub=6B i32.mul=6C i32.div_s=6D i32.div_u=6E
i32.rem_s=6F i32.rem_u=70 i32.and=71 i32.or=72 i32.xor=73 i32.shl=74 i32.shr_s=75 i32.shr_u=76
i32.rotl=77 i32.rotr=78
i64.clz=79 i64.ctz=7A i64.popcnt=7B i64.add=7C i64.sub=7D i64.mul=7E i64.div_s=7F i64.div_u=80
i64.rem_s=81 i64.rem_u=82 i64.and=83 i64.or=84 i64.xor=85 i64.shl=86 i64.shr_s=87 i64.shr_u=88
i64.rotl=89 i64.rotr=8A
f32.abs=8B f32.neg=8C f32.ceil=8D f32.floor=8E f32.trunc=8F f32.nearest=90 f32.sqrt=91
f32.add=92 f32.sub=93 f32.mul=94 f32.div=95 f32.min=96 f32.max=97 f32.copysign=98
f64.abs=99 f64.neg=9A f64.ceil=9B f64.floor=9C f64.trunc=9D f64.nearest=9E f64.sqrt=9F
f64.add=A0 f64.sub=A1 f64.mul=A2 f64.div=A3 f64.min=A4 f64.max=A5 f64.copysign=A6
i32.wrap_i64=A7 i32.trunc_f32_s=A8 i32.trunc_f32_u=A9 i32.trunc_f64_s=AA i32.trunc_f64_u=AB
i64.extend_i32_s=AC i64.extend_i32_u=AD i64.trunc_f32_s=AE i64.trunc_f32_u=AF
i64.trunc_f64_s=B0 i64.trunc_f64_u=B1 f32.convert_i32_s=B2 f32.convert_i32_u=B3
f32.convert_i64_s=B4 f32.convert_i64_u=B5 f32.demote_f64=B6 f64.convert_i32_s=B7
f64.convert_i32_u=B8 f64.convert_i64_s=B9 f64.convert_i64_u=BA f64.promote_f32=BB
i32.reinterpret_f32=BC i64.reinterpret_f64=BD f32.reinterpret_i32=BE f64.reinterpret_i64=BF
i32.extend8_s=C0 i32.extend16_s=C1 i64.extend8_s=C2 i64.extend16_s=C3 i64.extend32_s=C4
"""
PLAIN: dict[str, bytes] = {}
for _item in _PLAIN_NAMES.split():
    _mn, _code = _item.split("=")
    PLAIN[_mn] = bytes([int(_code, 16)])
# 0xFC-prefixed saturating truncations.
for _i, _mn in enumerate(
    [
        "i32.trunc_sat_f32_s",
        "i32.trunc_sat_f32_u",
        "i32.trunc_sat_f64_s",
        "i32.trunc_sat_f64_u",
        "i64.trunc_sat_f32_s",
        "i64.trunc_sat_f32_u",
        "i64.trunc_sat_f64_s",
        "i64.trunc_sat_f64_u",
    ]
):
    PLAIN[_mn] = bytes([0xFC, _i])

# Loads/stores: opcode and natural alignment (log2 bytes).
MEM: dict[str, tuple[int, int]] = {
    "i32.load": (0x28, 2), "i64.load": (0x29, 3), "f32.load": (0x2A, 2), "f64.load": (0x2B, 3),
    "i32.load8_s": (0x2C, 0), "i32.load8_u": (0x2D, 0), "i32.load16_s": (0x2E, 1),
    "i32.load16_u": (0x2F, 1), "i64.load8_s": (0x30, 0), "i64.load8_u": (0x31, 0),
    "i64.load16_s": (0x32, 1), "i64.load16_u": (0x33, 1), "i64.load32_s": (0x34, 2),
    "i64.load32_u": (0x35, 2), "i32.store": (0x36, 2), "i64.store": (0x37, 3),
    "f32.store": (0x38, 2), "f64.store": (0x39, 3), "i32.store8": (0x3A, 0),
    "i32.store16": (0x3B, 1), "i64.store8": (0x3C, 0), "i64.store16": (0x3D, 1),
    "i64.store32": (0x3E, 2),
}  # fmt: skip

# SIMD128 (0xFD prefix, LEB128 sub-opcode). Memory ops take a memarg, lane ops a lane byte.
SIMD_MEM = {"v128.load": (0, 4), "v128.load32_splat": (9, 2), "v128.store": (11, 4)}
SIMD_LANE = {
    "i8x16.extract_lane_s": 21, "i8x16.extract_lane_u": 22, "i8x16.replace_lane": 23,
    "i16x8.extract_lane_s": 24, "i16x8.extract_lane_u": 25, "i16x8.replace_lane": 26,
    "i32x4.extract_lane": 27, "i32x4.replace_lane": 28, "i64x2.extract_lane": 29,
    "i64x2.replace_lane": 30, "f32x4.extract_lane": 31, "f32x4.replace_lane": 32,
    "f64x2.extract_lane": 33, "f64x2.replace_lane": 34,
}  # fmt: skip
_SIMD_NAMES = """
i8x16.splat=15 i16x8.splat=16 i32x4.splat=17 i64x2.splat=18 f32x4.splat=19 f64x2.splat=20
i32x4.eq=55 i32x4.ne=56 i32x4.lt_s=57 i32x4.lt_u=58 i32x4.gt_s=59 i32x4.gt_u=60 i32x4.le_s=61
i32x4.le_u=62 i32x4.ge_s=63 i32x4.ge_u=64
f32x4.eq=65 f32x4.ne=66 f32x4.lt=67 f32x4.gt=68 f32x4.le=69 f32x4.ge=70
f64x2.eq=71 f64x2.ne=72 f64x2.lt=73 f64x2.gt=74 f64x2.le=75 f64x2.ge=76
v128.not=77 v128.and=78 v128.andnot=79 v128.or=80 v128.xor=81 v128.bitselect=82
v128.any_true=83
f32x4.demote_f64x2_zero=94 f64x2.promote_low_f32x4=95
f32x4.ceil=103 f32x4.floor=104 f32x4.trunc=105 f32x4.nearest=106
f64x2.ceil=116 f64x2.floor=117 f64x2.trunc=122 f64x2.nearest=148
i32x4.abs=160 i32x4.neg=161 i32x4.all_true=163 i32x4.bitmask=164
i32x4.shl=171 i32x4.shr_s=172 i32x4.shr_u=173 i32x4.add=174 i32x4.sub=177 i32x4.mul=181
i32x4.min_s=182 i32x4.min_u=183 i32x4.max_s=184 i32x4.max_u=185
i64x2.shr_u=205 i64x2.add=206 i64x2.sub=209 i64x2.mul=213
i64x2.extmul_low_i32x4_u=222 i64x2.extmul_high_i32x4_u=223
f32x4.abs=224 f32x4.neg=225 f32x4.sqrt=227 f32x4.add=228 f32x4.sub=229 f32x4.mul=230
f32x4.div=231 f32x4.min=232 f32x4.max=233 f32x4.pmin=234 f32x4.pmax=235
f64x2.abs=236 f64x2.neg=237 f64x2.sqrt=239 f64x2.add=240 f64x2.sub=241 f64x2.mul=242
f64x2.div=243 f64x2.min=244 f64x2.max=245 f64x2.pmin=246 f64x2.pmax=247
i32x4.trunc_sat_f32x4_s=248 i32x4.trunc_sat_f32x4_u=249 f32x4.convert_i32x4_s=250
f32x4.convert_i32x4_u=251
f32x4.relaxed_madd=261 f32x4.relaxed_nmadd=262
"""
for _item in _SIMD_NAMES.split():
    _mn, _code = _item.split("=")
    PLAIN[_mn] = b"\xfd" + uleb(int(_code))

_BLOCKS = {"block": 0x02, "loop": 0x03, "if": 0x04}


class Func:
    """One function body under construction. Parameters are locals 0..len(params)-1."""

    __slots__ = ("params", "results", "local_types", "code")

    def __init__(self, params: list[int], results: list[int]) -> None:
        self.params = list(params)
        self.results = list(results)
        self.local_types: list[int] = []
        self.code = bytearray()

    def local(self, vt: int) -> int:
        self.local_types.append(vt)
        return len(self.params) + len(self.local_types) - 1

    # -- instructions ------------------------------------------------------------------------
    def op(self, *names: str) -> None:
        """Append plain instructions by mnemonic."""
        code = self.code
        for n in names:
            code += PLAIN[n]

    def get(self, i: int) -> None:
        self.code += b"\x20" + _u(i)

    def set(self, i: int) -> None:
        self.code += b"\x21" + _u(i)

    def tee(self, i: int) -> None:
        self.code += b"\x22" + _u(i)

    def i32(self, v: int) -> None:
        v &= 0xFFFFFFFF
        self.code += b"\x41" + sleb(v - (1 << 32) if v >= 1 << 31 else v)

    def i64(self, v: int) -> None:
        v &= 0xFFFFFFFFFFFFFFFF
        self.code += b"\x42" + sleb(v - (1 << 64) if v >= 1 << 63 else v)

    def f32(self, v: float) -> None:
        self.code += b"\x43" + _F32.pack(v)

    def f32_bits(self, bits: int) -> None:
        self.code += b"\x43" + struct.pack("<I", bits & 0xFFFFFFFF)

    def f64(self, v: float) -> None:
        self.code += b"\x44" + _F64.pack(v)

    def f64_bits(self, bits: int) -> None:
        self.code += b"\x44" + struct.pack("<Q", bits & 0xFFFFFFFFFFFFFFFF)

    def v128_const(self, raw: bytes) -> None:
        assert len(raw) == 16
        self.code += b"\xfd\x0c" + raw

    def mem(self, name: str, offset: int = 0, align: int | None = None) -> None:
        opc, natural = MEM[name]
        self.code += bytes([opc]) + _u(natural if align is None else align) + _u(offset)

    def simd_mem(self, name: str, offset: int = 0, align: int | None = None) -> None:
        sub, natural = SIMD_MEM[name]
        a = natural if align is None else align
        self.code += b"\xfd" + _u(sub) + _u(a) + _u(offset)

    def shuffle(self, lanes: bytes) -> None:
        """i8x16.shuffle: byte i of the result is byte lanes[i] of (a ++ b)."""
        assert len(lanes) == 16
        self.code += b"\xfd\x0d" + lanes

    def lane(self, name: str, lane: int) -> None:
        self.code += b"\xfd" + _u(SIMD_LANE[name]) + bytes([lane])

    def block(self, kind: str = "block", result: int = VOID) -> None:
        self.code += bytes([_BLOCKS[kind], result])

    def end(self) -> None:
        self.code += b"\x0b"

    def br(self, depth: int) -> None:
        self.code += b"\x0c" + _u(depth)

    def br_if(self, depth: int) -> None:
        self.code += b"\x0d" + _u(depth)

    def br_table(self, labels: list[int], default: int) -> None:
        self.code += b"\x0e" + _u(len(labels)) + b"".join(_u(i) for i in labels) + _u(default)

    def call(self, index: int) -> None:
        self.code += b"\x10" + _u(index)

    def body(self) -> bytes:
        """The code-section entry: locals (run-length grouped), code, end, size-prefixed."""
        groups: list[list[int]] = []
        for vt in self.local_types:
            if groups and groups[-1][1] == vt:
                groups[-1][0] += 1
            else:
                groups.append([1, vt])
        out = bytearray(_u(len(groups)))
        for count, vt in groups:
            out += _u(count) + bytes([vt])
        out += self.code
        out += b"\x0b"
        return _u(len(out)) + bytes(out)


def _vec(items: list[bytes]) -> bytes:
    return _u(len(items)) + b"".join(items)


def _section(sid: int, payload: bytes) -> bytes:
    return bytes([sid]) + _u(len(payload)) + payload


def _name(s: str) -> bytes:
    b = s.encode()
    return _u(len(b)) + b


def func_type(params: list[int], results: list[int]) -> bytes:
    return b"\x60" + _u(len(params)) + bytes(params) + _u(len(results)) + bytes(results)


def module(
    funcs: list[Func], exports: dict[str, int], memory_min: int = 0, shared_max: int | None = None
) -> bytes:
    """A module importing ("env", "memory") and defining `funcs` (indices 0..n-1).

    `shared_max` (pages) imports a shared memory, as threads need; otherwise unshared, no max.
    """
    types: list[bytes] = []
    type_index: dict[bytes, int] = {}
    func_types: list[bytes] = []
    for f in funcs:
        t = func_type(f.params, f.results)
        if t not in type_index:
            type_index[t] = len(types)
            types.append(t)
        func_types.append(_u(type_index[t]))
    if shared_max is None:
        limits = b"\x00" + _u(memory_min)
    else:
        limits = b"\x03" + _u(memory_min) + _u(shared_max)
    imports = [_name("env") + _name("memory") + b"\x02" + limits]
    export_items = [_name(n) + b"\x00" + _u(i) for n, i in exports.items()]
    return b"".join(
        [
            b"\x00asm\x01\x00\x00\x00",
            _section(1, _vec(types)),
            _section(2, _vec(imports)),
            _section(3, _vec(func_types)),
            _section(7, _vec(export_items)),
            _section(10, _vec([f.body() for f in funcs])),
        ]
    )
