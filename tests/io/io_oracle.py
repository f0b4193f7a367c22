#!/usr/bin/env python3
"""Independent oracle for luminal's weight-file readers (tests/io/*_test.cpp).

Writes files with, and reads files through, the reference Python packages
(`gguf` from llama.cpp, `safetensors`) so the C++ readers are checked against
code that shares nothing with them. Float values travel as float32 bit
patterns (uint32) so comparisons are exact.

  io_oracle.py gguf-fixture OUT.gguf OUT.json
      A GGUF written by gguf.GGUFWriter: metadata of every value type, random
      blocks of every dequantizable ggml type plus, for each, an F32 tensor
      "deq.<name>" holding gguf.quants.dequantize of it. OUT.json: the
      directory as gguf.GGUFReader sees it.
  io_oracle.py gguf-read IN.gguf OUT.json [TENSOR...]
      Metadata and directory of IN as gguf.GGUFReader sees it, and for each
      TENSOR the dequantized values of its first two rows and its last row.
  io_oracle.py safetensors-fixture OUT.safetensors OUT.json
      A file written by safetensors.numpy.save_file (every numpy dtype the
      format has, plus metadata); OUT.json: the values.
  io_oracle.py safetensors-read IN.safetensors OUT.json [TENSOR...]
      Metadata, dtypes, shapes and values (all, or the first 64 of each
      TENSOR given) as the safetensors package reads them.
"""

import json
import sys
import warnings

import numpy as np

# Random blocks hold NaN / inf scales now and then; numpy's warnings about them are noise.
warnings.filterwarnings("ignore", category=RuntimeWarning)

SEED = 1234


def f32_bits(values):
    return np.ascontiguousarray(values, dtype=np.float32).view(np.uint32).ravel().tolist()


def plain(value):
    """A JSON-friendly form of a gguf-py field value."""
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8")
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def field_json(field):
    import gguf

    types = [t.name for t in field.types]
    try:
        contents = field.contents()
    except Exception:  # nested arrays: older gguf-py cannot decode them
        contents = None
    if isinstance(contents, list) and len(contents) > 64:
        return {"types": types, "len": len(contents), "head": plain(contents[:8]),
                "tail": plain(contents[-2:])}
    if field.types and field.types[0] == gguf.GGUFValueType.FLOAT32:
        return {"types": types, "f32_bits": f32_bits([contents])[0]}
    return {"types": types, "value": plain(contents)}


def gguf_read(path, out, tensor_names):
    import gguf

    reader = gguf.GGUFReader(path)
    meta = {k: field_json(f) for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    tensors = []
    for t in reader.tensors:
        tensors.append({"name": t.name, "ne": [int(x) for x in t.shape],
                        "type": t.tensor_type.name, "offset": int(t.data_offset),
                        "nbytes": int(t.n_bytes)})
    samples = {}
    by_name = {t.name: t for t in reader.tensors}
    for name in tensor_names:
        t = by_name[name]
        rows = np.asarray(t.data)
        rows = rows.reshape(-1, rows.shape[-1])  # one row per innermost run
        picked = np.concatenate([rows[:2], rows[-1:]])
        samples[name] = f32_bits(gguf.quants.dequantize(picked, t.tensor_type))
    json.dump({"version": int(reader.fields["GGUF.version"].parts[-1][0]),
               "alignment": int(reader.alignment), "data_offset": int(reader.data_offset),
               "metadata": meta, "tensors": tensors, "samples": samples}, open(out, "w"))


# Each dequantizable type with rows x blocks of random bytes.
QUANT_TYPES = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
               "IQ4_NL"]


