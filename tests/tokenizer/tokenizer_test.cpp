// The Tokenizer pipeline on small hand-built tokenizers: added tokens,
// byte-level BPE from tokenizer.json and GGUF metadata, BERT post-processing
// and truncation, decoding, streaming, chat templates, errors and speed.
// (python/tests/test_tokenizers.py checks the real SmolLM2 and MiniLM
// tokenizers against HF `tokenizers` on the shared corpus.)

#include "luminal/tokenizer/tokenizer.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/gguf_writer.hpp"
#include "luminal/tokenizer/bpe.hpp"
#include "luminal/tokenizer/byte_level.hpp"
#include "luminal/tokenizer/chat_template.hpp"
#include "luminal/tokenizer/decode_stream.hpp"
#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {
namespace {

using Ids = std::vector<int32_t>;

// Byte-level BPE: "Hi there" -> "Hi" "Ġthere"; merges make Hi, Ġthe, re.
constexpr std::string_view kTinyBpeJson = R"({
  "added_tokens": [{"id": 12, "content": "<|end|>", "special": true, "normalized": false}],
  "normalizer": null,
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
  "post_processor": {"type": "ByteLevel"},
  "decoder": {"type": "ByteLevel"},
  "model": {"type": "BPE", "unk_token": null,
            "vocab": {"H": 0, "i": 1, "Ġ": 2, "t": 3, "h": 4, "e": 5, "r": 6, "Hi": 7,
                      "Ġt": 8, "he": 9, "Ġthe": 10, "re": 11, "<|end|>": 12, "Ã": 13, "©": 14},
            "merges": ["H i", "Ġ t", "h e", "Ġt he", ["r", "e"]]}
})";

TEST(TokenizerPipeline, ByteLevelBpeFromJson) {
  const Tokenizer tok = Tokenizer::from_json(kTinyBpeJson);
  // Ġ t h e r e: (Ġ,t) r1, (h,e) r2, (Ġt,he) r3, (r,e) r4 -> Ġthe re.
  EXPECT_EQ(tok.encode_ids("Hi there"), (Ids{7, 10, 11}));
  EXPECT_EQ(tok.encode_ids("Hi<|end|>there"), (Ids{7, 12, 3, 9, 11}));
  EXPECT_EQ(tok.decode(Ids{7, 10, 11, 12}), "Hi there<|end|>");
  EXPECT_EQ(tok.decode(Ids{7, 10, 11, 12}, true), "Hi there");
  EXPECT_EQ(tok.decode(Ids{7, 999, -1, 10}), "Hi the");  // ids that are no token are skipped
  EXPECT_EQ(tok.decode(Ids{13}), "\xEF\xBF\xBD");        // C3 alone: U+FFFD
  EXPECT_EQ(tok.decode(Ids{13, 14}), "\xC3\xA9");        // C3 A9: é
  EXPECT_EQ(tok.token_to_id("<|end|>"), 12);
  EXPECT_EQ(tok.id_to_token(10), "\u0120the");
  EXPECT_FALSE(tok.id_to_token(15).has_value());
  EXPECT_EQ(tok.vocab_size(), 15);
  EXPECT_TRUE(tok.is_special(12));
  EXPECT_FALSE(tok.is_special(7));
  EXPECT_EQ(tok.pre_tokenize("Hi there"), (std::vector<std::string>{"Hi", "\u0120there"}));
}

TEST(TokenizerPipeline, AddedTokensMatchLeftmostLongest) {
  const Tokenizer tok(Normalizer(), PreTokenizer({WhitespaceSplitPreTokenizer{}}),
                      std::make_shared<BpeModel>(
                          [] {
                            Vocab v;
                            for (int c = 0; c < 26; ++c) v.add(std::string(1, char('a' + c)), c);
                            return v;
                          }(),
                          std::vector<std::pair<std::string, std::string>>{}),
                      {{100, "<a>", true}, {101, "<a><b>", true}, {102, "b", false, true}},
                      PostProcessor(), Decoder());
  // "<a><b>" beats "<a>" (longest); "b" only as a whole word (single_word).
  EXPECT_EQ(tok.encode_ids("x<a><b>y<a>"), (Ids{23, 101, 24, 100}));
  EXPECT_EQ(tok.encode_ids("b ab b"), (Ids{102, 0, 1, 102}));
  EXPECT_EQ(tok.decode(Ids{23, 101, 24}), "x <a><b> y");  // no decoder: joined with spaces
}

