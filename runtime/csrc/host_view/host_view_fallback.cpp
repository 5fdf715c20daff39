#include "host_view_fallback.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <ATen/native/CPUFallback.h>
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/Storage.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>

#include "allocator.h"
#include "fallback_observer.h"
#include "device.h"
#include "env.h"
#include "generator.h"
#include "memory_access.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// ---- Device memory for what the CPU kernel allocates ---------------------------
//
// While a fallback runs its CPU kernel, allocations the kernel makes on this
// thread come from the device (through the host view of the block), so its
// new outputs already live in device memory. Every other allocation goes to
// the CPU allocator this one wraps, untouched.

// The device the running fallback allocates on, or -1 outside a fallback.
thread_local c10::DeviceIndex redirect_device = -1;

// Owns a device block that a CPU kernel allocated through its host view.
struct DeviceBlock {
  c10::DataPtr block;
};

void free_device_block(void* owner) {
  delete static_cast<DeviceBlock*>(owner);
}

class DeviceBackedCpuAllocator final : public c10::Allocator {
 public:
  explicit DeviceBackedCpuAllocator(c10::Allocator* cpu) : cpu_(cpu) {}

  c10::DataPtr allocate(size_t nbytes) override {
    if (redirect_device < 0 || nbytes == 0) {
      return cpu_->allocate(nbytes);
    }
    c10::DataPtr block;
    try {
      block = allocate_on_device(redirect_device, nbytes);
    } catch (const c10::OutOfMemoryError&) {
      // The output is then copied to the device once, where the copy may
      // report the shortage itself.
      return cpu_->allocate(nbytes);
    }
    void* host = host_address(block.get());
    return c10::DataPtr(
        host,
        new DeviceBlock{std::move(block)},
        &free_device_block,
        c10::Device(c10::DeviceType::CPU));
  }

  c10::DeleterFnPtr raw_deleter() const override {
    return cpu_->raw_deleter();
  }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }

 private:
  c10::Allocator* cpu_;
};

// Installed as the CPU allocator at the first zero-copy fallback; nullptr
// when someone installed a CPU allocator with a higher priority (outputs
// are then copied once).
c10::Allocator* device_backed_cpu_allocator() {
  static c10::Allocator* const installed = [] {
    static DeviceBackedCpuAllocator allocator(c10::GetCPUAllocator());
    c10::SetCPUAllocator(&allocator, /*priority=*/0);
    return static_cast<c10::Allocator*>(&allocator);
  }();
  return c10::GetCPUAllocator() == installed ? installed : nullptr;
}

class RedirectAllocationsTo {
 public:
  explicit RedirectAllocationsTo(c10::DeviceIndex device) : previous_(redirect_device) {
    redirect_device = device;
  }
  ~RedirectAllocationsTo() {
    redirect_device = previous_;
  }
  RedirectAllocationsTo(const RedirectAllocationsTo&) = delete;
  RedirectAllocationsTo& operator=(const RedirectAllocationsTo&) = delete;

 private:
  c10::DeviceIndex previous_;
};

// ---- Storages --------------------------------------------------------------

// Drops the reference a DataPtr holds on a storage (of the other side).
void release_storage(void* storage_impl) {
  c10::intrusive_ptr<c10::StorageImpl>::reclaim(static_cast<c10::StorageImpl*>(storage_impl));
}

void* retain_storage(const c10::Storage& storage) {
  return c10::Storage(storage).unsafeReleaseStorageImpl();
}

// Device memory holding the bytes of `host`, a storage the CPU kernel
// allocated (or grew): the device block itself when the kernel allocated it
// through the device, else a new block with one copy (through the driver
// where the host cannot address device memory).
c10::DataPtr device_memory_for(const c10::Storage& host, c10::DeviceIndex device) {
  const c10::DataPtr& data = host.data_ptr();
  const size_t nbytes = host.nbytes();
  if (data.get() == nullptr || nbytes == 0) {
    return c10::DataPtr(nullptr, make_device(device));
  }
  if (data.get_deleter() == &free_device_block) {
    const c10::DataPtr& block = static_cast<DeviceBlock*>(data.get_context())->block;
    // The device storage keeps the host storage (the block's owner) alive.
    return c10::DataPtr(block.get(), retain_storage(host), &release_storage, block.device());
  }
  c10::DataPtr block = allocate_on_device(device, nbytes);
  if (device_memory_is_host_addressable()) {
    std::memcpy(host_address(block.get()), data.get(), nbytes);
  } else {
    copy_bytes(block.get(), data.get(), nbytes, CopyKind::HostToDevice);
  }
  return block;
}

