#include "store/ring_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "base/file_system.h"

namespace stepscope::store {

StatusOr<std::unique_ptr<RingFile>> RingFile::Create(const std::string& path, uint32_t block_bytes,
                                                     uint32_t block_count, uint64_t stream_id) {
  if (block_bytes < sizeof(BlockHeader) + sizeof(RawRecord) || block_bytes % 64 != 0 || block_count == 0) {
    return InvalidArgumentError("ring blocks must be a multiple of 64 bytes holding at least one record");
  }
  // Not O_TRUNC: another process may have this ring mapped, and shrinking a mapped file kills
  // that process with SIGBUS on its next write. The file is emptied only once we hold its lock,
  // which a writer keeps for its whole life. O_NOFOLLOW: a link planted in the directory cannot
  // make us empty a file elsewhere.
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create '" + path + "'", errno);
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    close(fd);
    if (err == EWOULDBLOCK) {
      return UnavailableError("'" + path + "' is being written by another live process; left untouched (give each " +
                              "writer its own directory)");
    }
    return ErrnoError("lock '" + path + "'", err);
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return InvalidArgumentError("'" + path + "' exists and is not a regular file; left untouched");
  }
  // Ours now: whatever a dead writer left here goes (its stream name is being reused).
  if (ftruncate(fd, 0) != 0) {
    int err = errno;
    close(fd);
    return ErrnoError("empty '" + path + "'", err);
  }
  size_t size = kRingHeaderBytes + size_t{block_bytes} * block_count;
  // ftruncate makes a sparse file; posix_fallocate would be safer against a full disk later
  // (SIGBUS on first touch) so reserve the space now and fail here, where we can say so.
  int alloc_error = posix_fallocate(fd, 0, static_cast<off_t>(size));
  if (alloc_error != 0) {
    close(fd);
    unlink(path.c_str());
    return ErrnoError("reserve " + std::to_string(size) + " bytes for '" + path + "'", alloc_error);
  }
  void* mapping = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mapping == MAP_FAILED) {
    int err = errno;
    close(fd);
    return ErrnoError("map '" + path + "'", err);
  }
  char* base = static_cast<char*>(mapping);
  auto* header = new (base) RingHeader{};
  header->version = kFormatVersion;
  header->header_bytes = kRingHeaderBytes;
  header->block_bytes = block_bytes;
  header->block_count = block_count;
  header->stream_id = stream_id;
  header->next_seq.store(1, std::memory_order_relaxed);
  for (uint32_t i = 0; i < block_count; ++i) {
    auto* block = new (base + kRingHeaderBytes + size_t{i} * block_bytes) BlockHeader{};
    block->capacity = static_cast<uint32_t>((block_bytes - sizeof(BlockHeader)) / sizeof(RawRecord));
  }
  // The magic goes last: a reader that sees it sees an initialised header.
  std::atomic_thread_fence(std::memory_order_release);
  std::memcpy(header->magic, kRingMagic, sizeof kRingMagic);
  return std::unique_ptr<RingFile>(new RingFile(path, fd, base, size));
}

RingFile::RingFile(std::string path, int fd, char* base, size_t size)
    : path_(std::move(path)), fd_(fd), base_(base), size_(size), header_(reinterpret_cast<RingHeader*>(base)) {}

RingFile::~RingFile() {
  if (base_ != nullptr) munmap(base_, size_);
  if (fd_ >= 0) close(fd_);  // releases the flock
}

void RingFile::AbandonAfterFork() {
  if (base_ != nullptr) munmap(base_, size_);
  // Closing our copy of the descriptor does not release the parent's flock: the lock belongs
  // to the open file description, which the parent still holds.
  if (fd_ >= 0) close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

BlockHeader* RingFile::Claim(uint32_t tid, uint64_t dropped_before) {
  const uint32_t count = header_->block_count;
  uint32_t start = claim_hint_.load(std::memory_order_relaxed);
  for (uint32_t n = 0; n < count; ++n) {
    uint32_t index = (start + n) % count;
    BlockHeader* candidate = block(index);
    uint32_t expected = static_cast<uint32_t>(BlockState::kFree);
    if (candidate->state.load(std::memory_order_relaxed) != expected) continue;
    if (!candidate->state.compare_exchange_strong(expected, static_cast<uint32_t>(BlockState::kClaiming),
                                                  std::memory_order_acquire)) {
      continue;
    }
    candidate->count.store(0, std::memory_order_relaxed);
    candidate->tid = tid;
    candidate->seq = header_->next_seq.fetch_add(1, std::memory_order_relaxed);
    candidate->dropped_before = dropped_before;
    candidate->check = BlockHeaderCheck(tid, candidate->seq, candidate->capacity);
    candidate->state.store(static_cast<uint32_t>(BlockState::kOpen), std::memory_order_release);
    claim_hint_.store((index + 1) % count, std::memory_order_relaxed);
    return candidate;
  }
  return nullptr;
}

void RingFile::Seal(BlockHeader* block) {
  header_->records_written.fetch_add(block->count.load(std::memory_order_relaxed), std::memory_order_relaxed);
  block->state.store(static_cast<uint32_t>(BlockState::kSealed), std::memory_order_release);
}

bool RingWriterAlive(const std::string& directory, const std::string& stream) {
  auto fd = OpenRegularFile(directory + "/" + stream + kRingSuffix, Symlinks::kRefuse);
  if (!fd.ok()) return false;
  return flock(fd->get(), LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;  // closing fd releases ours
}

}  // namespace stepscope::store
