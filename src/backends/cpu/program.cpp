#include "luminal/backends/cpu/program.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

#include "luminal/backends/cpu/attention_kernel.hpp"
#include "luminal/backends/cpu/library_kernels.hpp"
#include "luminal/backends/cpu/memory_plan.hpp"
#include "luminal/error.hpp"
#include "luminal/reference/interpreter.hpp"

namespace luminal::cpu {

struct CpuProgram::Buffer {
  NodeId node = 0;
  bool user_output = false;  // an Output node: written into outputs_[name]
  int first_step = 0;        // the kernel that writes it
  int last_step = 0;         // the last kernel that reads it
};

namespace {

constexpr int64_t kMinWorkPerChunk = int64_t{1} << 15;
// A run with a deadline (a bounded profile run) cuts each parallel launch
// into this many pieces per thread and skips the pieces left once past it: a
// naive candidate's single kernel can take a second at the decode point.
constexpr int kDeadlinePiecesPerThread = 8;

std::string label(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string s = std::string(op_name(n.kind)) + " %" + std::to_string(id);
  if (!n.name.empty()) s += " \"" + n.name + "\"";
  return s;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<int64_t> concrete(const std::vector<Expr>& shape, const DimMap& dims) {
  std::vector<int64_t> out;
  for (const Expr& d : shape) out.push_back(d.eval(dims));
  return out;
}

int64_t numel(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// Nodes the graph's outputs depend on.
std::vector<bool> needed_nodes(const Graph& g) {
  std::vector<bool> needed(g.size(), false);
  for (NodeId id : g.outputs()) needed[id] = true;
  for (NodeId id = static_cast<NodeId>(g.size()); id-- > 0;)
    if (needed[id])
      for (const Operand& o : g.node(id).operands) needed[o.node] = true;
  return needed;
}

// Check that `regions` partition the needed non-Input nodes, fill in missing
// outputs, and order the regions so that producers run first.
std::vector<Region> resolve_regions(const Graph& g, std::vector<Region> regions) {
  const std::vector<bool> needed = needed_nodes(g);
  constexpr size_t kNone = SIZE_MAX;
  std::vector<size_t> region_of(g.size(), kNone);
  for (size_t r = 0; r < regions.size(); ++r) {
    for (NodeId n : regions[r].nodes) {
      if (n >= g.size())
        throw Error("CpuProgram: region " + std::to_string(r) + " names node %" +
                    std::to_string(n) + ", but the graph has " + std::to_string(g.size()) +
                    " nodes");
      if (region_of[n] != kNone)
        throw Error("CpuProgram: " + label(g, n) + " is in regions " +
                    std::to_string(region_of[n]) + " and " + std::to_string(r));
      region_of[n] = r;
    }
  }
  // Needed nodes in no region: one kernel each (the unfused default).
  for (NodeId n = 0; n < g.size(); ++n) {
    if (needed[n] && g.node(n).kind != OpKind::Input && region_of[n] == kNone) {
      region_of[n] = regions.size();
      regions.push_back({{n}, {}, {}});
    }
  }

  // Outputs: members read outside their region (by needed nodes) and Output nodes.
  for (size_t r = 0; r < regions.size(); ++r) {
    std::set<NodeId> required;
    for (NodeId n : regions[r].nodes)
      if (g.node(n).kind == OpKind::Output) required.insert(n);
    for (NodeId c = 0; c < g.size(); ++c) {
      if (!needed[c] || region_of[c] == r) continue;
      for (const Operand& o : g.node(c).operands)
        if (o.node < g.size() && region_of[o.node] == r) required.insert(o.node);
    }
    Region& region = regions[r];
    if (region.outputs.empty()) {
      region.outputs.assign(required.begin(), required.end());
    } else {
      for (NodeId n : required)
        if (std::find(region.outputs.begin(), region.outputs.end(), n) == region.outputs.end())
          throw Error("CpuProgram: " + label(g, n) +
                      " is used outside its region (or is a graph output) but is not one of "
                      "the region's outputs");
    }
  }

  // Topological order of the regions (Kahn; ties: the region with the smallest node id).
  const size_t count = regions.size();
  std::vector<std::set<size_t>> deps(count);
  for (size_t r = 0; r < count; ++r)
    for (NodeId n : regions[r].nodes)
      for (const Operand& o : g.node(n).operands)
        if (region_of[o.node] != kNone && region_of[o.node] != r) deps[r].insert(region_of[o.node]);
  std::vector<NodeId> key(count);
  for (size_t r = 0; r < count; ++r)
    key[r] = regions[r].nodes.empty()
                 ? 0
                 : *std::min_element(regions[r].nodes.begin(), regions[r].nodes.end());
  std::vector<Region> ordered;
  std::vector<bool> done(count, false);
  while (ordered.size() < count) {
    size_t pick = kNone;
    for (size_t r = 0; r < count; ++r) {
      if (done[r]) continue;
      bool ready = std::all_of(deps[r].begin(), deps[r].end(), [&](size_t d) { return done[d]; });
      if (ready && (pick == kNone || key[r] < key[pick])) pick = r;
    }
    if (pick == kNone)
      throw Error(
          "CpuProgram: the regions depend on each other in a cycle (a region must not "
          "both feed and read another region)");
    done[pick] = true;
    ordered.push_back(std::move(regions[pick]));
  }
  return ordered;
}

// A kernel's source with its own name replaced by `name` and the comment
// listing its region's node ids emptied (the line kept, so that a compiler's
// line numbers are the kernel's): with a placeholder, equal for kernels that
// compute the same thing on other buffers.
std::string renamed_source(const CpuKernel& k, const std::string& name) {
  std::string out;
  size_t pos = 0;
  const std::string& code = k.code;
  while (pos < code.size()) {
    size_t end = code.find('\n', pos);
    if (end == std::string::npos) end = code.size();
    std::string_view line(code.data() + pos, end - pos);
    if (line.rfind("// region:", 0) == 0) {
      out += "// region: (node ids left out: one copy serves every program with this kernel)\n";
    } else {
      size_t at = 0;
      while (at < line.size()) {
        const size_t hit = line.find(k.name, at);
        if (hit == std::string_view::npos) {
          out.append(line.substr(at));
          break;
        }
        out.append(line.substr(at, hit - at));
        out += name;
        at = hit + k.name.size();
      }
      out += '\n';
    }
    pos = end + 1;
  }
  return out;
}

// The name a kernel is compiled under: its source's hash, then the
// operations of its display name ("k137_cast_mul_sumreduce" -> "h<16 hex>_
// cast_mul_sumreduce"). Node ids, which the display name starts with, differ
// between the search's candidates for the same kernel; the kernel cache is
// keyed by the source, so one compiled copy then serves every candidate (a
// SmolLM2 search compiled 71 quantized products for 27 distinct ones).
std::string compiled_name(const CpuKernel& k, const std::string& name_free) {
  const size_t ops = k.name.find('_');
  return "h" + content_hash(name_free).substr(0, 16) +
         (ops == std::string::npos ? std::string() : k.name.substr(ops));
}

}  // namespace

CpuProgram::CpuProgram(const Graph& graph, CpuOptions options) : graph_(graph) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<bool> needed = needed_nodes(graph_);
  for (NodeId id : graph_.inputs())
    if (needed[id]) needed_inputs_.push_back(id);
  if (options.num_threads > 0) {
    own_pool_ = std::make_unique<ThreadPool>(options.num_threads);
    pool_ = own_pool_.get();
  } else {
    pool_ = &ThreadPool::shared();
  }
  const std::vector<Region> regions = resolve_regions(graph, std::move(options.regions));

  for (const Region& r : regions) {
    // Library kernels for the groups that have one; generated loops otherwise
    // (and whenever a library kernel does not apply to the members).
    const std::string kname = region_kernel_name(graph, r);
    std::optional<CpuKernel> library;
    if (r.kernel_op == "CpuSgemm") library = generate_sgemm_kernel(graph, r, kname);
    if (r.kernel_op == "CpuQMatMul") library = generate_qmatmul_kernel(graph, r, kname);
    if (r.kernel_op == "CpuQMatMulInt16" || r.kernel_op == "CpuMatMulInt16")
      library = generate_qmatmul_kernel(graph, r, kname, QMatMulArithmetic::Int16);
    if (r.kernel_op == "CpuMatMulAmx") library = generate_amx_matmul_kernel(graph, r, kname);
    if (r.kernel_op == "CpuQMatMulAmx")
      library = generate_qmatmul_kernel(graph, r, kname, QMatMulArithmetic::Amx);
    if (r.kernel_op == "CpuSgemmEpilogue")
      library = generate_sgemm_epilogue_kernel(graph, r, kname);
    if (r.kernel_op == "CpuAttention") library = generate_attention_kernel(graph, r, kname);
    kernels_.push_back(library ? std::move(*library) : generate_kernel(graph, r, kname));
    kernels_.back().kernel_op = r.kernel_op;
    if (options.kernel_hook) options.kernel_hook(kernels_.back());
  }
  // Kernels whose source differs only in their name (the same layer repeated
  // 30 times) are compiled once, under a name from their source
  // (compiled_name): every copy calls that one's entry points, so the
  // compiler sees one layer's worth of code, not the model's, and the next
  // program holding the same kernel finds it in the cache.
  std::vector<JitKernel> sources;
  std::vector<size_t> source_of(kernels_.size());
  std::vector<std::string> compiled;  // per source
  // Kernel k's entry point `symbol` under the name its source is compiled as.
  auto compiled_symbol = [&](std::string symbol, size_t k) {
    if (const size_t at = symbol.find(kernels_[k].name); at != std::string::npos)
      symbol.replace(at, kernels_[k].name.size(), compiled[source_of[k]]);
    return symbol;
  };
  std::unordered_map<std::string, size_t> seen;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const std::string name_free = renamed_source(kernels_[k], "@K");
    auto [it, fresh] = seen.emplace(name_free, sources.size());
    source_of[k] = it->second;
    if (!fresh) continue;
    compiled.push_back(compiled_name(kernels_[k], name_free));
    JitKernel j = kernels_[k].jit();  // (its display name, for messages)
    j.code = renamed_source(kernels_[k], compiled.back());
    for (std::string& symbol : j.symbols) symbol = compiled_symbol(symbol, k);
    sources.push_back(std::move(j));
  }
  JitCompiler jit(std::move(options.jit));
  const auto libraries = jit.build(kernel_prelude(), sources);
  for (size_t k = 0; k < kernels_.size(); ++k) {
    libraries_.push_back(libraries[source_of[k]]);
    first_entry_.push_back(entries_.size());
    for (const KernelLaunch& l : kernels_[k].launches) {
      const std::string symbol = compiled_symbol(l.symbol, k);
      entries_.push_back(reinterpret_cast<KernelEntry>(libraries_[k]->symbol(symbol)));
    }
  }
  stats_.distinct_kernels = sources.size();
  stats_.kernels = kernels_.size();
  stats_.kernels_from_cache = jit.stats().kernels_from_cache;
  stats_.kernels_compiled = jit.stats().kernels_compiled;

