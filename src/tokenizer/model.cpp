#include "luminal/tokenizer/model.hpp"

#include "luminal/error.hpp"

namespace luminal::tokenizer {

void Vocab::add(std::string token, int32_t id) {
  if (id < 0) {
    throw Error("tokenizer vocabulary: token '" + token + "' has negative id " +
                std::to_string(id));
  }
  const auto index = static_cast<std::size_t>(id);
  if (index >= id_to_token_.size()) {
    id_to_token_.resize(index + 1);
    present_.resize(index + 1, false);
  }
  if (present_[index]) {
    throw Error("tokenizer vocabulary: id " + std::to_string(id) + " is given to both '" +
                id_to_token_[index] + "' and '" + token + "'");
  }
  present_[index] = true;
  id_to_token_[index] = token;
  token_to_id_.emplace(std::move(token), id);
}

std::optional<int32_t> Vocab::find(std::string_view token) const {
  auto it = token_to_id_.find(token);
  if (it == token_to_id_.end()) return std::nullopt;
  return it->second;
}

const std::string* Vocab::token(int32_t id) const {
  if (id < 0 || id >= size() || !present_[static_cast<std::size_t>(id)]) return nullptr;
  return &id_to_token_[static_cast<std::size_t>(id)];
}

}  // namespace luminal::tokenizer
