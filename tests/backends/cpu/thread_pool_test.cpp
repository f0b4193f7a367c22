#include "luminal/backends/cpu/thread_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>
#include <vector>

#include "luminal/error.hpp"

namespace luminal::cpu {
namespace {

TEST(CpuThreadPool, ChunkBoundsCoverTheRangeInOrder) {
  EXPECT_EQ(ThreadPool::chunk_bounds(10, 3, 1), (std::vector<int64_t>{0, 3, 6, 10}));
  EXPECT_EQ(ThreadPool::chunk_bounds(10, 20, 1).size(), 11u);  // at most one piece per item
  EXPECT_EQ(ThreadPool::chunk_bounds(0, 4, 1), (std::vector<int64_t>{0}));
  // Aligned boundaries: multiples of 16, duplicates dropped.
  EXPECT_EQ(ThreadPool::chunk_bounds(100, 4, 16), (std::vector<int64_t>{0, 16, 48, 64, 100}));
  EXPECT_EQ(ThreadPool::chunk_bounds(20, 4, 16), (std::vector<int64_t>{0, 20}));
  // Huge ranges do not overflow.
  const int64_t big = int64_t{1} << 62;
  const auto b = ThreadPool::chunk_bounds(big, 3, 1);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b.back(), big);
  EXPECT_LT(b[1], b[2]);
}

TEST(CpuThreadPool, EveryItemRunsExactlyOnce) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    std::vector<std::atomic<int>> hits(1000);
    std::mutex mutex;
    std::set<int> chunks_seen;
    pool.run_chunks(1000, 7, [&](int chunk, int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)]++;
      std::lock_guard<std::mutex> lock(mutex);
      chunks_seen.insert(chunk);
    });
    for (const auto& h : hits) ASSERT_EQ(h.load(), 1);
    EXPECT_EQ(chunks_seen.size(), 7u);
  }
}

TEST(CpuThreadPool, ManyJobsInARow) {
  ThreadPool pool(3);
  std::atomic<int64_t> total{0};
  for (int job = 0; job < 200; ++job)
    pool.run_chunks(64, 3, [&](int, int64_t b, int64_t e) { total += e - b; });
  EXPECT_EQ(total.load(), 200 * 64);
}

TEST(CpuThreadPool, RethrowsTheFirstExceptionAfterAllPiecesRan) {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  EXPECT_THROW(pool.run_chunks(8, 8,
                               [&](int chunk, int64_t, int64_t) {
                                 ++ran;
                                 if (chunk == 3) throw std::runtime_error("piece 3");
                               }),
               std::runtime_error);
  EXPECT_EQ(ran.load(), 8);
  // The pool still works afterwards.
  std::atomic<int> again{0};
  pool.run_chunks(4, 4, [&](int, int64_t, int64_t) { ++again; });
  EXPECT_EQ(again.load(), 4);
}

TEST(CpuThreadPool, NestedCallsRunInline) {
  ThreadPool pool(2);
  std::atomic<int> inner{0};
  pool.run_chunks(4, 4, [&](int, int64_t, int64_t) {
    pool.run_chunks(10, 4, [&](int, int64_t b, int64_t e) { inner += static_cast<int>(e - b); });
  });
  EXPECT_EQ(inner.load(), 40);
}

TEST(CpuThreadPool, SizeFromEnvironment) {
  const char* old = std::getenv("LUMINAL_NUM_THREADS");
  const std::string saved = old ? old : "";
  setenv("LUMINAL_NUM_THREADS", "3", 1);
  EXPECT_EQ(ThreadPool::default_size(), 3);
  for (const char* bad : {"0", "-2", "abc", "4x"}) {
    setenv("LUMINAL_NUM_THREADS", bad, 1);
    try {
      ThreadPool::default_size();
      ADD_FAILURE() << "accepted LUMINAL_NUM_THREADS=" << bad;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("LUMINAL_NUM_THREADS"), std::string::npos);
    }
  }
  unsetenv("LUMINAL_NUM_THREADS");
  EXPECT_GE(ThreadPool::default_size(), 1);
  if (old) setenv("LUMINAL_NUM_THREADS", saved.c_str(), 1);
  EXPECT_THROW(ThreadPool(0), Error);
}

}  // namespace
}  // namespace luminal::cpu