TEST(TokenizerPipeline, LstripAndRstripSwallowWhitespace) {
  Vocab v;
  v.add("x", 0);
  v.add("\u0120", 1);
  AddedToken mask{5, "<mask>", true};
  mask.lstrip = true;
  mask.rstrip = true;
  const Tokenizer tok(
      Normalizer(), PreTokenizer({ByteLevelPreTokenizer{false, true}}),
      std::make_shared<BpeModel>(std::move(v), std::vector<std::pair<std::string, std::string>>{}),
      {mask}, PostProcessor(), Decoder());
  EXPECT_EQ(tok.encode_ids("x  <mask>  x"), (Ids{0, 5, 0}));
  EXPECT_EQ(tok.encode_ids("x <mask>"), (Ids{0, 5}));
}

constexpr std::string_view kBertVocab =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nwant\n##want\n##ed\nwa\nun\nrunn\n##ing\n,\nlow\n"
    "##er\n##est\n.\n";

TEST(TokenizerPipeline, BertFromVocabTxt) {
  const Tokenizer tok = Tokenizer::from_vocab_txt(kBertVocab);
  // google-research/bert tokenization_test.py test_full_tokenizer.
  const Encoding e = tok.encode("UNwant\u00E9d,running");
  EXPECT_EQ(e.ids, (Ids{2, 9, 6, 7, 12, 10, 11, 3}));
  EXPECT_EQ(e.special_tokens_mask, (Ids{1, 0, 0, 0, 0, 0, 0, 1}));
  EXPECT_EQ(e.attention_mask, Ids(8, 1));
  EXPECT_EQ(tok.encode_ids("UNwant\u00E9d,running", false), (Ids{9, 6, 7, 12, 10, 11}));
  // [CLS] and [MASK] in the raw text are special tokens, matched before lowercasing.
  EXPECT_EQ(tok.encode_ids("low [MASK]er [cls]", false), (Ids{13, 4, 1, 1, 1, 1}));
  EXPECT_EQ(tok.decode(Ids{2, 9, 6, 7, 12, 10, 11, 16, 3}), "[CLS] unwanted, running. [SEP]");
  EXPECT_EQ(tok.decode(Ids{2, 9, 6, 7, 12, 10, 11, 16, 3}, true), "unwanted, running.");
  EXPECT_EQ(tok.special_ids().cls, 2);
  EXPECT_EQ(tok.special_ids().sep, 3);
  EXPECT_EQ(tok.special_ids().pad, 0);
}

TEST(TokenizerPipeline, BertPairsTruncationAndPadding) {
  const Tokenizer tok = Tokenizer::from_vocab_txt(kBertVocab);
  Encoding e = tok.encode_pair("want", "lower lowest");
  EXPECT_EQ(e.ids, (Ids{2, 5, 3, 13, 14, 13, 15, 3}));
  EXPECT_EQ(e.type_ids, (Ids{0, 0, 0, 1, 1, 1, 1, 1}));
  // Longest first: 3 specials leave 4 of the 1 + 4 content ids; the shorter
  // side keeps its 1, the longer gets max(1, 4 - 1) = 3.
  e = tok.encode_pair("want", "lower lowest", true, 7);
  EXPECT_EQ(e.ids, (Ids{2, 5, 3, 13, 14, 13, 3}));
  // Both long: budget 4 splits 2 / 2.
  e = tok.encode_pair("lower lowest", "lowest lower", true, 7);
  EXPECT_EQ(e.ids, (Ids{2, 13, 14, 3, 13, 15, 3}));
  e = tok.encode("lower lowest", true, 4);
  EXPECT_EQ(e.ids, (Ids{2, 13, 14, 3}));
  e.pad(6, 0);
  EXPECT_EQ(e.ids, (Ids{2, 13, 14, 3, 0, 0}));
  EXPECT_EQ(e.attention_mask, (Ids{1, 1, 1, 1, 0, 0}));
}

GgufTokenizerMetadata tiny_gguf() {
  GgufTokenizerMetadata m;
  m.model = "gpt2";
  m.pre = "smollm";
  m.tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "1", "2", "a", "b", "ab",
              "\u0120",        "\u0120a",      "\u0120ab"};
  m.token_types = {3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1};
  m.merges = {"\u0120 a", "a b", "\u0120a b"};
  m.bos_id = 1;
  m.eos_id = 2;
  m.add_bos = false;
  m.chat_template = "{{ '<|im_start|>' }}...<|im_end|>";
  return m;
}

