//===- ArtifactHeader.h - Fixed 64-byte header of a .kiln file ------------===//
//
// The header that starts every .kiln artifact, shared by the compiler's artifact writer and the
// runtime's loader. It is plain C++ with no dependencies. The header is stored little-endian; the
// encode/decode helpers below do the byte shuffling, so the struct is never memcpy'd to or from a
// file. The full format (index, blobs, verification rules, compatibility) is in docs/artifact.md.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SCHEMA_ARTIFACTHEADER_H
#define KILN_RUNTIME_SCHEMA_ARTIFACTHEADER_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kiln {
namespace artifact {

/// The eight magic bytes at file offset 0: "KILNART" followed by a NUL byte.
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'A', 'R', 'T', '\0'};

/// Newest format major version this code reads and writes. A reader rejects versions outside
/// [kOldestFormatVersion, kFormatVersion] (see docs/artifact.md, "Compatibility"). Compatible
/// additions go into the FlatBuffers index as new optional fields (or into formerly reserved
/// header bytes, like the checksum) and do not change this number. Version 2 added tensor-parallel
/// collectives and version 3 tensor maps (TMA descriptors passed as kernel parameters), which
/// older readers must not ignore; a writer records the oldest version that can hold what the file
/// has (formatVersionFor), so files without them stay readable by older runtimes.
constexpr uint32_t kFormatVersion = 3;

/// Oldest format version this code reads: artifacts without collectives and tensor maps.
constexpr uint32_t kOldestFormatVersion = 1;

/// First format version whose index may hold `collectives` and `tensor_parallel`.
constexpr uint32_t kFormatVersionCollectives = 2;

/// First format version whose launches may hold `tensor_maps` (collectives are allowed too).
constexpr uint32_t kFormatVersionTensorMaps = 3;

/// The format_version a writer records for a file: kFormatVersionTensorMaps when any launch has
/// tensor maps, else kFormatVersionCollectives when it has collectives or a tensor_parallel table,
/// else kOldestFormatVersion. kiln-compile and the tests' artifact builder both use it.
constexpr uint32_t formatVersionFor(bool hasTensorMaps, bool hasCollectivesOrTensorParallel) {
  return hasTensorMaps                    ? kFormatVersionTensorMaps
         : hasCollectivesOrTensorParallel ? kFormatVersionCollectives
                                          : kOldestFormatVersion;
}

/// Size of the encoded header in bytes; also the value of the header's header_size field.
constexpr uint32_t kHeaderSize = 64;

/// Every blob (PTX, cubin, weights) starts at a file offset that is a multiple of this.
constexpr uint64_t kBlobAlignment = 256;

/// Required alignment of index_offset (the FlatBuffers verifier checks 8-byte scalar alignment).
constexpr uint64_t kIndexAlignment = 8;

/// Most arguments one launch may have (4 KiB of kernel parameters, 8 bytes each, the limit every
/// CUDA device supports). The loader rejects launches with more; the compiler never writes one.
constexpr size_t kMaxLaunchArgs = 512;

/// Bytes of kernel parameters one launch may pass (the limit every CUDA device supports): its
/// pointer arguments, 8 bytes each, then its tensor maps, each 64-byte aligned (kernelParamBytes).
constexpr uint64_t kMaxKernelParamBytes = 4096;

/// Size and alignment of one tensor map parameter (CUtensorMap, the device-side kiln::TensorMap).
constexpr uint64_t kTensorMapBytes = 128;
constexpr uint64_t kTensorMapAlignment = 64;

/// Bytes of kernel parameter space a launch with `args` pointer arguments and `tensorMaps` tensor
/// maps takes: the pointers, padding to 64 bytes, then 128 bytes per map. The caller keeps the
/// counts small (args <= kMaxLaunchArgs, maps < 2^32), so nothing overflows.
constexpr uint64_t kernelParamBytes(uint64_t args, uint64_t tensorMaps) {
  return tensorMaps == 0
             ? args * 8
             : (args * 8 + kTensorMapAlignment - 1) / kTensorMapAlignment * kTensorMapAlignment +
                   tensorMaps * kTensorMapBytes;
}

/// Values of the header's checksum_kind field.
///   kChecksumNone:  no checksum (files written before the checksum existed; readers accept them
///                   unverified).
///   kChecksumCrc32: `checksum` is the CRC-32 (zlib's crc32, ISO-HDLC polynomial) of the file
///                   bytes [kHeaderSize, file_size), i.e. everything after the header.
/// Readers reject any other value. kChecksumCrc32 is the ASCII tag "CRC1" (0x31435243), not 1,
/// so that no single bit flip turns it into kChecksumNone and silently disables verification.
constexpr uint32_t kChecksumNone = 0;
constexpr uint32_t kChecksumCrc32 = 0x31435243;

