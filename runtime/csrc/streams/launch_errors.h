// Errors of launched work, reported as CUDA reports a kernel's failure: at a
// later API call.
//
// What launched work throws -- an error that depends on the data, like an
// index out of range, as a CUDA device-side assert -- cannot reach the
// caller, which has returned. The first error of work launched on a device
// is kept and rethrown (then cleared) by the next synchronisation with that
// device from the host: synchronize() of the stream, the device or an event;
// .item(), .cpu() and every other copy to the host that waits; a kernel that
// runs inline (it waits for its stream first). The message names the op that
// launched it. Later errors on the same device while one is pending are
// counted, not kept. The output of a failed kernel is unspecified.
//
// Streams call check_launch_errors after waiting; launching keeps errors with
// keep_launch_error. Neither needs the other's header.
#pragma once

#include <exception>
#include <string>

#include <c10/core/Device.h>

namespace scaffold::runtime {

// Keeps `error`, thrown by the work of `op` launched on `device`, for the
// device's next synchronisation; counts it if one is pending already.
void keep_launch_error(c10::DeviceIndex device, const char* op, std::exception_ptr error) noexcept;

// Rethrows, and forgets, the first error raised by work launched on `device`
// since the last report. Cheap when there is none: the synchronisation
// points call it after waiting.
void check_launch_errors(c10::DeviceIndex device);

// Rethrows `error` with `where` appended: a c10::Error keeps its type
// (IndexError, ...) and message, anything else becomes a c10::Error.
[[noreturn]] void rethrow_with_context(const std::exception_ptr& error, const std::string& where);

} // namespace scaffold::runtime
