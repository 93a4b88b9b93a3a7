// Helpers the unit tests share.
#pragma once
#include <string>

#include "util/error.h"

namespace hpclaunch::test {

// The message of the hpclaunch::Error `f` throws, or "(no error)".
template <class F>
std::string error_of_call(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace hpclaunch::test
