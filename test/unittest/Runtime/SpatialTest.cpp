//===- SpatialTest.cpp - CPU spatial kernels vs PyTorch and finite diffs --===//
//
// Every spatial kernel (Spatial.h) is checked two ways. Against PyTorch, a
// reference nobody here wrote: torch_spatial.py (Debian's python3-torch via
// /usr/bin/python3) writes seeded float64 inputs, outputs and gradients for
// several geometries, and both instantiations run on the same inputs (double
// within 1e-9 relative, float within 1e-4). And against central finite
// differences of sum(y * dy) in double on tiny sizes, which needs nothing
// but the kernels themselves. A missing or broken python3-torch fails the
// PyTorch tests with the script's output: a silent skip would hide that the
// reference never ran.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/cpu/Spatial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

using namespace dlc::rt::cpu;

namespace {

//===----------------------------------------------------------------------===//
// The PyTorch reference
//===----------------------------------------------------------------------===//

using Array = std::vector<double>;

struct TorchReference {
  std::map<std::string, Array> arrays;
  std::string error; ///< empty when the script ran and its file parsed

  bool ok() const { return error.empty(); }
  const Array &at(const std::string &name) const {
    static const Array empty;
    auto it = arrays.find(name);
    if (it != arrays.end())
      return it->second;
    ADD_FAILURE() << "the PyTorch reference has no array '" << name << "'";
    return empty;
  }
};

/// Runs torch_spatial.py (beside this file) for `op` with key=value
/// arguments and reads the arrays it wrote.
TorchReference
runTorchReference(const std::string &op,
                  const std::vector<std::pair<std::string, int64_t>> &args,
                  const std::string &extra = "") {
  TorchReference ref;
  char path[] = "/tmp/dlc-spatial-XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    ref.error = "cannot create a temporary file";
    return ref;
  }
  close(fd);
  std::string command = "/usr/bin/python3 " DLC_RUNTIME_TEST_DIR "/torch_spatial.py " + op +
                        " " + path + " " + extra;
  for (const auto &[key, value] : args)
    command += " " + key + "=" + std::to_string(value);
  std::string output;
  if (FILE *pipe = popen((command + " 2>&1").c_str(), "r")) {
    char buffer[512];
    while (fgets(buffer, sizeof(buffer), pipe))
      output += buffer;
    if (pclose(pipe) != 0)
      ref.error = "`" + command + "` failed:\n" + output;
  } else {
    ref.error = "cannot run " + command;
  }
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (ref.ok() && std::getline(in, line) && line != "end") {
    std::istringstream header(line);
    std::string name;
    int64_t rank = 0, count = 1;
    header >> name >> rank;
    for (int64_t i = 0, d = 0; i < rank && header >> d; ++i)
      count *= d;
    Array data(count);
    in.read(reinterpret_cast<char *>(data.data()),
            static_cast<std::streamsize>(count * sizeof(double)));
    if (!header || !in)
      ref.error = "malformed reference file for '" + name + "'";
    ref.arrays[name] = std::move(data);
  }
  if (ref.ok() && line != "end")
    ref.error = "truncated reference file from `" + command + "`";
  std::remove(path);
  return ref;
}

/// Largest |a - e| / max(|e|, floor); NaN and size mismatches count as inf.
double maxRelativeError(const Array &actual, const Array &expected,
                        double floor = 1e-6) {
  if (actual.size() != expected.size())
    return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < actual.size(); ++i) {
    double err = std::fabs(actual[i] - expected[i]) /
                 std::max(std::fabs(expected[i]), floor);
    worst = std::isnan(err) ? INFINITY : std::max(worst, err);
  }
  return worst;
}

template <typename T> std::vector<T> cast(const Array &a) {
  return std::vector<T>(a.begin(), a.end());
}

/// Compares kernel outputs of element type T with the reference and keeps
/// the worst error, printed once per test so regressions show their size.
struct Checker {
  std::string context;
  double worstDouble = 0, worstFloat = 0;

