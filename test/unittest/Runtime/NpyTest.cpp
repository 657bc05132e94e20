//===- NpyTest.cpp - .npy exchange with NumPy -----------------------------===//

#include "dlc/runtime/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace dlc::rt;

namespace {

std::string runPython(const std::string &code) {
  std::string command = "/usr/bin/python3 -c \"" + code + "\" 2>&1";
  std::string output;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    char buffer[256];
    while (fgets(buffer, sizeof(buffer), pipe))
      output += buffer;
    pclose(pipe);
  }
  return output;
}

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

} // namespace
