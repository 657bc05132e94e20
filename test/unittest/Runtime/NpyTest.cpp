//===- NpyTest.cpp - .npy exchange with NumPy -----------------------------===//

#include "dlc/runtime/Npy.h"

#include "RunPython.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>

using namespace dlc::rt;

namespace {

using dlc_test::runPython;

TEST(Npy, NumPyReadsWhatWeWriteAndBack) {
  std::string dir = ::testing::TempDir();
  std::string ours = dir + "/dlc-ours.npy", theirs = dir + "/dlc-theirs.npy";
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  ASSERT_TRUE(writeNpy(ours, DType::kF32, {2, 3}, values.data()).isOk());
  // NumPy reads it with the right shape and values, and writes an int64
  // array and a float64 array for us to read.
  std::string out = runPython(
      "import numpy as np; a = np.load('" + ours + "'); "
      "print(a.shape, a.dtype, float(a.sum())); "
      "np.save('" + theirs + "', np.arange(5, dtype=np.int64) * 3); "
      "np.save('" + dir + "/dlc-f8.npy', np.array([[0.25, 2.0]]))");
  EXPECT_EQ(out, "(2, 3) float32 9.25\n");
  auto ints = readNpy(theirs);
  ASSERT_TRUE(ints.isOk()) << ints.status().toString();
  EXPECT_EQ(ints->dtype, DType::kI64);
  EXPECT_EQ(ints->shape, (std::vector<int64_t>{5}));
  EXPECT_EQ(reinterpret_cast<const int64_t *>(ints->data.data())[4], 12);
  auto doubles = readNpy(dir + "/dlc-f8.npy");
  ASSERT_TRUE(doubles.isOk());
  EXPECT_EQ(doubles->dtype, DType::kF32); // converted
  EXPECT_EQ(reinterpret_cast<const float *>(doubles->data.data())[1], 2.0f);
  auto back = readNpy(ours);
  ASSERT_TRUE(back.isOk());
  EXPECT_EQ(back->data, std::string(reinterpret_cast<char *>(values.data()), 24));
}

TEST(Npy, VectorAndScalarShapes) {
  std::string path = ::testing::TempDir() + "/dlc-scalar.npy";
  float one = 1.0f;
  ASSERT_TRUE(writeNpy(path, DType::kF32, {}, &one).isOk());
  auto back = readNpy(path);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_TRUE(back->shape.empty());
  int64_t v[3] = {1, 2, 3};
  ASSERT_TRUE(writeNpy(path, DType::kI64, {3}, v).isOk());
  EXPECT_EQ(runPython("import numpy as np; print(np.load('" + path + "').tolist())"),
            "[1, 2, 3]\n");
}

TEST(Npy, TruncatedAndForeignFilesAreRefusedByName) {
  std::string path = ::testing::TempDir() + "/dlc-cut.npy";
  float values[4] = {1, 2, 3, 4};
  ASSERT_TRUE(writeNpy(path, DType::kF32, {4}, values).isOk());
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), bytes.size() - 3);
  }
  auto cut = readNpy(path);
  ASSERT_FALSE(cut.isOk());
  EXPECT_NE(cut.status().message().find(path + ": holds 13 data bytes, the header announces 16"),
            std::string::npos)
      << cut.status().toString();
  {
    std::ofstream out(path, std::ios::trunc);
    out << "x,y\n1,2\n";
  }
  EXPECT_EQ(readNpy(path).status().message(), path + ": not a .npy file");
}

/// Writes a .npy file with a hand-made header (version `major`.`minor`) and
/// `dataBytes` zero bytes after it, returning its path.
std::string writeRaw(const std::string &name, const std::string &header,
                     size_t dataBytes = 0, unsigned char major = 1,
                     unsigned char minor = 0) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write("\x93NUMPY", 6);
  out.put(static_cast<char>(major)).put(static_cast<char>(minor));
  uint16_t len = static_cast<uint16_t>(header.size());
  out.write(reinterpret_cast<const char *>(&len), 2);
  out << header << std::string(dataBytes, '\0');
  return path;
}

/// The message of reading `path`, which must fail.
std::string refusal(const std::string &path) {
  auto array = readNpy(path);
  EXPECT_FALSE(array.isOk()) << path;
  return array.isOk() ? "" : array.status().message();
}

TEST(Npy, HeaderParsedByFieldNotByPosition) {
  // Keys in another order and double quotes are still a valid dict literal.
  auto array = readNpy(writeRaw("dlc-order.npy",
      "{\"shape\": (2, 1), \"fortran_order\": False, \"descr\": \"<i4\"}\n", 8));
  ASSERT_TRUE(array.isOk()) << array.status().toString();
  EXPECT_EQ(array->dtype, DType::kI32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2, 1}));
}

