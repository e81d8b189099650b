// Parsing of whole JSON documents read from foreign files (SageMaker traces, Kineto traces)
// into nlohmann::json without exceptions, with the byte offset of the first error so a message
// can point at it ("<file>: invalid JSON at byte 1234: ...").
//
// Callers: the importers. Stateless; safe from any thread.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace stepscope::analysis {

// The parsed document, or DataLoss "<file_name>: invalid JSON at byte N (<parser's reason>);
// <what_to_do>".
StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text, std::string_view file_name,
                                           std::string_view what_to_do);

}  // namespace stepscope::analysis