  // Buffers and lifetimes (steps = kernel indexes).
  for (size_t k = 0; k < kernels_.size(); ++k) {
    for (NodeId out : kernels_[k].outputs) {
      Buffer b;
      b.node = out;
      b.user_output = graph.node(out).kind == OpKind::Output;
      b.first_step = b.last_step = static_cast<int>(k);
      buffer_of_[out] = buffers_.size();
      buffers_.push_back(b);
    }
  }
  // A graph output that only copies another kernel's result (a contiguous
  // view of the same dtype and size): that kernel writes straight into the
  // output tensor and the copy is not launched (it cost a softmax a third of
  // its time). A Scatter keeps its copy: it may become an in-place state
  // update (update_in_place).
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (kernels_[k].outputs.size() != 1) continue;
    const Node& on = graph.node(kernels_[k].outputs[0]);
    if (on.kind != OpKind::Output || on.operands.size() != 1) continue;
    const Operand& src = on.operands[0];
    const Node& pn = graph.node(src.node);
    const auto pb = buffer_of_.find(src.node);
    if (pb == buffer_of_.end() || buffers_[pb->second].user_output || forwarded_.count(src.node) ||
        pn.kind == OpKind::Scatter || pn.dtype != on.dtype || !src.view.is_contiguous() ||
        !(View::contiguous(pn.shape).numel() == View::contiguous(on.shape).numel()))
      continue;
    forwarded_[src.node] = on.name;
    ++stats_.outputs_written_by_producer;
    skip_kernel_.resize(kernels_.size(), false);
    skip_kernel_[k] = true;
  }
  for (size_t k = 0; k < kernels_.size(); ++k)
    for (NodeId in : kernels_[k].inputs)
      if (auto it = buffer_of_.find(in); it != buffer_of_.end())
        buffers_[it->second].last_step =
            std::max(buffers_[it->second].last_step, static_cast<int>(k));
  input_data_.assign(graph.size(), nullptr);
  buffer_index_.assign(graph.size(), kNoBuffer);
  for (const auto& [node, b] : buffer_of_) buffer_index_[node] = b;
  for (NodeId id : graph.inputs())
    if (!graph.node(id).persistent) transient_inputs_.push_back(id);
  inputs_with_dims_ = inputs_with_dims(graph);
  if (const char* env = std::getenv("LUMINAL_PROFILE_KERNELS");
      env != nullptr && (*env == '1' || std::string(env) == "all")) {
    profile_.assign(kernels_.size(), 0.0);
    profile_all_ = std::string(env) == "all";
  }
  stats_.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TensorData CpuProgram::take_output(const std::string& name) {
  auto it = outputs_.find(name);
  if (it == outputs_.end()) return output(name);  // in place (a copy), or the error
  TensorData out = std::move(it->second);
  outputs_.erase(it);
  return out;
}

bool CpuProgram::update_in_place(const std::string& name) {
  if (in_place_.count(name)) return true;
  const auto out = graph_.find_output(name);
  if (!out) return false;
  const Node& o = graph_.node(*out);
  const NodeId s = o.operands[0].node;
  const Node& sn = graph_.node(s);
  if (sn.kind != OpKind::Scatter || !o.operands[0].view.is_contiguous()) return false;
  // The Scatter's destination is the whole input read in order (any reshape),
  // and the output is the input's shape: the updated input *is* the output.
  const Operand& dest = sn.operands[0];
  const Node& in = graph_.node(dest.node);
  if (in.kind != OpKind::Input || !in.persistent || !dest.view.is_contiguous() ||
      in.shape != o.shape ||
      !(View::contiguous(in.shape).numel() == View::contiguous(sn.shape).numel()))
    return false;
  // Nothing but this Scatter (as its destination) may read the input: the
  // Scatter's buffer becomes the input, so the old values are gone once it
  // runs (its own readers read the updated values, as they should).
  const std::vector<bool> needed = needed_nodes(graph_);
  for (NodeId id = 0; id < graph_.size(); ++id) {
    if (!needed[id]) continue;
    const Node& n = graph_.node(id);
    for (size_t k = 0; k < n.operands.size(); ++k)
      if (n.operands[k].node == dest.node && !(id == s && k == 0)) return false;
  }
  size_t sk = kernels_.size(), ok = kernels_.size();
  for (size_t k = 0; k < kernels_.size(); ++k) {
    if (kernels_[k].outputs == std::vector<NodeId>{s}) sk = k;
    if (kernels_[k].outputs == std::vector<NodeId>{*out}) ok = k;
  }
  if (sk == kernels_.size() || ok == kernels_.size() || kernels_[sk].launches.size() != 2)
    return false;
  skip_kernel_.resize(kernels_.size(), false);
  skip_first_launch_.resize(kernels_.size(), false);
  skip_kernel_[ok] = true;
  skip_first_launch_[sk] = true;
  aliased_[s] = dest.node;
  in_place_[name] = in.name;
  in_place_inputs_.insert(in.name);
  // The last run's updated state becomes the bound input (as a caller
  // rebinding it would have done).
  if (auto it = outputs_.find(name); it != outputs_.end()) {
    bind(dest.node, std::move(it->second));
    outputs_.erase(it);
  } else if (auto b = inputs_.find(in.name); b != inputs_.end() && b->second.borrowed()) {
    b->second = TensorData(b->second);  // as set_input: written from now on
  }
  planned_ = false;
  return true;
}

CpuProgram::~CpuProgram() {
  if (profile_.empty()) return;
  // LUMINAL_PROFILE_KERNELS=1: where the run time went, the slowest kernels
  // first; =all: every kernel, in execution order.
  std::vector<size_t> order(kernels_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!profile_all_)
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return profile_[a] > profile_[b]; });
  double total = 0;
  for (double t : profile_) total += t;
  std::fprintf(
      stderr,
      "[cpu profile] %zu kernels, %.3f ms in total; %lld runs, %.3f ms in run() "
      "(%.3f ms per run outside the kernels' launches)\n",
      kernels_.size(), total * 1e3, static_cast<long long>(profile_runs_), profile_run_s_ * 1e3,
      (profile_run_s_ - total) * 1e3 / static_cast<double>(std::max<int64_t>(1, profile_runs_)));
  for (size_t i = 0; i < order.size() && (profile_all_ || i < 25); ++i)
    std::fprintf(stderr, "  %9.3f ms %5.1f%%  %s%s%s%s\n", profile_[order[i]] * 1e3,
                 100 * profile_[order[i]] / std::max(total, 1e-12), kernels_[order[i]].name.c_str(),
                 kernels_[order[i]].kernel_op.empty() ? "" : " (",
                 kernels_[order[i]].kernel_op.c_str(),
                 kernels_[order[i]].kernel_op.empty() ? "" : ")");
}