// The bytes [begin, end) of a storage that a tensor's elements span.
struct ByteRange {
  size_t begin = SIZE_MAX;
  size_t end = 0;

  void add(const at::Tensor& t) {
    const auto span = static_cast<size_t>(span_elements(t));
    if (span == 0) {
      return;
    }
    const auto itemsize = static_cast<size_t>(t.itemsize());
    const auto first = static_cast<size_t>(t.storage_offset()) * itemsize;
    begin = std::min(begin, first);
    end = std::max(end, first + span * itemsize);
  }
  bool empty() const {
    return end <= begin;
  }
};

void copy_metadata(c10::TensorImpl& to, const at::Tensor& from) {
  to.set_sizes_and_strides(from.sizes(), from.strides(), from.storage_offset());
  to._set_conj(from.is_conj());
  to._set_neg(from.is_neg());
}

// A tensor over `storage` with the layout and value bits of `like`.
at::Tensor tensor_over(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  // Not the VIEW constructor: this one adds the autograd keys, so the result
  // is an ordinary (non-inference) tensor that autograd can make a view of.
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      std::move(storage), c10::DispatchKeySet(key), like.dtype());
  copy_metadata(*impl, like);
  return at::Tensor(std::move(impl));
}

// The host storages of one fallback call: one per device storage, so two
// arguments viewing one device allocation view one host allocation. Where the
// host cannot address device memory (staged), a host storage is CPU memory of
// the device storage's size holding a copy of the bytes the arguments span
// (stage_in), and the bytes the kernel wrote are copied back (stage_out):
// the CPU kernel sees the same offsets, strides and aliasing either way.
class HostStorages {
 public:
  explicit HostStorages(c10::Allocator* host_allocator)
      : host_allocator_(host_allocator), staged_(!device_memory_is_host_addressable()) {}

  // A CPU tensor over `device_tensor`'s memory, or the tensor itself when
  // it is not on this device (a CPU scalar, an undefined tensor).
  at::Tensor host_view(const at::Tensor& device_tensor) {
    if (!device_tensor.defined() || !device_tensor.device().is_privateuseone()) {
      return device_tensor;
    }
    TORCH_CHECK(
        device_tensor.layout() == c10::kStrided && device_tensor.has_storage(),
        "the zero-copy CPU fallback supports strided tensors with storage only, got layout ",
        device_tensor.layout());
    if (device_ < 0) {
      device_ = device_tensor.device().index();
    }
    Entry& entry = entry_of(device_tensor.storage());
    entry.read.add(device_tensor);
    return tensor_over(entry.host, c10::DispatchKey::CPU, device_tensor);
  }

  // Staged: copies in the bytes the arguments span, before the kernel runs,
  // and keeps a copy of them to tell what the kernel changed.
  void stage_in() {
    if (!staged_) {
      return;
    }
    for (auto& entry : entries_) {
      if (!entry.read.empty()) {
        char* host = static_cast<char*>(entry.host.mutable_data()) + entry.read.begin;
        const size_t nbytes = entry.read.end - entry.read.begin;
        copy_bytes(host, static_cast<const char*>(entry.device.data()) + entry.read.begin, nbytes, CopyKind::DeviceToHost);
        entry.before.assign(host, host + nbytes);
      }
    }
  }

  // Staged, after stage_out: copies back the arguments' bytes where the
  // kernel changed them without its schema saying so (native_batch_norm's
  // running statistics).
  void stage_out_changed() {
    if (!staged_) {
      return;
    }
    for (auto& entry : entries_) {
      if (entry.grown || entry.written_back || entry.read.empty()) {
        continue;
      }
      const char* host = static_cast<const char*>(entry.host.data()) + entry.read.begin;
      const size_t nbytes = entry.read.end - entry.read.begin;
      if (std::memcmp(host, entry.before.data(), nbytes) != 0) {
        copy_bytes(static_cast<char*>(entry.device.mutable_data()) + entry.read.begin, host, nbytes, CopyKind::HostToDevice);
      }
    }
  }

