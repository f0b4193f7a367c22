// Loading a Tokenizer from a Hugging Face tokenizer.json or a BERT vocab.txt.

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "luminal/error.hpp"
#include "luminal/tokenizer/bpe.hpp"
#include "luminal/tokenizer/tokenizer.hpp"
#include "luminal/tokenizer/unicode.hpp"
#include "luminal/tokenizer/wordpiece.hpp"

namespace luminal::tokenizer {
namespace {

using json = nlohmann::json;

// Error context: the file and the JSON path of the component being read.
struct Context {
  std::string origin;
  [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
    throw Error(origin + ": " + where + ": " + problem);
  }
};

std::string type_of(const json& j, const Context& ctx, const std::string& where) {
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) {
    ctx.fail(where, "expected an object with a string \"type\"");
  }
  return j["type"].get<std::string>();
}

bool get_bool(const json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return (it == j.end() || it->is_null()) ? fallback : it->get<bool>();
}

std::optional<std::string> get_optional_string(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<std::string>();
}

NormalizerStep parse_normalizer_step(const json& j, const Context& ctx, const std::string& where);

void parse_normalizer(const json& j, const Context& ctx, const std::string& where,
                      std::vector<NormalizerStep>& steps) {
  if (j.is_null()) return;
  if (type_of(j, ctx, where) == "Sequence") {
    const json& list = j.at("normalizers");
    for (std::size_t i = 0; i < list.size(); ++i) {
      parse_normalizer(list[i], ctx, where + ".normalizers[" + std::to_string(i) + "]", steps);
    }
    return;
  }
  steps.push_back(parse_normalizer_step(j, ctx, where));
}

NormalizerStep parse_normalizer_step(const json& j, const Context& ctx, const std::string& where) {
  const std::string type = type_of(j, ctx, where);
  if (type == "BertNormalizer") {
    BertNormalizer n;
    n.clean_text = get_bool(j, "clean_text", true);
    n.handle_chinese_chars = get_bool(j, "handle_chinese_chars", true);
    if (auto it = j.find("strip_accents"); it != j.end() && !it->is_null()) {
      n.strip_accents = it->get<bool>();
    }
    n.lowercase = get_bool(j, "lowercase", true);
    return n;
  }
  if (type == "NFD") return NfdNormalizer{};
  if (type == "Lowercase") return LowercaseNormalizer{};
  if (type == "StripAccents") return StripAccentsNormalizer{};
  ctx.fail(where,
           "normalizer '" + type +
               "' is not supported (BertNormalizer, NFD, Lowercase, StripAccents, Sequence)");
}

SplitBehavior parse_behavior(const json& j, const Context& ctx, const std::string& where) {
  const std::string b = j.get<std::string>();
  if (b == "Removed") return SplitBehavior::kRemoved;
  if (b == "Isolated") return SplitBehavior::kIsolated;
  if (b == "MergedWithPrevious") return SplitBehavior::kMergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::kMergedWithNext;
  if (b == "Contiguous") return SplitBehavior::kContiguous;
  ctx.fail(where, "unknown split behavior '" + b + "'");
}

void parse_pre_tokenizer(const json& j, const Context& ctx, const std::string& where,
                         std::vector<PreTokenizerStep>& steps) {
  if (j.is_null()) return;
  const std::string type = type_of(j, ctx, where);
  if (type == "Sequence") {
    const json& list = j.at("pretokenizers");
    for (std::size_t i = 0; i < list.size(); ++i) {
      parse_pre_tokenizer(list[i], ctx, where + ".pretokenizers[" + std::to_string(i) + "]", steps);
    }
  } else if (type == "ByteLevel") {
    steps.push_back(ByteLevelPreTokenizer{get_bool(j, "add_prefix_space", true),
                                          get_bool(j, "use_regex", true)});
  } else if (type == "Split") {
    if (get_bool(j, "invert", false)) ctx.fail(where, "Split with invert=true is not supported");
    SplitPreTokenizer s;
    s.behavior = parse_behavior(j.at("behavior"), ctx, where);
    const json& pattern = j.at("pattern");
    if (pattern.contains("Regex")) {
      const std::string regex = pattern["Regex"].get<std::string>();
      s.regex = recognize_split_regex(regex);
      if (!s.regex) {
        ctx.fail(where, "Split regex '" + regex +
                            "' is not one luminal implements (the GPT-2, Llama-3 and Qwen2 "
                            "pre-tokenizer regexes)");
      }
    } else if (pattern.contains("String")) {
      s.literal = unicode::decode_utf8(pattern["String"].get<std::string>());
    } else {
      ctx.fail(where, "Split pattern needs \"Regex\" or \"String\"");
    }
    steps.push_back(std::move(s));
  } else if (type == "Digits") {
    steps.push_back(DigitsPreTokenizer{get_bool(j, "individual_digits", false)});
  } else if (type == "BertPreTokenizer") {
    steps.push_back(BertPreTokenizer{});
  } else if (type == "WhitespaceSplit") {
    steps.push_back(WhitespaceSplitPreTokenizer{});
  } else {
    ctx.fail(where, "pre-tokenizer '" + type +
                        "' is not supported (ByteLevel, Split, Digits, BertPreTokenizer, "
                        "WhitespaceSplit, Sequence)");
  }
}

Vocab parse_vocab(const json& j, const Context& ctx) {
  if (!j.is_object()) ctx.fail("model.vocab", "expected an object {token: id}");
  Vocab vocab;
  for (auto it = j.begin(); it != j.end(); ++it) vocab.add(it.key(), it.value().get<int32_t>());
  return vocab;
}

std::shared_ptr<const Model> parse_model(const json& j, const Context& ctx) {
  const std::string type = type_of(j, ctx, "model");
  if (type == "BPE") {
    auto must_be_empty = [&](const char* key) {
      if (auto v = get_optional_string(j, key); v && !v->empty()) {
        ctx.fail("model", std::string(key) + " '" + *v + "' is not supported");
      }
    };
    must_be_empty("continuing_subword_prefix");
    must_be_empty("end_of_word_suffix");
    if (get_bool(j, "byte_fallback", false)) {
      ctx.fail("model", "byte_fallback BPE (SentencePiece style) is not supported");
    }
    if (auto it = j.find("dropout"); it != j.end() && !it->is_null() && it->get<double>() > 0) {
      ctx.fail("model", "BPE dropout is not supported");
    }
    std::vector<std::pair<std::string, std::string>> merges;
    const json& list = j.at("merges");
    merges.reserve(list.size());
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].is_string()) {
        merges.push_back(split_merge(list[i].get<std::string>(), i));
      } else if (list[i].is_array() && list[i].size() == 2) {
        merges.emplace_back(list[i][0].get<std::string>(), list[i][1].get<std::string>());
      } else {
        ctx.fail("model.merges[" + std::to_string(i) + "]", "expected \"a b\" or [\"a\", \"b\"]");
      }
    }
    BpeOptions options;
    options.unk_token = get_optional_string(j, "unk_token");
    options.ignore_merges = get_bool(j, "ignore_merges", false);
    return std::make_shared<BpeModel>(parse_vocab(j.at("vocab"), ctx), merges, options);
  }
  if (type == "WordPiece") {
    WordPieceOptions options;
    options.unk_token = get_optional_string(j, "unk_token").value_or("[UNK]");
    options.continuing_subword_prefix =
        get_optional_string(j, "continuing_subword_prefix").value_or("##");
    if (auto it = j.find("max_input_chars_per_word"); it != j.end() && !it->is_null()) {
      options.max_input_chars_per_word = it->get<std::size_t>();
    }
    return std::make_shared<WordPieceModel>(parse_vocab(j.at("vocab"), ctx), options);
  }
  ctx.fail("model", "model type '" + type + "' is not supported (BPE, WordPiece)");
}