TEST(Npy, BadShapesAreOneLineErrorsNotExceptions) {
  std::string path = writeRaw("dlc-frac.npy",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (10.5,), }\n");
  EXPECT_EQ(refusal(path), path + ": 'shape' holds '10.5', not a non-negative integer");
  path = writeRaw("dlc-word.npy",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (two, 3), }\n");
  EXPECT_EQ(refusal(path), path + ": 'shape' holds 'two', not a non-negative integer");
  path = writeRaw("dlc-negative.npy",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n");
  EXPECT_EQ(refusal(path), path + ": 'shape' holds '-1', not a non-negative integer");
  path = writeRaw("dlc-huge.npy",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }\n");
  EXPECT_EQ(refusal(path),
            path + ": 'shape' holds 99999999999999999999, which does not fit in int64");
}

TEST(Npy, ElementAndByteCountsDoNotOverflow) {
  // 2^62 x 2^62 elements used to wrap to 0 and "announce 0 bytes".
  std::string path = writeRaw("dlc-wrap.npy",
      "{'descr': '<f4', 'fortran_order': False, "
      "'shape': (4611686018427387904, 4611686018427387904), }\n");
  EXPECT_EQ(refusal(path), path + ": shape (4611686018427387904, 4611686018427387904) "
                                  "has more elements than fit in int64");
  path = writeRaw("dlc-wrap-bytes.npy",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (2305843009213693952,), }\n");
  EXPECT_EQ(refusal(path), path + ": shape (2305843009213693952,) of <f8 has more "
                                  "bytes than fit in int64");
}

TEST(Npy, MalformedHeadersAreNamedForWhatTheyAre) {
  std::string path = writeRaw("dlc-garbage.npy", "garbage garbage\n");
  EXPECT_EQ(refusal(path), path + ": malformed header: expected '{' at byte 0");
  path = writeRaw("dlc-nodescr.npy", "{'fortran_order': False, 'shape': (1,), }\n", 4);
  EXPECT_EQ(refusal(path), path + ": the header has no 'descr'");
  path = writeRaw("dlc-noshape.npy", "{'descr': '<f4', 'fortran_order': False}\n", 4);
  EXPECT_EQ(refusal(path), path + ": the header has no 'shape'");
  path = writeRaw("dlc-fortran.npy",
                  "{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }\n", 4);
  EXPECT_EQ(refusal(path), path + ": Fortran-order arrays are not supported; save "
                                  "with np.ascontiguousarray");
  path = writeRaw("dlc-f2.npy",
                  "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }\n", 2);
  EXPECT_EQ(refusal(path), path + ": unsupported dtype '<f2' (float32, float64, int32 or int64)");
  path = writeRaw("dlc-v9.npy",
                  "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", 4, 9);
  EXPECT_EQ(refusal(path), path + ": unsupported .npy format version 9.0 (1.0, 2.0 or 3.0)");
}

TEST(Npy, ParsedFromMemoryAsFromAFile) {
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8) +
                      static_cast<char>(header.size()) + '\0' + header +
                      std::string("\x01\0\0\0\x02\0\0\0", 8);
  auto array = parseNpy(bytes, "memory");
  ASSERT_TRUE(array.isOk()) << array.status().toString();
  EXPECT_EQ(array->dtype, DType::kI32);
  EXPECT_EQ(array->shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(array->data, std::string("\x01\0\0\0\x02\0\0\0", 8));
  EXPECT_EQ(parseNpy(std::string_view(bytes).substr(0, 9), "memory").status().message(),
            "memory: not a .npy file");
}

/// The fuzzer's seed files (test/fuzz/corpus/npy): NumPy's own read, the
/// damaged and foreign ones are refused with one line each.
TEST(Npy, FuzzSeedFiles) {
  std::string dir = std::string(DLC_SOURCE_DIR) + "/test/fuzz/corpus/npy/";
  const std::pair<const char *, bool> files[] = {
      {"f4_2x3.npy", true}, {"f8_4.npy", true}, {"i4_scalar.npy", true},
      {"i8_2x0x3.npy", true}, {"i8_5.npy", true}, {"v2_f4_2x3.npy", true},
      {"double_quotes.npy", true}, {"f4_fortran.npy", false}, {"f2_3.npy", false},
      {"u1_big_endian_i4.npy", false}, {"truncated_header.npy", false},
      {"truncated_data.npy", false}, {"bad_magic.npy", false},
      {"header_only_prefix.npy", false}, {"overflow_dim.npy", false}};
  for (const auto &[name, reads] : files) {
    auto array = readNpy(dir + name);
    EXPECT_EQ(array.isOk(), reads) << name << ": " << array.status().toString();
    if (!reads && !array.isOk())
      EXPECT_EQ(array.status().message().find('\n'), std::string::npos) << name;
  }
}

} // namespace