  template <typename T>
  void check(const std::string &name, const std::vector<T> &actual,
             const Array &expected) {
    double err =
        maxRelativeError(Array(actual.begin(), actual.end()), expected);
    double tol = std::is_same_v<T, double> ? 1e-9 : 1e-4;
    EXPECT_LE(err, tol) << name << " ("
                        << (std::is_same_v<T, double> ? "double" : "float")
                        << ") in " << context;
    double &worst = std::is_same_v<T, double> ? worstDouble : worstFloat;
    worst = std::max(worst, err);
  }
  ~Checker() {
    std::printf("[ worst    ] relative error: double %.3g, float %.3g\n",
                worstDouble, worstFloat);
  }
};

using Args = std::vector<std::pair<std::string, int64_t>>;

/// Runs the PyTorch reference of `op` for one geometry, then
/// check(reference, T{}) for T = double and float.
template <typename Check>
void compareWithTorch(Checker &chk, const std::string &op, const Args &args,
                      Check check, const std::string &extra = "") {
  TorchReference r = runTorchReference(op, args, extra);
  ASSERT_TRUE(r.ok()) << r.error;
  chk.context.clear();
  for (const auto &[key, value] : args)
    chk.context += key + "=" + std::to_string(value) + " ";
  check(r, double{});
  check(r, float{});
}

//===----------------------------------------------------------------------===//
// Finite differences
//===----------------------------------------------------------------------===//

Array randomArray(int64_t size, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  Array a(size);
  for (double &v : a)
    v = dist(gen);
  return a;
}

double dot(const Array &a, const Array &b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i)
    s += a[i] * b[i];
  return s;
}

/// Worst relative gap between `analytic` and the central difference of
/// loss() with respect to each element of `input` (loss reads `input`).
double finiteDifferenceError(Array &input, const Array &analytic,
                             const std::function<double()> &loss) {
  const double eps = 1e-6;
  Array numeric(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    double saved = input[i];
    input[i] = saved + eps;
    double plus = loss();
    input[i] = saved - eps;
    double minus = loss();
    input[i] = saved;
    numeric[i] = (plus - minus) / (2 * eps);
  }
  // Gradients here are O(1); the floor keeps roundoff in the difference
  // (~1e-10) from inflating the relative error of near-zero elements.
  double err = maxRelativeError(numeric, analytic, 1e-2);
  std::printf("[ fin.diff ] relative error %.3g\n", err);
  return err;
}

constexpr double kFiniteDifferenceTolerance = 1e-6;

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

Conv2dParams convParams(const Args &a) {
  std::map<std::string, int64_t> m(a.begin(), a.end());
  Conv2dParams p;
  p.n = m["n"], p.c = m["c"], p.h = m["h"], p.w = m["w"], p.k = m["k"];
  p.kh = m["kh"], p.kw = m["kw"], p.strideH = m["sh"], p.strideW = m["sw"];
  p.padH = m["ph"], p.padW = m["pw"], p.dilationH = m["dh"],
  p.dilationW = m["dw"];
  p.groups = m["groups"];
  return p;
}

template <typename T>
void checkConv(const TorchReference &r, const Conv2dParams &p, bool bias,
               Checker &chk) {
  std::vector<T> x = cast<T>(r.at("x")), w = cast<T>(r.at("w")),
                 dy = cast<T>(r.at("dy")),
                 b = cast<T>(bias ? r.at("b") : Array());
  std::vector<T> y(p.n * p.k * p.outH() * p.outW()), dx(x.size()), dw(w.size()),
      db(p.k);
  conv2dForward<T>(p, x.data(), w.data(), bias ? b.data() : nullptr, y.data());
  conv2dBackwardData<T>(p, dy.data(), w.data(), dx.data());
  conv2dBackwardFilter<T>(p, x.data(), dy.data(), dw.data(),
                          bias ? db.data() : nullptr);
  chk.check("y", y, r.at("y"));
  chk.check("dx", dx, r.at("dx"));
  chk.check("dw", dw, r.at("dw"));
  if (bias)
    chk.check("db", db, r.at("db"));
}

TEST(CpuConv2d, OutputSizeMatchesTorchFormula) {
  EXPECT_EQ(convOutputSize(7, 3, 2, 1, 1), 4);
  EXPECT_EQ(convOutputSize(10, 3, 3, 2, 2), 4);
  EXPECT_EQ(convOutputSize(5, 5, 1, 0, 1), 1);
}

