// Maps names to small integer ids for the recorder, and persists each new name in the
// stream's log before its id is handed out, so no record can refer to a name the run lacks.
//
// Callers: the recorder's slow path (first use of a name on a thread) and bindings that cache
// ids (C++ call sites, Python). Threading: thread-safe behind one mutex; the hot path never
// comes here for a name it has seen. Ids are per process and stay valid across fork (the child
// re-emits the whole table into its own stream).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"

namespace stepscope::store {
class StreamWriter;
}

namespace stepscope::recorder {

class StringInterner {
 public:
  // Returns the id of `name` (>= 1), assigning and persisting a new one if needed. Returns 0 if
  // the name could not be persisted (the caller then records nothing for it).
  uint32_t Intern(std::string_view name, store::StreamWriter* stream);

  // Writes every known name to `stream` (a fork child's new stream).
  Status EmitAll(store::StreamWriter* stream);

  // Fork support: hold the lock across fork() so the child never inherits it mid-update.
  void LockForFork() { mutex_.lock(); }
  void UnlockAfterFork() { mutex_.unlock(); }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, uint32_t> ids_;
  std::vector<std::pair<uint32_t, std::string>> entries_;
};

}  // namespace stepscope::recorder
