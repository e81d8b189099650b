// TOML values as JSON, so that TOML and JSON files go through one validation path (the run
// configuration, the instance price catalogue). Header-only: callers add toml++'s include
// directory themselves, and base does not depend on it.
#pragma once

#include <sstream>
#include <string>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace stepscope {

// Tables, arrays, strings, integers, floats and booleans map one to one. Dates and times,
// which no stepscope file has a use for, become their TOML text and so fail validation as
// strings with the file's usual message.
inline nlohmann::json TomlToJson(const toml::node& node) {
  if (const toml::table* table = node.as_table()) {
    nlohmann::json object = nlohmann::json::object();
    for (const auto& [key, value] : *table) object[std::string(key.str())] = TomlToJson(value);
    return object;
  }
  if (const toml::array* array = node.as_array()) {
    nlohmann::json list = nlohmann::json::array();
    for (const toml::node& value : *array) list.push_back(TomlToJson(value));
    return list;
  }
  if (auto s = node.value_exact<std::string>()) return *s;
  if (auto i = node.value_exact<int64_t>()) return *i;
  if (auto d = node.value_exact<double>()) return *d;
  if (auto b = node.value_exact<bool>()) return *b;
  std::ostringstream text;
  node.visit([&](const auto& value) { text << value; });
  return text.str();
}

}  // namespace stepscope
