// The known instance capacities, and a user catalogue merged over them: name forms, filled-in
// capacities, overrides, and the entries refused with what to add.
#include "rules/instance_catalog.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rules/instance_capacities.h"

namespace stepscope::rules {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int64_t kMiB = int64_t{1} << 20;

StatusOr<std::vector<InstanceType>> Parse(const std::string& json) {
  return InstanceCatalogFromJson(nlohmann::json::parse(json), "price catalogue prices.json");
}

TEST(KnownInstanceTypes, FindsBothNameFormsAndNothingElse) {
  const auto plain = FindKnownInstanceType("g5.2xlarge");
  const auto sagemaker = FindKnownInstanceType("ml.g5.2xlarge");
  ASSERT_TRUE(plain && sagemaker);
  EXPECT_EQ(plain->name, "g5.2xlarge");
  EXPECT_EQ(sagemaker->name, "g5.2xlarge");
  EXPECT_EQ(plain->gpu_model, "A10G");
  EXPECT_EQ(plain->gpus, 1);
  EXPECT_EQ(plain->gpu_memory_bytes, 22888 * kMiB);
  EXPECT_EQ(plain->vcpus, 8);
  EXPECT_EQ(plain->memory_bytes, 32 * kGiB);
  EXPECT_EQ(plain->price_per_hour, 0) << "capacities carry no price";
  EXPECT_FALSE(FindKnownInstanceType("g5.3xlarge"));
  EXPECT_FALSE(FindKnownInstanceType("ml."));
  EXPECT_FALSE(FindKnownInstanceType("G5.2XLARGE")) << "EC2 names are lower case";
}

TEST(KnownInstanceTypes, SpotChecksAcrossFamilies) {
  const auto p4de = FindKnownInstanceType("p4de.24xlarge");
  ASSERT_TRUE(p4de);
  EXPECT_EQ(p4de->gpus, 8);
  EXPECT_EQ(p4de->gpu_memory_bytes, 80 * kGiB);
  EXPECT_EQ(p4de->memory_bytes, 1152 * kGiB);
  const auto trn1 = FindKnownInstanceType("ml.trn1.32xlarge");
  ASSERT_TRUE(trn1);
  EXPECT_EQ(trn1->gpu_model, "Trainium");
  EXPECT_EQ(trn1->gpus, 16);
  EXPECT_EQ(trn1->gpu_memory_bytes, 32 * kGiB);
  const auto r5 = FindKnownInstanceType("r5.metal");
  ASSERT_TRUE(r5);
  EXPECT_EQ(r5->gpus, 0);
  EXPECT_EQ(r5->gpu_model, "");
  EXPECT_EQ(r5->vcpus, 96);
  EXPECT_EQ(r5->memory_bytes, 768 * kGiB);
}

TEST(KnownInstanceTypes, EveryFamilyOfTheIssueIsListedOnceWithSaneCapacities) {
  std::set<std::string> names, families;
  for (const InstanceType& type : KnownInstanceTypes()) {
    EXPECT_TRUE(names.insert(type.name).second) << type.name << " listed twice";
    families.insert(type.name.substr(0, type.name.find('.')));
    EXPECT_GT(type.vcpus, 0) << type.name;
    EXPECT_GT(type.memory_bytes, 0) << type.name;
    EXPECT_EQ(type.gpus > 0, !type.gpu_model.empty()) << type.name;
    EXPECT_EQ(type.gpus > 0, type.gpu_memory_bytes > 0) << type.name;
  }
  for (const char* family : {"p3", "p3dn", "p4d", "p4de", "p5", "p5e", "g4dn", "g5", "g6", "g6e", "trn1", "c5", "c6i",
                             "m5", "m6i", "r5"}) {
    EXPECT_TRUE(families.count(family)) << family;
  }
}

TEST(BuiltinInstanceCatalog, KeepsTheDatedExamplePricesOnKnownCapacities) {
  const auto catalog = BuiltinInstanceCatalog();
  ASSERT_EQ(catalog.size(), 10u) << "an example name is missing from instance_capacities.cc";
  const InstanceType* p3 = FindInstanceType(catalog, "ml.p3.8xlarge");
  ASSERT_NE(p3, nullptr);
  EXPECT_DOUBLE_EQ(p3->price_per_hour, 14.688);
  EXPECT_EQ(p3->gpus, 4);
  EXPECT_EQ(p3->memory_bytes, 244 * kGiB);
  EXPECT_EQ(FindInstanceType(catalog, "g6.xlarge"), nullptr) << "known but never priced by the example";
}

TEST(InstanceCatalogFromJson, AKnownTypeNeedsOnlyItsNameAndPrice) {
  auto catalog = Parse(R"({"instances": [{"name": "ml.g6e.12xlarge", "price_per_hour": 13.1}]})");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  ASSERT_EQ(catalog->size(), 1u);
  const InstanceType& type = catalog->front();
  EXPECT_EQ(type.name, "g6e.12xlarge");
  EXPECT_EQ(type.gpu_model, "L40S");
  EXPECT_EQ(type.gpus, 4);
  EXPECT_EQ(type.vcpus, 48);
  EXPECT_EQ(type.memory_bytes, 384 * kGiB);
  EXPECT_DOUBLE_EQ(type.price_per_hour, 13.1);
}

TEST(InstanceCatalogFromJson, GivenCapacitiesOverrideTheKnownOnes) {
  auto catalog = Parse(R"({"instances": [{"name": "g5.xlarge", "price_per_hour": 1, "gpu_memory_gib": 24}]})");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  EXPECT_EQ(catalog->front().gpu_memory_bytes, 24 * kGiB);
  EXPECT_EQ(catalog->front().vcpus, 4) << "the keys not given stay the known ones";
}

TEST(InstanceCatalogFromJson, AnUnknownTypeWithItsCapacitiesIsAccepted) {
  auto catalog = Parse(R"({"instances": [{"name": "x9.big", "price_per_hour": 2, "vcpus": 16, "memory_gib": 64,
                                          "gpus": 2, "gpu_model": "Z1", "gpu_memory_gib": 12}]})");
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  EXPECT_EQ(catalog->front().gpus, 2);
  EXPECT_EQ(catalog->front().gpu_memory_bytes, 12 * kGiB);
}

