// The one writer of every file headroom writes (check/replay --json, fuzz --out counterexamples).
//   before any work: the path is checked (not empty, not a folder, not an existing device or FIFO,
//     its folder exists and takes a new file, it is not one of the inputs: the same device and
//     inode, or the same path once made canonical when it does not exist yet);
//   the write: a temporary PATH.tmp.PID.XXXXXX next to it, created exclusively (O_EXCL and
//     O_NOFOLLOW: a planted file or link at that name is never opened, let alone written through),
//     written, fsync'd, renamed over PATH, the folder fsync'd. Nothing else of the command's result
//     is printed before this returns, so a failed write (full disk, file-size limit) leaves no
//     partial file and no report on stdout: one line, exit 2.
// Every failure is an input_error.
#pragma once

#include <string>
#include <vector>

namespace headroom::cli {

// The checks above, naming `flag` (e.g. "--json") and the path.
void check_output(const std::string& flag, const std::string& path, const std::vector<std::string>& inputs);

// Creates and removes an exclusive temporary in `dir` (a folder nothing can be written to fails
// here, before any work), naming `flag`.
void probe_folder(const std::string& flag, const std::string& dir);

// Writes text to path as above; input_error naming path when any step fails.
void write_durably(const std::string& path, const std::string& text);

// Removes from `dir` the temporaries of this naming (NAME.tmp.PID and NAME.tmp.PID.XXXXXX) left by
// processes that no longer run (killed mid-write); returns how many.
int remove_stale_temporaries(const std::string& dir);

}  // namespace headroom::cli