std::vector<AddedToken> parse_added_tokens(const json& j) {
  std::vector<AddedToken> out;
  if (j.is_null()) return out;
  for (const json& t : j) {
    AddedToken a;
    a.id = t.at("id").get<int32_t>();
    a.content = t.at("content").get<std::string>();
    a.special = get_bool(t, "special", false);
    a.single_word = get_bool(t, "single_word", false);
    a.lstrip = get_bool(t, "lstrip", false);
    a.rstrip = get_bool(t, "rstrip", false);
    a.normalized = get_bool(t, "normalized", !a.special);
    out.push_back(std::move(a));
  }
  return out;
}

TemplatePiece special_piece(std::vector<int32_t> ids, int32_t type_id) {
  return {TemplatePiece::Kind::kSpecial, std::move(ids), type_id};
}
TemplatePiece sequence_piece(bool second, int32_t type_id) {
  return {second ? TemplatePiece::Kind::kSequenceB : TemplatePiece::Kind::kSequenceA, {}, type_id};
}

/// [CLS] $A [SEP] and [CLS] $A [SEP] $B:1 [SEP]:1 (BERT's template).
PostProcessor bert_template(int32_t cls, int32_t sep) {
  PostProcessor p;
  p.single = {special_piece({cls}, 0), sequence_piece(false, 0), special_piece({sep}, 0)};
  p.pair = p.single;
  p.pair.push_back(sequence_piece(true, 1));
  p.pair.push_back(special_piece({sep}, 1));
  return p;
}