TEST(InstanceCatalogFromJson, AnUnknownTypeWithoutCapacitiesSaysWhatToAdd) {
  auto bare = Parse(R"({"instances": [{"name": "g5.xlarge", "price_per_hour": 1},
                                       {"name": "g5.3xlarge", "price_per_hour": 1}]})");
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.status().message(),
            "price catalogue prices.json: instances[1] \"g5.3xlarge\" is not a known instance type: add its \"vcpus\" "
            "and \"memory_gib\" (and \"gpus\", \"gpu_model\", \"gpu_memory_gib\" if it has accelerators), or correct "
            "the name (docs/rules.md lists the known families)");
  auto gpus_only = Parse(R"({"instances": [{"name": "x9.big", "price_per_hour": 2, "vcpus": 16, "memory_gib": 64,
                                             "gpus": 2}]})");
  ASSERT_FALSE(gpus_only.ok());
  EXPECT_NE(gpus_only.status().message().find("instances[0] \"x9.big\" is not a known"), std::string::npos);
}

TEST(InstanceCatalogFromJson, BadCapacityValuesAreRefused) {
  auto text = Parse(R"({"instances": [{"name": "g5.xlarge", "price_per_hour": 1, "vcpus": "eight"}]})");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), "price catalogue prices.json: instances[0]: \"vcpus\" must be a number >= 0");
  auto negative = Parse(R"({"instances": [{"name": "g5.xlarge", "price_per_hour": 1, "gpus": -1}]})");
  ASSERT_FALSE(negative.ok());
  EXPECT_NE(negative.status().message().find("\"gpus\" must be a number >= 0"), std::string::npos);
  auto model = Parse(R"({"instances": [{"name": "g5.xlarge", "price_per_hour": 1, "gpu_model": 7}]})");
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("\"gpu_model\" must be a string"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::rules
