#include "luminal/io/mapped_file.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "io/io_test_util.hpp"
#include "luminal/core/tensor_data.hpp"
#include "luminal/io/format_error.hpp"
#include "luminal/io/stored_tensor.hpp"

namespace luminal {
namespace {

TEST(MappedFile, MapsTheWholeFileReadOnly) {
  io_test::TempDir dir;
  io_test::Bytes b;
  b.raw("hello mapped world");
  io_test::write_bytes(dir.file("a.bin"), b.b);
  MappedFile m(dir.file("a.bin"));
  EXPECT_EQ(m.size(), b.b.size());
  EXPECT_EQ(m.path(), dir.file("a.bin"));
  EXPECT_TRUE(std::equal(m.bytes().begin(), m.bytes().end(), b.b.begin(), b.b.end()));
  MappedFile moved = std::move(m);
  EXPECT_EQ(moved.size(), b.b.size());
  EXPECT_EQ(m.size(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_TRUE(m.bytes().empty());
}

TEST(MappedFile, EmptyFileIsAnEmptySpan) {
  io_test::TempDir dir;
  io_test::write_bytes(dir.file("empty"), {});
  MappedFile m(dir.file("empty"));
  EXPECT_EQ(m.size(), 0u);
  EXPECT_TRUE(m.bytes().empty());
  // Readers then report a format problem, not a crash.
  EXPECT_THROW(open_weights(dir.file("empty")), FormatError);
}

// Minor page faults of this process so far.
long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

TEST(MappedFile, PrefaultMapsThePagesBeforeTheyAreRead) {
  // 4 MiB of a file: after prefault() reading every page faults (almost)
  // never. (Without it, a fresh mapping faults once per fault-around window
  // on most filesystems: 16 pages by default; some map large folios at once.)
  io_test::TempDir dir;
  io_test::Bytes b;
  std::string chunk(4096, '\0');
  for (int i = 0; i < 1024; ++i) {
    chunk[0] = static_cast<char>(i);
    b.raw(chunk);
  }
  io_test::write_bytes(dir.file("w.bin"), b.b);
  auto read_every_page = [](const MappedFile& m) {
    unsigned sum = 0;
    for (size_t at = 0; at < m.size(); at += 4096)
      sum +=
          static_cast<unsigned>(*reinterpret_cast<const volatile unsigned char*>(&m.bytes()[at]));
    return sum;
  };
  unsigned want = 0;
  for (int i = 0; i < 1024; ++i) want += static_cast<unsigned char>(i);
  MappedFile warm(dir.file("w.bin"));
  prefault(warm.bytes());
  const long before = minor_faults();
  EXPECT_EQ(read_every_page(warm), want);
  EXPECT_LE(minor_faults() - before, 4);
  // Empty spans and heap memory are fine too.
  prefault({});
  std::vector<std::byte> heap(10000);
  prefault(heap);
}

// The resident bytes of the mapping holding `p` (its "Rss:" in /proc/self/smaps).
size_t resident_bytes(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find('-') < 17) {
      inside = lo <= at && at < hi;
      continue;
    }
    size_t kb = 0;
    if (inside && std::sscanf(line.c_str(), "Rss: %zu kB", &kb) == 1) return kb * 1024;
  }
  ADD_FAILURE() << "no mapping holds " << p;
  return 0;
}

// A tensor borrowing a file mapping (TensorData::borrow_file_mapping) drops
// its whole pages from this process on release_pages() (the mapping's
// resident bytes: 4 MiB, then 0) and keeps its values: reading every page
// afterwards faults them back in from the file. Other tensors release
// nothing, and a copy of a reloadable tensor (owned bytes) is not reloadable.
TEST(MappedFile, FileMappedTensorsReleaseTheirPagesAndKeepTheirValues) {
  io_test::TempDir dir;
  io_test::Bytes b;
  std::string chunk(4096, '\0');
  for (int i = 0; i < 1024; ++i) {
    chunk[8] = static_cast<char>(i);
    b.raw(chunk);
  }
  io_test::write_bytes(dir.file("w.bin"), b.b);
  auto mapping = std::make_shared<MappedFile>(dir.file("w.bin"));
  prefault(mapping->bytes());
  const TensorData t =
      TensorData::borrow_file_mapping(DType::F32, {1024 * 1024}, mapping->bytes().data(), mapping);
  EXPECT_TRUE(t.reloadable());
  EXPECT_TRUE(t.borrowed());
  auto read_every_page = [&] {
    unsigned sum = 0;
    for (size_t at = 8; at < t.nbytes(); at += 4096)
      sum += static_cast<unsigned>(*reinterpret_cast<const volatile unsigned char*>(&t.data()[at]));
    return sum;
  };
  unsigned want = 0;
  for (int i = 0; i < 1024; ++i) want += static_cast<unsigned char>(i);
  EXPECT_EQ(read_every_page(), want);
  EXPECT_EQ(resident_bytes(t.data()), 4u << 20);
  EXPECT_EQ(t.release_pages(), 4u << 20);
  EXPECT_EQ(resident_bytes(t.data()), 0u);
  EXPECT_EQ(read_every_page(), want);
  EXPECT_EQ(resident_bytes(t.data()), 4u << 20);

  const TensorData copy = t;
  EXPECT_FALSE(copy.reloadable());
  EXPECT_EQ(copy.release_pages(), 0u);
  std::vector<std::byte> heap(1 << 20);
  const TensorData borrowed = TensorData::borrow(DType::F32, {1 << 18}, heap.data(), nullptr);
  EXPECT_FALSE(borrowed.reloadable());
  EXPECT_EQ(borrowed.release_pages(), 0u);
}

TEST(MappedFile, ErrorsNameThePath) {
  io_test::TempDir dir;
  const std::string missing = dir.file("nope.gguf");
  const std::string msg = io_test::error_of([&] { MappedFile m(missing); });
  EXPECT_NE(msg.find(missing), std::string::npos) << msg;
  EXPECT_NE(msg.find("No such file"), std::string::npos) << msg;
  const std::string dir_msg = io_test::error_of([&] { MappedFile m(dir.file("")); });
  EXPECT_NE(dir_msg.find("not a regular file"), std::string::npos) << dir_msg;
}

}  // namespace
}  // namespace luminal