void CpuProgram::set_input(const std::string& name, TensorData data) {
  check_input(graph_, name, data);
  // State updated in place is written to: never into memory owned elsewhere
  // (a caller's numpy array, a read-only file mapping). Copying a borrowed
  // tensor copies its bytes into owned storage.
  if (data.borrowed() && in_place_inputs_.count(name)) data = TensorData(data);
  bind(*graph_.find_input(name), std::move(data));
  input_versions_[name] = ++next_version_;
}

void CpuProgram::bind(NodeId input, TensorData data) {
  TensorData& slot = inputs_[graph_.node(input).name];
  slot = std::move(data);
  input_data_[input] = &slot;
}

const TensorData* CpuProgram::bound_input(const std::string& name) const {
  auto it = inputs_.find(name);
  return it == inputs_.end() ? nullptr : &it->second;
}

bool CpuProgram::has_input(const std::string& name) const {
  return inputs_.count(name) > 0;
}

const TensorData& CpuProgram::output(const std::string& name) const {
  if (auto st = in_place_.find(name); st != in_place_.end()) {
    auto in = inputs_.find(st->second);
    if (in == inputs_.end())
      throw LookupError("output \"" + name + "\" is input \"" + st->second +
                        "\" updated in place, which is not set");
    return in->second;
  }
  auto it = outputs_.find(name);
  if (it == outputs_.end()) {
    if (graph_.find_output(name))
      throw LookupError("output \"" + name + "\" is not available: call run() first");
    throw LookupError("the graph has no output named \"" + name + "\"");
  }
  return it->second;
}

