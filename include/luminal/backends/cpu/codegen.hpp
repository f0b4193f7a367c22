#pragma once
// Code generation: one region of HLIR nodes (see region.hpp) -> C++ source of
// one CPU kernel, with the semantics of the reference interpreter.
//
// Loop structure. A kernel iterates over the dense row-major elements of its
// outputs' shape. Its entry points take a range [begin, end) of that flat
// index, so the executor can cut any tensor (one long row included) into
// pieces for threads. Inside, the range is walked row by row: the row index is
// decomposed into the outer axis indexes once per row (div/mod), and the
// innermost axis is a plain `for` loop. Every value is emitted at the
// outermost loop level its index depends on: a load through a broadcast axis,
// a reduction over a row or a constant is computed once per row (or once per
// call), not per element. With restrict-qualified buffers and straight-line
// index math printed from the views' expressions (View::offset +
// Expr::to_c), the inner loop of a contiguous f32 region is auto-vectorised
// (tests check this with -fopt-info-vec).
//
// Values inside a region: each node's value at a given index is a C variable,
// memoised per (node, index). An edge inside the region whose view is the
// producer's own contiguous layout reuses the consumer's index; any other view
// recomputes the producer at the viewed index (element-wise ops are pure, so
// this is exact). Reductions emit a loop at the point of use; Gather computes
// its data operand at the gathered index.
//
// Row caches. A reduction emitted once per row over the innermost axis, whose
// operand the element loop needs again at its own index (softmax: the sum of
// exp(x - max) and then exp(x - max) / sum), stores the operand's values while
// it reduces and the element loop reads them back instead of recomputing them
// (bit-identical: the same code on the same inputs). The values go into the
// output row itself when the call writes the whole row and the output's storage
// type is the value type (each element is read just before it is overwritten),
// else into a row buffer (stack up to 1024 elements, heap above). Which
// element-loop values match is decided after the loop is generated (by node
// structure, so repeated subexpressions match too); unused caches are removed.
//
// Arithmetic (matches src/reference/interpreter.cpp):
//  * f32 in float, f64 in double; f16 / bf16 (and fp8 for Cast) are stored in
//    their formats and computed in float, every node's result rounded to its
//    dtype (round to nearest even, bit-exact conversion code in the prelude).
//    For + * recip sqrt fmod this equals the interpreter's double computation
//    rounded once (float has >= 2p+2 bits for p = 11 and 8). exp2, log2 and
//    sin use the float libm functions (the interpreter uses double ones): the
//    results may differ by an ulp of the dtype.
//  * integers wrap (computed in unsigned arithmetic); integer Mod by zero and
//    out-of-range Gather indexes make the kernel return an error status.
//  * Cast: float -> int truncates and saturates, NaN -> 0; -> bool is x != 0;
//    f64 -> narrow float rounds to odd first, exactly like TensorData::set.
//  * Reductions keep 32 independent accumulator lanes (element r of the axis
//    goes to lane r % 32, a tail shorter than 32 to lane 0), so that the lane
//    loop is a straight body the compiler vectorises; the lanes are combined
//    after the loop. SumReduce over f32 / f16 / bf16 accumulates in double
//    lanes (added pairwise at the end) and rounds once to the dtype: the error
//    before that rounding is at most about (L/32 + 5) 2^-53 sum(|x|), far inside
//    one ulp of the result for any practical length L, and inf / NaN propagate
//    as in the interpreter's plain double sum. f64 sums use 32 Kahan-compensated
//    double lanes (about 6 * 2^-53 * sum(|x|) whatever the length; a lane that
//    overflows or meets inf / NaN drops its compensation, so they propagate).
//    Integer sums wrap (in uint64 lanes; order does not matter).
//  * MaxReduce (op.hpp): NaN anywhere gives the canonical NaN, an empty axis
//    -inf (floats) or the dtype's minimum, and equal maxima keep the first in
//    order. The lanes give the maximum's value; only +0 / -0 can tie with
//    different bits, so when the maximum is zero a second, scalar pass picks the
//    first zero (rows whose maximum is exactly 0 pay one more read).
//  * Scatter: a parallel copy of dest, then the writes in index order on one
//    thread (last write wins); out-of-range indexes are skipped.

#include <cstdint>
#include <string>
#include <vector>

#include "luminal/backends/cpu/jit.hpp"
#include "luminal/backends/cpu/region.hpp"
#include "luminal/core/graph.hpp"