  // Staged: copies back what the kernel wrote through `written` (the host
  // view of an in-place or out= argument, after the kernel), unless its
  // storage grew (adopt_grown_storages moved all of it).
  void stage_out(const at::Tensor& written) {
    if (!staged_ || !written.defined() || !written.device().is_cpu()) {
      return;
    }
    for (auto& entry : entries_) {
      if (entry.host.unsafeGetStorageImpl() == written.storage().unsafeGetStorageImpl() && !entry.grown) {
        // The whole of what the arguments span (other arguments may alias
        // it) and what the written tensor spans now.
        ByteRange range = entry.read;
        range.add(written);
        entry.written_back = true;
        if (!range.empty()) {
          copy_bytes(
              static_cast<char*>(entry.device.mutable_data()) + range.begin,
              static_cast<const char*>(entry.host.data()) + range.begin,
              range.end - range.begin,
              CopyKind::HostToDevice);
        }
      }
    }
  }

  // The device of the first device tensor seen, if any.
  std::optional<c10::DeviceIndex> device() const {
    return device_ < 0 ? std::nullopt : std::optional(device_);
  }

  // Device indices of the storages seen (sorted, unique).
  c10::SmallVector<c10::DeviceIndex, 2> devices() const {
    c10::SmallVector<c10::DeviceIndex, 2> indices;
    for (const auto& entry : entries_) {
      const c10::DeviceIndex index = entry.device.device().index();
      if (std::find(indices.begin(), indices.end(), index) == indices.end()) {
        indices.push_back(index);
      }
    }
    return indices;
  }

  // After the kernel: a host storage the kernel grew (resize_ of an out=
  // argument) moved to new memory; the device storage takes it over.
  void adopt_grown_storages() {
    for (auto& entry : entries_) {
      if (entry.host.data() != entry.host_base || entry.host.nbytes() != entry.device.nbytes()) {
        entry.grown = true;
        c10::StorageImpl* device = entry.device.unsafeGetStorageImpl();
        device->set_data_ptr_noswap(device_memory_for(entry.host, entry.device.device().index()));
        device->set_nbytes(entry.host.nbytes());
      }
    }
  }

  // The device tensor for a CPU result: a view of the device storage it
  // shares, or new memory on `device` holding it.
  at::Tensor to_device(const at::Tensor& result, c10::DeviceIndex device) const {
    if (!result.defined() || !result.device().is_cpu()) {
      return result;
    }
    for (const auto& entry : entries_) {
      if (result.storage().unsafeGetStorageImpl() == entry.host.unsafeGetStorageImpl() ||
          (result.storage().data() != nullptr && result.storage().data() == entry.host.data())) {
        return tensor_over(entry.device, c10::DispatchKey::PrivateUse1, result);
      }
    }
    c10::Storage storage(
        c10::Storage::use_byte_size_t(),
        result.storage().nbytes(),
        device_memory_for(result.storage(), device),
        device_allocator(),
        /*resizable=*/true);
    return tensor_over(std::move(storage), c10::DispatchKey::PrivateUse1, result);
  }

 private:
  struct Entry {
    c10::Storage device;
    c10::Storage host;
    const void* host_base;
    ByteRange read; // staged: the bytes the arguments span
    bool grown = false;
    bool written_back = false; // staged: by stage_out
    std::vector<char> before; // staged: the bytes of `read` before the kernel ran
  };

  Entry& entry_of(const c10::Storage& device_storage) {
    for (auto& entry : entries_) {
      if (entry.device.is_alias_of(device_storage)) {
        return entry;
      }
    }
    const void* device_base = device_storage.data();
    c10::DataPtr host_data(nullptr, c10::Device(c10::DeviceType::CPU));
    if (staged_ && device_base != nullptr) {
      // The copy's memory; stage_in fills the bytes the arguments span.
      host_data = c10::GetCPUAllocator()->allocate(device_storage.nbytes());
    } else if (device_base != nullptr) {
      // The host view keeps the device storage alive for as long as the
      // CPU kernel (or anything it hands the view to) holds it.
      host_data = c10::DataPtr(
          host_address(device_base),
          retain_storage(device_storage),
          &release_storage,
          c10::Device(c10::DeviceType::CPU));
    }
    const void* host_base = host_data.get();
    // Resizable, so an out= argument the kernel must grow can grow; the new
    // memory comes from the device while the kernel runs.
    c10::Storage host(
        c10::Storage::use_byte_size_t(),
        device_storage.nbytes(),
        std::move(host_data),
        host_allocator_,
        /*resizable=*/true);
    entries_.push_back(Entry{device_storage, host, host_base, {}, false, false, {}});
    return entries_.back();
  }

  c10::Allocator* host_allocator_;
  bool staged_;
  c10::SmallVector<Entry, 4> entries_;
  c10::DeviceIndex device_ = -1;
};

