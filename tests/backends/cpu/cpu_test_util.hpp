#pragma once
// Helpers for the CPU backend tests: seeded random tensors, comparison of a
// CpuProgram against the reference interpreter with per-dtype ulp tolerances,
// and region builders.

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "luminal/backends/cpu/cpu_backend.hpp"
#include "luminal/backends/cpu/program.hpp"
#include "luminal/core/graph.hpp"
#include "luminal/core/tensor.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/egraph/convert.hpp"
#include "luminal/egraph/egraph.hpp"
#include "luminal/egraph/rule_registry.hpp"
#include "luminal/egraph/schedule.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu::testing {

/// Every dtype HLIR ops compute on.
inline constexpr DType kComputeTypes[] = {DType::F32, DType::F16, DType::BF16,
                                          DType::F64, DType::I32, DType::I64,
                                          DType::I8,  DType::U8,  DType::Bool};

/// Random values for a dtype: floats uniform in [lo, hi] (with a sprinkling of
/// special values when `specials`), integers over the dtype's whole range,
/// bools 50/50.
inline TensorData random_tensor(DType d, const std::vector<int64_t>& shape, std::mt19937_64& rng,
                                double lo = -4.0, double hi = 4.0, bool specials = false) {
  TensorData t(d, shape);
  std::uniform_real_distribution<double> real(lo, hi);
  const double special[] = {0.0,
                            -0.0,
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            1.0,
                            -1.0,
                            0.5};
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (is_float(d)) {
      if (specials && rng() % 8 == 0)
        t.set(i, special[rng() % 8]);
      else
        t.set(i, real(rng));
    } else if (d == DType::Bool) {
      t.set_int(i, static_cast<int64_t>(rng() % 2));
    } else {
      t.set_int(i, static_cast<int64_t>(rng()));  // wraps to the dtype's range
    }
  }
  return t;
}

/// One unit in the last place of `v` in dtype d (at least the smallest subnormal).
/// A borrowed copy of `t` whose bytes end right before an inaccessible page:
/// a kernel reading past them faults. Move it into a program (a copy of a
/// borrowed tensor owns a copy of its bytes).
inline TensorData guarded_copy(const TensorData& t) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = t.nbytes(), span = (bytes + page - 1) / page * page;
  void* map =
      mmap(nullptr, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw Error("guarded_copy: mmap failed");
  std::shared_ptr<void> owner(map, [span, page](void* p) { munmap(p, span + page); });
  if (mprotect(static_cast<std::byte*>(map) + span, page, PROT_NONE) != 0)
    throw Error("guarded_copy: mprotect failed");
  std::byte* at = static_cast<std::byte*>(map) + span - bytes;
  std::memcpy(at, t.data(), bytes);
  return TensorData::borrow(t.dtype(), t.shape(), at, std::move(owner));
}
/// Binds guarded_copy(t) to `name` of `program`, moved in so that the kernels
/// read the guarded bytes themselves.
inline void bind_guarded(CpuProgram& program, const std::string& name, const TensorData& t) {
  TensorData guarded = guarded_copy(t);
  const std::byte* at = guarded.data();
  program.set_input(name, std::move(guarded));
  EXPECT_EQ(program.bound_input(name)->data(), at) << name << " was copied";
}

inline double ulp_of(double v, DType d) {
  v = std::fabs(v);
  if (!std::isfinite(v)) return 0.0;
  int frac_bits = 52, min_exp = -1022;
  switch (d) {
    case DType::F32:
      frac_bits = 23, min_exp = -126;
      break;
    case DType::F16:
      frac_bits = 10, min_exp = -14;
      break;
    case DType::BF16:
      frac_bits = 7, min_exp = -126;
      break;
    default:
      break;
  }
  int e = v == 0.0 ? min_exp : std::ilogb(v);
  if (e < min_exp) e = min_exp;
  return std::ldexp(1.0, e - frac_bits);
}

