//===- PlanTest.cpp - plan files: round trip, versions, damage ------------===//

#include "dlc/runtime/Plan.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace dlc::rt;

namespace {

/// A two-kernel plan: y = relu(conv(x, w)), with an attribute of each kind.
Plan samplePlan() {
  Plan plan;
  plan.model = "small_convnet";
  plan.batch = 2;
  plan.precision = "fp32";
  plan.fusion = "none";
  auto add = [&](const char *name, std::vector<int64_t> shape, BufferRole role,
                 int64_t offset) {
    PlanBuffer b;
    b.name = name;
    b.shape = std::move(shape);
    b.role = role;
    b.offset = offset;
    b.bytes = b.numElements() * 4;
    plan.buffers.push_back(b);
  };
  add("x", {2, 3, 8, 8}, BufferRole::kInput, 0);
  add("w", {4, 3, 3, 3}, BufferRole::kParam, 1536);
  plan.buffers.back().init = {{"init", std::string("kaiming_normal")},
                              {"mode", std::string("fan_out")}};
  add("conv", {2, 4, 8, 8}, BufferRole::kTemporary, 2048);
  add("y", {2, 4, 8, 8}, BufferRole::kTemporary, 4096);
  add("half", {}, BufferRole::kConstant, 6144);
  plan.buffers.back().data = std::string("\0\0\0\x3f", 4); // 0.5f
  plan.arenaBytes = 6400;
  PlanKernel conv;
  conv.setOp(OpId::kConv2d);
  conv.inputs = {0, 1};
  conv.outputs = {2};
  conv.attrs["padding"] = std::vector<int64_t>{1, 1};
  conv.attrs["groups"] = int64_t{1};
  conv.attrs["alpha"] = 0.5;
  conv.attrs["kind"] = std::string("library");
  conv.opClass = OpClass::kContraction;
  conv.fusionKind = FusionKind::kConvBiasAct;
  PlanKernel relu;
  relu.setOp(OpId::kRelu);
  relu.opClass = OpClass::kElementwise;
  relu.inputs = {2};
  relu.outputs = {3};
  plan.kernels = {conv, relu};
  return plan;
}

TEST(PlanFile, RoundTripKeepsEveryField) {
  Plan plan = samplePlan();
  ASSERT_TRUE(validatePlan(plan).isOk()) << validatePlan(plan).toString();
  std::string bytes = serializePlan(plan);
  auto back = deserializePlan(bytes, "memory");
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->model, "small_convnet");
  EXPECT_EQ(back->batch, 2);
  EXPECT_EQ(back->arenaBytes, 6400);
  ASSERT_EQ(back->buffers.size(), 5u);
  EXPECT_EQ(std::get<std::string>(back->buffers[1].init.at("mode")), "fan_out");
  float half = 0;
  std::memcpy(&half, back->buffers[4].data.data(), sizeof(float));
  EXPECT_EQ(half, 0.5f);
  EXPECT_EQ(back->buffers[1].name, "w");
  EXPECT_EQ(back->buffers[1].role, BufferRole::kParam);
  EXPECT_EQ(back->buffers[2].shape, (std::vector<int64_t>{2, 4, 8, 8}));
  EXPECT_EQ(back->buffers[3].offset, 4096);
  ASSERT_EQ(back->kernels.size(), 2u);
  const PlanKernel &conv = back->kernels[0];
  EXPECT_EQ(conv.id, OpId::kConv2d);
  EXPECT_EQ(conv.op, "conv2d"); // derived from the id at load
  EXPECT_EQ(back->kernels[1].id, OpId::kRelu);
  EXPECT_EQ(conv.inputs, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(std::get<std::vector<int64_t>>(conv.attrs.at("padding")),
            (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(std::get<double>(conv.attrs.at("alpha")), 0.5);
  EXPECT_EQ(std::get<std::string>(conv.attrs.at("kind")), "library");
  EXPECT_EQ(conv.opClass, OpClass::kContraction);
  EXPECT_EQ(conv.fusionKind, FusionKind::kConvBiasAct);
  EXPECT_EQ(back->kernels[1].opClass, OpClass::kElementwise);
  EXPECT_EQ(back->kernels[1].fusionKind, FusionKind::kNone);
  // Serializing again gives the same bytes: the format is canonical.
  EXPECT_EQ(serializePlan(*back), bytes);
}

TEST(PlanFile, UnknownOpClassIsRefused) {
  Plan plan = samplePlan();
  plan.kernels[1].opClass = static_cast<OpClass>(200);
  auto back = deserializePlan(serializePlan(plan), "odd.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().message(),
            "odd.plan: corrupt plan file: kernel #1 (relu) has an unknown op class or fusion kind");
}

TEST(PlanFile, WritesAndReadsFiles) {
  std::string path = ::testing::TempDir() + "/dlc-plan-test.plan";
  ASSERT_TRUE(writePlanFile(samplePlan(), path).isOk());
  auto back = readPlanFile(path);
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->kernels[1].op, "relu");
  std::remove(path.c_str());
  auto missing = readPlanFile(path);
  EXPECT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("cannot open plan file"),
            std::string::npos);
}

TEST(PlanFile, OtherVersionIsRefusedWithBothVersions) {
  std::string bytes = serializePlan(samplePlan());
  uint32_t future = kPlanFormatVersion + 1;
  std::memcpy(&bytes[8], &future, sizeof(future));
  auto back = deserializePlan(bytes, "old.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().message(),
            "old.plan: plan format version " + std::to_string(future) +
                ", this runtime reads version " +
                std::to_string(kPlanFormatVersion) +
                ": compile the model again with this dlc");
}

/// Version 2 named ops by string; this runtime names them by OpId.
TEST(PlanFile, VersionTwoIsRefusedWithBothVersions) {
  ASSERT_EQ(kPlanFormatVersion, 3u);
  std::string bytes = serializePlan(samplePlan());
  uint32_t two = 2;
  std::memcpy(&bytes[8], &two, sizeof(two));
  auto back = deserializePlan(bytes, "v2.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().message(), "v2.plan: plan format version 2, this runtime reads "
                                     "version 3: compile the model again with this dlc");
}

TEST(PlanFile, EveryTruncationIsRefused) {
  std::string bytes = serializePlan(samplePlan());
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    auto back = deserializePlan(std::string_view(bytes).substr(0, cut), "cut.plan");
    ASSERT_FALSE(back.isOk()) << "a plan cut to " << cut << " bytes was accepted";
    if (cut >= 20) // past the magic and header: named as truncation
      EXPECT_EQ(back.status().code(), StatusCode::kDataLoss) << cut;
  }
}

