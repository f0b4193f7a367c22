#include "luminal/backends/cpu/memory_plan.hpp"

#include <gtest/gtest.h>

#include <random>

#include "luminal/error.hpp"

namespace luminal::cpu {
namespace {

// No two buffers alive at the same step overlap in memory, and all fit in the arena.
void expect_valid(const std::vector<BufferLifetime>& buffers, const MemoryPlan& plan,
                  size_t alignment) {
  ASSERT_EQ(plan.offsets.size(), buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % alignment, 0u);
    EXPECT_LE(plan.offsets[i] + buffers[i].bytes, plan.arena_bytes);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      const bool live_together = buffers[i].first_step <= buffers[j].last_step &&
                                 buffers[j].first_step <= buffers[i].last_step;
      const bool disjoint = plan.offsets[i] + buffers[i].bytes <= plan.offsets[j] ||
                            plan.offsets[j] + buffers[j].bytes <= plan.offsets[i];
      if (live_together && buffers[i].bytes > 0 && buffers[j].bytes > 0) {
        EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j << " overlap";
      }
    }
  }
  EXPECT_GE(plan.arena_bytes, plan.live_peak_bytes);
}

TEST(CpuMemoryPlan, ChainReusesTwoSlots) {
  // a -> b -> c -> d -> e: each buffer is read only by the next step.
  std::vector<BufferLifetime> chain;
  for (int i = 0; i < 5; ++i) chain.push_back({1000, i, i + 1});
  const MemoryPlan plan = plan_memory(chain, 64);
  expect_valid(chain, plan, 64);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024u);  // two 1000-byte buffers, each rounded up to 1024
  EXPECT_EQ(plan.live_peak_bytes, 2 * 1024u);
}

TEST(CpuMemoryPlan, InputAndOutputOfOneStepNeverShare) {
  // Buffer 0 is last read at step 1, where buffer 1 is written.
  const std::vector<BufferLifetime> b{{64, 0, 1}, {64, 1, 2}};
  const MemoryPlan plan = plan_memory(b, 64);
  EXPECT_NE(plan.offsets[0], plan.offsets[1]);
}

TEST(CpuMemoryPlan, RandomLifetimesAreValidAndTight) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLifetime> b;
    const int n = 1 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      const int first = static_cast<int>(rng() % 30);
      b.push_back({rng() % 5000, first, first + static_cast<int>(rng() % 6)});
    }
    const MemoryPlan plan = plan_memory(b, 32);
    expect_valid(b, plan, 32);
    // Greedy placement is not optimal, but far better than no reuse at all.
    size_t total = 0;
    for (const auto& x : b) total += (x.bytes + 31) / 32 * 32;
    EXPECT_LE(plan.arena_bytes, total);
    EXPECT_LE(plan.arena_bytes, 2 * plan.live_peak_bytes + 5024);
  }
}

TEST(CpuMemoryPlan, RejectsBadInput) {
  EXPECT_THROW(plan_memory({{10, 3, 2}}), Error);
  EXPECT_THROW(plan_memory({{10, 0, 1}}, 48), Error);
  const MemoryPlan empty = plan_memory({});
  EXPECT_EQ(empty.arena_bytes, 0u);
}

}  // namespace
}  // namespace luminal::cpu
