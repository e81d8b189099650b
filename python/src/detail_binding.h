// Helpers of stepscope._core for the detail windows (python/stepscope/torch/_windows.py and
// _detail_store.py): write_zstd_file(path, data) stores one window's JSON document compressed,
// write_kineto_window(...) converts and stores a Kineto operators window, span_at(name, begin,
// end) records a window's DetailWindow span once the window closed. The names and the reading
// side come from the one reader of detail files, src/analysis/detail_window_files.h:
// detail_window_file_name(kind, pid, window) and DETAIL_FORMAT_VERSION for the writer,
// detail_window_files(node_dir) lists a node's windows as `stepscope info` does, and
// read_zstd_file(path) reads one back (tests, notebooks).
//
// The file helpers release the GIL while compressing and touching files. Errors become OSError
// (the file system refused) or ValueError (the bytes are not a zstd frame, or decompress beyond
// the cap; a link, FIFO or device where a file or the detail directory should be). span_at is a
// record call: it never fails, and does nothing while recording is off.
#pragma once

#include <pybind11/pybind11.h>

namespace stepscope::python {

void BindDetail(pybind11::module_& module);

}  // namespace stepscope::python
