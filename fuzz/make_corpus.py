#!/usr/bin/env python3
"""Regenerate the fuzzers' seed corpus (fuzz/corpus/{gguf,safetensors}/).

Small valid files written by the reference Python packages (`gguf`,
`safetensors`), covering every metadata value type, every ggml tensor type the
reader decodes, GGUF v2 and v3, custom alignment, nested arrays, and the
safetensors dtypes. The outputs are committed; rerun this only to change them:

    python3 fuzz/make_corpus.py
"""

import os
import struct
import json

import numpy as np
import gguf
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
GGUF_DIR = os.path.join(HERE, "corpus", "gguf")
ST_DIR = os.path.join(HERE, "corpus", "safetensors")
rng = np.random.default_rng(0)


def write_gguf(name, build, alignment=None):
    path = os.path.join(GGUF_DIR, name)
    w = gguf.GGUFWriter(path, "llama")
    if alignment:
        w.add_custom_alignment(alignment)
    build(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def metadata_of_every_type(w):
    w.add_uint8("a.u8", 1)
    w.add_int8("a.i8", -1)
    w.add_uint16("a.u16", 2)
    w.add_int16("a.i16", -2)
    w.add_uint32("a.u32", 3)
    w.add_int32("a.i32", -3)
    w.add_float32("a.f32", 0.5)
    w.add_uint64("a.u64", 4)
    w.add_int64("a.i64", -4)
    w.add_float64("a.f64", 0.25)
    w.add_bool("a.bool", True)
    w.add_string("a.str", "x")
    w.add_array("a.strs", ["a", "bc"])
    w.add_key_value("a.u8s", [1, 2], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.UINT8)
    w.add_key_value("a.f32s", [1.0], gguf.GGUFValueType.ARRAY, gguf.GGUFValueType.FLOAT32)
    w.add_array("a.nested", [[1], [2, 3]])


def every_tensor_type(w):
    for name in ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K",
                 "IQ4_NL"]:
        qtype = gguf.GGMLQuantizationType[name]
        _, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
        raw = rng.integers(0, 256, size=(1, block_bytes), dtype=np.uint8)
        w.add_tensor("t." + name, raw, raw_dtype=qtype)
    w.add_tensor("t.F16", rng.standard_normal((2, 2)).astype(np.float16))
    w.add_tensor("t.BF16", rng.integers(0, 256, size=(4,), dtype=np.uint8),
                 raw_dtype=gguf.GGMLQuantizationType.BF16)
    w.add_tensor("t.F32", rng.standard_normal((1, 2, 3)).astype(np.float32))
    w.add_tensor("t.F64", rng.standard_normal(2))
    for dt in (np.int8, np.int16, np.int32, np.int64):
        w.add_tensor("t." + np.dtype(dt).name, np.arange(3, dtype=dt))


def llama_like(w):
    w.add_block_count(1)
    w.add_embedding_length(32)
    w.add_head_count(2)
    w.add_head_count_kv(1)
    w.add_tokenizer_model("gpt2")
    w.add_token_list(["<s>", "a", "b"])
    w.add_token_types([3, 1, 1])
    w.add_token_merges(["a b"])
    w.add_tensor("token_embd.weight", rng.standard_normal((3, 32)).astype(np.float32))
    raw = rng.integers(0, 256, size=(32, 20), dtype=np.uint8)
    w.add_tensor("blk.0.attn_q.weight", raw, raw_dtype=gguf.GGMLQuantizationType.Q4_1)


def main():
    os.makedirs(GGUF_DIR, exist_ok=True)
    os.makedirs(ST_DIR, exist_ok=True)
    write_gguf("minimal.gguf", lambda w: None)
    write_gguf("metadata.gguf", metadata_of_every_type, alignment=64)
    write_gguf("tensors.gguf", every_tensor_type)
    v3 = write_gguf("llama.gguf", llama_like)
    data = bytearray(open(v3, "rb").read())
    data[4:8] = struct.pack("<I", 2)  # v2 has the same layout for little-endian files
    open(os.path.join(GGUF_DIR, "llama_v2.gguf"), "wb").write(data)

    save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3),
               "b": np.array([1, 0], dtype=np.bool_),
               "c": np.arange(3, dtype=np.int64),
               "d": np.arange(2, dtype=np.float16),
               "e": np.zeros((0, 2), dtype=np.int8),
               "s": np.array(1.5, dtype=np.float64)},
              os.path.join(ST_DIR, "dtypes.safetensors"), metadata={"format": "pt"})
    save_file({"u8": np.arange(4, dtype=np.uint8), "i32": np.arange(2, dtype=np.int32),
               "u16": np.arange(2, dtype=np.uint16)},
              os.path.join(ST_DIR, "ints.safetensors"))
    # BF16 and F8 by hand (numpy has neither).
    header = {"bf": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
              "f8": {"dtype": "F8_E4M3", "shape": [2, 1], "data_offsets": [4, 6]}}
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    open(os.path.join(ST_DIR, "bf16.safetensors"), "wb").write(
        struct.pack("<Q", len(text)) + text + bytes([0x80, 0x3F, 0x00, 0xC0, 0x38, 0xB8]))


if __name__ == "__main__":
    main()
