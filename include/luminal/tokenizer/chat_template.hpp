#pragma once
// Chat templates for instruct models, implemented as functions rather than a
// Jinja interpreter. ChatML (SmolLM2-Instruct, Qwen):
//   <|im_start|>system\n{system}<|im_end|>\n
//   <|im_start|>user\n{content}<|im_end|>\n
//   ...
//   <|im_start|>assistant\n            (the generation prompt)
// SmolLM2's template inserts a default system message when the conversation
// does not start with one.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace luminal::tokenizer {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant", ...
  std::string content;
};

class ChatTemplate {
public:
  /// ChatML with an optional default system prompt.
  explicit ChatTemplate(std::optional<std::string> default_system_prompt = std::nullopt)
      : default_system_prompt_(std::move(default_system_prompt)) {}

  /// SmolLM2-Instruct's template (its tokenizer.chat_template in the GGUF).
  static ChatTemplate smollm2();
  /// The template a Jinja chat template (GGUF tokenizer.chat_template)
  /// denotes: a ChatML template (one using <|im_start|> / <|im_end|>), with
  /// the default system prompt it inserts when it has one. Throws
  /// luminal::Error for other templates.
  static ChatTemplate from_jinja(std::string_view jinja);

  /// The prompt text for `messages`; add_generation_prompt appends the
  /// assistant header the model continues from.
  std::string apply(const std::vector<ChatMessage>& messages,
                    bool add_generation_prompt = true) const;
  const std::optional<std::string>& default_system_prompt() const { return default_system_prompt_; }

private:
  std::optional<std::string> default_system_prompt_;
};

/// SmolLM2's default system prompt.
inline constexpr std::string_view kSmolLM2SystemPrompt =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face";

}  // namespace luminal::tokenizer
