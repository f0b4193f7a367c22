#include "luminal/io/mapped_file.hpp"

#include <gtest/gtest.h>

#include <string>

#include "io/io_test_util.hpp"
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
