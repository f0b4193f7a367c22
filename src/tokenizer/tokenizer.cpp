#include "luminal/tokenizer/tokenizer.hpp"

#include <algorithm>
#include <unordered_map>

#include "luminal/error.hpp"
#include "luminal/tokenizer/bpe.hpp"
#include "luminal/tokenizer/byte_level.hpp"
#include "luminal/tokenizer/unicode.hpp"

namespace luminal::tokenizer {
namespace {

namespace uc = unicode;

// Rust regex's \w, which HF uses for single_word: letters, marks, numbers, '_'.
bool is_word_char(char32_t c) {
  const uc::CharClass cls = uc::char_class(c);
  return cls == uc::CharClass::kLetter || cls == uc::CharClass::kNumber ||
         cls == uc::CharClass::kMarkNonspacing || cls == uc::CharClass::kMarkOther || c == U'_';
}

// HF WordPiece decoder cleanup (tokenizers' decoders::wordpiece::cleanup).
std::string wordpiece_cleanup(std::string s) {
  static const std::pair<std::string_view, std::string_view> kReplacements[] = {
      {" .", "."},   {" ?", "?"},     {" !", "!"},     {" ,", ","},
      {" ' ", "'"},  {" n't", "n't"}, {" 'm", "'m"},   {" do not", " don't"},
      {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"},
  };
  for (const auto& [from, to] : kReplacements) {
    std::string out;
    std::size_t pos = 0;
    for (std::size_t hit = s.find(from); hit != std::string::npos; hit = s.find(from, pos)) {
      out.append(s, pos, hit - pos);
      out.append(to);
      pos = hit + from.size();
    }
    out.append(s, pos, std::string::npos);
    s = std::move(out);
  }
  return s;
}

// HF's truncation of one or two sequences to `budget` ids in total
// (TruncationStrategy::LongestFirst, right side).
void truncate_longest_first(std::vector<int32_t>& a, std::vector<int32_t>* b, std::size_t budget) {
  if (b == nullptr) {
    if (a.size() > budget) a.resize(budget);
    return;
  }
  if (a.size() + b->size() <= budget) return;
  std::size_t n1 = a.size(), n2 = b->size();
  const bool swap = n1 > n2;
  if (swap) std::swap(n1, n2);  // n1: the shorter
  n2 = n1 > budget ? n1 : std::max(n1, budget - n1);
  if (n1 + n2 > budget) {
    n1 = budget / 2;
    n2 = n1 + budget % 2;
  }
  if (swap) std::swap(n1, n2);
  if (a.size() > n1) a.resize(n1);
  if (b->size() > n2) b->resize(n2);
}

}  // namespace

void Encoding::pad(std::size_t length, int32_t pad_id) {
  while (ids.size() < length) {
    ids.push_back(pad_id);
    type_ids.push_back(0);
    attention_mask.push_back(0);
    special_tokens_mask.push_back(1);
  }
}

std::size_t PostProcessor::added_count(bool is_pair) const {
  std::size_t n = 0;
  for (const TemplatePiece& p : is_pair ? pair : single) {
    if (p.kind == TemplatePiece::Kind::kSpecial) n += p.ids.size();
  }
  return n;
}

Tokenizer::Tokenizer(Normalizer normalizer, PreTokenizer pre_tokenizer,
                     std::shared_ptr<const Model> model, std::vector<AddedToken> added_tokens,
                     PostProcessor post_processor, Decoder decoder)
    : normalizer_(std::move(normalizer)),
      pre_tokenizer_(std::move(pre_tokenizer)),
      model_(std::move(model)),
      added_(std::move(added_tokens)),
      post_processor_(std::move(post_processor)),
      decoder_(std::move(decoder)) {
  if (!model_) throw Error("Tokenizer: no model");
  for (std::size_t k = 0; k < added_.size(); ++k) {
    const AddedToken& t = added_[k];
    if (t.id < 0) throw Error("Tokenizer: added token '" + t.content + "' has a negative id");
    if (t.content.empty()) {
      throw Error("Tokenizer: added token " + std::to_string(t.id) + " has empty content");
    }
    const std::u32string raw = uc::decode_utf8(t.content);
    added_match_.push_back(t.normalized ? normalizer_.normalize(raw) : raw);
    if (!added_match_.back().empty()) added_first_chars_.push_back(added_match_.back().front());
    added_index_.emplace(t.id, k);  // the first token with an id wins
  }
  std::sort(added_first_chars_.begin(), added_first_chars_.end());
}

const AddedToken* Tokenizer::added_by_id(int32_t id) const {
  auto it = added_index_.find(id);
  return it == added_index_.end() ? nullptr : &added_[it->second];
}

std::vector<Tokenizer::Segment> Tokenizer::split_added(std::u32string_view text,
                                                       bool normalized_pass) const {
  std::vector<Segment> segments;
  // Leftmost-longest matching (HF uses Aho-Corasick with that match kind).
  std::size_t start_offset = 0, i = 0;
  while (i < text.size()) {
    if (!std::binary_search(added_first_chars_.begin(), added_first_chars_.end(), text[i])) {
      ++i;
      continue;
    }
    std::size_t best = added_.size(), best_len = 0;
    for (std::size_t k = 0; k < added_.size(); ++k) {
      if (added_[k].normalized != normalized_pass) continue;
      const std::u32string& m = added_match_[k];
      if (m.size() > best_len && m.size() <= text.size() - i && !m.empty() &&
          m.front() == text[i] && text.compare(i, m.size(), m) == 0) {
        best = k;
        best_len = m.size();
      }
    }
    if (best == added_.size()) {
      ++i;
      continue;
    }
    const AddedToken& tok = added_[best];
    std::size_t start = i, stop = i + best_len;
    i = stop;
    if (tok.single_word && ((start > 0 && is_word_char(text[start - 1])) ||
                            (stop < text.size() && is_word_char(text[stop])))) {
      continue;  // inside a word: ordinary text (the span stays consumed, as in HF)
    }
    if (tok.lstrip) {
      while (start > start_offset && uc::is_whitespace(text[start - 1])) --start;
    }
    if (tok.rstrip) {
      while (stop < text.size() && uc::is_whitespace(text[stop])) ++stop;
    }
    if (start > start_offset) {
      segments.push_back({std::u32string(text.substr(start_offset, start - start_offset)), -1});
    }
    segments.push_back({{}, tok.id});
    start_offset = i = stop;
  }
  if (start_offset < text.size()) {
    segments.push_back({std::u32string(text.substr(start_offset)), -1});
  }
  return segments;
}

std::vector<int32_t> Tokenizer::encode_sequence(std::string_view text) const {
  const bool has_normalized_added =
      std::any_of(added_.begin(), added_.end(), [](const AddedToken& t) { return t.normalized; });
  std::vector<int32_t> ids;
  for (Segment& raw : split_added(uc::decode_utf8(text), false)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    std::u32string normalized =
        normalizer_.empty() ? std::move(raw.text) : normalizer_.normalize(raw.text);
    std::vector<Segment> parts;
    if (has_normalized_added) {
      parts = split_added(normalized, true);
    } else {
      parts.push_back({std::move(normalized), -1});
    }
    for (const Segment& part : parts) {
      if (part.id >= 0) {
        ids.push_back(part.id);
        continue;
      }
      for (const std::u32string& word : pre_tokenizer_.split(part.text)) {
        model_->tokenize(word, ids);
      }
    }
  }
  return ids;
}

Encoding Tokenizer::post_process(std::vector<int32_t> a, const std::vector<int32_t>* b_in,
                                 bool add_special_tokens, std::size_t max_length) const {
  std::vector<int32_t> b_storage;
  std::vector<int32_t>* b = nullptr;
  if (b_in != nullptr) {
    b_storage = *b_in;
    b = &b_storage;
  }
  const bool is_pair = b != nullptr;
  const std::vector<TemplatePiece>& tmpl = is_pair ? post_processor_.pair : post_processor_.single;
  const bool use_template = add_special_tokens && !tmpl.empty();
  if (max_length > 0) {
    const std::size_t added = use_template ? post_processor_.added_count(is_pair) : 0;
    truncate_longest_first(a, b, max_length > added ? max_length - added : 0);
  }

  Encoding enc;
  auto append = [&enc](const std::vector<int32_t>& ids, int32_t type_id, int32_t special) {
    for (int32_t id : ids) {
      enc.ids.push_back(id);
      enc.type_ids.push_back(type_id);
      enc.attention_mask.push_back(1);
      enc.special_tokens_mask.push_back(special);
    }
  };
  if (!use_template) {
    append(a, 0, 0);
    if (b != nullptr) append(*b, 1, 0);
    return enc;
  }
  for (const TemplatePiece& p : tmpl) {
    switch (p.kind) {
      case TemplatePiece::Kind::kSequenceA:
        append(a, p.type_id, 0);
        break;
      case TemplatePiece::Kind::kSequenceB:
        if (b != nullptr) append(*b, p.type_id, 0);
        break;
      case TemplatePiece::Kind::kSpecial:
        append(p.ids, p.type_id, 1);
        break;
    }
  }
  return enc;
}

Encoding Tokenizer::encode(std::string_view text, bool add_special_tokens,
                           std::size_t max_length) const {
  return post_process(encode_sequence(text), nullptr, add_special_tokens, max_length);
}

Encoding Tokenizer::encode_pair(std::string_view first, std::string_view second,
                                bool add_special_tokens, std::size_t max_length) const {
  const std::vector<int32_t> b = encode_sequence(second);
  return post_process(encode_sequence(first), &b, add_special_tokens, max_length);
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool skip_special_tokens) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (const AddedToken* added = added_by_id(id)) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else if (const std::string* token = model_->vocab().token(id)) {
      tokens.push_back(*token);
    }
  }