namespace {
// The room a size that depends on dims gets in the plan: rounded up to an
// eighth of its power of two (at least 64 bytes), so that a size growing a
// little per run (a decode step's [p + s] rows) keeps its place for many runs.
size_t with_headroom(size_t bytes) {
  if (bytes == 0) return 0;
  const size_t granule = std::max<size_t>(64, std::bit_floor(bytes) / 8);
  return (bytes + granule - 1) / granule * granule;
}
}  // namespace

size_t CpuProgram::planned_size(const SizedEntry& e, const DimMap& dims) const {
  if (e.scratch)
    return static_cast<size_t>(std::max<int64_t>(0, kernels_[e.index].scratch_bytes.eval(dims)));
  const Node& n = graph_.node(buffers_[e.index].node);
  return storage_bytes(n.dtype, numel(concrete(n.shape, dims)));
}

void CpuProgram::plan(const DimMap& dims) {
  // The plan stays while every size that depends on dims fits its room and
  // is more than half of it (a plan for far larger dims is made again, which
  // lowers the reported peak): planning every run cost ~1 ms of a 6 ms
  // decode step of SmolLM2, whose cache position changes every run.
  // Only the sizes that use a dim whose value changed are computed again.
  auto values = [&] {
    std::vector<std::optional<int64_t>> v;
    for (const std::string& name : plan_vars_) {
      const auto it = dims.find(name);
      v.push_back(it == dims.end() ? std::nullopt : std::optional<int64_t>(it->second));
    }
    return v;
  };
  if (planned_) {
    const std::vector<std::optional<int64_t>> now = values();
    uint64_t changed = 0;
    for (size_t v = 0; v < now.size(); ++v)
      if (now[v] != plan_var_values_[v]) changed |= var_bit(v);
    if (changed == 0) return;
    bool keep = true;
    for (const SizedEntry& e : sized_) {
      if ((e.vars & changed) == 0) continue;
      const size_t bytes = planned_size(e, dims);
      keep = keep && bytes <= e.room && 2 * bytes > e.room;
      if (!keep) break;
    }
    if (keep) {
      plan_var_values_ = now;
      return;
    }
  }
  sized_.clear();
  plan_vars_.clear();
  // The bits of the dims `e` uses (plan_vars_ grows as they are met).
  auto vars_of = [&](const Expr& e) {
    uint64_t mask = 0;
    for (const std::string& name : e.variables()) {
      auto at = std::find(plan_vars_.begin(), plan_vars_.end(), name);
      if (at == plan_vars_.end()) at = plan_vars_.insert(plan_vars_.end(), name);
      mask |= var_bit(static_cast<size_t>(at - plan_vars_.begin()));
    }
    return mask;
  };
  std::vector<BufferLifetime> lifetimes;
  std::vector<size_t> arena_buffers;
  for (size_t b = 0; b < buffers_.size(); ++b) {
    const Buffer& buf = buffers_[b];
    if (buf.user_output || aliased_.count(buf.node) || forwarded_.count(buf.node)) continue;
    const Node& n = graph_.node(buf.node);
    SizedEntry e{b, false, 0, 0};
    size_t bytes = planned_size(e, dims);
    for (const Expr& d : n.shape) e.vars |= vars_of(d);
    if (e.vars != 0) {
      bytes = e.room = with_headroom(bytes);
      sized_.push_back(e);
    }
    lifetimes.push_back({bytes, buf.first_step, buf.last_step});
    arena_buffers.push_back(b);
  }
  // Kernels' scratch: alive during their own step only.
  std::vector<size_t> scratch_kernels;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    SizedEntry e{k, true, 0, vars_of(kernels_[k].scratch_bytes)};
    size_t bytes = planned_size(e, dims);
    if (e.vars != 0) {
      bytes = e.room = with_headroom(bytes);
      sized_.push_back(e);
    }
    if (bytes == 0) continue;
    lifetimes.push_back({bytes, static_cast<int>(k), static_cast<int>(k)});
    scratch_kernels.push_back(k);
  }
  const MemoryPlan p = plan_memory(lifetimes, 64);
  offsets_.assign(buffers_.size(), 0);
  for (size_t i = 0; i < arena_buffers.size(); ++i) offsets_[arena_buffers[i]] = p.offsets[i];
  scratch_offsets_.assign(kernels_.size(), 0);
  for (size_t i = 0; i < scratch_kernels.size(); ++i)
    scratch_offsets_[scratch_kernels[i]] = p.offsets[arena_buffers.size() + i];
  if (p.arena_bytes + 64 > arena_.size()) {
    arena_.clear();
    arena_.shrink_to_fit();
    arena_.resize(p.arena_bytes + 64);
  }
  const auto raw = reinterpret_cast<uintptr_t>(arena_.data());
  arena_base_ = arena_.data() + ((64 - raw % 64) % 64);
  stats_.arena_bytes = p.arena_bytes;
  stats_.live_peak_bytes = p.live_peak_bytes;
  ++stats_.plans;
  plan_var_values_ = values();
  planned_ = true;
}