namespace luminal::cpu {

/// Status returned by kernel entry points.
enum KernelStatus : int32_t {
  kKernelOk = 0,
  kKernelGatherOutOfRange = 1,  // error = {node id, position, index}
  kKernelModByZero = 2,         // error = {node id, position, 0}
  kKernelOutOfMemory = 3,       // a row buffer could not be allocated: {node id, 0, 0}
  kKernelUnsupportedLayout =
      4,  // a library kernel met operand views it cannot read: {row, offset, extent}
  kKernelNoAmxPermission = 5,  // the OS refused this process the AMX tile registers
};

/// Every entry point has this C ABI:
///   extern "C" int32_t entry(void* const* buffers, const int64_t* dims,
///                            int64_t begin, int64_t end, int64_t* error);
/// buffers: the kernel's inputs, then its outputs (dense, row-major, never
/// aliasing each other); dims: values of CpuKernel::dims in order; error: 3
/// slots written when the status is not kKernelOk.
using KernelEntry = int32_t (*)(void* const*, const int64_t*, int64_t, int64_t, int64_t*);

/// One call of an entry point over [0, extent).
struct KernelLaunch {
  std::string symbol;
  Expr extent;
  Expr work_per_item;    // rough cost of one iteration (elements touched), for splitting
  bool parallel = true;  // false: must run as one range, in order
  /// Chunk boundaries fall on multiples of this many items. A kernel whose
  /// items come in groups (16 per tile row, per column slot) names its group
  /// size here so that a group is never split between threads; any split is
  /// still correct (a group belongs to the chunk that holds its first item),
  /// only unbalanced.
  int64_t align = 16;
  /// Calls a library that runs its own threads (BLAS): the pool's workers
  /// sleep instead of spinning meanwhile, leaving the cores to it.
  bool own_threads = false;
};

struct CpuKernel {
  std::string name;
  std::string kernel_op;          // the region's kernel op ("CpuSgemm", ...); empty: loops
  std::string code;               // C++ source to compile after kernel_prelude()
  std::vector<NodeId> inputs;     // producers read by the kernel: buffer slots first
  std::vector<NodeId> outputs;    // the region's outputs: the following slots
  std::vector<std::string> dims;  // dims passed in the dims array, in this order
  /// Scratch memory the kernel needs while it runs (bytes; 0: none). The
  /// program places it in the arena (alive for this kernel only) and passes it
  /// after the outputs in the buffer array.
  Expr scratch_bytes = 0;
  /// A form of input slot `packed_input` the kernel keeps between runs (a
  /// weight rearranged and rounded once, not on every call): `packed_bytes`
  /// (0: none) of program-owned memory, passed after the scratch in the buffer
  /// array. The first `pack_launches` launches fill it; the program skips them
  /// while that input is the same persistent input, not bound again since, not
  /// updated in place, at the same address and with the same packed size.
  Expr packed_bytes = 0;
  size_t packed_input = 0;
  size_t pack_launches = 0;
  /// Once packed, the kernel reads the packed input only on rare paths (a Q4_1
  /// weight's interleaved copy; the GGUF blocks serve rows holding NaN / Inf):
  /// the program then drops the input's pages from memory when they are a
  /// read-only file mapping (TensorData::reloadable), so the copy costs no
  /// resident memory; the system reads them again if they are touched.
  bool packed_replaces_input = false;
  /// Host function pointers (library entry points) passed after the outputs
  /// (and the scratch and packed memory) in the buffer array; empty for
  /// generated loops.
  std::vector<void*> host_pointers;
  /// The prelude's library template instances `code` calls (JitKernel::library_calls).
  std::vector<std::string> library_calls;
  std::vector<KernelLaunch> launches;  // run in this order
  /// The source as the JIT takes it.
  JitKernel jit() const;
};

/// Generate the kernel of `region`. `name` must be a C identifier; entry
/// points are named "lk_" + name (+ a suffix). Throws luminal::Error naming the
/// region when it is malformed (an Input member, an output that is not a
/// member, outputs of different shapes, a Scatter that is not the only output)
/// and DTypeError for block-quantized dtypes.
CpuKernel generate_kernel(const Graph& graph, const Region& region, const std::string& name);

/// The start of entry point `symbol`'s definition (the ABI above) with kernel
/// k's dims as locals _d0, _d1, ... (library and fused-op kernels' sources).
std::string entry_prologue(const std::string& symbol, const CpuKernel& k);

/// The code every kernel is compiled after: includes and the conversion,
/// saturation and summation helpers (namespace lk).
const std::string& kernel_prelude();

/// A default kernel name for a region: "k<first node id>_<op>_<op>..." (shortened).
std::string region_kernel_name(const Graph& graph, const Region& region);

}  // namespace luminal::cpu
