#include "kernel_call.h"

#include <string>
#include <utility>

#include <ATen/ops/copy_native.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>

#include "core_ops.h"
#include "device.h"
#include "host_view_cache.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

// host_view(), but with a storage the CPU kernel may resize.
//
// host_view's storage is fixed-size on purpose (its bytes are the device
// allocation). For an output we move its DataPtr -- the host address plus
// the reference that keeps the device storage alive -- into a resizable
// storage backed by the CPU allocator: if the CPU kernel grows the output,
// resize_bytes_cpu copies the old bytes into fresh host memory and drops
// that DataPtr, and OutputView::commit() notices the new address.
at::Tensor resizable_host_view(const at::Tensor& device_tensor) {
  at::Tensor view = host_view(device_tensor);
  c10::StorageImpl* fixed = view.storage().unsafeGetStorageImpl();
  c10::Storage resizable(
      c10::Storage::use_byte_size_t(),
      fixed->nbytes(),
      fixed->set_data_ptr(c10::DataPtr()),
      c10::GetCPUAllocator(),
      /*resizable=*/true);
  view.unsafeGetTensorImpl()->set_storage_keep_dtype(std::move(resizable));
  return view;
}

} // namespace

// ---- KernelCall ----------------------------------------------------------------

KernelCall::KernelCall(const char* op, const at::Tensor& anchor, const char* anchor_name)
    : op_(op), device_(c10::DeviceType::CPU) {
  TORCH_CHECK(anchor.defined(), op_, ": argument '", anchor_name, "' is an undefined tensor");
  TORCH_CHECK(
      on_backend(anchor),
      op_,
      ": expected argument '",
      anchor_name,
      "' to be a ",
      c10::get_privateuse1_backend(),
      " tensor, got a tensor on ",
      anchor.device());
  TORCH_CHECK(
      anchor.layout() == c10::kStrided,
      op_,
      ": ",
      c10::get_privateuse1_backend(),
      " kernels support strided tensors only, got layout ",
      anchor.layout(),
      " for argument '",
      anchor_name,
      "'");
  device_ = anchor.device();
  timing_.begin(op_, device_.index());
}

void KernelCall::check_on_device(const at::Tensor& t, const char* arg) const {
  TORCH_CHECK(t.defined(), op_, ": argument '", arg, "' is an undefined tensor");
  if (C10_LIKELY(t.device() == device_)) {
    return;
  }
  const std::string backend = c10::get_privateuse1_backend();
  if (on_backend(t)) {
    TORCH_CHECK(
        false,
        op_,
        ": expected all tensors to be on the same device, but argument '",
        arg,
        "' is on ",
        t.device(),
        " while the op runs on ",
        device_,
        ". Move it with .to('",
        device_string(device_.index()),
        "').");
  }
  TORCH_CHECK(
      false,
      op_,
      ": argument '",
      arg,
      "' is a ",
      t.dim(),
      "-dim tensor on ",
      t.device(),
      ", but ",
      backend,
      " kernels accept tensors of other devices only as CPU 0-dim scalars. "
      "Move it to ",
      device_string(device_.index()),
      " first.");
}

at::Tensor KernelCall::input(const at::Tensor& t, const char* arg) const {
  if (t.defined() && t.dim() == 0 && t.device().is_cpu()) {
    return t; // a wrapped scalar: CPU kernels take it as is
  }
  check_on_device(t, arg);
  return view_of(t);
}

std::optional<at::Tensor> KernelCall::input(
    const std::optional<at::Tensor>& t,
    const char* arg) const {
  if (!t.has_value() || !t->defined()) {
    return std::nullopt;
  }
  return input(*t, arg);
}

std::vector<at::Tensor> KernelCall::inputs(
    const at::ITensorListRef& tensors,
    const char* arg) const {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    views.push_back(input(t, arg));
  }
  return views;
}