/// Decoded form of the 64-byte header. Byte layout (little-endian):
///   [0, 8)   magic          "KILNART\0"
///   [8, 12)  formatVersion  u32, in [kOldestFormatVersion, kFormatVersion]
///   [12, 16) headerSize     u32, == kHeaderSize
///   [16, 24) indexOffset    u64, file offset of the FlatBuffers index (multiple of 8, >= 64)
///   [24, 32) indexSize      u64, byte size of the index
///   [32, 40) fileSize       u64, total file size in bytes
///   [40, 44) checksumKind   u32, kChecksumNone or kChecksumCrc32 (zero in files older than it)
///   [44, 48) checksum       u32, CRC-32 of bytes [64, fileSize) when checksumKind is CRC-32
///   [48, 64) reserved       zero when written, ignored when read
struct ArtifactHeader {
  char magic[8];
  uint32_t formatVersion;
  uint32_t headerSize;
  uint64_t indexOffset;
  uint64_t indexSize;
  uint64_t fileSize;
  uint32_t checksumKind;
  uint32_t checksum;
};

namespace detail {
/// Stores `value` as `bytes` little-endian bytes at `out`.
inline void storeLE(uint8_t *out, uint64_t value, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i)
    out[i] = static_cast<uint8_t>(value >> (8 * i));
}
/// Loads a `bytes`-wide little-endian unsigned integer from `in`.
inline uint64_t loadLE(const uint8_t *in, unsigned bytes) {
  uint64_t value = 0;
  for (unsigned i = 0; i < bytes; ++i)
    value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}
} // namespace detail

/// Returns a header with the magic, `formatVersion` (default kFormatVersion) and kHeaderSize filled in, the given index
/// position and total file size (all in bytes), and checksum kind kChecksumCrc32 with `crc32`,
/// the CRC-32 of the file bytes [kHeaderSize, fileSize) that the caller computed.
inline ArtifactHeader makeHeader(uint64_t indexOffset, uint64_t indexSize, uint64_t fileSize,
                                 uint32_t crc32, uint32_t formatVersion = kFormatVersion) {
  ArtifactHeader header;
  std::memcpy(header.magic, kMagic, sizeof(kMagic));
  header.formatVersion = formatVersion;
  header.headerSize = kHeaderSize;
  header.indexOffset = indexOffset;
  header.indexSize = indexSize;
  header.fileSize = fileSize;
  header.checksumKind = kChecksumCrc32;
  header.checksum = crc32;
  return header;
}

/// Writes `header` into exactly kHeaderSize bytes at `out` (reserved bytes zeroed).
inline void encodeHeader(const ArtifactHeader &header, uint8_t out[kHeaderSize]) {
  std::memset(out, 0, kHeaderSize);
  std::memcpy(out, header.magic, sizeof(header.magic));
  detail::storeLE(out + 8, header.formatVersion, 4);
  detail::storeLE(out + 12, header.headerSize, 4);
  detail::storeLE(out + 16, header.indexOffset, 8);
  detail::storeLE(out + 24, header.indexSize, 8);
  detail::storeLE(out + 32, header.fileSize, 8);
  detail::storeLE(out + 40, header.checksumKind, 4);
  detail::storeLE(out + 44, header.checksum, 4);
}

/// Reads a header from kHeaderSize bytes at `in`. Performs no validation; the caller checks the
/// magic, version, sizes and checksum.
inline ArtifactHeader decodeHeader(const uint8_t in[kHeaderSize]) {
  ArtifactHeader header;
  std::memcpy(header.magic, in, sizeof(header.magic));
  header.formatVersion = static_cast<uint32_t>(detail::loadLE(in + 8, 4));
  header.headerSize = static_cast<uint32_t>(detail::loadLE(in + 12, 4));
  header.indexOffset = detail::loadLE(in + 16, 8);
  header.indexSize = detail::loadLE(in + 24, 8);
  header.fileSize = detail::loadLE(in + 32, 8);
  header.checksumKind = static_cast<uint32_t>(detail::loadLE(in + 40, 4));
  header.checksum = static_cast<uint32_t>(detail::loadLE(in + 44, 4));
  return header;
}

/// Rounds `offset` up to the next multiple of kBlobAlignment. The caller guarantees no overflow
/// (offsets are far below 2^64 - 256 for any real file).
constexpr uint64_t alignBlobOffset(uint64_t offset) {
  return (offset + kBlobAlignment - 1) / kBlobAlignment * kBlobAlignment;
}

} // namespace artifact
} // namespace kiln

#endif // KILN_RUNTIME_SCHEMA_ARTIFACTHEADER_H
