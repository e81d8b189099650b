// Shared by model_file_fuzzer and make_fuzz_seeds: the "built" form of a model file input, in
// which the harness compresses the sections itself. Each section of model.stepscope is a zstd
// frame with a content checksum (src/analysis/model_file.h), which a byte-level mutator almost
// never keeps valid; built inputs let mutations reach the column decoders behind it.
//
//   input:        u8 mode | rest
//   mode bit 0:   rest is the file's bytes as they are
//   otherwise:    rest = u32 version | { u32 length | raw section bytes } x (up to 9)
//                 -> "STPSMODL" | version | section count | sections, each compressed as the
//                    writer does (ids 1, 2, ... in order)
#pragma once

#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_inputs.h"

namespace stepscope::fuzz {

inline constexpr uint8_t kRawModelFile = 1;
inline constexpr size_t kModelFileHeaderBytes = 16;
inline constexpr size_t kModelSectionHeaderBytes = 24;

template <typename T>
void PutLittleEndian(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

inline std::string BuildModelFile(std::string_view spec) {
  InputCursor in(spec);
  std::vector<std::string_view> sections;
  const uint32_t version = in.Take<uint32_t>();
  while (!in.empty() && sections.size() < 9) sections.push_back(in.TakeBytes(in.Take<uint32_t>()));
  std::string file = "STPSMODL";
  PutLittleEndian<uint32_t>(file, version);
  PutLittleEndian<uint32_t>(file, static_cast<uint32_t>(sections.size()));
  for (size_t i = 0; i < sections.size(); ++i) {
    std::string stored(ZSTD_compressBound(sections[i].size()), '\0');
    ZSTD_CCtx* context = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1);
    const size_t written = ZSTD_compress2(context, stored.data(), stored.size(), sections[i].data(), sections[i].size());
    ZSTD_freeCCtx(context);
    stored.resize(ZSTD_isError(written) ? 0 : written);
    PutLittleEndian<uint32_t>(file, static_cast<uint32_t>(i + 1));
    PutLittleEndian<uint32_t>(file, 0);
    PutLittleEndian<uint64_t>(file, sections[i].size());
    PutLittleEndian<uint64_t>(file, stored.size());
    file.append(stored);
  }
  return file;
}

// The inverse for a well-formed file (the seed generator): its version and raw sections as a
// built input; "" when `file` is not one.
inline std::string BuiltModelInput(std::string_view file) {
  if (file.size() < kModelFileHeaderBytes) return "";
  InputCursor header(file.substr(8));
  const uint32_t version = header.Take<uint32_t>();
  const uint32_t count = header.Take<uint32_t>();
  std::string input(1, '\0');
  PutLittleEndian<uint32_t>(input, version);
  size_t offset = kModelFileHeaderBytes;
  for (uint32_t i = 0; i < count; ++i) {
    if (file.size() - offset < kModelSectionHeaderBytes) return "";
    InputCursor section(file.substr(offset));
    section.Take<uint32_t>();
    section.Take<uint32_t>();
    const uint64_t raw_bytes = section.Take<uint64_t>();
    const uint64_t stored_bytes = section.Take<uint64_t>();
    if (stored_bytes > file.size() - offset - kModelSectionHeaderBytes) return "";
    std::string raw(raw_bytes, '\0');
    const size_t got = ZSTD_decompress(raw.data(), raw.size(), file.data() + offset + kModelSectionHeaderBytes, stored_bytes);
    if (ZSTD_isError(got) || got != raw_bytes) return "";
    PutLittleEndian<uint32_t>(input, static_cast<uint32_t>(raw.size()));
    input.append(raw);
    offset += kModelSectionHeaderBytes + stored_bytes;
  }
  return input;
}

}  // namespace stepscope::fuzz
