#include "status.h"

#include <c10/core/DeviceType.h>

namespace scaffold::runtime::detail {

void fail_driver_call(
    const char* call_text,
    drvError_t error,
    const char* file,
    int line) {
  // TORCH_CHECK records *this* file as the source; the caller's location is
  // the useful one, so it goes into the message itself.
  const std::string detail = drvGetLastErrorMessage();
  TORCH_CHECK_WITH(
      Error,
      error == drvErrorMemoryAllocation, // any other failure is a plain error
      c10::get_privateuse1_backend(),
      " driver call `",
      call_text,
      "` failed at ",
      file,
      ":",
      line,
      ": ",
      drvGetErrorName(error),
      detail.empty() ? "" : ": ",
      detail);
  TORCH_CHECK_WITH(
      OutOfMemoryError,
      false,
      c10::get_privateuse1_backend(),
      " driver call `",
      call_text,
      "` failed at ",
      file,
      ":",
      line,
      ": out of device memory",
      detail.empty() ? "" : ": ",
      detail);
}

} // namespace scaffold::runtime::detail
