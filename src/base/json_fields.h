// Exception-free reads of fields from JSON that came from disk (manifests, meta and stats
// frames, rule outputs, configs). nlohmann::json's value()/get() throw on a type mismatch; bytes
// from a file must never be able to do that, so readers go through these. Header-only.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace stepscope {

inline const nlohmann::json* JsonField(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

inline std::string JsonString(const nlohmann::json& object, const char* key, const std::string& fallback = "") {
  const nlohmann::json* field = JsonField(object, key);
  return field != nullptr && field->is_string() ? field->get<std::string>() : fallback;
}

inline int64_t JsonInt(const nlohmann::json& object, const char* key, int64_t fallback) {
  const nlohmann::json* field = JsonField(object, key);
  if (field == nullptr) return fallback;
  if (field->is_number_integer()) return field->get<int64_t>();  // unsigned above INT64_MAX wraps
  return fallback;
}

inline uint64_t JsonUint(const nlohmann::json& object, const char* key, uint64_t fallback) {
  const nlohmann::json* field = JsonField(object, key);
  return field != nullptr && field->is_number_unsigned() ? field->get<uint64_t>() : fallback;
}

inline double JsonDouble(const nlohmann::json& object, const char* key, double fallback) {
  const nlohmann::json* field = JsonField(object, key);
  return field != nullptr && field->is_number() ? field->get<double>() : fallback;
}

inline bool JsonBool(const nlohmann::json& object, const char* key, bool fallback) {
  const nlohmann::json* field = JsonField(object, key);
  return field != nullptr && field->is_boolean() ? field->get<bool>() : fallback;
}

// The field if it is an object (or array), else an empty one of that kind.
inline nlohmann::json JsonObject(const nlohmann::json& object, const char* key) {
  const nlohmann::json* field = JsonField(object, key);
  return field != nullptr && field->is_object() ? *field : nlohmann::json::object();
}
inline nlohmann::json JsonArray(const nlohmann::json& object, const char* key) {
  const nlohmann::json* field = JsonField(object, key);
  return field != nullptr && field->is_array() ? *field : nlohmann::json::array();
}

}  // namespace stepscope
