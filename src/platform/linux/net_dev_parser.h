// Parser for /proc/net/dev: cumulative bytes received and sent per network interface. Called
// by sampler/network_source.cc once per poll. The file shows the interfaces of the reading
// process's network namespace.
//
// Left out, so that host-wide sums count each byte once:
//   - "lo": its traffic never leaves the host, and a job talking to itself over localhost (a
//     parameter server, NCCL's socket transport on one node) would otherwise look like load.
//   - "ifbN" (intermediate functional block): traffic shaping redirects another interface's
//     packets through it, so it only mirrors traffic already counted there.
// All other interfaces are kept. Bridges and veth pairs (containers on this host) also carry
// traffic that crosses a physical interface; telling them apart needs /sys, and inside a
// container its eth0 is itself a veth, so they are kept rather than guessed at.
//
// Threading: a pure function, safe from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace stepscope {

struct NetInterfaceStats {
  std::string name;  // "eth0"
  uint64_t rx_bytes = 0;
  uint64_t tx_bytes = 0;
};

struct NetDevStats {
  std::vector<NetInterfaceStats> interfaces;  // in file order, without "lo" and "ifbN"
};

// Parses the text of /proc/net/dev: two header lines, then "name: 16 counters" per interface.
// A missing header, a line without ':' or with fewer than 16 numeric counters gives DataLoss
// naming the line.
StatusOr<NetDevStats> ParseNetDev(std::string_view text);

}  // namespace stepscope