TEST(TokenizerPipeline, FromGgufMetadata) {
  const Tokenizer tok = Tokenizer::from_gguf(tiny_gguf());
  // smollm: digits one by one, then GPT-2 pieces; "Ġab" is (Ġ a) then (Ġa b).
  EXPECT_EQ(tok.encode_ids("ab ab12<|im_end|>"), (Ids{7, 10, 3, 4, 2}));
  EXPECT_EQ(tok.decode(Ids{7, 10, 3, 4, 2}), "ab ab12<|im_end|>");
  EXPECT_EQ(tok.special_ids().bos, 1);
  EXPECT_EQ(tok.special_ids().eos, 2);
  EXPECT_TRUE(tok.is_special(0));
  EXPECT_EQ(tok.chat_template(), tiny_gguf().chat_template);
  EXPECT_EQ(tok.describe(),
            "byte-level BPE, 11 tokens, 3 merges, 3 added (3 special), bos 1, eos 2");

  GgufTokenizerMetadata m = tiny_gguf();
  m.add_bos = true;
  m.add_eos = true;
  EXPECT_EQ(Tokenizer::from_gguf(m).encode_ids("ab"), (Ids{1, 7, 2}));
  EXPECT_EQ(Tokenizer::from_gguf(m).encode_ids("ab", false), (Ids{7}));
}

TEST(TokenizerPipeline, FromGgufFile) {
  // The same metadata written as a GGUF file and read back by the IO layer.
  const GgufTokenizerMetadata m = tiny_gguf();
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_string("tokenizer.ggml.model", m.model);
  w.add_string("tokenizer.ggml.pre", m.pre);
  w.add_string_array("tokenizer.ggml.tokens", m.tokens);
  w.add_int_array("tokenizer.ggml.token_type", GGUFValueType::I32,
                  std::vector<int64_t>(m.token_types.begin(), m.token_types.end()));
  w.add_string_array("tokenizer.ggml.merges", m.merges);
  w.add_u32("tokenizer.ggml.bos_token_id", 1);
  w.add_u32("tokenizer.ggml.eos_token_id", 2);
  w.add_bool("tokenizer.ggml.add_bos_token", true);
  w.add_string("tokenizer.chat_template", m.chat_template);
  const std::vector<std::byte> bytes = w.to_bytes();
  const GGUFFile file = GGUFFile::from_memory(bytes, "tiny.gguf");

  const GgufTokenizerMetadata read = gguf_tokenizer_metadata(file);
  EXPECT_EQ(read.tokens, m.tokens);
  EXPECT_EQ(read.token_types, m.token_types);
  EXPECT_EQ(read.merges, m.merges);
  EXPECT_EQ(read.pre, "smollm");
  EXPECT_EQ(read.eos_id, 2);
  EXPECT_FALSE(read.unk_id.has_value());
  EXPECT_EQ(read.add_bos, true);
  EXPECT_FALSE(read.add_eos.has_value());
  const Tokenizer tok = Tokenizer::from_gguf(file);
  EXPECT_EQ(tok.encode_ids("ab ab12<|im_end|>"), (Ids{1, 7, 10, 3, 4, 2}));
  EXPECT_EQ(tok.chat_template(), m.chat_template);

  GGUFWriter no_tokenizer;
  no_tokenizer.add_string("general.architecture", "llama");
  const std::vector<std::byte> empty = no_tokenizer.to_bytes();
  EXPECT_THROW(Tokenizer::from_gguf(GGUFFile::from_memory(empty, "none.gguf")), LookupError);
}

TEST(TokenizerPipeline, BadGgufMetadataThrows) {
  auto expect_error = [](GgufTokenizerMetadata m, const std::string& needle) {
    try {
      (void)Tokenizer::from_gguf(m);
      FAIL() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  GgufTokenizerMetadata m = tiny_gguf();
  m.model = "llama";
  expect_error(m, "tokenizer.ggml.model 'llama'");
  m = tiny_gguf();
  m.pre = "klingon";
  expect_error(m, "tokenizer.ggml.pre 'klingon'");
  m = tiny_gguf();
  m.merges.push_back("a zz");
  expect_error(m, "merge 3 'a zz'");
  m = tiny_gguf();
  m.eos_id = 11;
  expect_error(m, "eos_token_id = 11 is outside the vocabulary of 11 tokens");
  m = tiny_gguf();
  m.token_types.pop_back();
  expect_error(m, "token_type has 10 entries for 11 tokens");
  m = tiny_gguf();
  m.tokens.clear();
  expect_error(m, "tokens is empty");
}

TEST(TokenizerPipeline, BadTokenizerJsonThrows) {
  auto expect_error = [](std::string_view json, const std::string& needle) {
    try {
      (void)Tokenizer::from_json(json, "my.json");
      FAIL() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("my.json", 0), 0u) << e.what();
    }
  };
  expect_error("{", "malformed tokenizer.json");
  expect_error(R"({"model": {"type": "Unigram"}})", "model type 'Unigram' is not supported");
  expect_error(R"({"model": {"type": "BPE", "vocab": {}, "merges": [], "byte_fallback": true}})",
               "byte_fallback");
  expect_error(R"({"pre_tokenizer": {"type": "Metaspace"},
                   "model": {"type": "BPE", "vocab": {}, "merges": []}})",
               "pre-tokenizer 'Metaspace' is not supported");
  expect_error(
      R"({"decoder": {"type": "Fuse"}, "model": {"type": "BPE", "vocab": {}, "merges": []}})",
      "decoder 'Fuse' is not supported");
  expect_error(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}})",
               "id 0 is given to both");
  expect_error(R"({"model": {"type": "BPE", "vocab": [], "merges": []}})", "model.vocab");
  EXPECT_THROW(Tokenizer::from_file("/nonexistent/tokenizer.json"), Error);
}

