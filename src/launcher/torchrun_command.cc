#include "launcher/torchrun_command.h"

#include <charconv>
#include <optional>
#include <string_view>

namespace stepscope::launcher {
namespace {

std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::optional<int32_t> Number(std::string_view text) {
  int32_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// Where torchrun's own options start: after `torchrun`, or after `-m torch.distributed.run`.
std::optional<size_t> TorchrunOptionsStart(const std::vector<std::string>& command) {
  for (size_t i = 0; i < command.size(); ++i) {
    if (BaseName(command[i]) == "torchrun") return i + 1;
    if (command[i] == "-m" && i + 1 < command.size() &&
        (command[i + 1] == "torch.distributed.run" || command[i + 1] == "torch.distributed.launch")) {
      return i + 2;
    }
  }
  return std::nullopt;
}

}  // namespace

TorchrunShape ParseTorchrunCommand(const std::vector<std::string>& command) {
  TorchrunShape shape;
  const std::optional<size_t> start = TorchrunOptionsStart(command);
  if (!start) return shape;
  for (size_t i = *start; i < command.size(); ++i) {
    std::string_view arg = command[i];
    if (arg == "-m" || arg == "--module" || (arg.size() > 3 && arg.substr(arg.size() - 3) == ".py")) break;
    std::string_view name = arg, value;
    if (const size_t equals = arg.find('='); equals != std::string_view::npos) {
      name = arg.substr(0, equals);
      value = arg.substr(equals + 1);
    } else if ((arg == "--nnodes" || arg == "--node-rank" || arg == "--node_rank") && i + 1 < command.size()) {
      value = command[++i];
    }
    if (name == "--nnodes") {
      // N, or MIN:MAX for an elastic job, of which MIN nodes must come.
      const std::optional<int32_t> nodes = Number(value.substr(0, value.find(':')));
      if (nodes) shape.nodes_expected = *nodes;
    } else if (name == "--node-rank" || name == "--node_rank") {
      if (const std::optional<int32_t> rank = Number(value)) shape.node_rank = *rank;
    }
  }
  return shape;
}

}  // namespace stepscope::launcher
