// luminal-demo: the quick-start graph from the README, run on the reference
// interpreter. This is the main-job command until the model work lands.
#include <cstdio>
#include <cstring>
#include <exception>

#include "luminal/luminal.hpp"

int main(int argc, char** argv) {
  using namespace luminal;
  int64_t s = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf(
          "usage: luminal-demo [--seq N] [--dump]\n"
          "Builds softmax(x @ w) for x: f32[s, 4] and w: f32[4, 3] with symbolic s,\n"
          "runs it on the reference interpreter for s = N (default 3) and prints it.\n"
          "  --dump   also print the HLIR graph as text\n");
      return 0;
    }
  }
  bool dump = false;
  try {
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--seq") && i + 1 < argc)
        s = std::stoll(argv[++i]);
      else if (!std::strcmp(argv[i], "--dump"))
        dump = true;
      else
        throw Error(std::string("unknown argument: ") + argv[i] + " (see --help)");
    }
    if (s < 1) throw Error("--seq must be >= 1");

    Graph g;
    Tensor x = g.input("x", {"s", 4});
    Tensor w = g.weight("w", {4, 3});
    // matmul = broadcast multiply + sum over the shared axis: [s,4,1] * [1,4,3] -> [s,3]
    Tensor logits = (x.unsqueeze(2) * w.unsqueeze(0)).sum_reduce(1);
    // softmax over the last axis: exp(v - max) / sum(exp(v - max)), exp(v) = exp2(v * log2(e))
    Tensor shifted = logits - logits.max_reduce(1).unsqueeze(1).expand(logits.shape());
    Tensor e = (shifted * 1.4426950408889634).exp2();
    Tensor probs = e / e.sum_reduce(1).unsqueeze(1).expand(e.shape());
    g.output("probs", probs);
    if (dump) std::printf("%s\n", g.to_text().c_str());

    Interpreter interp(g);
    std::vector<double> xs, ws;
    for (int64_t i = 0; i < s * 4; ++i) xs.push_back(0.25 * static_cast<double>(i % 7) - 0.5);
    for (int64_t i = 0; i < 12; ++i) ws.push_back(0.1 * static_cast<double>(i) - 0.6);
    interp.set_input("x", TensorData::from_doubles(DType::F32, {s, 4}, xs));
    interp.set_input("w", TensorData::from_doubles(DType::F32, {4, 3}, ws));
    interp.run();
    const TensorData& out = interp.output("probs");
    std::printf("softmax(x @ w) for s = %lld: %s\n", static_cast<long long>(s),
                out.describe().c_str());
    for (int64_t r = 0; r < s; ++r) {
      std::printf(" ");
      for (int64_t c = 0; c < 3; ++c) std::printf(" %.6f", out.get(r * 3 + c));
      std::printf("\n");
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "luminal-demo: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