/// Expect `got` to equal `want`: same dtype and shape; integers exactly; floats
/// within `ulps` units in the last place of the expected value (plus `abs_tol`),
/// NaN where NaN is expected, and the same sign of zero when exact (ulps == 0).
inline void expect_close(const TensorData& got, const TensorData& want, double ulps = 0.0,
                         double abs_tol = 0.0, const std::string& what = "") {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  int reported = 0;
  for (int64_t i = 0; i < want.numel() && reported < 5; ++i) {
    if (!is_float(want.dtype())) {
      if (got.get_int(i) != want.get_int(i)) {
        ADD_FAILURE() << what << " element " << i << ": got " << got.get_int(i) << ", want "
                      << want.get_int(i);
        ++reported;
      }
      continue;
    }
    const double g = got.get(i), w = want.get(i);
    bool ok;
    if (std::isnan(w))
      ok = std::isnan(g);
    else if (ulps == 0.0 && abs_tol == 0.0)
      ok = g == w && std::signbit(g) == std::signbit(w);
    else
      ok = g == w || std::fabs(g - w) <= ulps * ulp_of(w, want.dtype()) + abs_tol;
    if (!ok) {
      ADD_FAILURE() << what << " element " << i << " of " << want.describe() << ": got " << g
                    << ", want " << w << " (tolerance " << ulps << " ulp + " << abs_tol << ")";
      ++reported;
    }
  }
}

/// Tolerance per output (ulps, absolute); outputs not listed are exact.
struct Tolerance {
  double ulps = 0.0;
  double abs_tol = 0.0;
};

/// Run `graph` on the reference interpreter and on a CpuProgram (with
/// `options`, e.g. explicit regions) for the same inputs and dims, and compare
/// every output.
inline void expect_matches_interpreter(const Graph& graph,
                                       const std::map<std::string, TensorData>& inputs,
                                       CpuOptions options = {}, const DimMap& dims = {},
                                       const std::map<std::string, Tolerance>& tolerances = {}) {
  Interpreter ref(graph);
  CpuProgram prog(graph, std::move(options));
  for (const auto& [name, data] : inputs) {
    ref.set_input(name, data);
    prog.set_input(name, data);
  }
  ref.run(dims);
  prog.run(dims);
  for (const auto& [name, want] : ref.outputs()) {
    Tolerance tol;
    if (auto it = tolerances.find(name); it != tolerances.end()) tol = it->second;
    expect_close(prog.output(name), want, tol.ulps, tol.abs_tol, "output " + name);
  }
}

/// Regions that fuse each Output node with its producer (when the producer is
/// computed and read by nothing else); every other node gets the default one
/// kernel of its own. Half the kernels of the default, so tests compile faster.
inline std::vector<Region> output_fused_regions(const Graph& g) {
  std::vector<int> uses(g.size(), 0);
  for (const Node& n : g.nodes())
    for (const Operand& o : n.operands) ++uses[o.node];
  std::vector<Region> regions;
  for (NodeId id : g.outputs()) {
    const NodeId p = g.node(id).operands[0].node;
    if (g.node(p).kind != OpKind::Input && uses[p] == 1) regions.push_back({{p, id}, {id}, {}});
  }
  return regions;
}

/// CpuOptions with output_fused_regions(g).
inline CpuOptions fused_outputs(const Graph& g) {
  CpuOptions o;
  o.regions = output_fused_regions(g);
  return o;
}

/// A fresh, empty directory (removed by the destructor) for cache tests.
class TempDir {
public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "luminal-cpu-test-XXXXXX").string();
    path_ = mkdtemp(pattern.data()) ? pattern : std::string();
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

private:
  std::string path_;
};

/// A graph imported into an e-graph and saturated with the CPU backend's rules
/// (the e-graph the search extracts candidates from).
struct SaturatedGraph {
  egraph::EGraph eg;
  egraph::ImportedGraph imp;

  /// Every e-node of `op`, in class order.
  std::vector<egraph::ENodeId> nodes_of(egraph::OpId op) const {
    std::vector<egraph::ENodeId> out;
    for (egraph::ClassId c : eg.class_ids())
      for (egraph::ENodeId n : eg.nodes(c))
        if (eg.op(n) == op) out.push_back(n);
    return out;
  }
};

inline std::unique_ptr<SaturatedGraph> saturate_with_cpu_rules(
    const Graph& g, compiler::MatmulPrecision precision = compiler::MatmulPrecision::High) {
  auto s = std::make_unique<SaturatedGraph>();
  egraph::RuleRegistry registry(egraph::RuleRegistry::global());
  CpuBackend backend;
  backend.register_rules(registry, precision);
  s->imp = egraph::import_graph(s->eg, g);
  egraph::run_schedule(s->eg, registry.pipeline(), registry, {});
  return s;
}

}  // namespace luminal::cpu::testing