TEST(TokenizerPipeline, DecodeStreamWaitsForWholeCharacters) {
  const Tokenizer tok = Tokenizer::from_json(kTinyBpeJson);
  DecodeStream stream(tok);
  EXPECT_EQ(stream.step(7), "Hi");
  EXPECT_EQ(stream.step(13), "");  // the first byte of é
  EXPECT_EQ(stream.step(14), "\xC3\xA9");
  EXPECT_EQ(stream.step(10), " the");
  EXPECT_EQ(stream.step(12), "<|end|>");

  const Tokenizer bert = Tokenizer::from_vocab_txt(kBertVocab);
  DecodeStream words(bert, true);
  std::string text;
  for (int32_t id : Ids{2, 9, 6, 7, 12, 10, 11, 3}) text += words.step(id);
  EXPECT_EQ(text, "unwanted, running");  // "##" pieces join the word before
}

TEST(TokenizerChatTemplate, SmolLM2) {
  const ChatTemplate t = ChatTemplate::smollm2();
  EXPECT_EQ(t.apply({{"user", "Hi"}}),
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
            "Face<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(t.apply({{"system", "Be brief."}, {"user", "Hi"}, {"assistant", "Hello"}}, false),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
            "<|im_start|>assistant\nHello<|im_end|>\n");
  EXPECT_EQ(t.apply({}, true), "<|im_start|>assistant\n");
}

TEST(TokenizerChatTemplate, FromJinja) {
  // SmolLM2-135M-Instruct's tokenizer.chat_template (from its GGUF file).
  const std::string smollm2 =
      "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' "
      "%}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by "
      "Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + "
      "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt "
      "%}{{ '<|im_start|>assistant\n' }}{% endif %}";
  EXPECT_EQ(ChatTemplate::from_jinja(smollm2).default_system_prompt(),
            std::string(kSmolLM2SystemPrompt));
  const std::string plain =
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + "
      "message['content'] + '<|im_end|>' + '\n'}}{% endfor %}";
  EXPECT_FALSE(ChatTemplate::from_jinja(plain).default_system_prompt().has_value());
  EXPECT_THROW(ChatTemplate::from_jinja("[INST] {{ messages }} [/INST]"), Error);
}

TEST(TokenizerPipeline, Encodes100KilobytesQuickly) {
  // A byte-level vocabulary: all 256 bytes plus merges of frequent pairs.
  Vocab vocab;
  int32_t next = 0;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    unicode::append_utf8(s, byte_to_char(static_cast<uint8_t>(b)));
    vocab.add(s, next++);
  }
  std::vector<std::pair<std::string, std::string>> merges;
  const std::string letters = "etaoinshrdlu";
  for (char a : letters) {
    for (char b : letters) {
      vocab.add(std::string{a, b}, next++);
      merges.emplace_back(std::string(1, a), std::string(1, b));
    }
  }
  const Tokenizer tok(Normalizer(), PreTokenizer({ByteLevelPreTokenizer{false, true}}),
                      std::make_shared<BpeModel>(std::move(vocab), merges), {}, PostProcessor(),
                      Decoder{Decoder::Kind::kByteLevel});
  std::mt19937 rng(42);
  const std::vector<std::string> words = {"the",   "tokenizer", "encodes",      "unicode",
                                          "text",  "quickly",   "\u65E5\u672C", "caf\u00E9",
                                          "12345", "x+=1;",     "\n",           "\t"};
  std::string text;
  while (text.size() < 100000) {
    text += words[rng() % words.size()];
    text += ' ';
  }
  const auto start = std::chrono::steady_clock::now();
  const Ids ids = tok.encode_ids(text);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 0.5);
  EXPECT_EQ(tok.decode(ids), text);
}

}  // namespace
}  // namespace luminal::tokenizer