  std::string out;
  switch (decoder_.kind) {
    case Decoder::Kind::kByteLevel: {
      std::string bytes;
      for (const std::string& token : tokens) {
        // A token whose chars are all byte spellings becomes those bytes; any
        // other token (an added token like "<|im_end|>" with a char outside the
        // map) is taken as its UTF-8 text, as HF's ByteLevel decoder does.
        const std::u32string cps = uc::decode_utf8(token);
        std::string spelled;
        bool all_bytes = true;
        for (char32_t c : cps) {
          auto b = char_to_byte(c);
          if (!b) {
            all_bytes = false;
            break;
          }
          spelled.push_back(static_cast<char>(*b));
        }
        bytes += all_bytes ? spelled : token;
      }
      out = uc::sanitize_utf8(bytes);
      break;
    }
    case Decoder::Kind::kWordPiece:
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        std::string token = tokens[i];
        if (i != 0) {
          if (token.compare(0, decoder_.prefix.size(), decoder_.prefix) == 0 &&
              !decoder_.prefix.empty()) {
            token.erase(0, decoder_.prefix.size());
          } else {
            token.insert(token.begin(), ' ');
          }
        }
        out += decoder_.cleanup ? wordpiece_cleanup(std::move(token)) : token;
      }
      break;
    case Decoder::Kind::kNone:
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (i != 0) out.push_back(' ');
        out += tokens[i];
      }
      break;
  }
  return out;
}

