#include "luminal/backends/cpu/memory_plan.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "luminal/error.hpp"

namespace luminal::cpu {

namespace {
size_t align_up(size_t n, size_t alignment) {
  return (n + alignment - 1) & ~(alignment - 1);
}
bool lifetimes_overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first_step <= b.last_step && b.first_step <= a.last_step;
}
}  // namespace

MemoryPlan plan_memory(const std::vector<BufferLifetime>& buffers, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw Error("plan_memory: alignment must be a power of two, got " + std::to_string(alignment));
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].last_step < buffers[i].first_step)
      throw Error("plan_memory: buffer " + std::to_string(i) + " ends (step " +
                  std::to_string(buffers[i].last_step) + ") before it starts (step " +
                  std::to_string(buffers[i].first_step) + ")");

  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first_step < buffers[b].first_step;
  });

  std::vector<size_t> placed;
  for (size_t i : order) {
    const size_t size = align_up(buffers[i].bytes, alignment);
    // Occupied [offset, end) ranges of placed buffers alive at the same time, by offset.
    std::vector<std::pair<size_t, size_t>> busy;
    for (size_t j : placed)
      if (lifetimes_overlap(buffers[i], buffers[j]))
        busy.emplace_back(plan.offsets[j], plan.offsets[j] + align_up(buffers[j].bytes, alignment));
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (offset + size <= begin) break;  // fits in the gap before this range
      offset = std::max(offset, end);
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(i);
  }

  // Live bytes per step (difference array over the steps that occur).
  std::map<int, long long> delta;
  for (const BufferLifetime& b : buffers) {
    const auto size = static_cast<long long>(align_up(b.bytes, alignment));
    delta[b.first_step] += size;
    delta[b.last_step + 1] -= size;
  }
  long long live = 0;
  for (const auto& [step, d] : delta) {
    live += d;
    plan.live_peak_bytes = std::max(plan.live_peak_bytes, static_cast<size_t>(live));
  }
  return plan;
}

}  // namespace luminal::cpu
