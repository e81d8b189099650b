#include "server/event_hub.h"

#include <thread>

#include <gtest/gtest.h>

namespace stepscope::server {
namespace {

using std::chrono::milliseconds;

TEST(EventHubTest, AStreamGetsWhatCameAfterItsCursor) {
  EventHub hub;
  hub.Publish("runs", {{"count", 1}});
  const uint64_t cursor = hub.Newest();
  EXPECT_TRUE(hub.WaitAfter(cursor, milliseconds(1)).empty());
  hub.Publish("run", {{"id", "a"}});
  hub.Publish("run", {{"id", "b"}});
  const std::vector<ServerEvent> events = hub.WaitAfter(cursor, milliseconds(1));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].data["id"], "a");
  EXPECT_EQ(events[1].sequence, cursor + 2);
  EXPECT_EQ(FormatServerEvent(events[0]), "id: 2\nevent: run\ndata: {\"id\":\"a\"}\n\n");
}

TEST(EventHubTest, AWaitingStreamWakesOnPublishAndOnClose) {
  EventHub hub;
  std::thread publisher([&] {
    std::this_thread::sleep_for(milliseconds(20));
    hub.Publish("run", {{"id", "x"}});
  });
  const std::vector<ServerEvent> events = hub.WaitAfter(0, milliseconds(10000));
  publisher.join();
  ASSERT_EQ(events.size(), 1u);

  std::thread closer([&] {
    std::this_thread::sleep_for(milliseconds(20));
    hub.Close();
  });
  EXPECT_TRUE(hub.WaitAfter(hub.Newest(), milliseconds(10000)).empty());
  closer.join();
  EXPECT_TRUE(hub.closed());
}

TEST(EventHubTest, TheBacklogIsBounded) {
  EventHub hub;
  for (size_t i = 0; i < EventHub::kBacklog * 3; ++i) hub.Publish("run", nullptr);
  const std::vector<ServerEvent> events = hub.WaitAfter(0, milliseconds(1));
  ASSERT_EQ(events.size(), EventHub::kBacklog);
  EXPECT_EQ(events.back().sequence, EventHub::kBacklog * 3);
}

}  // namespace
}  // namespace stepscope::server
