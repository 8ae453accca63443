// Stand-in for PyTorch's header of the same path, which FA3's hopper/static_switch.h includes for
// STD_TORCH_CHECK only: the FA3 driver compiles FA3's scheduler without PyTorch. A failed check
// throws, and the driver answers the run with the message.
#pragma once

#include <stdexcept>
#include <string>

#define STD_TORCH_CHECK(cond, ...)                                                    \
  do {                                                                                \
    if (!(cond)) throw std::runtime_error(std::string("FA3 check failed: ") + #cond); \
  } while (0)
