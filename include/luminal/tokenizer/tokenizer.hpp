#pragma once
// A complete tokenizer with Hugging Face `tokenizers`' pipeline and results:
//   added tokens  -> special / added tokens are found in the raw text first
//   normalizer    -> on the text between them (normalizer.hpp)
//   pre-tokenizer -> words (pre_tokenizer.hpp)
//   model         -> ids per word: byte-level BPE or WordPiece (bpe.hpp, wordpiece.hpp)
//   post-processor-> [CLS] ... [SEP], <bos> ... (template), type ids
// and back: ids -> tokens -> decoder (byte-level: bytes -> UTF-8 with U+FFFD
// for ill-formed sequences; WordPiece: "##" joins, spaces elsewhere).
//
// Load one from a tokenizer.json (from_json / from_file), a BERT vocab.txt
// (from_vocab_txt / from_file) or GGUF metadata (from_gguf).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "luminal/tokenizer/gguf_tokenizer.hpp"
#include "luminal/tokenizer/model.hpp"
#include "luminal/tokenizer/normalizer.hpp"
#include "luminal/tokenizer/pre_tokenizer.hpp"

namespace luminal::tokenizer {

/// A token matched in the raw text before normalization and pre-tokenization
/// (HF AddedToken).
struct AddedToken {
  int32_t id = 0;
  std::string content;
  bool special = true;       // dropped by decode(skip_special_tokens = true)
  bool single_word = false;  // only when not inside a word
  bool lstrip = false;       // swallows whitespace on its left
  bool rstrip = false;       // swallows whitespace on its right
  bool normalized = false;   // matched in the normalized text instead of the raw text
};

/// The result of encoding one sequence (or a pair).
struct Encoding {
  std::vector<int32_t> ids;
  std::vector<int32_t> type_ids;             // 0 for the first sequence, 1 for the second
  std::vector<int32_t> attention_mask;       // 1 per token (0 for padding, see pad())
  std::vector<int32_t> special_tokens_mask;  // 1 for tokens the post-processor added
  std::size_t size() const { return ids.size(); }
  /// Appends `pad_id` (type id 0, attention 0) up to `length` tokens.
  void pad(std::size_t length, int32_t pad_id);
};

/// One element of a post-processing template (HF TemplateProcessing).
struct TemplatePiece {
  enum class Kind { kSequenceA, kSequenceB, kSpecial };
  Kind kind = Kind::kSequenceA;
  std::vector<int32_t> ids;  // kSpecial: the ids it adds
  int32_t type_id = 0;
};

/// Special tokens added around encoded sequences. Empty templates add nothing.
struct PostProcessor {
  std::vector<TemplatePiece> single;  // e.g. [CLS] $A [SEP]
  std::vector<TemplatePiece> pair;    // e.g. [CLS] $A [SEP] $B:1 [SEP]:1
  /// Ids the template adds around one sequence (is_pair = false) or a pair.
  std::size_t added_count(bool is_pair) const;
};

/// How ids become text again.
struct Decoder {
  enum class Kind {
    kNone,       // tokens joined with ' ' (HF's behaviour without a decoder)
    kByteLevel,  // byte characters -> bytes -> UTF-8 (lossy)
    kWordPiece,  // prefix-joined subwords, ' ' between words, optional cleanup
  };
  Kind kind = Kind::kNone;
  std::string prefix = "##";
  bool cleanup = true;  // " ." -> "." etc. (HF WordPiece decoder's cleanup)
};

/// Ids with a conventional meaning (from GGUF metadata or the special tokens
/// a tokenizer.json's added tokens / post-processor name).
struct SpecialTokenIds {
  std::optional<int32_t> bos, eos, unk, pad, cls, sep, mask;
};

class Tokenizer {
public:
  Tokenizer(Normalizer normalizer, PreTokenizer pre_tokenizer, std::shared_ptr<const Model> model,
            std::vector<AddedToken> added_tokens, PostProcessor post_processor, Decoder decoder);