std::byte* CpuProgram::address(NodeId node) {
  const Node& n = graph_.node(node);
  auto bound = [&](NodeId input) {
    TensorData* t = input_data_[input];
    if (t == nullptr) throw LookupError("input \"" + graph_.node(input).name + "\" is not set");
    return t->data();
  };
  if (n.kind == OpKind::Input) return bound(node);
  if (!aliased_.empty())
    if (auto it = aliased_.find(node); it != aliased_.end()) return bound(it->second);
  if (!forwarded_.empty())
    if (auto it = forwarded_.find(node); it != forwarded_.end())
      return outputs_.at(it->second).data();
  const size_t b = buffer_index_[node];
  if (b == kNoBuffer) throw Error("CpuProgram: no kernel computes node " + label(graph_, node));
  if (buffers_[b].user_output) return outputs_.at(n.name).data();
  return arena_base_ + offsets_[b];
}

void CpuProgram::launch(size_t k, const DimMap& dims) {
  const CpuKernel& kernel = kernels_[k];
  std::vector<void*>& buffers = launch_buffers_;
  buffers.clear();
  for (NodeId n : kernel.inputs) buffers.push_back(address(n));
  for (NodeId n : kernel.outputs) buffers.push_back(address(n));
  if (!kernel.scratch_bytes.is_const() || kernel.scratch_bytes.value() != 0)
    buffers.push_back(kernel.scratch_bytes.eval(dims) > 0 ? arena_base_ + scratch_offsets_[k]
                                                          : nullptr);
  size_t first_launch = k < skip_first_launch_.size() && skip_first_launch_[k] ? 1 : 0;
  const PackPlan pack = plan_pack(k, dims, buffers);
  if (pack.up_to_date) first_launch = std::max(first_launch, kernel.pack_launches);
  for (void* p : kernel.host_pointers) buffers.push_back(p);
  std::vector<int64_t>& dim_values = launch_dims_;
  dim_values.clear();
  for (const std::string& d : kernel.dims) {
    auto it = dims.find(d);
    if (it == dims.end())
      throw LookupError("kernel " + kernel.name + " needs dim '" + d +
                        "', which neither the inputs nor the given dims determine");
    dim_values.push_back(it->second);
  }
  for (size_t l = first_launch; l < kernel.launches.size(); ++l) {
    const KernelLaunch& launch = kernel.launches[l];
    const KernelEntry entry = entries_[first_entry_[k] + l];
    const int64_t extent = launch.extent.eval(dims);
    if (extent <= 0) continue;
    int chunks = 1;
    if (launch.parallel) {
      const int64_t work = extent * std::max<int64_t>(1, launch.work_per_item.eval(dims));
      chunks = static_cast<int>(std::clamp<int64_t>(work / kMinWorkPerChunk, 1, pool_->size()));
    }
    // (not a BLAS call: it runs its own threads once per piece)
    const bool piecewise = deadline_ && chunks > 1 && !launch.own_threads;
    if (piecewise)
      chunks =
          static_cast<int>(std::min<int64_t>(extent, int64_t{chunks} * kDeadlinePiecesPerThread));
    std::vector<int32_t>& status = launch_status_;
    std::vector<std::array<int64_t, 3>>& error = launch_error_;
    status.assign(static_cast<size_t>(chunks), kKernelOk);
    error.assign(static_cast<size_t>(chunks), {0, 0, 0});
    // A library with its own threads (BLAS) gets the cores: our workers sleep.
    struct SpinPause {
      ThreadPool* pool;
      bool on;
      ~SpinPause() {
        if (on) pool->set_spinning(true);
      }
    } pause{pool_, launch.own_threads};
    if (launch.own_threads) pool_->set_spinning(false);
    pool_->run_chunks(
        extent, chunks,
        [&](int c, int64_t begin, int64_t end) {
          const auto i = static_cast<size_t>(c);
          if (piecewise && std::chrono::steady_clock::now() > *deadline_) return;  // (kKernelOk)
          status[i] = entry(buffers.data(), dim_values.data(), begin, end, error[i].data());
        },
        launch.align);
    for (size_t c = 0; c < status.size(); ++c) {
      if (status[c] == kKernelOk) continue;
      const auto node = static_cast<NodeId>(error[c][0]);
      const std::string who = node < graph_.size() ? label(graph_, node) : kernel.name;
      if (status[c] == kKernelGatherOutOfRange) {
        const View& data = graph_.node(node).operands.at(1).view;
        const std::vector<int64_t> shape = data.concrete_shape(dims);
        throw IndexError(who + ": index " + std::to_string(error[c][2]) + " at position " +
                         std::to_string(error[c][1]) + " is out of range for data of " +
                         std::to_string(numel(shape)) + " elements " + shape_text(shape));
      }
      if (status[c] == kKernelModByZero)
        throw Error(who + ": integer modulo by zero at element " + std::to_string(error[c][1]));
      if (status[c] == kKernelOutOfMemory)
        throw Error(who + ": kernel " + kernel.name + " could not allocate its row buffer");
      if (status[c] == kKernelUnsupportedLayout)
        throw Error("kernel " + kernel.name + " does not support its operands' layout (row " +
                    std::to_string(error[c][0]) + ", offset " + std::to_string(error[c][1]) +
                    ", extent " + std::to_string(error[c][2]) + ")");
      if (status[c] == kKernelNoAmxPermission)
        throw Error("kernel " + kernel.name +
                    ": the operating system refused this process the AMX tile registers "
                    "(arch_prctl ARCH_REQ_XCOMP_PERM); set LUMINAL_AMX=off");
      throw Error("kernel " + kernel.name + " failed with status " + std::to_string(status[c]));
    }
  }
  if (!pack.record) return;
  packed_[k].holds = pack.holds;
  // Packed just now (not up to date before): with the copy made, a kernel
  // that no longer reads the input lets its file pages go.
  if (!pack.up_to_date && kernel.packed_replaces_input)
    if (const TensorData* data = input_data_[kernel.inputs.at(kernel.packed_input)])
      stats_.released_bytes += data->release_pages();
}

