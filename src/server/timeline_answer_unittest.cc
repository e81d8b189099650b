#include "server/timeline_answer.h"

#include <gtest/gtest.h>

namespace stepscope::server {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;

// One process: 10 TRAIN steps of 10 ms, each with a Forward span and a launch -> kernel pair.
analysis::Model TraceModel(const char* op_name = "aten::mm") {
  analysis::ModelBuilder builder(analysis::ModelSource::kStepscope);
  analysis::NodeFacts node;
  node.name = "algo-1";
  builder.AddNode(node);
  auto span = [&](const char* phase, const char* name, int64_t start, int64_t end, int32_t device, int64_t step) {
    analysis::FrameworkEvent event;
    event.pid = 42;
    event.tid = device >= 0 ? 7 : 42;
    event.device = device;
    event.phase = builder.Intern(phase);
    event.name = builder.Intern(name);
    event.start_ns = kT0 + start;
    event.end_ns = kT0 + end;
    event.step = step;
    return builder.AddEvent(event);
  };
  for (int64_t i = 0; i < 10; ++i) {
    const int64_t t = i * 10 * kMs;
    span("Step:ModeKeys.TRAIN", "Step:ModeKeys.TRAIN", t, t + 10 * kMs, -1, i);
    span("Forward", "Forward", t + kMs, t + 5 * kMs, -1, -1);
    const uint32_t launch = span("cpu_functions", op_name, t + 2 * kMs, t + 3 * kMs, -1, -1);
    const uint32_t kernel = span("gpu_functions", "gemm_kernel", t + 4 * kMs, t + 6 * kMs, 0, -1);
    builder.AddFlow(launch, kernel, builder.Intern("ac2g"), i + 1);
  }
  return std::move(builder).Finish();
}

class TimelineAnswerTest : public ::testing::Test {
 protected:
  const analysis::Model model = TraceModel();
  const analysis::TimelineIndex index{model};
};

TEST_F(TimelineAnswerTest, AWholeRunViewHasTracksNamesSlicesAndFlows) {
  TimelineQuery query;
  query.width_px = 2000;
  auto answer = TimelineAnswer(model, index, query);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  const nlohmann::json& json = *answer;
  EXPECT_EQ(json["from_ns"], model.first_ns());
  EXPECT_EQ(json["to_ns"], model.last_ns());
  EXPECT_FALSE(json.contains("step"));
  ASSERT_EQ(json["tracks"].size(), 2u);  // the host thread and the GPU stream
  EXPECT_EQ(json["tracks"][0]["device"], -1);
  EXPECT_EQ(json["tracks"][1]["device"], 0);
  EXPECT_NE(json["tracks"][1]["process"].get<std::string>().find("GPU 0"), std::string::npos);
  EXPECT_EQ(json["slices"].size(), 40u);  // every span wide enough to be itself
  EXPECT_EQ(json["flows"].size(), 10u);
  EXPECT_EQ(json["names"].size(), 4u);    // each name once
  const nlohmann::json& first = json["slices"][0];
  ASSERT_EQ(first.size(), 6u);
  EXPECT_EQ(json["names"][first[4].get<size_t>()], "Step:ModeKeys.TRAIN");
  EXPECT_EQ(first[2], 0);
  EXPECT_EQ(first[3], 10 * kMs);
  EXPECT_EQ(first[5], 1);
}

TEST_F(TimelineAnswerTest, ZoomsToAStepAndSaysWhichStepsExist) {
  TimelineQuery query;
  query.step = 3;
  auto answer = TimelineAnswer(model, index, query);
  ASSERT_TRUE(answer.ok()) << answer.status().message();
  EXPECT_EQ((*answer)["step"]["number"], 3);
  EXPECT_EQ((*answer)["from_ns"], kT0 + 30 * kMs);
  EXPECT_EQ((*answer)["to_ns"], kT0 + 40 * kMs);
  query.step = 99;
  auto missing = TimelineAnswer(model, index, query);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("0 to 9"), std::string::npos);
}

TEST_F(TimelineAnswerTest, RefusesWidthsAndRangesItCannotDraw) {
  TimelineQuery query;
  query.width_px = 0;
  EXPECT_EQ(TimelineAnswer(model, index, query).status().code(), StatusCode::kInvalidArgument);
  query.width_px = kMaxTimelineWidthPx + 1;
  EXPECT_EQ(TimelineAnswer(model, index, query).status().code(), StatusCode::kInvalidArgument);
  query.width_px = 100;
  query.from_ns = kT0 + 50 * kMs;
  query.to_ns = kT0 + 10 * kMs;
  EXPECT_EQ(TimelineAnswer(model, index, query).status().code(), StatusCode::kInvalidArgument);
}

TEST(TimelineAnswerNamesTest, HostileNamesStayText) {
  const analysis::Model model = TraceModel("<img src=x onerror=alert(1)>");
  const analysis::TimelineIndex index(model);
  auto answer = TimelineAnswer(model, index, TimelineQuery{});
  ASSERT_TRUE(answer.ok());
  bool found = false;
  for (const nlohmann::json& name : (*answer)["names"]) found = found || name == "<img src=x onerror=alert(1)>";
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace stepscope::server