  /// From the text of a HF tokenizer.json. Supported: model BPE (byte-level,
  /// no byte fallback / subword prefixes) and WordPiece; normalizers
  /// BertNormalizer, NFD, Lowercase, StripAccents, Sequence; pre-tokenizers
  /// ByteLevel, Split (the GPT-2 / Llama-3 / Qwen2 regexes or a literal),
  /// Digits, BertPreTokenizer, WhitespaceSplit, Sequence; post-processors
  /// TemplateProcessing, BertProcessing, ByteLevel, Sequence; decoders
  /// ByteLevel, WordPiece. Anything else throws luminal::Error naming
  /// `origin` and the component. The file's truncation / padding settings
  /// are not applied (encode's max_length and Encoding::pad do that).
  static Tokenizer from_json(std::string_view json_text,
                             std::string_view origin = "tokenizer.json");
  /// A BERT vocab.txt (one token per line, id = line number) with BERT's
  /// normalizer, pre-tokenizer, [CLS]/[SEP] template and WordPiece decoder.
  static Tokenizer from_vocab_txt(std::string_view vocab_text, bool lowercase = true,
                                  std::string_view origin = "vocab.txt");
  /// A tokenizer.json, or a vocab.txt when the file name ends in ".txt".
  /// Throws luminal::Error naming the path when it cannot be read.
  static Tokenizer from_file(const std::string& path);
  /// From GGUF metadata: tokenizer.ggml.model "gpt2" (byte-level BPE) with the
  /// pre-tokenizer that tokenizer.ggml.pre names; control tokens become
  /// special added tokens, user-defined ones plain added tokens; bos / eos are
  /// added when add_bos / add_eos say so. Throws luminal::Error on another
  /// model, an unknown pre-tokenizer, ids out of range or bad merges.
  static Tokenizer from_gguf(const GgufTokenizerMetadata& metadata);
  /// From the metadata of an open GGUF file (gguf_tokenizer_metadata).
  static Tokenizer from_gguf(const GGUFFile& file);

  /// Encodes `text` (UTF-8; ill-formed bytes are read as U+FFFD). With
  /// add_special_tokens the post-processor's template applies. max_length > 0
  /// truncates the content so that the result, special tokens included, has
  /// at most max_length ids (HF "longest first", right side).
  Encoding encode(std::string_view text, bool add_special_tokens = true,
                  std::size_t max_length = 0) const;
  /// Encodes a pair (BERT: [CLS] a [SEP] b [SEP], type ids 0 / 1).
  Encoding encode_pair(std::string_view first, std::string_view second,
                       bool add_special_tokens = true, std::size_t max_length = 0) const;
  std::vector<int32_t> encode_ids(std::string_view text, bool add_special_tokens = true) const {
    return encode(text, add_special_tokens).ids;
  }
  /// Ids -> text. Ids that are no token are skipped (as HF does);
  /// skip_special_tokens drops special added tokens.
  std::string decode(std::span<const int32_t> ids, bool skip_special_tokens = false) const;

  /// The words the model sees for `text` (no added-token matching), UTF-8;
  /// for tests and debugging.
  std::vector<std::string> pre_tokenize(std::string_view text) const;
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(int32_t id) const;
  /// Largest id + 1 over the model and the added tokens.
  int32_t vocab_size() const;
  bool is_special(int32_t id) const;
  /// One line for `luminal info`: "byte-level BPE, 49152 tokens, 48900 merges,
  /// 17 added (17 special), bos 1, eos 2".
  std::string describe() const;

  const Normalizer& normalizer() const { return normalizer_; }
  const PreTokenizer& pre_tokenizer() const { return pre_tokenizer_; }
  const Model& model() const { return *model_; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }
  const PostProcessor& post_processor() const { return post_processor_; }
  const Decoder& decoder() const { return decoder_; }
  const SpecialTokenIds& special_ids() const { return special_ids_; }
  void set_special_ids(const SpecialTokenIds& ids) { special_ids_ = ids; }
  /// The Jinja chat template shipped with the tokenizer (GGUF
  /// tokenizer.chat_template), empty when none; see chat_template.hpp.
  const std::string& chat_template() const { return chat_template_; }
  void set_chat_template(std::string jinja) { chat_template_ = std::move(jinja); }

private:
  struct Segment {
    std::u32string text;  // when id < 0
    int32_t id = -1;      // an added token
  };
  std::vector<Segment> split_added(std::u32string_view text, bool normalized_pass) const;
  std::vector<int32_t> encode_sequence(std::string_view text) const;
  Encoding post_process(std::vector<int32_t> a, const std::vector<int32_t>* b,
                        bool add_special_tokens, std::size_t max_length) const;
  const AddedToken* added_by_id(int32_t id) const;

  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  std::shared_ptr<const Model> model_;
  std::vector<AddedToken> added_;
  std::vector<std::u32string> added_match_;               // per added token: the text to match
  std::u32string added_first_chars_;                      // sorted first chars of added_match_
  std::unordered_map<int32_t, std::size_t> added_index_;  // id -> index in added_
  PostProcessor post_processor_;
  Decoder decoder_;
  SpecialTokenIds special_ids_;
  std::string chat_template_;
};

}  // namespace luminal::tokenizer
