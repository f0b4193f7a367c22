#include "luminal/tokenizer/chat_template.hpp"

#include "luminal/error.hpp"

namespace luminal::tokenizer {

ChatTemplate ChatTemplate::smollm2() {
  return ChatTemplate(std::string(kSmolLM2SystemPrompt));
}

ChatTemplate ChatTemplate::from_jinja(std::string_view jinja) {
  if (jinja.find("<|im_start|>") == std::string_view::npos ||
      jinja.find("<|im_end|>") == std::string_view::npos) {
    throw Error("chat template: only ChatML templates (<|im_start|> ... <|im_end|>) are supported");
  }
  // A default system message is a string literal "<|im_start|>system\n...<|im_end|>"
  // inside the template; one built from variables (message['content']) is not.
  constexpr std::string_view kHeader = "<|im_start|>system\n";
  const std::size_t at = jinja.find(kHeader);
  if (at == std::string_view::npos) return ChatTemplate();
  const std::size_t begin = at + kHeader.size();
  const std::size_t end = jinja.find("<|im_end|>", begin);
  if (end == std::string_view::npos) return ChatTemplate();
  const std::string_view prompt = jinja.substr(begin, end - begin);
  for (std::string_view syntax : {"{{", "{%", "'", "\"", "+"}) {
    if (prompt.find(syntax) != std::string_view::npos) return ChatTemplate();
  }
  return ChatTemplate(std::string(prompt));
}

std::string ChatTemplate::apply(const std::vector<ChatMessage>& messages,
                                bool add_generation_prompt) const {
  std::string out;
  auto turn = [&out](std::string_view role, std::string_view content) {
    out += "<|im_start|>";
    out += role;
    out += "\n";
    out += content;
    out += "<|im_end|>\n";
  };
  if (default_system_prompt_ && !messages.empty() && messages.front().role != "system") {
    turn("system", *default_system_prompt_);
  }
  for (const ChatMessage& m : messages) turn(m.role, m.content);
  if (add_generation_prompt) out += "<|im_start|>assistant\n";
  return out;
}

}  // namespace luminal::tokenizer
