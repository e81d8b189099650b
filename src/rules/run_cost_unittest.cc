// Cost and saving with the rounding of docs/compare.md, and the price catalogue in JSON and TOML.
#include "rules/run_cost.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "base/file_system.h"

namespace stepscope::rules {
namespace {

TEST(RunCostTest, TheSeedExample) {
  const auto catalog = BuiltinInstanceCatalog();
  // 3 x 503 s / 3600 x 14.688 = 6.15672 -> $6.16; 2 x 502 / 3600 x 3.825 = 1.06675 -> $1.07.
  const RunCost a = PriceRun(catalog, "p3.8xlarge", 3, 503.0, "A");
  const RunCost b = PriceRun(catalog, "ml.p3.2xlarge", 2, 502.0, "B");
  ASSERT_TRUE(a.priced) << a.why;
  ASSERT_TRUE(b.priced) << b.why;
  EXPECT_EQ(a.cost_cents, 616);
  EXPECT_EQ(b.cost_cents, 107);
  EXPECT_DOUBLE_EQ(a.price_per_hour, 14.688);
  const CostComparison saving = CompareCosts(a, b);
  ASSERT_TRUE(saving.available);
  EXPECT_EQ(saving.saving_cents, 509);
  // 509 / 616 = 0.82630 (from the unrounded costs it would be 0.82673 -> 82.7 %).
  EXPECT_DOUBLE_EQ(saving.saving_share, 0.826);
  EXPECT_EQ(saving.cheaper, "B");
  EXPECT_EQ(FormatDollars(a.cost_cents), "$6.16");
  EXPECT_EQ(FormatDollars(saving.saving_cents), "$5.09");

  const CostComparison reversed = CompareCosts(b, a);
  EXPECT_EQ(reversed.saving_cents, 509);
  EXPECT_DOUBLE_EQ(reversed.saving_share, 0.826);
  EXPECT_EQ(reversed.cheaper, "A");
}

TEST(RunCostTest, UnpricedRunsSayWhatToPass) {
  const auto catalog = BuiltinInstanceCatalog();
  const RunCost no_type = PriceRun(catalog, "", 2, 10, "A");
  EXPECT_FALSE(no_type.priced);
  EXPECT_NE(no_type.why.find("--instance-a"), std::string::npos) << no_type.why;
  const RunCost unknown = PriceRun(catalog, "x9.huge", 1, 10, "B");
  EXPECT_FALSE(unknown.priced);
  EXPECT_NE(unknown.why.find("--prices"), std::string::npos) << unknown.why;
  const RunCost priced = PriceRun(catalog, "c5.2xlarge", 1, 3600, "A");
  EXPECT_EQ(priced.cost_cents, 41);  // $0.408 for an hour
  const CostComparison comparison = CompareCosts(priced, unknown);
  EXPECT_FALSE(comparison.available);
  EXPECT_EQ(comparison.why, unknown.why);
  const CostComparison same = CompareCosts(priced, priced);
  EXPECT_TRUE(same.available);
  EXPECT_EQ(same.saving_cents, 0);
  EXPECT_EQ(same.cheaper, "");
}

class PriceCatalogTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + "/compare-prices-" + std::to_string(getpid()) + "-" + name;
    EXPECT_TRUE(WriteFileAtomically(path, text).ok());
    return path;
  }
};

TEST_F(PriceCatalogTest, ReadsTomlAndJson) {
  const std::string toml = Write("prices.toml",
                                 "[[instances]]\nname = \"ml.g5.xlarge\"\ngpus = 1\nprice_per_hour = 1.5\n"
                                 "[[instances]]\nname = \"m5.large\"\nprice_per_hour = 0.115\n");
  auto catalog = LoadPriceCatalog(toml);
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  ASSERT_EQ(catalog->size(), 2u);
  EXPECT_EQ((*catalog)[0].name, "g5.xlarge");
  EXPECT_EQ((*catalog)[0].gpus, 1);
  EXPECT_EQ(PriceRun(*catalog, "g5.xlarge", 4, 1800, "A").cost_cents, 300);

  const std::string json = Write("prices.json", R"({"instances": [{"name": "m5.large", "price_per_hour": 0.2}]})");
  auto from_json = LoadPriceCatalog(json);
  ASSERT_TRUE(from_json.ok()) << from_json.status().message();
  EXPECT_EQ(PriceRun(*from_json, "m5.large", 1, 7200, "B").cost_cents, 40);
}

TEST_F(PriceCatalogTest, ErrorsNameTheFile) {
  const std::string bad_toml = Write("bad.toml", "[[instances]]\nname = \n");
  auto broken = LoadPriceCatalog(bad_toml);
  ASSERT_FALSE(broken.ok());
  EXPECT_NE(broken.status().message().find(bad_toml + " line 2"), std::string::npos) << broken.status().message();
  const std::string no_price = Write("noprice.toml", "[[instances]]\nname = \"a\"\n");
  auto missing = LoadPriceCatalog(no_price);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "price catalogue " + no_price + ": instances[0]: needs a \"name\" and a \"price_per_hour\" > 0");
  auto absent = LoadPriceCatalog("/nonexistent/prices.toml");
  ASSERT_FALSE(absent.ok());
  EXPECT_NE(absent.status().message().find("/nonexistent/prices.toml"), std::string::npos);
}

}  // namespace
}  // namespace stepscope::rules
