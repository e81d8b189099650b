#include "importers/common/json_document.h"

#include <cstdint>

namespace stepscope::analysis {
namespace {

// A SAX consumer that only remembers where parsing failed. Used on the (rare) failure path,
// so the fast path is a plain exception-free parse.
class ErrorLocator : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t position, const std::string& last_token,
                   const nlohmann::detail::exception& error) override {
    position_ = position;
    reason_ = error.what();
    // nlohmann's text is "[json.exception.parse_error.101] parse error at line 1, column 5: ...";
    // keep what follows the last ": " that precedes the reason.
    if (auto colon = reason_.find(": "); colon != std::string::npos) reason_ = reason_.substr(colon + 2);
    return false;
  }

  size_t position() const { return position_; }
  const std::string& reason() const { return reason_; }

 private:
  size_t position_ = 0;
  std::string reason_ = "unknown error";
};

std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return text;
}

}  // namespace

StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text, std::string_view file_name,
                                           std::string_view what_to_do) {
  nlohmann::json document = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!document.is_discarded()) return document;
  ErrorLocator locator;
  // sax_parse never throws when the consumer returns false from parse_error.
  nlohmann::json::sax_parse(text.begin(), text.end(), &locator, nlohmann::json::input_format_t::json,
                            /*strict=*/true);
  // nlohmann counts positions from 1 (the byte after the offending one is read); report 0-based.
  const size_t offset = locator.position() > 0 ? locator.position() - 1 : 0;
  return DataLossError(std::string(file_name) + ": invalid JSON at byte " + std::to_string(offset) + " (" +
                       OneLine(locator.reason()) + "); " + std::string(what_to_do));
}

}  // namespace stepscope::analysis
