// The C API (include/stepscope/stepscope.h) over the recorder.
#include <cstring>
#include <string_view>

#include "recorder/recorder.h"
#include "stepscope/stepscope.h"

namespace {

using stepscope::recorder::Record;
using stepscope::store::RecordKind;

uint64_t DoubleBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

uint8_t PhaseByte(stepscope_phase phase) {
  return static_cast<unsigned>(phase) <= 3 ? static_cast<uint8_t>(phase) : static_cast<uint8_t>(STEPSCOPE_PHASE_GLOBAL);
}

}  // namespace

extern "C" {

int stepscope_start(const char* node_dir, char* error, size_t error_size) {
  stepscope::recorder::StartOptions options;
  options.node_dir = node_dir != nullptr ? node_dir : "";
  stepscope::Status status = stepscope::recorder::Start(options);
  if (status.ok()) return 0;
  if (error != nullptr && error_size > 0) {
    std::strncpy(error, status.message().c_str(), error_size - 1);
    error[error_size - 1] = '\0';
  }
  return -1;
}

void stepscope_stop(void) { stepscope::recorder::Stop(); }
int stepscope_is_enabled(void) { return stepscope_enabled_fast(); }
void stepscope_flush(void) { stepscope::recorder::Flush(); }

uint32_t stepscope_intern(const char* name, size_t length) {
  if (name == nullptr) return 0;
  return stepscope::recorder::Intern(std::string_view(name, length));
}

void stepscope_begin(uint32_t name_id) { Record(RecordKind::kBegin, name_id, 0, 0); }
void stepscope_end(uint32_t name_id) { Record(RecordKind::kEnd, name_id, 0, 0); }
void stepscope_instant(uint32_t name_id) { Record(RecordKind::kInstant, name_id, 0, 0); }
void stepscope_counter(uint32_t name_id, double value) { Record(RecordKind::kCounter, name_id, 0, DoubleBits(value)); }

void stepscope_step_begin(stepscope_phase phase, int64_t number) {
  if (!stepscope_enabled_fast()) return;
  uint8_t p = PhaseByte(phase);
  if (number == STEPSCOPE_AUTO_STEP) number = stepscope::recorder::NextAutoStep(p);
  Record(RecordKind::kStepBegin, 0, p, static_cast<uint64_t>(number));
}

void stepscope_step_end(stepscope_phase phase, int64_t number) {
  Record(RecordKind::kStepEnd, 0, PhaseByte(phase), static_cast<uint64_t>(number));
}

uint64_t stepscope_now(void) { return stepscope::ReadTicks(); }

void stepscope_step_begin_at(stepscope_phase phase, int64_t number, uint64_t timestamp) {
  if (!stepscope_enabled_fast()) return;
  uint8_t p = PhaseByte(phase);
  if (number == STEPSCOPE_AUTO_STEP) number = stepscope::recorder::NextAutoStep(p);
  stepscope::recorder::RecordAt(timestamp, RecordKind::kStepBegin, 0, p, static_cast<uint64_t>(number));
}

void stepscope_step_end_at(stepscope_phase phase, int64_t number, uint64_t timestamp) {
  if (!stepscope_enabled_fast()) return;
  stepscope::recorder::RecordAt(timestamp, RecordKind::kStepEnd, 0, PhaseByte(phase), static_cast<uint64_t>(number));
}

void stepscope_instant_at(uint32_t name_id, uint64_t timestamp) {
  if (!stepscope_enabled_fast()) return;
  stepscope::recorder::RecordAt(timestamp, RecordKind::kInstant, name_id, 0, 0);
}

int64_t stepscope_next_step_number(stepscope_phase phase) {
  return stepscope::recorder::NextAutoStep(PhaseByte(phase));
}

void stepscope_arg_int(uint32_t key_id, int64_t value) { Record(RecordKind::kArgInt, key_id, 0, static_cast<uint64_t>(value)); }
void stepscope_arg_double(uint32_t key_id, double value) { Record(RecordKind::kArgDouble, key_id, 0, DoubleBits(value)); }
void stepscope_arg_string(uint32_t key_id, uint32_t value_id) { Record(RecordKind::kArgString, key_id, 0, value_id); }

void stepscope_begin_name(const char* name) {
  if (stepscope_enabled_fast() && name != nullptr) stepscope_begin(stepscope_intern(name, std::strlen(name)));
}
void stepscope_end_name(const char* name) {
  if (stepscope_enabled_fast() && name != nullptr) stepscope_end(stepscope_intern(name, std::strlen(name)));
}
void stepscope_instant_name(const char* name) {
  if (stepscope_enabled_fast() && name != nullptr) stepscope_instant(stepscope_intern(name, std::strlen(name)));
}
void stepscope_counter_name(const char* name, double value) {
  if (stepscope_enabled_fast() && name != nullptr) stepscope_counter(stepscope_intern(name, std::strlen(name)), value);
}

void stepscope_get_stats(stepscope_stats* out) {
  if (out != nullptr) stepscope::recorder::GetStats(out);
}

}  // extern "C"
