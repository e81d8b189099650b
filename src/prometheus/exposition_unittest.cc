#include "prometheus/exposition.h"

#include <httplib.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "prometheus/metrics_endpoint.h"

namespace stepscope::prometheus {
namespace {

ExpositionIdentity Identity() { return {"train \"a\"", "n0", "0.1.0", 1700000000}; }

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ExpositionTest, SystemSamplesAreGroupedByFamilyWithEscapedLabels) {
  Exposition exposition(Identity());
  exposition.PublishSystem({{"cpu/cpu0/util_pct", 12.5}, {"gpu/gpu0/util_pct", 80}, {"cpu/cpu1/util_pct", 99}});
  const std::string text = exposition.Text();
  const std::string base = "stepscope_job=\"train \\\"a\\\"\",node=\"n0\"";
  EXPECT_TRUE(Has(text, "# TYPE stepscope_cpu_util_percent gauge\n"
                        "stepscope_cpu_util_percent{" + base + ",cpu=\"cpu0\"} 12.5\n"
                        "stepscope_cpu_util_percent{" + base + ",cpu=\"cpu1\"} 99\n")) << text;
  EXPECT_TRUE(Has(text, "stepscope_gpu_util_percent{" + base + ",gpu=\"0\"} 80\n"));
  EXPECT_TRUE(Has(text, "stepscope_start_time_seconds{" + base + "} 1700000000\n"));
  EXPECT_TRUE(Has(text, "stepscope_info{" + base + ",version=\"0.1.0\"} 1\n"));
  // The next poll replaces the last; the framework part stays.
  exposition.PublishFramework("stepscope_steps_total{" + base + "} 3\n");
  exposition.PublishSystem({{"cpu/cpu0/util_pct", 50}});
  const std::string next = exposition.Text();
  EXPECT_FALSE(Has(next, "cpu=\"cpu1\""));
  EXPECT_TRUE(Has(next, "cpu=\"cpu0\"} 50\n"));
  EXPECT_TRUE(Has(next, "stepscope_steps_total{" + base + "} 3\n"));
}

TEST(ExpositionTest, TheEndpointServesTheTextToManyScrapersWhileItChanges) {
  Exposition exposition(Identity());
  MetricsEndpoint endpoint(&exposition);
  ASSERT_TRUE(endpoint.Start("127.0.0.1", 0).ok());
  ASSERT_GT(endpoint.port(), 0);

  // A first poll before any scraper: the text has no system series until one is published,
  // and under load the sampler thread below may start after the first scrapes.
  exposition.PublishSystem({{"cpu/cpu0/util_pct", 0}});
  std::atomic<bool> stop{false};
  std::thread sampler([&] {
    for (int i = 0; !stop; ++i) exposition.PublishSystem({{"cpu/cpu0/util_pct", static_cast<double>(i % 100)}});
  });
  std::atomic<int> answered{0};
  std::vector<std::thread> scrapers;
  for (int i = 0; i < 100; ++i) {
    scrapers.emplace_back([&] {
      httplib::Client client("127.0.0.1", endpoint.port());
      // Generous: the test asserts every scraper is answered, not how fast (a shared machine).
      client.set_connection_timeout(60);
      client.set_read_timeout(60);
      auto response = client.Get("/metrics");
      if (response && response->status == 200 && Has(response->body, "stepscope_cpu_util_percent{") &&
          Has(response->get_header_value("Content-Type"), "version=0.0.4")) {
        ++answered;
      }
    });
  }
  for (std::thread& scraper : scrapers) scraper.join();
  stop = true;
  sampler.join();
  EXPECT_EQ(answered.load(), 100);

  httplib::Client client("127.0.0.1", endpoint.port());
  auto missing = client.Get("/../etc/passwd");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  endpoint.Stop();
}

TEST(ExpositionTest, APortInUseIsAnErrorThatSaysWhatToDo) {
  Exposition exposition(Identity());
  MetricsEndpoint first(&exposition);
  ASSERT_TRUE(first.Start("127.0.0.1", 0).ok());
  MetricsEndpoint second(&exposition);
  Status taken = second.Start("127.0.0.1", first.port());
  ASSERT_FALSE(taken.ok());
  EXPECT_TRUE(Has(taken.message(), "--metrics-port")) << taken.message();
}

}  // namespace
}  // namespace stepscope::prometheus