CpuProgram::PackPlan CpuProgram::plan_pack(size_t k, const DimMap& dims,
                                           std::vector<void*>& buffers) {
  const CpuKernel& kernel = kernels_[k];
  PackPlan plan;
  if (kernel.packed_bytes.is_const() && kernel.packed_bytes.value() == 0) return plan;
  packed_.resize(kernels_.size());
  Packed& pack = packed_[k];
  const auto bytes = static_cast<size_t>(std::max<int64_t>(0, kernel.packed_bytes.eval(dims)));
  if (bytes + 64 > pack.capacity) {
    // (not zero-filled: the pack launches write every byte)
    pack.memory = std::make_unique_for_overwrite<std::byte[]>(bytes + 64);
    pack.capacity = bytes + 64;
    pack.holds = {};
  }
  const auto raw = reinterpret_cast<uintptr_t>(pack.memory.get());
  buffers.push_back(pack.memory.get() + ((64 - raw % 64) % 64));
  // The memory may be reused while the packed input is a persistent input, not
  // updated in place, at the same address, not bound again since (its
  // version) and of the same packed size; anything else is packed every run.
  const Node& src = graph_.node(kernel.inputs.at(kernel.packed_input));
  bool stable = src.kind == OpKind::Input && src.persistent;
  stable = stable && !in_place_inputs_.count(src.name);
  if (!stable) {
    pack.holds = {};
    return plan;
  }
  plan.holds = {buffers.at(kernel.packed_input), input_versions_[src.name],
                static_cast<int64_t>(bytes)};
  plan.up_to_date = pack.holds == plan.holds;
  pack.holds = {};  // (until the launches have run)
  plan.record = true;
  return plan;
}