c10::List<at::Tensor> host_views(HostStorages& storages, const c10::List<at::Tensor>& tensors) {
  c10::List<at::Tensor> views;
  views.reserve(tensors.size());
  for (const at::Tensor& tensor : tensors) {
    views.push_back(storages.host_view(tensor));
  }
  return views;
}

c10::List<std::optional<at::Tensor>> host_views(
    HostStorages& storages,
    const c10::List<std::optional<at::Tensor>>& tensors) {
  c10::List<std::optional<at::Tensor>> views;
  views.reserve(tensors.size());
  for (const std::optional<at::Tensor>& tensor : tensors) {
    views.push_back(tensor.has_value() ? std::optional(storages.host_view(*tensor)) : std::nullopt);
  }
  return views;
}

// An in-place or out= device tensor takes the layout and value bits its host
// view ended with: resize_ by the kernel (the storage itself was adopted
// already), or a lazy conjugation the kernel set on its out= tensor
// (linalg_lu_solve with left=False returns its result that way).
void sync_written_tensor(const at::Tensor& device_tensor, const at::Tensor& host_view) {
  if (!device_tensor.defined() || !device_tensor.device().is_privateuseone()) {
    return;
  }
  c10::TensorImpl* impl = device_tensor.unsafeGetTensorImpl();
  if (device_tensor.sizes() != host_view.sizes() || device_tensor.strides() != host_view.strides() ||
      device_tensor.storage_offset() != host_view.storage_offset()) {
    impl->set_sizes_and_strides(host_view.sizes(), host_view.strides(), host_view.storage_offset());
  }
  if (device_tensor.is_conj() != host_view.is_conj()) {
    impl->_set_conj(host_view.is_conj());
  }
  if (device_tensor.is_neg() != host_view.is_neg()) {
    impl->_set_neg(host_view.is_neg());
  }
}

void sync_written(const c10::IValue& device_argument, const c10::IValue& host_argument) {
  if (device_argument.isTensor()) {
    sync_written_tensor(device_argument.toTensor(), host_argument.toTensor());
  } else if (device_argument.isTensorList()) {
    const c10::List<at::Tensor> device_tensors = device_argument.toTensorList();
    const c10::List<at::Tensor> host_tensors = host_argument.toTensorList();
    for (size_t i = 0; i < device_tensors.size(); ++i) {
      sync_written_tensor(device_tensors[i], host_tensors[i]);
    }
  }
}

bool is_generator_argument(const c10::Argument& argument) {
  const c10::TypePtr& type = argument.type();
  return type->kind() == c10::TypeKind::GeneratorType ||
      (type->kind() == c10::TypeKind::OptionalType &&
       type->containedType(0)->kind() == c10::TypeKind::GeneratorType);
}

void stage_out(HostStorages& storages, const c10::IValue& written) {
  if (written.isTensor()) {
    storages.stage_out(written.toTensor());
  } else if (written.isTensorList()) {
    for (const at::Tensor& t : written.toTensorList()) {
      storages.stage_out(t);
    }
  }
}

bool same_alias_set(const c10::AliasInfo* a, const c10::AliasInfo* b) {
  return a != nullptr && b != nullptr && (a == b || *a == *b);
}

} // namespace

bool host_view_fallback_enabled() {
  static const bool enabled = env::get_flag("SCAFFOLD_HOST_VIEW_FALLBACK", true);
  return enabled;
}