std::vector<TemplatePiece> parse_template(const json& list, const json& specials,
                                          const Context& ctx, const std::string& where) {
  std::vector<TemplatePiece> out;
  for (const json& item : list) {
    if (item.contains("Sequence")) {
      const json& s = item["Sequence"];
      const std::string id = s.at("id").get<std::string>();
      if (id != "A" && id != "B") ctx.fail(where, "template sequence '" + id + "' (A or B)");
      out.push_back(sequence_piece(id == "B", s.value("type_id", 0)));
    } else if (item.contains("SpecialToken")) {
      const json& s = item["SpecialToken"];
      const std::string name = s.at("id").get<std::string>();
      if (!specials.contains(name)) {
        ctx.fail(where, "template special token '" + name + "' is not in special_tokens");
      }
      out.push_back(special_piece(specials[name].at("ids").get<std::vector<int32_t>>(),
                                  s.value("type_id", 0)));
    } else {
      ctx.fail(where, "template item is neither Sequence nor SpecialToken");
    }
  }
  return out;
}

void parse_post_processor(const json& j, const Context& ctx, const std::string& where,
                          PostProcessor& out) {
  if (j.is_null()) return;
  const std::string type = type_of(j, ctx, where);
  if (type == "Sequence") {
    const json& list = j.at("processors");
    for (std::size_t i = 0; i < list.size(); ++i) {
      parse_post_processor(list[i], ctx, where + ".processors[" + std::to_string(i) + "]", out);
    }
  } else if (type == "ByteLevel") {
    // Only adjusts offsets, which luminal does not compute.
  } else if (type == "TemplateProcessing") {
    const json specials = j.value("special_tokens", json::object());
    out.single = parse_template(j.at("single"), specials, ctx, where + ".single");
    out.pair = parse_template(j.at("pair"), specials, ctx, where + ".pair");
  } else if (type == "BertProcessing") {
    out = bert_template(j.at("cls").at(1).get<int32_t>(), j.at("sep").at(1).get<int32_t>());
  } else if (type == "RobertaProcessing") {
    const auto cls = j.at("cls").at(1).get<int32_t>();
    const auto sep = j.at("sep").at(1).get<int32_t>();
    out.single = {special_piece({cls}, 0), sequence_piece(false, 0), special_piece({sep}, 0)};
    out.pair = out.single;
    out.pair.push_back(special_piece({sep}, 0));
    out.pair.push_back(sequence_piece(true, 0));
    out.pair.push_back(special_piece({sep}, 0));
  } else {
    ctx.fail(where, "post-processor '" + type +
                        "' is not supported (TemplateProcessing, BertProcessing, "
                        "RobertaProcessing, ByteLevel, Sequence)");
  }
}

Decoder parse_decoder(const json& j, const Context& ctx) {
  Decoder d;
  if (j.is_null()) return d;
  const std::string type = type_of(j, ctx, "decoder");
  if (type == "ByteLevel") {
    d.kind = Decoder::Kind::kByteLevel;
  } else if (type == "WordPiece") {
    d.kind = Decoder::Kind::kWordPiece;
    d.prefix = j.value("prefix", std::string("##"));
    d.cleanup = get_bool(j, "cleanup", true);
  } else {
    ctx.fail("decoder", "decoder '" + type + "' is not supported (ByteLevel, WordPiece)");
  }
  return d;
}

