/* stepscope recorder: the C API, for C programs and other languages' bindings.
 *
 * Every call is safe from any thread, never blocks and never fails loudly: when the recorder
 * is off (not started, or the process is not under `stepscope run`) a record call costs one
 * relaxed atomic load; when a thread's bounded buffer is full the event is dropped and counted.
 * Events reach the run directory even if the process is killed right after the call returns.
 *
 * Names are interned once into ids (stepscope_intern) and recorded by id; the *_name variants
 * intern on the fly for convenience. Timestamps are taken inside each call.
 *
 * The recorder starts itself when the process starts with STEPSCOPE_NODE_DIR set (as
 * `stepscope run` does for its child), or explicitly with stepscope_start(). It follows
 * fork(): a child records into its own files.
 */
#ifndef STEPSCOPE_STEPSCOPE_H_
#define STEPSCOPE_STEPSCOPE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define STEPSCOPE_EXPORT __attribute__((visibility("default")))
#else
#define STEPSCOPE_EXPORT
#endif

typedef enum stepscope_phase {
  STEPSCOPE_PHASE_TRAIN = 0,
  STEPSCOPE_PHASE_EVAL = 1,
  STEPSCOPE_PHASE_PREDICT = 2,
  STEPSCOPE_PHASE_GLOBAL = 3
} stepscope_phase;

/* Step numbers are optional: pass STEPSCOPE_AUTO_STEP to let the recorder count steps per
 * phase in this process (0, 1, 2, ...). */
#define STEPSCOPE_AUTO_STEP (-1)
/* For instrumentation that learns a step's phase only when it ends: begin with this number
 * (any phase), then end with the real phase and a number from stepscope_next_step_number(). */
#define STEPSCOPE_DEFERRED_STEP (-2)
/* Ends a deferred step as "not a step after all" (e.g. the script turned out to mark its own):
 * readers drop it. */
#define STEPSCOPE_CANCELLED_STEP (-3)

/* Starts recording into `node_dir` (created if needed), i.e. <root>/<job>/<node>. Returns 0 on
 * success (also when already started), else -1 and writes a one-line reason into `error`
 * (may be NULL). Never needed under `stepscope run`. */
STEPSCOPE_EXPORT int stepscope_start(const char* node_dir, char* error, size_t error_size);
/* Flushes and stops recording in this process; later record calls are no-ops. */
STEPSCOPE_EXPORT void stepscope_stop(void);
/* 1 when recording, else 0. */
STEPSCOPE_EXPORT int stepscope_is_enabled(void);

/* The flag behind stepscope_is_enabled, for inline checks that keep the disabled cost at one
 * relaxed load (no call). Read it only through stepscope_enabled_fast(). */
STEPSCOPE_EXPORT extern int stepscope_internal_enabled;
static inline int stepscope_enabled_fast(void) {
  return __atomic_load_n(&stepscope_internal_enabled, __ATOMIC_RELAXED);
}
/* Compresses everything recorded so far into the stream's log (recorded events are on disk
 * already; this only makes them compact). */
STEPSCOPE_EXPORT void stepscope_flush(void);

/* Returns a stable id for `name` (UTF-8, `length` bytes). 0 means "no name" (recorder off). */
STEPSCOPE_EXPORT uint32_t stepscope_intern(const char* name, size_t length);

STEPSCOPE_EXPORT void stepscope_begin(uint32_t name_id);
STEPSCOPE_EXPORT void stepscope_end(uint32_t name_id);
STEPSCOPE_EXPORT void stepscope_instant(uint32_t name_id);
STEPSCOPE_EXPORT void stepscope_counter(uint32_t name_id, double value);
STEPSCOPE_EXPORT void stepscope_step_begin(stepscope_phase phase, int64_t number);
STEPSCOPE_EXPORT void stepscope_step_end(stepscope_phase phase, int64_t number);
/* The next automatic step number of `phase` in this process (what STEPSCOPE_AUTO_STEP uses). */
STEPSCOPE_EXPORT int64_t stepscope_next_step_number(stepscope_phase phase);

/* The recorder's current timestamp, for the *_at calls below: record now what was learnt to have
 * begun earlier. Timestamps are only meaningful within this process. */
STEPSCOPE_EXPORT uint64_t stepscope_now(void);
STEPSCOPE_EXPORT void stepscope_step_begin_at(stepscope_phase phase, int64_t number, uint64_t timestamp);
STEPSCOPE_EXPORT void stepscope_step_end_at(stepscope_phase phase, int64_t number, uint64_t timestamp);
STEPSCOPE_EXPORT void stepscope_instant_at(uint32_t name_id, uint64_t timestamp);

/* Arguments attach to the event this thread recorded last. */
STEPSCOPE_EXPORT void stepscope_arg_int(uint32_t key_id, int64_t value);
STEPSCOPE_EXPORT void stepscope_arg_double(uint32_t key_id, double value);
STEPSCOPE_EXPORT void stepscope_arg_string(uint32_t key_id, uint32_t value_id);

/* Convenience: intern and record (NUL-terminated names). */
STEPSCOPE_EXPORT void stepscope_begin_name(const char* name);
STEPSCOPE_EXPORT void stepscope_end_name(const char* name);
STEPSCOPE_EXPORT void stepscope_instant_name(const char* name);
STEPSCOPE_EXPORT void stepscope_counter_name(const char* name, double value);

typedef struct stepscope_stats {
  uint64_t events_recorded;  /* accepted into a buffer */
  uint64_t events_dropped;   /* lost because every buffer was full */
  uint64_t bytes_written;    /* compressed bytes appended to the log */
  uint64_t blocks_flushed;
} stepscope_stats;
STEPSCOPE_EXPORT void stepscope_get_stats(stepscope_stats* out);

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* STEPSCOPE_STEPSCOPE_H_ */