void CpuProgram::run(const DimMap& given) {
  run_until(given, std::nullopt);
}

bool CpuProgram::run_before(const DimMap& given, std::chrono::steady_clock::time_point deadline) {
  return run_until(given, deadline);
}

bool CpuProgram::run_until(const DimMap& given,
                           std::optional<std::chrono::steady_clock::time_point> deadline) {
  const auto run_start = std::chrono::steady_clock::now();
  const DimMap dims = resolve_dims(graph_, inputs_, given, inputs_with_dims_);
  for (NodeId id : needed_inputs_)
    if (input_data_[id] == nullptr)
      throw LookupError("input \"" + graph_.node(id).name + "\" is not set");
  plan(dims);
  // Graph outputs: reuse last run's tensors when the shape is unchanged (no reallocation,
  // no zero fill: the kernels overwrite every element).
  for (const Buffer& b : buffers_) {
    if (!b.user_output) continue;
    const Node& n = graph_.node(b.node);
    if (in_place_.count(n.name)) continue;
    std::vector<int64_t> shape = concrete(n.shape, dims);
    auto it = outputs_.find(n.name);
    if (it == outputs_.end() || it->second.shape() != shape || it->second.dtype() != n.dtype)
      outputs_[n.name] = TensorData(n.dtype, std::move(shape));
  }
  bool finished = true;
  deadline_ = deadline;
  struct ClearDeadline {
    std::optional<std::chrono::steady_clock::time_point>& d;
    ~ClearDeadline() { d.reset(); }
  } clear_deadline{deadline_};
  // (the clock is read after a kernel only for per-kernel profiles and for
  // runs with a deadline, profile runs with a bound: ~20 ns a kernel)
  for (size_t k = 0; k < kernels_.size() && finished; ++k) {
    if (k < skip_kernel_.size() && skip_kernel_[k]) continue;
    if (profile_.empty() && !deadline) {
      launch(k, dims);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    launch(k, dims);
    const auto t1 = std::chrono::steady_clock::now();
    if (!profile_.empty()) profile_[k] += std::chrono::duration<double>(t1 - t0).count();
    finished = !deadline || t1 <= *deadline;
  }
  dims_ = dims;
  // Only persistent inputs (weights, caches) stay bound.
  for (NodeId id : transient_inputs_) {
    if (input_data_[id] == nullptr) continue;
    input_data_[id] = nullptr;
    inputs_.erase(graph_.node(id).name);
  }
  if (!profile_.empty()) {
    ++profile_runs_;
    profile_run_s_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - run_start).count();
  }
  return finished;
}

}  // namespace luminal::cpu