TEST(CpuConv2d, MatchesTorchStridedDilatedGrouped) {
  // n c h w k kh kw sh sw ph pw dh dw groups bias
  const int64_t cases[][15] = {
      {2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1, 1},  // plain, with bias
      {2, 4, 9, 8, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0},  // strided, padded
      {1, 3, 10, 9, 5, 3, 2, 2, 3, 2, 1, 2, 3, 1, 1}, // dilated, non-square
      {2, 6, 7, 8, 4, 3, 3, 1, 2, 1, 0, 1, 1, 2, 1},  // two groups
      {2, 5, 8, 7, 5, 3, 3, 2, 1, 1, 1, 1, 1, 5, 1},  // depthwise
      {1, 3, 6, 5, 6, 1, 1, 2, 2, 0, 0, 1, 1, 3, 0},  // depthwise x2, 1x1
      {1, 2, 5, 5, 3, 5, 5, 1, 1, 2, 2, 1, 1, 1, 1},  // kernel = input
  };
  const char *keys[] = {"n",  "c",  "h",  "w",  "k",  "kh",     "kw",  "sh",
                        "sw", "ph", "pw", "dh", "dw", "groups", "bias"};
  Checker chk;
  for (const auto &cs : cases) {
    Args args;
    for (int i = 0; i < 15; ++i)
      args.emplace_back(keys[i], cs[i]);
    compareWithTorch(chk, "conv2d", args, [&](const TorchReference &r, auto t) {
      checkConv<decltype(t)>(r, convParams(args), cs[14], chk);
    });
  }
}