std::vector<std::string> Tokenizer::pre_tokenize(std::string_view text) const {
  std::vector<std::string> out;
  for (const std::u32string& word : pre_tokenizer_.split(uc::decode_utf8(text))) {
    out.push_back(uc::encode_utf8(word));
  }
  return out;
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  for (const AddedToken& t : added_) {
    if (t.content == token) return t.id;
  }
  return model_->vocab().find(token);
}

std::optional<std::string> Tokenizer::id_to_token(int32_t id) const {
  if (const AddedToken* added = added_by_id(id)) return added->content;
  if (const std::string* token = model_->vocab().token(id)) return *token;
  return std::nullopt;
}

int32_t Tokenizer::vocab_size() const {
  int32_t n = model_->vocab().size();
  for (const AddedToken& t : added_) n = std::max(n, t.id + 1);
  return n;
}

bool Tokenizer::is_special(int32_t id) const {
  const AddedToken* added = added_by_id(id);
  return added != nullptr && added->special;
}

std::string Tokenizer::describe() const {
  std::string out = pre_tokenizer_.byte_level() ? "byte-level " : "";
  out += model_->name();
  out += ", " + std::to_string(model_->vocab().count()) + " tokens";
  if (const auto* bpe = dynamic_cast<const BpeModel*>(model_.get())) {
    out += ", " + std::to_string(bpe->merge_count()) + " merges";
  }
  const auto special =
      std::count_if(added_.begin(), added_.end(), [](const AddedToken& t) { return t.special; });
  out += ", " + std::to_string(added_.size()) + " added (" + std::to_string(special) + " special)";
  auto id = [&out](const char* name, const std::optional<int32_t>& v) {
    if (v) out += std::string(", ") + name + " " + std::to_string(*v);
  };
  id("bos", special_ids_.bos);
  id("eos", special_ids_.eos);
  id("cls", special_ids_.cls);
  id("sep", special_ids_.sep);
  return out;
}

}  // namespace luminal::tokenizer
