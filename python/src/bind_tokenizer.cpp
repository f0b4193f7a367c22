// Python bindings of the tokenizers: `luminal.tokenizer` (engineer TOK).
//
//   tok = lm.tokenizer.Tokenizer.from_file("tokenizer.json")   # or vocab.txt
//   tok = lm.tokenizer.Tokenizer.from_gguf("model.gguf")
//   tok = lm.tokenizer.Tokenizer.from_gguf_metadata({"tokenizer.ggml.model": "gpt2", ...})
//   ids = tok.encode("Hello")            # list[int]
//   enc = tok.encode_full("a", pair="b") # dict: ids, type_ids, attention_mask, special_tokens_mask
//   tok.decode(ids)                      # str
//   lm.tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}])

#include <nanobind/stl/string_view.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/tokenizer/chat_template.hpp"
#include "luminal/tokenizer/decode_stream.hpp"
#include "luminal/tokenizer/tokenizer.hpp"

namespace luminal::py {
namespace {

namespace tk = luminal::tokenizer;

template <typename T>
std::optional<T> meta_get(const nb::dict& meta, const char* key) {
  if (!meta.contains(key)) return std::nullopt;
  return nb::cast<T>(meta[key]);
}

// A dict of GGUF metadata (keys as in the file) -> the plain struct.
tk::GgufTokenizerMetadata gguf_metadata(const nb::dict& meta) {
  tk::GgufTokenizerMetadata m;
  try {
    m.model = meta_get<std::string>(meta, "tokenizer.ggml.model").value_or("");
    m.pre = meta_get<std::string>(meta, "tokenizer.ggml.pre").value_or("");
    m.tokens = meta_get<std::vector<std::string>>(meta, "tokenizer.ggml.tokens").value_or(m.tokens);
    m.token_types =
        meta_get<std::vector<int32_t>>(meta, "tokenizer.ggml.token_type").value_or(m.token_types);
    m.merges = meta_get<std::vector<std::string>>(meta, "tokenizer.ggml.merges").value_or(m.merges);
    m.bos_id = meta_get<int64_t>(meta, "tokenizer.ggml.bos_token_id");
    m.eos_id = meta_get<int64_t>(meta, "tokenizer.ggml.eos_token_id");
    m.unk_id = meta_get<int64_t>(meta, "tokenizer.ggml.unknown_token_id");
    m.pad_id = meta_get<int64_t>(meta, "tokenizer.ggml.padding_token_id");
    m.add_bos = meta_get<bool>(meta, "tokenizer.ggml.add_bos_token");
    m.add_eos = meta_get<bool>(meta, "tokenizer.ggml.add_eos_token");
    m.chat_template = meta_get<std::string>(meta, "tokenizer.chat_template").value_or("");
  } catch (const nb::cast_error&) {
    throw Error("Tokenizer.from_gguf_metadata: a tokenizer.* value has the wrong type");
  }
  return m;
}

nb::dict encoding_dict(const tk::Encoding& e) {
  nb::dict d;
  d["ids"] = e.ids;
  d["type_ids"] = e.type_ids;
  d["attention_mask"] = e.attention_mask;
  d["special_tokens_mask"] = e.special_tokens_mask;
  return d;
}

std::vector<tk::ChatMessage> chat_messages(const nb::list& messages) {
  std::vector<tk::ChatMessage> out;
  for (nb::handle h : messages) {
    nb::dict d = nb::cast<nb::dict>(h);
    out.push_back({nb::cast<std::string>(d["role"]), nb::cast<std::string>(d["content"])});
  }
  return out;
}

}  // namespace

void bind_tokenizer(Bindings& b) {
  nb::module_ t = b.m.def_submodule(
      "tokenizer", "Tokenizers: byte-level BPE and WordPiece, token-exact with HF `tokenizers`");

  nb::class_<tk::Tokenizer>(t, "Tokenizer")
      .def_static("from_file", &tk::Tokenizer::from_file, "path"_a,
                  "A tokenizer.json, or a BERT vocab.txt when the name ends in .txt")
      .def_static(
          "from_json", [](const std::string& text) { return tk::Tokenizer::from_json(text); },
          "text"_a, "From the text of a tokenizer.json")
      .def_static(
          "from_vocab_txt",
          [](const std::string& text, bool lowercase) {
            return tk::Tokenizer::from_vocab_txt(text, lowercase);
          },
          "text"_a, "lowercase"_a = true, "From the text of a BERT vocab.txt")
      .def_static(
          "from_gguf",
          [](const std::string& path) { return tk::Tokenizer::from_gguf(GGUFFile::open(path)); },
          "path"_a, "From the tokenizer.* metadata of a GGUF file")
      .def_static(
          "from_gguf_metadata",
          [](const nb::dict& meta) { return tk::Tokenizer::from_gguf(gguf_metadata(meta)); },
          "metadata"_a, "From GGUF metadata {key: value} (tokenizer.ggml.* keys)")
      .def(
          "encode",
          [](const tk::Tokenizer& self, const std::string& text, bool add_special_tokens,
             std::size_t max_length) {
            return self.encode(text, add_special_tokens, max_length).ids;
          },
          "text"_a, "add_special_tokens"_a = true, "max_length"_a = 0, "Token ids of text")
      .def(
          "encode_full",
          [](const tk::Tokenizer& self, const std::string& text, std::optional<std::string> pair,
             bool add_special_tokens, std::size_t max_length) {
            return encoding_dict(pair
                                     ? self.encode_pair(text, *pair, add_special_tokens, max_length)
                                     : self.encode(text, add_special_tokens, max_length));
          },
          "text"_a, "pair"_a = nb::none(), "add_special_tokens"_a = true, "max_length"_a = 0,
          "dict with ids, type_ids, attention_mask, special_tokens_mask")
      .def(
          "decode",
          [](const tk::Tokenizer& self, const std::vector<int32_t>& ids, bool skip_special_tokens) {
            return self.decode(ids, skip_special_tokens);
          },
          "ids"_a, "skip_special_tokens"_a = false)
      .def("pre_tokenize", &tk::Tokenizer::pre_tokenize, "text"_a,
           "The pre-tokenizer's words (like HF pre_tokenizer.pre_tokenize_str)")
      .def("token_to_id", &tk::Tokenizer::token_to_id, "token"_a)
      .def("id_to_token", &tk::Tokenizer::id_to_token, "id"_a)
      .def("is_special", &tk::Tokenizer::is_special, "id"_a)
      .def("describe", &tk::Tokenizer::describe)
      .def("__repr__",
           [](const tk::Tokenizer& self) { return "<luminal Tokenizer: " + self.describe() + ">"; })
      .def_prop_ro("vocab_size", &tk::Tokenizer::vocab_size)
      .def_prop_ro("bos_id", [](const tk::Tokenizer& s) { return s.special_ids().bos; })
      .def_prop_ro("eos_id", [](const tk::Tokenizer& s) { return s.special_ids().eos; })
      .def_prop_ro("pad_id", [](const tk::Tokenizer& s) { return s.special_ids().pad; })
      .def_prop_ro("unk_id", [](const tk::Tokenizer& s) { return s.special_ids().unk; })
      .def_prop_ro("chat_template", &tk::Tokenizer::chat_template);

  nb::class_<tk::DecodeStream>(t, "DecodeStream")
      .def(nb::init<const tk::Tokenizer&, bool>(), "tokenizer"_a, "skip_special_tokens"_a = false,
           nb::keep_alive<1, 2>())
      .def("step", &tk::DecodeStream::step, "id"_a,
           "The text the id completes ('' while a character is incomplete)");

  t.def(
      "apply_chat_template",
      [](const nb::list& messages, bool add_generation_prompt, std::optional<std::string> jinja) {
        const tk::ChatTemplate tmpl =
            jinja ? tk::ChatTemplate::from_jinja(*jinja) : tk::ChatTemplate::smollm2();
        return tmpl.apply(chat_messages(messages), add_generation_prompt);
      },
      "messages"_a, "add_generation_prompt"_a = true, "template"_a = nb::none(),
      "ChatML prompt for [{'role': ..., 'content': ...}]; SmolLM2's template by default, or "
      "the one a Jinja chat template (GGUF tokenizer.chat_template) denotes");
}

}  // namespace luminal::py