TEST(CpuConv2d, BackwardMatchesFiniteDifferences) {
  Conv2dParams p;
  p.n = 2, p.c = 4, p.h = 5, p.w = 4, p.k = 4, p.kh = 3, p.kw = 2;
  p.strideH = 2, p.padH = 1, p.padW = 1, p.dilationW = 2, p.groups = 2;
  Array x = randomArray(p.n * p.c * p.h * p.w, 1),
        w = randomArray(p.k * (p.c / p.groups) * p.kh * p.kw, 2),
        b = randomArray(p.k, 3),
        dy = randomArray(p.n * p.k * p.outH() * p.outW(), 4);
  Array y(dy.size()), dx(x.size()), dw(w.size()), db(p.k);
  conv2dBackwardData(p, dy.data(), w.data(), dx.data());
  conv2dBackwardFilter(p, x.data(), dy.data(), dw.data(), db.data());
  auto loss = [&] {
    conv2dForward(p, x.data(), w.data(), b.data(), y.data());
    return dot(y, dy);
  };
  EXPECT_LE(finiteDifferenceError(x, dx, loss), kFiniteDifferenceTolerance);
  EXPECT_LE(finiteDifferenceError(w, dw, loss), kFiniteDifferenceTolerance);
  EXPECT_LE(finiteDifferenceError(b, db, loss), kFiniteDifferenceTolerance);
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

template <typename T>
void checkBatchNorm(const TorchReference &r, const BatchNormParams &p,
                    Checker &chk) {
  std::vector<T> x = cast<T>(r.at("x")), scale = cast<T>(r.at("scale")),
                 bias = cast<T>(r.at("bias")), dy = cast<T>(r.at("dy")),
                 runMean = cast<T>(r.at("running_mean0")),
                 runVar = cast<T>(r.at("running_var0"));
  std::vector<T> y(x.size()), mean(p.c), invstd(p.c), dx(x.size()), ds(p.c),
      db(p.c);
  batchNormTrainForward<T>(p, x.data(), scale.data(), bias.data(), y.data(),
                           mean.data(), invstd.data(), runMean.data(),
                           runVar.data());
  batchNormTrainBackward<T>(p, dy.data(), x.data(), scale.data(), mean.data(),
                            invstd.data(), dx.data(), ds.data(), db.data());
  chk.check("y", y, r.at("y"));
  chk.check("saved_mean", mean, r.at("saved_mean"));
  chk.check("saved_invstd", invstd, r.at("saved_invstd"));
  chk.check("running_mean", runMean, r.at("running_mean"));
  chk.check("running_var", runVar, r.at("running_var"));
  chk.check("dx", dx, r.at("dx"));
  chk.check("dscale", ds, r.at("dscale"));
  chk.check("dbias", db, r.at("dbias"));
}

TEST(CpuBatchNorm, TrainingMatchesTorchIncludingRunningStats) {
  // n c h w; h = w = 0 is an NC input (BatchNorm1d). Two elements per
  // channel would make dx exactly zero (xhat = +-1), comparing only noise.
  const int64_t cases[][4] = {
      {4, 3, 5, 6}, {8, 5, 0, 0}, {1, 2, 3, 4}, {5, 4, 1, 1}};
  Checker chk;
  for (const auto &cs : cases) {
    Args args = {{"n", cs[0]}, {"c", cs[1]}, {"h", cs[2]}, {"w", cs[3]}};
    BatchNormParams p;
    p.n = cs[0], p.c = cs[1], p.spatial = cs[2] ? cs[2] * cs[3] : 1;
    p.eps = 1e-5, p.momentum = 0.1;
    compareWithTorch(
        chk, "batch_norm", args,
        [&](const TorchReference &r, auto t) {
          checkBatchNorm<decltype(t)>(r, p, chk);
        },
        "eps=1e-5 momentum=0.1");
  }
}

TEST(CpuBatchNorm, BackwardMatchesFiniteDifferences) {
  BatchNormParams p;
  p.n = 3, p.c = 2, p.spatial = 4;
  int64_t size = p.n * p.c * p.spatial;
  Array x = randomArray(size, 5), scale = randomArray(p.c, 6),
        bias = randomArray(p.c, 7), dy = randomArray(size, 8);
  Array y(size), mean(p.c), invstd(p.c), dx(size), ds(p.c), db(p.c);
  // Running statistics are not part of the differentiated function.
  batchNormTrainForward(p, x.data(), scale.data(), bias.data(), y.data(),
                        mean.data(), invstd.data(), (double *)nullptr,
                        (double *)nullptr);
  batchNormTrainBackward(p, dy.data(), x.data(), scale.data(), mean.data(),
                         invstd.data(), dx.data(), ds.data(), db.data());
  auto loss = [&] {
    Array m(p.c), s(p.c);
    batchNormTrainForward(p, x.data(), scale.data(), bias.data(), y.data(),
                          m.data(), s.data(), (double *)nullptr,
                          (double *)nullptr);
    return dot(y, dy);
  };
  EXPECT_LE(finiteDifferenceError(x, dx, loss), kFiniteDifferenceTolerance);
  EXPECT_LE(finiteDifferenceError(scale, ds, loss), kFiniteDifferenceTolerance);
  EXPECT_LE(finiteDifferenceError(bias, db, loss), kFiniteDifferenceTolerance);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

Pool2dParams poolParams(const int64_t *cs, bool includePad) {
  Pool2dParams p;
  p.n = cs[0], p.c = cs[1], p.h = cs[2], p.w = cs[3], p.kh = cs[4],
  p.kw = cs[5];
  p.strideH = cs[6], p.strideW = cs[7], p.padH = cs[8], p.padW = cs[9];
  p.ceilMode = cs[10], p.countIncludePad = includePad;
  return p;
}

// n c h w kh kw sh sw ph pw ceil ties
const int64_t kPoolCases[][12] = {
    {2, 3, 8, 9, 2, 2, 2, 2, 0, 0, 0, 0},   // plain 2x2/2
    {2, 2, 9, 7, 3, 3, 2, 2, 1, 1, 1, 0},   // overlapping, padded, ceil
    {1, 3, 10, 11, 3, 2, 2, 3, 1, 0, 1, 1}, // non-square, ceil, ties
    {2, 2, 6, 6, 3, 3, 1, 1, 1, 1, 0, 1},   // stride 1, heavy overlap, ties
    {1, 2, 4, 7, 2, 2, 3, 3, 1, 1, 1, 0},   // ceil drops the last window
};
const char *kPoolKeys[] = {"n",  "c",  "h",  "w",  "kh",   "kw",
                           "sh", "sw", "ph", "pw", "ceil", "ties"};

Args poolArgs(const int64_t *cs) {
  Args args;
  for (int i = 0; i < 12; ++i)
    args.emplace_back(kPoolKeys[i], cs[i]);
  return args;
}

TEST(CpuPool2d, OutputSizeMatchesTorchCeilRule) {
  EXPECT_EQ(poolOutputSize(4, 2, 3, 1, true), 2); // third window is all padding
  EXPECT_EQ(poolOutputSize(7, 2, 3, 1, true), 3);
  EXPECT_EQ(poolOutputSize(9, 3, 2, 1, true), 5);
  EXPECT_EQ(poolOutputSize(10, 3, 2, 0, false), 4);
  EXPECT_EQ(poolOutputSize(10, 3, 2, 0, true), 5);
}

template <typename T>
void checkPool(const TorchReference &r, const Pool2dParams &p, bool max,
               Checker &chk) {
  std::vector<T> x = cast<T>(r.at("x")), dy = cast<T>(r.at("dy"));
  std::vector<T> y(p.n * p.c * p.outH() * p.outW()), dx(x.size());
  if (max) {
    maxPool2dForward<T>(p, x.data(), y.data());
    maxPool2dBackward<T>(p, x.data(), dy.data(), dx.data());
  } else {
    avgPool2dForward<T>(p, x.data(), y.data());
    avgPool2dBackward<T>(p, dy.data(), dx.data());
  }
  chk.check("y", y, r.at("y"));
  chk.check("dx", dx, r.at("dx"));
}

TEST(CpuMaxPool2d, MatchesTorchCeilModeAndTies) {
  Checker chk;
  for (const auto &cs : kPoolCases) {
    compareWithTorch(
        chk, "max_pool2d", poolArgs(cs), [&](const TorchReference &r, auto t) {
          checkPool<decltype(t)>(r, poolParams(cs, true), true, chk);
        });
  }
}

TEST(CpuAvgPool2d, MatchesTorchCountIncludePadAndCeilMode) {
  Checker chk;
  for (const auto &cs : kPoolCases)
    for (bool includePad : {true, false}) {
      Args args = poolArgs(cs);
      args.emplace_back("include_pad", includePad);
      compareWithTorch(
          chk, "avg_pool2d", args, [&](const TorchReference &r, auto t) {
            checkPool<decltype(t)>(r, poolParams(cs, includePad), false, chk);
          });
    }
}

TEST(CpuPool2d, BackwardMatchesFiniteDifferences) {
  // Distinct random values: max pooling is differentiable away from ties.
  // Kinds: max, avg including pad, avg excluding pad, global average.
  const int64_t cs[] = {1, 2, 5, 6, 3, 2, 2, 2, 1, 1, 1, 0};
  for (int kind = 0; kind < 4; ++kind) {
    Pool2dParams p = poolParams(cs, kind == 1);
    Array x = randomArray(p.n * p.c * p.h * p.w, 9),
          dy = randomArray(p.n * p.c * p.outH() * p.outW(), 10);
    Array y(dy.size()), dx(x.size());
    if (kind == 3)
      dy.resize(p.n * p.c), y.resize(p.n * p.c);
    if (kind == 0)
      maxPool2dBackward(p, x.data(), dy.data(), dx.data());
    else if (kind == 3)
      globalAvgPoolBackward(p.n, p.c, p.h, p.w, dy.data(), dx.data());
    else
      avgPool2dBackward(p, dy.data(), dx.data());
    auto loss = [&] {
      if (kind == 0)
        maxPool2dForward(p, x.data(), y.data());
      else if (kind == 3)
        globalAvgPoolForward(p.n, p.c, p.h, p.w, x.data(), y.data());
      else
        avgPool2dForward(p, x.data(), y.data());
      return dot(y, dy);
    };
    EXPECT_LE(finiteDifferenceError(x, dx, loss), kFiniteDifferenceTolerance)
        << "pooling kind " << kind;
  }
}

template <typename T>
void checkGlobalAvgPool(const TorchReference &r, const int64_t *s,
                        Checker &chk) {
  std::vector<T> x = cast<T>(r.at("x")), dy = cast<T>(r.at("dy"));
  std::vector<T> y(s[0] * s[1]), dx(x.size());
  globalAvgPoolForward<T>(s[0], s[1], s[2], s[3], x.data(), y.data());
  globalAvgPoolBackward<T>(s[0], s[1], s[2], s[3], dy.data(), dx.data());
  chk.check("y", y, r.at("y"));
  chk.check("dx", dx, r.at("dx"));
}

TEST(CpuGlobalAvgPool, MatchesTorch) {
  const int64_t cases[][4] = {{2, 3, 5, 7}, {1, 4, 1, 1}, {3, 2, 8, 3}};
  Checker chk;
  for (const auto &cs : cases) {
    Args args = {{"n", cs[0]}, {"c", cs[1]}, {"h", cs[2]}, {"w", cs[3]}};
    compareWithTorch(chk, "global_avg_pool", args,
                     [&](const TorchReference &r, auto t) {
                       checkGlobalAvgPool<decltype(t)>(r, cs, chk);
                     });
  }
}

//===----------------------------------------------------------------------===//
// Bilinear resize
//===----------------------------------------------------------------------===//

template <typename T>
void checkResize(const TorchReference &r, const ResizeParams &p, Checker &chk) {
  std::vector<T> x = cast<T>(r.at("x")), dy = cast<T>(r.at("dy"));
  std::vector<T> y(p.n * p.c * p.outH * p.outW), dx(x.size());
  resizeBilinearForward<T>(p, x.data(), y.data());
  resizeBilinearBackward<T>(p, dy.data(), dx.data());
  chk.check("y", y, r.at("y"));
  chk.check("dx", dx, r.at("dx"));
}

// n c inH inW outH outW
const int64_t kResizeCases[][6] = {
    {2, 3, 4, 5, 9, 11}, // up, non-integer factors
    {2, 2, 9, 10, 4, 3}, // down
    {1, 3, 5, 4, 3, 9},  // down in h, up in w
    {1, 2, 6, 5, 1, 1},  // to a single pixel
    {1, 2, 1, 1, 3, 4},  // from a single pixel
    {1, 1, 7, 7, 7, 7},  // identity size
    {1, 2, 4, 4, 8, 8},  // exact factor 2
};

ResizeParams resizeParams(const int64_t *cs, bool alignCorners) {
  ResizeParams p;
  p.n = cs[0], p.c = cs[1], p.inH = cs[2], p.inW = cs[3], p.outH = cs[4],
  p.outW = cs[5], p.alignCorners = alignCorners;
  return p;
}

TEST(CpuResizeBilinear, MatchesTorchBothAlignCorners) {
  Checker chk;
  for (const auto &cs : kResizeCases)
    for (bool align : {false, true}) {
      Args args = {{"n", cs[0]},  {"c", cs[1]},  {"ih", cs[2]},   {"iw", cs[3]},
                   {"oh", cs[4]}, {"ow", cs[5]}, {"align", align}};
      compareWithTorch(
          chk, "resize_bilinear", args, [&](const TorchReference &r, auto t) {
            checkResize<decltype(t)>(r, resizeParams(cs, align), chk);
          });
    }
}

TEST(CpuResizeBilinear, BackwardMatchesFiniteDifferences) {
  const int64_t cases[][6] = {{1, 2, 3, 4, 5, 7}, {1, 1, 6, 5, 4, 2}};
  for (const auto &cs : cases)
    for (bool align : {false, true}) {
      ResizeParams p = resizeParams(cs, align);
      Array x = randomArray(p.n * p.c * p.inH * p.inW, 13),
            dy = randomArray(p.n * p.c * p.outH * p.outW, 14);
      Array y(dy.size()), dx(x.size());
      resizeBilinearBackward(p, dy.data(), dx.data());
      auto loss = [&] {
        resizeBilinearForward(p, x.data(), y.data());
        return dot(y, dy);
      };
      EXPECT_LE(finiteDifferenceError(x, dx, loss), kFiniteDifferenceTolerance)
          << "align_corners=" << align << " " << cs[2] << "x" << cs[3] << " -> "
          << cs[4] << "x" << cs[5];
    }
}

} // namespace
