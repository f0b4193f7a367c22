// The README quick-start, compiled outside the luminal tree.
#include <cstdio>
#include <luminal/luminal.hpp>

int main() {
  luminal::Graph g;
  auto x = g.input("x", {"s", 3});
  auto y = (x * 2.0 + 1.0).sum_reduce(1);  // [s]
  g.output("y", y);

  luminal::Interpreter run(g);
  run.set_input("x",
                luminal::TensorData::from_doubles(luminal::DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  run.run();  // s = 2 is inferred from the input
  const auto& out = run.output("y");
  std::printf("y = [%g, %g]\n", out.get(0), out.get(1));  // [15, 33]
  return out.get(0) == 15.0 && out.get(1) == 33.0 ? 0 : 1;
}
