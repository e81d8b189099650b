/* The test-side controls of the fake libcupti (fake_cupti.cc). Plain C types only, so tests
   outside src/platform/cupti never see a CUPTI type: a test describes activities with
   FakeCuptiActivity and the fake builds CUDA 13's CUPTI records from them.

   A test resolves these with dlsym from the fake it loaded (the tracer loads the same copy by
   path; dlopen returns the one already loaded), through FakeCupti in fake_cupti_testing.h. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum FakeCuptiKind {
  FAKE_CUPTI_KERNEL = 1,
  FAKE_CUPTI_MEMCPY = 2,
  FAKE_CUPTI_MEMSET = 3,
  FAKE_CUPTI_SYNC = 4,
  FAKE_CUPTI_RUNTIME = 5,
  FAKE_CUPTI_DRIVER = 6,
  FAKE_CUPTI_OVERHEAD = 7,
  FAKE_CUPTI_MARKER = 8,
  FAKE_CUPTI_CONTEXT = 9,
};

/* One activity; fields a kind does not have are ignored. */
struct FakeCuptiActivity {
  int kind;                  /* FakeCuptiKind */
  uint64_t start, end;       /* CUPTI ns; a marker's time is `start` */
  uint32_t device, context, stream, correlation;
  uint32_t thread_id, callback_id;  /* runtime/driver calls (cbid as in cupti_*_cbid.h), markers */
  uint64_t bytes;                   /* memcpy, memset */
  int32_t grid[3], block[3];        /* kernels */
  int32_t static_shared, dynamic_shared;
  uint16_t registers;
  uint8_t copy_kind, src_kind, dst_kind;  /* memcpy: CUPTI's numbers; memset: src_kind = memory */
  uint32_t sync_type;                     /* CUpti_ActivitySynchronizationType */
  uint32_t overhead_kind;
  uint32_t marker_id, marker_flags;       /* CUPTI_ACTIVITY_FLAG_MARKER_* bits */
  const char* name;                       /* kernel, marker; must outlive the buffer's completion */
};

/* Forget every buffer, failure and registration (a test's start). */
void fake_cupti_reset(void);
/* From now on `function` ("cuptiActivityEnable", ...) returns `code` (0: succeed again). */
void fake_cupti_set_result(const char* function, int code);
/* Whether the registered user enabled a kind (FakeCuptiKind). */
int fake_cupti_enabled(int kind);
/* Whether buffer callbacks are registered, and whether they are the last ones registered
   through cuptiActivityRegisterCallbacks by the tracer (1) or by fake_cupti_take_over (2). */
int fake_cupti_callbacks_owner(void);
/* Asks the registered user for a buffer and fills it with `count` activities. Returns the
   buffer's handle (>= 0); -1 when no callbacks are registered or the user gave no buffer (the
   fake then counts `count` records dropped for the next completion); -2 when they do not fit. */
int fake_cupti_fill_buffer(const struct FakeCuptiActivity* activities, size_t count);
/* Completes buffer `handle` through the registered callbacks; cuptiActivityGetNumDroppedRecords
   then reports `dropped` plus the records of refused buffers, once. */
void fake_cupti_complete_buffer(int handle, size_t dropped);
/* Buffers filled and not completed yet. cuptiActivityFlushAll(FORCED) completes them all. */
size_t fake_cupti_pending_buffers(void);
/* What cuptiGetTimestamp returns from now on (0: CLOCK_MONOTONIC's ns, the default). */
void fake_cupti_set_timestamp(uint64_t ns);
/* Another CUPTI user (torch's profiler) registers its own callbacks, as Kineto does. */
void fake_cupti_take_over(void);

#ifdef __cplusplus
}
#endif
