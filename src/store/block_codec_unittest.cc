#include "store/block_codec.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

namespace stepscope::store {
namespace {

uint64_t Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}
double Double(uint64_t b) {
  double d;
  std::memcpy(&d, &b, sizeof d);
  return d;
}

RawRecord Make(RecordKind kind, uint64_t ticks, uint32_t name, uint64_t value = 0, uint8_t phase = 0) {
  return RawRecord{ticks, name, static_cast<uint8_t>(kind), phase, 0, value};
}

TEST(BlockCodec, RoundTripsEveryRecordKindExactly) {
  std::vector<RawRecord> records = {
      Make(RecordKind::kStepBegin, 1000, 0, 5, 1),
      Make(RecordKind::kBegin, 1100, 7),
      Make(RecordKind::kArgInt, 1100, 8, static_cast<uint64_t>(-42)),
      Make(RecordKind::kArgDouble, 1100, 9, Bits(3.25)),
      Make(RecordKind::kArgString, 1100, 10, 11),
      Make(RecordKind::kCounter, 1500, 12, Bits(-0.1)),
      Make(RecordKind::kInstant, 1400, 13),  // time may go backwards across threads' merges
      Make(RecordKind::kEnd, 2000, 7),
      Make(RecordKind::kStepEnd, 2100, 0, 5, 1),
      Make(RecordKind::kStepBegin, 2200, 0, static_cast<uint64_t>(-1), 3),
  };
  std::string payload = EncodeBlock(99, 1234, 17, records);
  auto decoded = DecodeBlock(payload);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->seq, 99u);
  EXPECT_EQ(decoded->tid, 1234u);
  EXPECT_EQ(decoded->dropped_before, 17u);
  ASSERT_EQ(decoded->records.size(), records.size());
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(decoded->records[i].ticks, records[i].ticks) << i;
    EXPECT_EQ(decoded->records[i].name_id, records[i].name_id) << i;
    EXPECT_EQ(decoded->records[i].kind, records[i].kind) << i;
    EXPECT_EQ(decoded->records[i].phase, records[i].phase) << i;
    EXPECT_EQ(decoded->records[i].value, records[i].value) << i;
  }
}

TEST(BlockCodec, AKeptEncoderWritesTheSameBytesBlockAfterBlock) {
  BlockEncoder encoder;
  std::mt19937 random(3);
  for (int block = 0; block < 4; ++block) {
    std::vector<RawRecord> records;
    for (uint32_t i = 0; i < 2000; ++i) {
      records.push_back(Make(i % 2 == 0 ? RecordKind::kBegin : RecordKind::kEnd, 1000 + i * (random() % 900), 1 + i % 7));
    }
    const std::string kept = encoder.Encode(block, 4, 0, records, 3);
    EXPECT_EQ(kept, EncodeBlock(block, 4, 0, records, 3)) << "block " << block;
    auto decoded = DecodeBlock(kept);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_EQ(decoded->records.size(), records.size());
  }
}

TEST(BlockCodec, CompressIntoCodesLiteralsWithOrWithoutMatchesAndDecompressesBack) {
  // Skewed bytes that do not repeat (the high planes of times): literals-only coding must still
  // Huffman-code them (an accelerated match finder alone would leave them raw), within a few
  // percent of the full search's size; repeating bytes still shrink by matches the default way.
  std::mt19937 random(7);
  std::geometric_distribution<int> skew(0.3);
  std::string skewed(4096, '\0');
  for (char& byte : skewed) byte = static_cast<char>(std::min(255, skew(random)));
  std::string repeating;
  while (repeating.size() < 4096) repeating += "kernel-a kernel-b kernel-c " + std::to_string(repeating.size() % 7);
  BlockEncoder encoder;
  std::string scratch;
  for (const std::string* input : {&skewed, &repeating}) {
    size_t sizes[2] = {};
    for (bool literals_only : {false, true}) {
      const size_t size = encoder.CompressInto(*input, 1, scratch, literals_only);
      ASSERT_GT(size, 0u);
      std::string back(input->size(), '\0');
      ASSERT_EQ(ZSTD_decompress(back.data(), back.size(), scratch.data(), size), input->size());
      EXPECT_EQ(back, *input);
      sizes[literals_only] = size;
    }
    if (input == &skewed) {
      EXPECT_LT(sizes[true], skewed.size() * 6 / 10);  // ~3 bits a byte of entropy
      EXPECT_LT(sizes[true], sizes[false] * 105 / 100);
    } else {
      EXPECT_LT(sizes[false], repeating.size() / 10);
    }
  }
}

TEST(BlockCodec, KeepsSamplesToAThousandthAndEscapesHugeOrNonFiniteValues) {
  const double values[] = {12.3456, 12.3454, 0.0, 99.999, 1e15, -7.5e14,
                           std::numeric_limits<double>::infinity(), std::nan("")};
  std::vector<RawRecord> records;
  for (double v : values) records.push_back(Make(RecordKind::kSample, 5, 3, Bits(v)));
  auto decoded = DecodeBlock(EncodeBlock(1, 0, 0, records));
  ASSERT_TRUE(decoded.ok());
  EXPECT_DOUBLE_EQ(Double(decoded->records[0].value), 12.346);
  EXPECT_DOUBLE_EQ(Double(decoded->records[1].value), 12.345);
  EXPECT_DOUBLE_EQ(Double(decoded->records[2].value), 0.0);
  EXPECT_DOUBLE_EQ(Double(decoded->records[3].value), 99.999);
  EXPECT_EQ(Double(decoded->records[4].value), 1e15);
  EXPECT_EQ(Double(decoded->records[5].value), -7.5e14);
  EXPECT_TRUE(std::isinf(Double(decoded->records[6].value)));
  EXPECT_TRUE(std::isnan(Double(decoded->records[7].value)));
}

TEST(BlockCodec, RejectsEveryTruncationWithoutCrashing) {
  std::vector<RawRecord> records;
  for (int i = 0; i < 200; ++i) records.push_back(Make(RecordKind::kBegin, 1000 + i * 37, i % 5));
  std::string payload = EncodeBlock(3, 4, 0, records);
  for (size_t cut = 0; cut < payload.size(); ++cut) {
    EXPECT_FALSE(DecodeBlock(payload.substr(0, cut)).ok()) << cut;
  }
}

TEST(BlockCodec, SurvivesRandomBitFlips) {
  std::vector<RawRecord> records;
  for (int i = 0; i < 100; ++i) records.push_back(Make(RecordKind::kSample, 1000 + i, i % 7, Bits(i * 1.5)));
  std::string payload = EncodeBlock(3, 4, 0, records);
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string damaged = payload;
    damaged[rng() % damaged.size()] ^= static_cast<char>(1 << (rng() % 8));
    auto decoded = DecodeBlock(damaged);  // must not crash; may or may not detect
    if (decoded.ok()) {
      for (const RawRecord& r : decoded->records) EXPECT_TRUE(IsValidRecord(r));
    }
  }
}

}  // namespace
}  // namespace stepscope::store
