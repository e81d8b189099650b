// Helpers of stepscope._core for the detail windows (python/stepscope/torch/_windows.py and
// _detail_store.py): write_zstd_file(path, data) stores one window's JSON document compressed,
// read_zstd_file(path) reads such a file back (tests, notebooks), span_at(name, begin, end)
// records a window's DetailWindow span once the window closed.
//
// The file helpers release the GIL while compressing and touching files. Errors become OSError
// (the file system refused) or ValueError (the bytes are not a zstd frame, or decompress beyond
// the cap). span_at is a record call: it never fails, and does nothing while recording is off.
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void BindDetail(pybind11::module_& module);

}  // namespace stepscope::python