TEST(PlanFile, FlippedByteIsCaughtByTheChecksum) {
  std::string bytes = serializePlan(samplePlan());
  bytes[bytes.size() / 2] ^= 0x40;
  auto back = deserializePlan(bytes, "flip.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_NE(back.status().message().find("checksum does not match"),
            std::string::npos)
      << back.status().toString();
}

TEST(PlanFile, NotAPlanIsSaidPlainly) {
  auto back = deserializePlan("module {\n}\n", "model.mlir");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().message(), "model.mlir: not a dlc plan file");
}

/// The plan file's checksum (FNV-1a of the payload), recomputed after a
/// test edits the payload, as someone crafting a plan would.
void resealPlan(std::string &bytes) {
  constexpr size_t kHeader = 20, kTrailer = 8;
  uint64_t hash = 1469598103934665603ull;
  for (size_t i = kHeader; i < bytes.size() - kTrailer; ++i) {
    hash ^= static_cast<unsigned char>(bytes[i]);
    hash *= 1099511628211ull;
  }
  std::memcpy(&bytes[bytes.size() - kTrailer], &hash, sizeof(hash));
}

/// Where the int64 values `words` are laid out in `bytes`.
size_t findWords(const std::string &bytes, std::vector<int64_t> words) {
  std::string needle(words.size() * 8, '\0');
  std::memcpy(needle.data(), words.data(), needle.size());
  return bytes.find(needle);
}

