#include "sampler/network_source.h"

#include <utility>

#include "platform/linux/net_dev_parser.h"

namespace stepscope {

NetworkSource::NetworkSource(const FileSystem& fs, std::string proc_root)
    : fs_(fs), net_dev_path_(std::move(proc_root) + "/net/dev") {}

Status NetworkSource::Poll(uint64_t monotonic_ns, std::vector<MetricSample>& out) {
  STEPSCOPE_ASSIGN_OR_RETURN(std::string text, fs_.ReadFile(net_dev_path_));
  STEPSCOPE_ASSIGN_OR_RETURN(NetDevStats stats, ParseNetDev(text));
  std::vector<KeyedCounters<kCounterCount>::Row> rows;
  rows.reserve(stats.interfaces.size());
  for (NetInterfaceStats& interface : stats.interfaces) {
    rows.push_back({std::move(interface.name), {interface.rx_bytes, interface.tx_bytes}});
  }
  uint64_t previous_ns = previous_ns_;
  previous_ns_ = monotonic_ns;
  std::optional<KeyedCounters<kCounterCount>::Sums> sums = counters_.Update(std::move(rows));
  if (!sums || monotonic_ns <= previous_ns) return OkStatus();

  const double seconds = static_cast<double>(monotonic_ns - previous_ns) / 1e9;
  if ((*sums)[kRxBytes]) {
    out.push_back({"network/rx_bytes_per_s", static_cast<double>(*(*sums)[kRxBytes]) / seconds});
  }
  if ((*sums)[kTxBytes]) {
    out.push_back({"network/tx_bytes_per_s", static_cast<double>(*(*sums)[kTxBytes]) / seconds});
  }
  return OkStatus();
}

}  // namespace stepscope
