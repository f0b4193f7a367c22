#pragma once
// The memory plan for a program's intermediates: one arena, with each buffer
// at an offset chosen so that buffers alive at the same time never overlap.
//
// A buffer is alive from the step that writes it to the last step that reads
// it, both inclusive (a kernel's inputs and outputs are alive together, so an
// output never lands on an input of the same kernel: kernels may assume their
// buffers do not alias). Placement is greedy interval allocation: buffers are
// placed largest first (ties: earliest start, then index), each at the lowest
// aligned offset that does not overlap any already placed buffer whose
// lifetime intersects its own. Persistent data (weights, caches, inputs) and
// the caller-visible outputs are not part of the arena.

#include <cstddef>
#include <cstdint>
#include <vector>

namespace luminal::cpu {

struct BufferLifetime {
  size_t bytes = 0;
  int first_step = 0;  // the step that writes the buffer
  int last_step = 0;   // the last step that reads it (>= first_step)
};

struct MemoryPlan {
  std::vector<size_t> offsets;  // per buffer, multiples of the alignment
  size_t arena_bytes = 0;       // the arena size: the peak of the plan
  /// The most bytes (aligned sizes) alive at one step: a lower bound on
  /// arena_bytes for any placement.
  size_t live_peak_bytes = 0;
};

/// Plan offsets for `buffers`. `alignment` must be a power of two. Throws
/// luminal::Error for a lifetime with last_step < first_step.
MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, size_t alignment = 64);

}  // namespace luminal::cpu