/// A plan compiled by a dlc with another op set: its OpIds may mean other
/// ops, so it is refused before any kernel is read.
TEST(PlanFile, AnotherOpTableIsRefused) {
  std::string bytes = serializePlan(samplePlan());
  constexpr size_t kPayload = 20; // the fingerprint opens the payload
  uint64_t fingerprint;
  std::memcpy(&fingerprint, &bytes[kPayload], 8);
  ASSERT_EQ(fingerprint, opTableFingerprint());
  uint64_t other = fingerprint ^ 1;
  std::memcpy(&bytes[kPayload], &other, 8);
  resealPlan(bytes);
  auto back = deserializePlan(bytes, "other.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  const std::string &message = back.status().message();
  EXPECT_EQ(message.rfind("other.plan: the plan was compiled for another set of ops (", 0), 0u)
      << message;
  EXPECT_NE(message.find("compile the model again with this dlc"), std::string::npos) << message;

  // The same table with one op more or fewer is another table too.
  bytes = serializePlan(samplePlan());
  uint64_t count = kNumOps + 1;
  std::memcpy(&bytes[kPayload + 8], &count, 8);
  resealPlan(bytes);
  back = deserializePlan(bytes, "other.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_NE(back.status().message().find(std::to_string(kNumOps + 1) + " ops"),
            std::string::npos)
      << back.status().message();
}

TEST(PlanFile, OpIdPastTheTableIsCorrupt) {
  std::string bytes = serializePlan(samplePlan());
  // relu's id, just before its inputs [2] and outputs [3].
  size_t ids = findWords(bytes, {1, 2, 1, 3});
  ASSERT_NE(ids, std::string::npos);
  uint16_t relu;
  std::memcpy(&relu, &bytes[ids - 2], 2);
  ASSERT_EQ(relu, static_cast<uint16_t>(OpId::kRelu));
  uint16_t past = static_cast<uint16_t>(kNumOps);
  std::memcpy(&bytes[ids - 2], &past, 2);
  resealPlan(bytes);
  auto back = deserializePlan(bytes, "crafted.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().message(), "crafted.plan: corrupt plan file: kernel #1 has op id " +
                                         std::to_string(kNumOps) + " of " +
                                         std::to_string(kNumOps));
}

TEST(PlanFile, SizesThatWrapAreRefusedAtLoad) {
  // Buffer 'x' is [2, 3, 8, 8] f32 at offset 0: make it [2^62, 1, 1, 1]
  // and its byte size 0, which 2^62 x 4 wraps to, with a valid checksum.
  std::string bytes = serializePlan(samplePlan());
  size_t dims = findWords(bytes, {4, 2, 3, 8, 8});
  ASSERT_NE(dims, std::string::npos);
  int64_t huge[4] = {int64_t{1} << 62, 1, 1, 1}, zero = 0;
  std::memcpy(&bytes[dims + 8], huge, sizeof(huge));
  size_t size = dims + 8 + sizeof(huge) + 1 /*role*/ + 8 /*offset*/;
  int64_t oldSize;
  std::memcpy(&oldSize, &bytes[size], 8);
  ASSERT_EQ(oldSize, 2 * 3 * 8 * 8 * 4);
  std::memcpy(&bytes[size], &zero, 8);
  resealPlan(bytes);
  auto back = deserializePlan(bytes, "crafted.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(back.status().message(),
            "crafted.plan: buffer 'x' of 4611686018427387904 f32 elements has "
            "more bytes than fit in int64");

  // Two dimensions of 2^62 wrap the element count itself.
  Plan plan = samplePlan();
  plan.buffers[0].shape = {int64_t{1} << 62, int64_t{1} << 62, 1, 1};
  plan.buffers[0].bytes = 0;
  back = deserializePlan(serializePlan(plan), "crafted.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().message(),
            "crafted.plan: buffer 'x' has more elements than fit in int64");
}

TEST(PlanFile, BufferIdPastInt32IsRefusedNotWrapped) {
  // relu reads buffer 2; 2 + 2^32 used to wrap to 2 as it became an int32
  // and load as a valid plan.
  std::string bytes = serializePlan(samplePlan());
  size_t ids = findWords(bytes, {1, 2, 1, 3});
  ASSERT_NE(ids, std::string::npos);
  int64_t wide = 2 + (int64_t{1} << 32);
  std::memcpy(&bytes[ids + 8], &wide, 8);
  resealPlan(bytes);
  auto back = deserializePlan(bytes, "crafted.plan");
  ASSERT_FALSE(back.isOk());
  EXPECT_EQ(back.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(back.status().message(),
            "crafted.plan: kernel #1 (relu) names buffer #4294967298 of 5");
}

/// The fuzzers' seed plans (test/fuzz/corpus/plan, real dlc-bench output)
/// read as they are, and every cut of them is refused. A new plan format
/// version needs them made again (docs/Fuzzing.md).
TEST(PlanFile, FuzzSeedPlansRead) {
  std::string dir = std::string(DLC_SOURCE_DIR) + "/test/fuzz/corpus/plan/";
  for (const char *name : {"mlp.plan", "mlp-2ranks-paddle.plan", "small_convnet.plan",
                           "small_convnet-amp-xla-nhwc.plan", "tiny_transformer.plan"}) {
    std::ifstream in(dir + name, std::ios::binary);
    ASSERT_TRUE(in) << dir + name;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto plan = deserializePlan(bytes, name);
    ASSERT_TRUE(plan.isOk()) << plan.status().toString();
    EXPECT_EQ(serializePlan(*plan), bytes) << name;
    for (size_t cut : {size_t{0}, size_t{19}, bytes.size() / 2, bytes.size() - 1})
      EXPECT_FALSE(deserializePlan(std::string_view(bytes).substr(0, cut), name).isOk())
          << name << " cut to " << cut;
  }
}

TEST(PlanValidation, OffsetPlusSizeThatWrapsIsOutsideTheArena) {
  Plan plan = samplePlan();
  plan.buffers[3].offset = INT64_MAX - 100; // + 2048 bytes wraps negative
  EXPECT_EQ(validatePlan(plan).message(),
            "buffer 'y' at offset 9223372036854775707 (2048 bytes) lies "
            "outside the arena of 6400 bytes");
  plan = samplePlan();
  plan.arenaBytes = -1;
  EXPECT_EQ(validatePlan(plan).message(),
            "the arena has a negative size of -1 bytes");
}

TEST(PlanValidation, BufferOutsideTheArena) {
  Plan plan = samplePlan();
  plan.arenaBytes = 4096;
  plan.buffers.pop_back(); // the constant past the end
  Status status = validatePlan(plan);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("buffer 'y' at offset 4096 (2048 bytes) "
                                  "lies outside the arena of 4096 bytes"),
            std::string::npos)
      << status.toString();
}

TEST(PlanValidation, KernelNamingAMissingBuffer) {
  Plan plan = samplePlan();
  plan.kernels[1].outputs = {9};
  Status status = validatePlan(plan);
  EXPECT_NE(status.message().find("kernel #1 (relu) names buffer #9 of 5"),
            std::string::npos)
      << status.toString();
}

/// A kernel whose name is not its id's (one set without setOp) would run
/// one op where reports name another.
TEST(PlanValidation, NameThatIsNotTheIdsIsRefused) {
  Plan plan = samplePlan();
  plan.kernels[1].op = "tanh";
  EXPECT_EQ(validatePlan(plan).message(),
            "kernel #1 is named 'tanh' but its op id is " +
                std::to_string(static_cast<int>(OpId::kRelu)) + " ('relu'): set both with setOp");
  plan.kernels[1].setOp(OpId::kTanh);
  EXPECT_TRUE(validatePlan(plan).isOk());
  PlanKernel unset; // neither set
  plan.kernels.push_back(unset);
  EXPECT_NE(validatePlan(plan).message().find("kernel #2 is named ''"), std::string::npos);
}

/// The generated op list: sorted, every name parses back to its id, and
/// the fingerprint is of the names in that order.
TEST(OpIds, NamesParseBackInOrder) {
  ASSERT_GT(kNumOps, 50u);
  for (size_t i = 0; i < kNumOps; ++i) {
    OpId id = static_cast<OpId>(i);
    EXPECT_EQ(parseOpId(opName(id)), id) << opName(id);
    if (i > 0)
      EXPECT_LT(opName(static_cast<OpId>(i - 1)), opName(id));
  }
  EXPECT_EQ(opName(OpId::kConv2dBackwardFilter), "conv2d_backward_filter");
  EXPECT_EQ(opClassOf(OpId::kConv2d), OpClass::kContraction);
  EXPECT_EQ(parseOpId("conv3d"), std::nullopt);
  EXPECT_EQ(opName(static_cast<OpId>(kNumOps)), "");
  uint64_t hash = 14695981039346656037ull; // FNV-1a's offset basis
  for (size_t i = 0; i < kNumOps; ++i)
    for (char c : std::string(opName(static_cast<OpId>(i))) + "\n")
      hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  EXPECT_EQ(opTableFingerprint(), hash);
}

TEST(PlanValidation, ConstantWithoutItsBytes) {
  Plan plan = samplePlan();
  plan.buffers[4].data.clear();
  EXPECT_NE(validatePlan(plan).message().find(
                "constant 'half' carries 0 bytes for 4"),
            std::string::npos);
}

TEST(PlanValidation, SizeThatDisagreesWithTheShape) {
  Plan plan = samplePlan();
  plan.buffers[0].bytes = 100;
  EXPECT_NE(validatePlan(plan).message().find(
                "buffer 'x' has 100 bytes for 384 f32 elements"),
            std::string::npos);
}

TEST(PlanValidation, StorageThatIsNotAPermutation) {
  Plan plan = samplePlan();
  plan.buffers[1].init["storage"] = std::vector<int64_t>{0, 2, 2, 1};
  EXPECT_NE(validatePlan(plan).message().find(
                "buffer 'w' has a storage order that is not a permutation of its 4 dimensions"),
            std::string::npos);
  plan.buffers[1].init["storage"] = std::vector<int64_t>{0, 2, 3, 1};
  EXPECT_TRUE(validatePlan(plan).isOk());
}

/// A filter stored OHWI: element [o][i][h][w] of the declared OIHW array
/// sits at [o][h][w][i], and the way back restores the declared bytes.
TEST(StorageOrder, FilterStoredOHWI) {
  PlanBuffer w;
  w.name = "w";
  w.shape = {2, 2, 3, 4}; // stored O H W I of a declared [2, 4, 2, 3]
  w.init["storage"] = std::vector<int64_t>{0, 2, 3, 1};
  EXPECT_EQ(declaredShape(w), (std::vector<int64_t>{2, 4, 2, 3}));
  std::vector<float> declared(48);
  for (size_t i = 0; i < declared.size(); ++i)
    declared[i] = static_cast<float>(i);
  std::string bytes(reinterpret_cast<const char *>(declared.data()), 48 * sizeof(float));
  std::string stored = toStoredOrder(w, bytes, sizeof(float));
  const float *s = reinterpret_cast<const float *>(stored.data());
  for (int o = 0; o < 2; ++o)
    for (int i = 0; i < 4; ++i)
      for (int h = 0; h < 2; ++h)
        for (int x = 0; x < 3; ++x)
          EXPECT_EQ(s[((o * 2 + h) * 3 + x) * 4 + i], declared[((o * 4 + i) * 2 + h) * 3 + x]);
  EXPECT_EQ(toDeclaredOrder(w, stored, sizeof(float)), bytes);

  PlanBuffer plain = w;
  plain.init.clear();
  EXPECT_EQ(declaredShape(plain), plain.shape);
  EXPECT_EQ(toStoredOrder(plain, bytes, sizeof(float)), bytes);
}

} // namespace