// BERT-style names of special tokens -> SpecialTokenIds.
SpecialTokenIds special_ids_from(const std::vector<AddedToken>& added, const Model& model) {
  SpecialTokenIds ids;
  auto find = [&](std::string_view name) -> std::optional<int32_t> {
    for (const AddedToken& t : added) {
      if (t.content == name) return t.id;
    }
    return model.vocab().find(name);
  };
  ids.cls = find("[CLS]");
  ids.sep = find("[SEP]");
  ids.pad = find("[PAD]");
  ids.mask = find("[MASK]");
  ids.unk = find("[UNK]");
  return ids;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("tokenizer: cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error("tokenizer: cannot read '" + path + "'");
  return text.str();
}

}  // namespace

Tokenizer Tokenizer::from_json(std::string_view json_text, std::string_view origin) {
  const Context ctx{std::string(origin)};
  try {
    const json j = json::parse(json_text.begin(), json_text.end());
    if (!j.is_object() || !j.contains("model")) ctx.fail("top level", "no \"model\"");
    std::vector<NormalizerStep> normalizer_steps;
    parse_normalizer(j.value("normalizer", json()), ctx, "normalizer", normalizer_steps);
    std::vector<PreTokenizerStep> pre_steps;
    parse_pre_tokenizer(j.value("pre_tokenizer", json()), ctx, "pre_tokenizer", pre_steps);
    std::shared_ptr<const Model> model = parse_model(j["model"], ctx);
    std::vector<AddedToken> added = parse_added_tokens(j.value("added_tokens", json()));
    PostProcessor post;
    parse_post_processor(j.value("post_processor", json()), ctx, "post_processor", post);
    Decoder decoder = parse_decoder(j.value("decoder", json()), ctx);
    Tokenizer tok(Normalizer(std::move(normalizer_steps)), PreTokenizer(std::move(pre_steps)),
                  model, std::move(added), std::move(post), std::move(decoder));
    tok.set_special_ids(special_ids_from(tok.added_tokens(), *model));
    return tok;
  } catch (const json::exception& e) {
    throw Error(ctx.origin + ": malformed tokenizer.json: " + e.what());
  } catch (const Error& e) {
    const std::string what = e.what();
    if (what.rfind(ctx.origin, 0) == 0) throw;
    throw Error(ctx.origin + ": " + what);
  }
}

Tokenizer Tokenizer::from_vocab_txt(std::string_view vocab_text, bool lowercase,
                                    std::string_view origin) {
  Vocab vocab;
  std::size_t line_no = 0, pos = 0;
  while (pos < vocab_text.size()) {
    std::size_t end = vocab_text.find('\n', pos);
    if (end == std::string_view::npos) end = vocab_text.size();
    std::string_view line = vocab_text.substr(pos, end - pos);
    // HF trims trailing whitespace (\r of CRLF files included). Only ASCII
    // whitespace is trimmed: bytes 0x85 / 0xA0 end multi-byte characters.
    while (!line.empty() && (line.back() == ' ' || (line.back() >= '\t' && line.back() <= '\r'))) {
      line.remove_suffix(1);
    }
    if (!vocab.find(line)) vocab.add(std::string(line), static_cast<int32_t>(line_no));
    ++line_no;
    pos = end + 1;
  }
  if (!vocab.find("[UNK]")) {
    throw Error(std::string(origin) + ": no [UNK] token in the vocabulary");
  }
  std::vector<AddedToken> added;
  for (const char* name : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}) {
    if (auto id = vocab.find(name)) added.push_back({*id, name, true, false, false, false, false});
  }
  auto cls = vocab.find("[CLS]"), sep = vocab.find("[SEP]");
  PostProcessor post;
  if (cls && sep) post = bert_template(*cls, *sep);
  BertNormalizer bert;
  bert.lowercase = lowercase;
  auto model = std::make_shared<WordPieceModel>(std::move(vocab));
  Decoder decoder;
  decoder.kind = Decoder::Kind::kWordPiece;
  Tokenizer tok(Normalizer({bert}), PreTokenizer({BertPreTokenizer{}}), model, std::move(added),
                std::move(post), decoder);
  tok.set_special_ids(special_ids_from(tok.added_tokens(), *model));
  return tok;
}

Tokenizer Tokenizer::from_file(const std::string& path) {
  const std::string text = read_file(path);
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".txt") == 0) {
    return from_vocab_txt(text, true, path);
  }
  return from_json(text, path);
}

}  // namespace luminal::tokenizer