def gguf_fixture(out_gguf, out_json):
    import gguf

    rng = np.random.default_rng(SEED)
    w = gguf.GGUFWriter(out_gguf, "fixture")
    w.add_custom_alignment(64)
    w.add_uint8("t.u8", 200)
    w.add_int8("t.i8", -100)
    w.add_uint16("t.u16", 60000)
    w.add_int16("t.i16", -30000)
    w.add_uint32("t.u32", 4000000000)
    w.add_int32("t.i32", -2000000000)
    w.add_float32("t.f32", 0.1)
    w.add_uint64("t.u64", 2**63 + 5)
    w.add_int64("t.i64", -(2**62) - 3)
    w.add_float64("t.f64", -2.5e-300)
    w.add_bool("t.bool", True)
    w.add_bool("t.false", False)
    w.add_string("t.string", "h\u00e9llo \u2713 \U0001F600")
    # (gguf-py silently drops empty strings, so there is none here)
    w.add_key_value("t.arr_u8", [0, 7, 255], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT8)
    w.add_key_value("t.arr_i16", [-32768, 0, 32767], gguf.GGUFValueType.ARRAY,
                    gguf.GGUFValueType.INT16)
    w.add_key_value("t.arr_u64", [0, 2**64 - 1], gguf.GGUFValueType.ARRAY,
                    gguf.GGUFValueType.UINT64)
    w.add_key_value("t.arr_f32", [1.5, -0.25, 3.0e38], gguf.GGUFValueType.ARRAY,
                    gguf.GGUFValueType.FLOAT32)
    w.add_key_value("t.arr_f64", [0.1, -1e300], gguf.GGUFValueType.ARRAY,
                    gguf.GGUFValueType.FLOAT64)
    w.add_key_value("t.arr_bool", [True, False, True], gguf.GGUFValueType.ARRAY,
                    gguf.GGUFValueType.BOOL)
    w.add_array("t.arr_str", ["a", "", "\u00fcber", "x y"])
    w.add_array("t.nested", [[1, 2], [3]])

    for name in QUANT_TYPES:
        qtype = gguf.GGMLQuantizationType[name]
        block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
        rows, blocks = 3, 2
        raw = rng.integers(0, 256, size=(rows, blocks * block_bytes), dtype=np.uint8)
        w.add_tensor("q." + name, raw, raw_dtype=qtype)
        w.add_tensor("deq.q." + name, gguf.quants.dequantize(raw, qtype).astype(np.float32))

    f16 = rng.standard_normal((2, 3, 4)).astype(np.float16)
    w.add_tensor("p.F16", f16)
    w.add_tensor("deq.p.F16", f16.astype(np.float32))
    bf16_bits = rng.integers(0, 65536, size=(5, 2), dtype=np.uint16)
    w.add_tensor("p.BF16", bf16_bits.view(np.uint8), raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.add_tensor("deq.p.BF16", (bf16_bits.astype(np.uint32) << 16).view(np.float32))
    f32 = rng.standard_normal((1, 2, 3, 4)).astype(np.float32)
    w.add_tensor("p.F32", f32)
    f64 = rng.standard_normal(7)
    w.add_tensor("p.F64", f64)
    w.add_tensor("deq.p.F64", f64.astype(np.float32))
    w.add_tensor("p.I8", rng.integers(-128, 128, size=(4,), dtype=np.int8))
    w.add_tensor("p.I16", rng.integers(-32768, 32768, size=(2, 2), dtype=np.int16))
    w.add_tensor("p.I32", rng.integers(-2**31, 2**31, size=(3,), dtype=np.int32))
    w.add_tensor("p.I64", rng.integers(-2**63, 2**63 - 1, size=(2,), dtype=np.int64))

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    gguf_read(out_gguf, out_json, [])


def safetensors_fixture(out_file, out_json):
    from safetensors.numpy import save_file

    rng = np.random.default_rng(SEED)
    tensors = {
        "w.f32": rng.standard_normal((3, 4)).astype(np.float32),
        "w.f16": rng.standard_normal((2, 5)).astype(np.float16),
        "w.f64": rng.standard_normal((4,)),
        "w.i64": rng.integers(-2**63, 2**63 - 1, size=(2, 2), dtype=np.int64),
        "w.i32": rng.integers(-2**31, 2**31, size=(3,), dtype=np.int32),
        "w.i8": rng.integers(-128, 128, size=(2, 3), dtype=np.int8),
        "w.u8": rng.integers(0, 256, size=(5,), dtype=np.uint8),
        "w.bool": rng.integers(0, 2, size=(2, 2)).astype(np.bool_),
        "w.scalar": np.array(2.5, dtype=np.float32),
        "w.empty": np.zeros((0, 3), dtype=np.float32),
        "w.u16": rng.integers(0, 65536, size=(3,), dtype=np.uint16),
    }
    save_file(tensors, out_file, metadata={"format": "np", "note": "fixture \u2713"})
    safetensors_read(out_file, out_json, [])


def safetensors_read(path, out, names):
    from safetensors import safe_open

    result = {"tensors": {}}
    with safe_open(path, framework="numpy") as f:
        result["metadata"] = f.metadata() or {}
        for name in f.keys():
            sl = f.get_slice(name)
            entry = {"dtype": sl.get_dtype(), "shape": list(sl.get_shape())}
            if not names or name in names:
                if sl.get_dtype() == "BF16":  # numpy has no bfloat16
                    entry["values"] = None
                else:
                    values = f.get_tensor(name).ravel()
                    if names:
                        values = values[:64]
                    if values.dtype.kind == "f":
                        entry["f32_bits"] = f32_bits(values.astype(np.float32))
                        entry["values"] = values.astype(np.float64).tolist()
                    else:
                        entry["values"] = [int(v) for v in values]
            result["tensors"][name] = entry
    json.dump(result, open(out, "w"))


def main(argv):
    commands = {
        "gguf-fixture": lambda a: gguf_fixture(a[0], a[1]),
        "gguf-read": lambda a: gguf_read(a[0], a[1], a[2:]),
        "safetensors-fixture": lambda a: safetensors_fixture(a[0], a[1]),
        "safetensors-read": lambda a: safetensors_read(a[0], a[1], a[2:]),
    }
    if len(argv) < 3 or argv[0] not in commands:
        sys.exit(__doc__)
    commands[argv[0]](argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