c10::List<std::optional<at::Tensor>> KernelCall::indices(
    const c10::List<std::optional<at::Tensor>>& indices,
    const char* arg) const {
  c10::List<std::optional<at::Tensor>> views;
  views.reserve(indices.size());
  for (const std::optional<at::Tensor>& index : indices) {
    if (!index.has_value() || !index->defined()) {
      views.push_back(std::nullopt);
    } else if (index->device().is_cpu()) {
      views.push_back(*index);
    } else {
      check_on_device(*index, arg);
      views.push_back(view_of(*index));
    }
  }
  return views;
}

at::Tensor KernelCall::device_input(const at::Tensor& t, const char* arg) const {
  check_on_device(t, arg);
  return view_of(t);
}

std::optional<at::Tensor> KernelCall::device_input(
    const std::optional<at::Tensor>& t,
    const char* arg) const {
  if (!t.has_value() || !t->defined()) {
    return std::nullopt;
  }
  return device_input(*t, arg);
}

std::vector<at::Tensor> KernelCall::device_inputs(at::TensorList tensors, const char* arg) const {
  std::vector<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& t : tensors) {
    views.push_back(device_input(t, arg));
  }
  return views;
}

at::Tensor KernelCall::inplace(const at::Tensor& self, const char* arg) const {
  check_on_device(self, arg);
  at::Tensor host = host_view(self);
  written(self, host);
  return host;
}

at::Tensor KernelCall::adopt(const at::Tensor& host_result) const {
  if (!host_result.defined()) {
    return host_result;
  }
  at::Tensor result = empty_strided(
      host_result.sizes(), host_result.strides(), host_result.scalar_type(), c10::kStrided, device_, std::nullopt);
  at::Tensor dst = host_view(result);
  at::native::copy_(dst, host_result, /*non_blocking=*/false);
  return result;
}

OutputView KernelCall::output(at::Tensor& out, const char* arg) const {
  check_on_device(out, arg);
  OutputView view(out);
  written(out, view.host());
  return view;
}

at::Tensor KernelCall::view_of(const at::Tensor& t) const {
  const c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  for (const auto& [device_storage, host] : written_) {
    if (device_storage == storage) {
      return host_view_sharing_storage(host, t);
    }
  }
  return host_view(t);
}

void KernelCall::written(const at::Tensor& device_tensor, const at::Tensor& host) const {
  written_.emplace_back(device_tensor.storage().unsafeGetStorageImpl(), host);
}

// ---- OutputView ----------------------------------------------------------------

OutputView::OutputView(at::Tensor& device_out)
    : device_(device_out), host_(resizable_host_view(device_out)) {
  host_data_ = host_.storage().data_ptr().get();
}

bool OutputView::unchanged() const {
  const c10::TensorImpl* host = host_.unsafeGetTensorImpl();
  const c10::TensorImpl* device = device_.unsafeGetTensorImpl();
  return host->unsafe_storage().data_ptr().get() == host_data_ &&
      host->sizes() == device->sizes() && host->strides() == device->strides() &&
      host->storage_offset() == device->storage_offset();
}

at::Tensor& OutputView::adopt_host_result() {
  // The CPU kernel resized (and maybe restrided) the output. Replay that on
  // the device tensor through the dispatcher: resize_ grows the device
  // storage if needed (keeping its contents, as a CPU resize does), and
  // as_strided_ applies non-contiguous strides the CPU kernel chose. ATen
  // already warned about resizing a non-empty out= tensor, on the host view.
  const bool reallocated = host_.storage().data_ptr().get() != host_data_;
  if (device_.sizes() != host_.sizes()) {
    device_.resize_(host_.sizes());
  }
  if (device_.strides() != host_.strides() ||
      device_.storage_offset() != host_.storage_offset()) {
    device_.as_strided_(host_.sizes(), host_.strides(), host_.storage_offset());
  }
  if (reallocated) {
    // The result was written to temporary host memory: move it in.
    at::Tensor dst = host_view(device_);
    at::native::copy_(dst, host_, /*non_blocking=*/false);
  }
  // Keep host() aliasing the device tensor should the caller look at it again.
  host_ = host_view(device_);
  host_data_ = host_.storage().data_ptr().get();
  return device_;
}

} // namespace scaffold::runtime
