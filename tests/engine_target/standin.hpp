// The stand-in driver (standin_driver.py) in place of every engine's: vLLM's script, FlashInfer's
// and FA3's compiled drivers. The engine target probes its drivers once per process, so each test
// that routes runs through this before its first probe, and the routing tests share one process
// (the ctest engine_target.routing).
#pragma once

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace headroom {

// False when python3 is missing (the test then skips). The mode file says what the stand-in does
// (standin_driver.py); it starts as "ok".
inline bool use_standin_drivers() {
  if (std::system("python3 -c 'import socket' >/dev/null 2>&1") != 0) return false;
  const std::string dir = ::testing::TempDir(), mode = dir + "standin_mode", exe = dir + "standin_exe";
  std::ofstream(mode) << "ok\n";
  std::ofstream(exe) << "#!/bin/sh\nexec python3 " << HEADROOM_STANDIN_DRIVER << " \"$@\"\n";
  if (::chmod(exe.c_str(), 0755) != 0) return false;
  ::setenv("HEADROOM_STANDIN_MODE_FILE", mode.c_str(), 1);
  ::setenv("HEADROOM_ENGINE_DRIVER", HEADROOM_STANDIN_DRIVER, 1);
  ::setenv("HEADROOM_FLASHINFER_DRIVER", exe.c_str(), 1);
  ::setenv("HEADROOM_FA3_DRIVER", exe.c_str(), 1);
  ::setenv("HEADROOM_REAL_DRIVER_DIR", HEADROOM_REAL_DRIVER_DIR, 1);
  return true;
}

}  // namespace headroom