void host_view_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& schema_arguments = op.schema().arguments();
  const size_t num_arguments = schema_arguments.size();
  const size_t arguments_begin = stack->size() - num_arguments;

  // Where the host cannot address device memory, the CPU kernel allocates host memory, copied to
  // the device afterwards.
  c10::Allocator* device_backed = device_memory_is_host_addressable() ? device_backed_cpu_allocator() : nullptr;
  HostStorages storages(device_backed != nullptr ? device_backed : c10::GetCPUAllocator());
  // The device arguments as they came, by argument index (None elsewhere).
  c10::SmallVector<c10::IValue, 8> originals(num_arguments);
  // The host views of in-place/out= arguments, which the kernel may resize.
  c10::SmallVector<c10::IValue, 8> written_views(num_arguments);
  std::optional<c10::DeviceIndex> target_device;
  for (size_t i = 0; i < num_arguments; ++i) {
    c10::IValue& argument = (*stack)[arguments_begin + i];
    c10::IValue view;
    if (argument.isTensor()) {
      view = storages.host_view(argument.toTensor());
    } else if (argument.isTensorList()) {
      view = host_views(storages, argument.toTensorList());
    } else if (argument.isOptionalTensorList()) {
      view = host_views(storages, argument.toOptionalTensorList());
    } else if (argument.isDevice() && argument.toDevice().is_privateuseone()) {
      // A factory: it allocates on the CPU, inside the device's memory.
      const c10::Device device = argument.toDevice();
      target_device = device.has_index() ? device.index() : current_device();
      argument = c10::Device(c10::DeviceType::CPU);
      continue;
    } else {
      continue;
    }
    const c10::AliasInfo* alias = schema_arguments[i].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      written_views[i] = view;
    }
    originals[i] = std::exchange(argument, std::move(view));
  }
  if (!target_device.has_value()) {
    target_device = storages.device();
  }
  if (target_device.has_value()) {
    // Random ops draw from the device's generator (a CPU generator inside, generator.h), as its
    // kernels do: torch.<device>.manual_seed makes them reproducible.
    for (size_t i = 0; i < num_arguments; ++i) {
      c10::IValue& argument = (*stack)[arguments_begin + i];
      if (is_generator_argument(schema_arguments[i]) && (argument.isNone() || argument.isGenerator())) {
        std::optional<at::Generator> generator =
            argument.isGenerator() ? std::optional<at::Generator>(argument.toGenerator()) : std::nullopt;
        if (!generator.has_value() || generator->device().is_privateuseone()) {
          argument = cpu_generator(generator, *target_device);
        }
      }
    }
  }
  if (!target_device.has_value()) {
    // No device tensor and no device: nothing to view; the outputs'
    // destination is unknown, as in ATen's fallback.
    for (size_t i = 0; i < num_arguments; ++i) {
      if (!originals[i].isNone()) {
        (*stack)[arguments_begin + i] = std::move(originals[i]);
      }
    }
    at::native::cpu_fallback(op, stack);
    return;
  }

  // The host must see every write queued on the device before the op.
  c10::SmallVector<c10::DeviceIndex, 2> devices = storages.devices();
  if (std::find(devices.begin(), devices.end(), *target_device) == devices.end()) {
    devices.push_back(*target_device);
  }
  for (const c10::DeviceIndex device : devices) {
    synchronize_stream(current_stream(device));
  }
  storages.stage_in();

  {
    const RedirectAllocationsTo redirect(device_backed != nullptr ? *target_device : -1);
    // A random op without a generator argument draws from the device's stream, as its kernel would.
    std::optional<CpuDefaultDrawsFromDevice> device_random;
    if (op.hasTag(at::Tag::nondeterministic_seeded) &&
        std::none_of(schema_arguments.begin(), schema_arguments.end(), is_generator_argument)) {
      device_random.emplace(*target_device);
    }
    const FallbackCpuWork cpu_work; // the rest of this function is host-view overhead
    op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  }

  // In-place and out= arguments were written through their host views;
  // one the kernel resized takes its new layout (and memory, if it grew).
  storages.adopt_grown_storages();
  for (size_t i = 0; i < num_arguments; ++i) {
    if (!written_views[i].isNone()) {
      stage_out(storages, written_views[i]);
      sync_written(originals[i], written_views[i]);
    }
  }
  storages.stage_out_changed();

  const auto& schema_returns = op.schema().returns();
  const size_t num_returns = schema_returns.size();
  const size_t returns_begin = stack->size() - num_returns;
  for (size_t r = 0; r < num_returns; ++r) {
    c10::IValue& result = (*stack)[returns_begin + r];
    const c10::AliasInfo* alias = schema_returns[r].alias_info();
    if (alias != nullptr && alias->isWrite()) {
      // The in-place/out= argument itself, as in ATen's fallback.
      bool found = false;
      for (size_t i = 0; i < num_arguments && !found; ++i) {
        if (!originals[i].isNone() && same_alias_set(alias, schema_arguments[i].alias_info())) {
          result = originals[i];
          found = true;
        }
      }
      TORCH_CHECK(
          found,
          "The zero-copy CPU fallback found no argument aliasing the mutable output ",
          r,
          " of ",
          op.schema());
    } else if (result.isTensor()) {
      result = storages.to_device(result.toTensor(), *target_device);
    } else if (result.isTensorList()) {
      c10::List<at::Tensor> tensors = result.toTensorList();
      c10::List<at::Tensor> on_device;
      on_device.reserve(tensors.size());
      for (const at::Tensor& tensor : tensors) {
        on_device.push_back(storages.to_device(tensor, *target_device));
      }
      result = std::move(on_device);
    }
  }
}

} // namespace scaffold::runtime
