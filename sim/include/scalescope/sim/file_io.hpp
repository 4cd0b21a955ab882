// Reading user files and writing results safely: regular files only, bounded sizes, and one
// atomic, exclusive write path (temp file in the target's folder + fsync + rename) for every output.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "scalescope/sim/error.hpp"

namespace scalescope {

/// Largest input file read into memory (JSON documents, logs, tables): 256 MiB. A parsed JSON DOM
/// takes several times its text, so this keeps a load well under the machine's memory; larger
/// files are refused with an error naming the limit.
inline constexpr std::uint64_t kMaxInputFileBytes = std::uint64_t{256} << 20;

/// Reads a whole file. Refuses (input Error, exit 2) what is not a regular file after following
/// symbolic links (FIFO, device, socket, folder, a link loop), and files over `max_bytes`; never
/// blocks on a FIFO. `what` names the kind of file in messages ("JSON file", "nccl-tests log").
Expected<std::string> read_input_file(const std::filesystem::path& file, std::uint64_t max_bytes = kMaxInputFileBytes,
                                      std::string_view what = "file");

/// Opens a file for reading under read_input_file's rules (regular after following symbolic links, at most
/// `max_bytes`, opened without blocking and checked again on the descriptor) for readers that stream it
/// themselves. Returns the descriptor; the caller closes it.
Expected<int> open_input_file(const std::filesystem::path& file, std::uint64_t max_bytes, std::string_view what);

/// Writes `content` as the result file `file`, the one helper every output goes through:
///  - `file` == "-": written to stdout;
///  - the target must be a regular file or absent (a FIFO, device, folder or symbolic link is refused,
///    input Error);
///  - the data goes to a temporary file created exclusively in the target's folder (an unnamed
///    O_TMPFILE inode where the file system has them, else mkstemp's O_CREAT|O_EXCL name), is
///    fsync'ed, then renamed over the target (an existing target keeps its permission bits);
///  - on any failure the temporary file is removed and the old target is untouched. A run killed
///    while writing leaves the old file and, with O_TMPFILE, no temporary file at all.
Expected<bool> write_file_atomic(const std::filesystem::path& file, std::string_view content);

/// The check write_file_atomic makes before writing, for callers that want to fail before a long
/// computation: the folder exists and the target is a regular file or absent ("-" is fine).
Expected<bool> check_output_target(const std::filesystem::path& file);

}  // namespace scalescope
