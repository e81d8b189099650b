// The main of a fuzz harness built without libFuzzer (fuzz/CMakeLists.txt, `<fuzzer>_replay`):
// feeds LLVMFuzzerTestOneInput every file named on the command line, and every regular file
// under every folder named, in sorted order, so the seed corpora run as ordinary tests with
// the normal compiler. A failed property aborts (the harness's FUZZ_CHECK), which fails the
// test; a missing or empty corpus fails it too, so a test that replays nothing cannot pass.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
// Defined by the harnesses that need set-up (a scratch folder); optional, as in libFuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    std::error_code error;
    const std::filesystem::path path(argv[i]);
    if (std::filesystem::is_directory(path, error)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(path, error)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(path, error)) {
      inputs.push_back(path);
    } else {
      std::fprintf(stderr, "replay: seed '%s' is neither a file nor a folder; build or generate the seeds first\n",
                   argv[i]);
      return 2;
    }
  }
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no seed files found; pass seed files or folders that hold some\n");
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const std::filesystem::path& input : inputs) {
    std::ifstream file(input, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    if (!file.good() && !file.eof()) {
      std::fprintf(stderr, "replay: cannot read seed '%s'\n", input.c_str());
      return 2;
    }
    // A copy of exactly the input's size, so ASan builds catch a harness reading past it.
    std::vector<uint8_t> data(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(data.data(), data.size());
  }
  std::printf("replay: %zu seeds ran without a crash or a failed property\n", inputs.size());
  return 0;
}
