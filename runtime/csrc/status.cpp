#include "status.h"

#include <c10/core/DeviceType.h>

namespace scaffold::runtime::detail {

void fail_runtime_call(
    const char* call_text,
    int error_code,
    const char* file,
    int line) {
  // TORCH_CHECK records *this* file as the source; the caller's location is
  // the useful one, so it goes into the message itself.
  TORCH_CHECK(
      false,
      c10::get_privateuse1_backend(),
      " runtime call `",
      call_text,
      "` failed at ",
      file,
      ":",
      line,
      ": ",
      c10::utils::str_error(error_code),
      " (errno ",
      error_code,
      ")");
}

} // namespace scaffold::runtime::detail
