// The `luminal` command as a library function: help, usage errors, info on a
// small GGUF, exit codes. (Generation through the command is tested from
// Python on the real SmolLM2, python/tests/test_models_smollm2.py.)

#include "luminal/cli/cli.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/io/gguf_writer.hpp"

namespace luminal::cli {
namespace {

struct Result {
  int code;
  std::string out, err;
};

Result run_cli(std::vector<std::string> args) {
  args.insert(args.begin(), "luminal");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = run(static_cast<int>(args.size()), argv.data());
  Result r{code, testing::internal::GetCapturedStdout(), testing::internal::GetCapturedStderr()};
  return r;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(Cli, HelpForEveryCommand) {
  for (const std::string command : {"generate", "embed", "info"}) {
    const Result r = run_cli({command, "--help"});
    EXPECT_EQ(r.code, 0) << command;
    EXPECT_TRUE(r.out.starts_with("usage: luminal " + command)) << r.out;
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
  const Result g = run_cli({"generate", "-h"});
  for (const char* option : {"--model", "--prompt", "--max-tokens", "--temperature", "--top-k",
                             "--top-p", "--seed", "--chat", "--json", "--greedy"})
    EXPECT_TRUE(contains(g.out, option)) << option;
  const Result top = run_cli({"--help"});
  EXPECT_EQ(top.code, 0);
  EXPECT_TRUE(contains(top.out, "generate") && contains(top.out, "embed") &&
              contains(top.out, "info"));
}

TEST(Cli, UsageErrorsExitWithTwo) {
  Result r = run_cli({"generate", "--prompt", "hi"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "missing required option --model")) << r.err;
  EXPECT_TRUE(r.out.empty());
  r = run_cli({"generate", "--model", "x", "--prompt", "hi", "--max-tokens", "ten"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--max-tokens")) << r.err;
  r = run_cli({"generate", "--model", "x", "--prompt", "hi", "--temperature", "-1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "temperature")) << r.err;
  r = run_cli({"generate", "--model", "x", "--prompt", "hi", "--matmul-precision", "low"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--matmul-precision") && contains(r.err, "\"low\"")) << r.err;
  r = run_cli({"embed", "--model", "x", "--frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "--frobnicate")) << r.err;
  r = run_cli({"embed", "--model", "x"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "no TEXT")) << r.err;
  r = run_cli({"info"});
  EXPECT_EQ(r.code, 2);
  r = run_cli({"compile-everything"});
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.err, "unknown command 'compile-everything'")) << r.err;
}

TEST(Cli, MissingModelFileIsAnError) {
  io_test::TempDir dir;
  const std::string missing = dir.file("nope.gguf");
  Result r = run_cli({"generate", "--model", missing, "--prompt", "hi", "--quiet"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, missing) && contains(r.err, "no such file")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  r = run_cli({"info", missing});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "nope.gguf")) << r.err;
  r = run_cli({"embed", "--model", dir.file(""), "text", "--quiet"});
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(contains(r.err, "config.json")) << r.err;
}

TEST(Cli, InfoDescribesAGguf) {
  io_test::TempDir dir;
  GGUFWriter w;
  w.add_string("general.architecture", "llama");
  w.add_u32("llama.block_count", 2);
  w.add_u32("llama.embedding_length", 8);
  w.add_u32("llama.feed_forward_length", 16);
  w.add_u32("llama.attention.head_count", 2);
  w.add_u32("llama.vocab_size", 4);
  w.add_tensor("token_embd.weight", TensorData::full(DType::F32, {4, 8}, 0.5));
  w.add_tensor("blk.0.attn_q.weight", TensorData::full(DType::F16, {8, 8}, 0.25));
  w.write(dir.file("m.gguf"));
  const Result r = run_cli({"info", dir.file("m.gguf")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "architecture: llama")) << r.out;
  EXPECT_TRUE(contains(r.out, "F16")) << r.out;
  EXPECT_TRUE(contains(r.out, "model: llama: 2 layers, hidden 8, 2 heads / 2 kv heads")) << r.out;
  EXPECT_TRUE(contains(r.out, "tokenizer: none")) << r.out;
}

}  // namespace
}  // namespace luminal::cli
