#include "functional_ops.h"

#include <algorithm>
#include <mutex>
#include <utility>
#include <vector>

#include <ATen/core/DimVector.h>
#include <ATen/ops/copy_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>
#include <c10/util/accumulate.h>

#include "core_ops.h"
#include "memory_access.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {


// True when `t` has exactly the strides a fresh contiguous tensor of its
// shape gets (is_contiguous() alone ignores the strides of size-1
// dimensions, and those take part in TensorIterator's choice of output
// strides).
bool has_default_strides(const at::Tensor& t) {
  if (!t.is_contiguous()) {
    return false;
  }
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const at::IntArrayRef sizes = impl->sizes();
  const at::IntArrayRef strides = impl->strides();
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (strides[i] != expected) {
      return false;
    }
    expected *= std::max<int64_t>(sizes[i], 1);
  }
  return true;
}

// Broadcasts `shape` with `sizes` in place (the rule of infer_size); false
// when they do not broadcast.
bool broadcast_into(at::DimVector& shape, at::IntArrayRef sizes) {
  if (shape.size() < sizes.size()) {
    shape.insert(shape.begin(), sizes.size() - shape.size(), 1);
  }
  const size_t offset = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t& s = shape[offset + i];
    if (s == sizes[i] || sizes[i] == 1) {
      continue;
    }
    if (s != 1) {
      return false;
    }
    s = sizes[i];
  }
  return true;
}

// ---- Recycled host views (functional and in-place ops) ------------------------
//
// host_view() builds a CPU TensorImpl and StorageImpl per call. For a
// 16-element add, creating and destroying the three views it needs (two
// inputs, one output) costs about as much as ATen's whole CPU kernel, so
// FunctionalOperands and InplaceElementwise recycle them: each thread keeps a
// few view objects, re-points one at a device tensor for one kernel call --
// the same sizes, strides, storage offset, dtype, conj/neg bits and reference
// to the device storage that host_view() gives -- and takes it back
// afterwards. It takes a view back only when nothing else holds a reference
// to it or to its storage (a view a CPU kernel kept somewhere is never
// changed under it: it is dropped like any host view), and taking it back
// drops its reference to the device storage at once, as destroying it would.
// With launch blocking, views of the tensors the op's caller holds only
// borrow their device storage (StorageRef below); a kept one is made owning
// before it is dropped.

//
// Views are made on the calling thread and, for launched work, released on
// the stream's worker thread. Each thread keeps a small cache; a thread whose
// cache overflows (a worker) hands half of it to a shared pool, and a thread
// whose cache runs dry (a caller) takes a batch from there: one lock per
// batch of views, not per view.

constexpr size_t kThreadCacheViews = 32;
constexpr size_t kSharedPoolViews = 256;
constexpr size_t kStickyViews = 4;

using ViewImpl = c10::intrusive_ptr<c10::TensorImpl>;

} // namespace

// One thread's cache. It holds its references as raw pointers so that the
// thread_local is trivially destructible and constant-initialised, with no
// initialisation guard. Its address is looked up once per op and passed
// down (thread_view_cache()): the compiler repeats the TLS lookup, a call
// into the dynamic linker, at every access otherwise. What is left in it
// when the thread exits is released by a ThreadCacheOwner, set up the first
// time the thread keeps a view.
struct ThreadViewCache {
  c10::TensorImpl* views[kThreadCacheViews]; // owned references
  size_t count;
  bool owner_set_up;
  // The last borrowing views handed out, by the device tensor they show
  // (sticky_host_view below).
  struct Sticky {
    // What the view was made from. Only compared, never followed: the
    // device tensor may be gone by the time it is looked for again.
    const c10::TensorImpl* device_impl;
    const c10::StorageImpl* device_storage;
    const void* device_base;
    // What it was made as (a kernel may have changed the view itself).
    const c10::StorageImpl* host_storage;
    const void* host_base;
    c10::TensorImpl* view; // owned reference; null: a free entry
  };
  Sticky sticky[kStickyViews];
  size_t next_sticky; // round-robin replacement
};

namespace {

thread_local ThreadViewCache t_cache{};

[[gnu::noinline]] ThreadViewCache& thread_view_cache() {
  return t_cache;
}

struct ThreadCacheOwner {
  ~ThreadCacheOwner() {
    while (t_cache.count > 0) {
      ViewImpl::reclaim(t_cache.views[--t_cache.count]); // dropped here
    }
    for (ThreadViewCache::Sticky& entry : t_cache.sticky) {
      if (entry.view != nullptr) {
        ViewImpl::reclaim(std::exchange(entry.view, nullptr)); // borrowing: releases no device memory
      }
    }
  }
};

void set_up_cache_owner(ThreadViewCache& cache) {
  static thread_local ThreadCacheOwner owner;
  (void)owner;
  cache.owner_set_up = true;
}

struct SharedViews {
  std::mutex mutex;
  std::vector<ViewImpl> views;
};

SharedViews& shared_views() {
  static auto* pool = new SharedViews(); // leaked: workers may recycle at exit
  return *pool;
}

ViewImpl take_recycled_view(ThreadViewCache& cache) {
  if (cache.count == 0) {
    SharedViews& shared = shared_views();
    std::lock_guard<std::mutex> lock(shared.mutex);
    const size_t n = std::min(shared.views.size(), kThreadCacheViews / 2);
    if (n == 0) {
      return ViewImpl();
    }
    if (!cache.owner_set_up) {
      set_up_cache_owner(cache);
    }
    for (size_t i = 0; i < n; ++i) {
      cache.views[cache.count++] = shared.views.back().release();
      shared.views.pop_back();
    }
  }
  return ViewImpl::reclaim(cache.views[--cache.count]);
}

void give_back_view(ViewImpl impl, ThreadViewCache& cache) {
  if (cache.count == kThreadCacheViews) {
    SharedViews& shared = shared_views();
    std::lock_guard<std::mutex> lock(shared.mutex);
    while (cache.count > kThreadCacheViews / 2) {
      ViewImpl spilled = ViewImpl::reclaim(cache.views[--cache.count]);
      if (shared.views.size() < kSharedPoolViews) {
        shared.views.push_back(std::move(spilled));
      }
    }
  }
  if (!cache.owner_set_up) {
    set_up_cache_owner(cache);
  }
  cache.views[cache.count++] = impl.release();
}

// a == b for sizes or strides; ArrayRef's operator== calls memcmp, which
// costs more than the loop for the few dimensions of a kernel's operand.
bool same_dims(at::IntArrayRef a, at::IntArrayRef b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      return false;
    }
  }
  return true;
}

void release_device_storage(void* storage_impl) {
  c10::intrusive_ptr<c10::StorageImpl>::reclaim(static_cast<c10::StorageImpl*>(storage_impl));
}

// The deleter of a borrowing view's host memory: nothing to release. Its
// context is still the device StorageImpl, for make_owning().
void borrowed_device_storage(void* /*storage_impl*/) {}

// Makes a borrowing view's host memory own a reference to the device
// storage, as a view made for launched work does from the start: for a view
// that something kept past its op, whose device tensor may be freed later.
// (An owning view, or one without memory, has another deleter: unchanged.)
void make_owning(c10::StorageImpl& host_storage) {
  c10::DataPtr& data = host_storage._mutable_data_ptr_no_checks();
  if (data.compare_exchange_deleter(&borrowed_device_storage, &release_device_storage)) {
    c10::raw::intrusive_ptr::incref(static_cast<c10::StorageImpl*>(data.get_context()));
  }
}

c10::DataPtr no_host_data() {
  return c10::DataPtr(nullptr, c10::Device(c10::DeviceType::CPU));
}

// How a view refers to its device storage.
enum class StorageRef : bool {
  // Holds a reference: the view may outlive the op (launched work, which
  // Python may free the device tensor under), or the tensor may be dropped
  // while the view exists (a result allocated by the op).
  Owning,
  // Only borrows it: for a tensor the op's caller holds while the op runs
  // -- an input, an existing output -- when launch blocking runs the work
  // before the op returns, and the view is recycled by then. Two atomic
  // reference count updates fewer per operand; recycle_host_view makes a
  // view that something kept owning.
  Borrowed,
};

// The reference for a view of a tensor the op's caller holds.
StorageRef caller_held() {
  return launch_blocking() ? StorageRef::Borrowed : StorageRef::Owning;
}

// host_view(t) for a strided tensor of this backend (checked by the
// caller), from a recycled view object when there is one.
at::Tensor recycled_host_view(const at::Tensor& t, ThreadViewCache& cache, StorageRef ref) {
  const c10::Storage& storage = t.storage();
  const void* device_base = storage.data_ptr().get();
  c10::DataPtr host_data = no_host_data(); // a storage without memory has no view of it
  if (device_base != nullptr) {
    void* host = launch_host_address(device_base); // throws for memory that is not this runtime's
    const c10::Device cpu(c10::DeviceType::CPU);
    host_data = ref == StorageRef::Borrowed
        ? c10::DataPtr(host, storage.unsafeGetStorageImpl(), &borrowed_device_storage, cpu)
        : c10::DataPtr(host, c10::Storage(storage).unsafeReleaseStorageImpl(), &release_device_storage, cpu);
  }
  ViewImpl impl = take_recycled_view(cache);
  if (!impl) {
    impl = c10::make_intrusive<c10::TensorImpl>(
        c10::Storage(c10::Storage::use_byte_size_t(), 0, no_host_data(), nullptr, false),
        c10::DispatchKeySet(c10::DispatchKey::CPU),
        t.dtype());
  }
  c10::StorageImpl* host_storage = impl->unsafe_storage().unsafeGetStorageImpl();
  host_storage->set_data_ptr_noswap(std::move(host_data));
  host_storage->set_nbytes(storage.nbytes());
  if (impl->dtype() != t.dtype()) {
    impl->set_storage_and_dtype(impl->unsafe_storage(), t.dtype());
  }
  // A loop of ops on tensors of one shape gets back views of that shape:
  // setting them again (and recomputing the contiguity flags) would cost as
  // much as the rest of this function.
  if (!same_dims(impl->sizes(), t.sizes()) || !same_dims(impl->strides(), t.strides()) ||
      impl->storage_offset() != t.storage_offset()) {
    impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  }
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return at::Tensor(std::move(impl));
}

// A host view of `t` on the host storage of `host` (a host view of a device
// tensor sharing t's device storage).
at::Tensor host_view_sharing_storage(const at::Tensor& host, const at::Tensor& t) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(host.storage()), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return at::Tensor(std::move(impl));
}

// Ends a view made by recycled_host_view: keeps its objects for the next one
// when nobody else holds them, else just lets go of it.
void recycle_host_view(at::Tensor& view, ThreadViewCache& cache) noexcept {
  if (!view.defined()) {
    return;
  }
  c10::TensorImpl* impl = view.unsafeGetTensorImpl();
  // Only a view nobody else holds, and still a plain one: never seen by
  // Python, and not something a fresh host_view() is not (an inference
  // tensor, made under torch.inference_mode, refuses in-place updates
  // outside it).
  const bool unshared = view.use_count() == 1 && view.weak_use_count() == 1 &&
      impl->unsafe_storage().use_count() == 1 && impl->pyobj_slot()->load_pyobj() == nullptr &&
      impl->allow_tensor_metadata_change() && impl->autograd_meta() == nullptr &&
      !impl->is_wrapped_number() && !impl->is_inference();
  if (unshared) {
    impl->unsafe_storage().unsafeGetStorageImpl()->set_data_ptr_noswap(no_host_data());
    give_back_view(ViewImpl::reclaim(view.unsafeReleaseTensorImpl()), cache);
  } else {
    make_owning(*impl->unsafe_storage().unsafeGetStorageImpl());
  }
  view.reset();
}

// ---- Sticky host views (launch blocking) --------------------------------------
//
// A loop of ops on the same tensors (an optimizer's updates, x.add_(y) in a
// loop) asks for host views of the same device tensors op after op. With
// launch blocking, where views of the tensors the caller holds only borrow
// their device storage, the thread keeps its last few such views with the
// device tensor each was made for, and hands one back unchanged when that
// tensor has not changed since: the same storage, data, sizes, strides,
// offset, dtype and conj/neg bits -- everything recycled_host_view would
// set -- and the view itself as it was made (a kernel may have resized or
// re-pointed it). That skips the address translation and re-pointing of a
// recycled view. A kept view holds no reference to device memory, so it
// keeps none alive; the device-side pointers it is filed under are only
// compared, and a tensor freed and replaced by one at the same addresses with
// the same layout would be shown correctly by it anyway.

// True when nothing but the sticky cache holds `view` (and its storage), and
// it is still a plain host view (as recycle_host_view requires).
bool idle(c10::TensorImpl& view) {
  return c10::raw::intrusive_ptr::use_count(&view) == 1 && c10::raw::weak_intrusive_ptr::use_count(&view) == 1 &&
      view.unsafe_storage().use_count() == 1 && view.pyobj_slot()->load_pyobj() == nullptr &&
      view.allow_tensor_metadata_change() && view.autograd_meta() == nullptr && !view.is_wrapped_number() &&
      !view.is_inference();
}

// True when `entry`'s view shows `t` exactly as recycled_host_view would.
bool still_shows(const ThreadViewCache::Sticky& entry, const c10::TensorImpl& t, const c10::StorageImpl& storage) {
  const c10::TensorImpl& view = *entry.view;
  const c10::StorageImpl& host = *view.unsafe_storage().unsafeGetStorageImpl();
  return entry.device_storage == &storage && entry.device_base == storage.data_ptr().get() &&
      entry.host_storage == &host && entry.host_base == host.data_ptr().get() &&
      host.data_ptr().get_deleter() == &borrowed_device_storage && host.nbytes() == storage.nbytes() &&
      view.dtype() == t.dtype() && same_dims(view.sizes(), t.sizes()) && same_dims(view.strides(), t.strides()) &&
      view.storage_offset() == t.storage_offset() && view.is_conj() == t.is_conj() && view.is_neg() == t.is_neg();
}

// Drops a sticky entry: its view goes back to the recycled ones (or, when
// something holds it, becomes owning and is let go).
void forget_sticky(ThreadViewCache::Sticky& entry, ThreadViewCache& cache) noexcept {
  at::Tensor view(ViewImpl::reclaim(std::exchange(entry.view, nullptr)));
  recycle_host_view(view, cache);
}

// A borrowing host view of `t` (a strided tensor of this backend that the
// op's caller holds, with launch blocking), from the sticky ones when one
// still shows it. `*sticky` says whether it is one: end it with
// end_sticky_use, else with recycle_host_view.
at::Tensor sticky_host_view(const at::Tensor& t, ThreadViewCache& cache, bool* sticky) {
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const c10::StorageImpl& storage = *impl->unsafe_storage().unsafeGetStorageImpl();
  ThreadViewCache::Sticky* slot = nullptr;
  for (ThreadViewCache::Sticky& entry : cache.sticky) {
    if (entry.view != nullptr && entry.device_impl == impl) {
      if (!still_shows(entry, *impl, storage)) {
        forget_sticky(entry, cache);
        slot = &entry;
        break;
      }
      if (c10::raw::intrusive_ptr::use_count(entry.view) != 1) {
        // In use by this op already (torch.add(x, x)): a second view.
        *sticky = false;
        return recycled_host_view(t, cache, StorageRef::Borrowed);
      }
      *sticky = true;
      c10::raw::intrusive_ptr::incref(entry.view);
      return at::Tensor(ViewImpl::reclaim(entry.view));
    }
  }
  at::Tensor view = recycled_host_view(t, cache, StorageRef::Borrowed);
  if (slot == nullptr) {
    slot = &cache.sticky[cache.next_sticky];
    cache.next_sticky = (cache.next_sticky + 1) % kStickyViews;
    if (slot->view != nullptr) {
      forget_sticky(*slot, cache);
    }
  }
  if (!cache.owner_set_up) {
    set_up_cache_owner(cache);
  }
  c10::TensorImpl* view_impl = view.unsafeGetTensorImpl();
  const c10::StorageImpl& host = *view_impl->unsafe_storage().unsafeGetStorageImpl();
  c10::raw::intrusive_ptr::incref(view_impl);
  *slot = ThreadViewCache::Sticky{impl, &storage, storage.data_ptr().get(), &host, host.data_ptr().get(), view_impl};
  *sticky = true;
  return view;
}

// Ends an op's use of a view from sticky_host_view: it stays for the next op
// unless something else now holds it (a kernel kept it), which gets it
// owning, as recycle_host_view does. A view no longer filed (a nested op
// replaced its entry meanwhile) is ended as a recycled one.
void end_sticky_use(at::Tensor& view, ThreadViewCache& cache) noexcept {
  c10::TensorImpl* impl = view.unsafeGetTensorImpl();
  for (ThreadViewCache::Sticky& entry : cache.sticky) {
    if (entry.view == impl) {
      view.reset(); // the entry's reference remains
      if (!idle(*impl)) {
        make_owning(*impl->unsafe_storage().unsafeGetStorageImpl());
        ViewImpl::reclaim(std::exchange(entry.view, nullptr)); // the other holder keeps it
      }
      return;
    }
  }
  recycle_host_view(view, cache);
}

} // namespace

// ---- Functional and in-place ops on host views ------------------------------

FunctionalOperands::FunctionalOperands(TensorRefs inputs) {
  TORCH_INTERNAL_ASSERT(inputs.size() <= kMaxInputs);
  std::optional<c10::Device> device;
  for (const at::Tensor& t : inputs) {
    if (!t.defined()) {
      return;
    }
    if (is_cpu_scalar(t)) {
      continue;
    }
    if (!on_backend(t) || t.layout() != c10::kStrided) {
      return;
    }
    if (!device.has_value()) {
      device = t.device();
    } else if (*device != t.device()) {
      return;
    }
  }
  if (!device.has_value()) {
    return;
  }
  ThreadViewCache& cache = thread_view_cache();
  size_t i = 0;
  for (const at::Tensor& t : inputs) {
    add_input(i++, t, cache);
  }
  device_ = device;
}

FunctionalOperands::FunctionalOperands(const at::Tensor& output, TensorRefs inputs) {
  TORCH_INTERNAL_ASSERT(inputs.size() <= kMaxInputs);
  if (!output.defined() || !on_backend(output) || output.layout() != c10::kStrided) {
    return;
  }
  for (const at::Tensor& t : inputs) {
    if (!t.defined()) {
      return;
    }
    if (!is_cpu_scalar(t) && (t.device() != output.device() || t.layout() != c10::kStrided)) {
      return;
    }
  }
  existing_output_ = true;
  ThreadViewCache& cache = thread_view_cache();
  if (caller_held() == StorageRef::Borrowed) {
    bool sticky = false;
    host_out_ = sticky_host_view(output, cache, &sticky);
    sticky_ |= sticky ? kOutputBit : 0u;
  } else {
    host_out_ = recycled_host_view(output, cache, StorageRef::Owning);
  }
  size_t i = 0;
  for (const at::Tensor& t : inputs) {
    if (!is_cpu_scalar(t) && t.storage().is_alias_of(output.storage())) {
      // In the output's memory: a view on the output's host storage, so
      // that the CPU kernel sees the overlap (and refuses partial overlap)
      // exactly as it would on the CPU.
      inputs_[i++] = host_view_sharing_storage(host_out_, t);
    } else {
      add_input(i++, t, cache);
    }
  }
  device_ = output.device();
}

void FunctionalOperands::add_input(size_t i, const at::Tensor& t, ThreadViewCache& cache) {
  if (is_cpu_scalar(t)) {
    inputs_[i] = t;
  } else if (caller_held() == StorageRef::Borrowed) {
    bool sticky = false;
    inputs_[i] = sticky_host_view(t, cache, &sticky);
    recycled_ |= 1u << i;
    sticky_ |= sticky ? 1u << i : 0u;
  } else {
    inputs_[i] = recycled_host_view(t, cache, StorageRef::Owning);
    recycled_ |= 1u << i;
  }
}

FunctionalOperands::~FunctionalOperands() {
  if (!host_out_.defined() &&
      std::none_of(inputs_.begin(), inputs_.end(), [](const at::Tensor& t) { return t.defined(); })) {
    return; // moved from (into launched work), or not native()
  }
  ThreadViewCache& cache = thread_view_cache();
  for (size_t i = 0; i < kMaxInputs; ++i) {
    if (sticky_ & (1u << i)) {
      end_sticky_use(inputs_[i], cache);
    } else if (recycled_ & (1u << i)) {
      recycle_host_view(inputs_[i], cache);
    } else {
      inputs_[i].reset(); // may share the output's host storage: let go of it first
    }
  }
  if (sticky_ & kOutputBit) {
    end_sticky_use(host_out_, cache);
  } else {
    recycle_host_view(host_out_, cache);
  }
}

void FunctionalOperands::wait(bool runs_inline) const {
  TORCH_INTERNAL_ASSERT(native(), "wait: not native()");
  wait_for_current_stream(device_->index());
  if (runs_inline) {
    inline_timing_.begin(nullptr, device_->index()); // named after its op in a profile
  }
}

bool FunctionalOperands::meta_converts_inputs() const {
  const auto category = [](at::ScalarType t) {
    return c10::isComplexType(t) ? 3 : c10::isFloatingType(t) ? 2 : t == at::kBool ? 0 : 1;
  };
  std::optional<at::ScalarType> device_dtype;
  int scalar_category = -1;
  // Returns true once two device operands differ in dtype.
  const auto device_operand = [&](const at::Tensor& t) {
    if (!device_dtype.has_value()) {
      device_dtype = t.scalar_type();
      return false;
    }
    return *device_dtype != t.scalar_type();
  };
  for (size_t i = 0; i < kMaxInputs; ++i) {
    const at::Tensor& t = inputs_[i];
    if (!t.defined()) {
      continue;
    }
    // Host views are recycled, or share the output's host storage; anything
    // else is a CPU scalar the kernel was given.
    const bool on_device = (recycled_ & (1u << i)) != 0 ||
        (existing_output_ && t.storage().is_alias_of(host_out_.storage()));
    if (!on_device) {
      scalar_category = std::max(scalar_category, category(t.scalar_type()));
    } else if (device_operand(t)) {
      return true;
    }
  }
  if (existing_output_ && device_operand(host_out_)) {
    return true;
  }
  // An integral or boolean operand: ops that compute in floating point (true
  // division, sqrt, exp, ...) promote it to float in meta(); which ops do is
  // not known here, so every such call waits (x / (1 + x.abs()) on int64 read
  // the denominator before its launched add had run).
  return device_dtype.has_value() &&
      (scalar_category > category(*device_dtype) || category(*device_dtype) < 2);
}

at::Tensor& FunctionalOperands::make_output(
    at::IntArrayRef sizes,
    at::IntArrayRef strides,
    const at::TensorOptions& options) {
  TORCH_INTERNAL_ASSERT(
      native() && !existing_output_ && !result_.defined(), "make_output: not native(), or called twice");
  const at::ScalarType dtype = c10::typeMetaToScalarType(options.dtype());
  result_ = strides.empty()
      ? empty(sizes, dtype, c10::kStrided, *device_, std::nullopt, options.memory_format_opt())
      : empty_strided(sizes, strides, dtype, c10::kStrided, *device_, std::nullopt);
  host_out_ = recycled_host_view(result_, thread_view_cache(), StorageRef::Owning);
  return host_out_;
}

at::Tensor FunctionalOperands::adopt(const at::Tensor& host_result) const {
  TORCH_INTERNAL_ASSERT(native(), "adopt: not native()");
  at::Tensor result = empty_strided(
      host_result.sizes(),
      host_result.strides(),
      host_result.scalar_type(),
      c10::kStrided,
      *device_,
      std::nullopt);
  at::Tensor dst = host_view(result);
  at::native::copy_(dst, host_result, /*non_blocking=*/false);
  return result;
}

Elementwise::Elementwise(TensorRefs operands, at::ScalarType result_dtype)
    : operands_(operands) {
  if (!operands_.native()) {
    return;
  }
  at::DimVector shape;
  bool fast = true;
  for (const at::Tensor& t : operands) {
    if ((!is_cpu_scalar(t) && !has_default_strides(t)) || !broadcast_into(shape, t.sizes())) {
      fast = false;
      break;
    }
  }
  if (fast && c10::multiply_integers(shape) != 0) {
    operands_.make_output(shape, {}, at::TensorOptions().dtype(result_dtype));
    fast_ = true;
  } else {
    operands_.wait(); // the caller runs the CPU kernel inline
  }
}

namespace {
// (op, dtype signature) pairs whose host-twin check passed on this thread: a
// handful per op, so a linear scan is cheaper than hashing.
thread_local std::vector<std::pair<const char*, uint64_t>> checked_on_host_twins;
constexpr int64_t kOneElementSizes[] = {1};
const at::IntArrayRef kOneElement(kOneElementSizes);
const at::IntArrayRef kScalar;
} // namespace

uint64_t Elementwise::dtype_signature() const {
  // A byte per operand and one for the result: the dtype, whether it has
  // dims (type promotion treats 0-dim tensors apart) and whether it is a CPU
  // scalar; 0xff for an absent operand.
  uint64_t signature = static_cast<uint8_t>(operands_.result().scalar_type());
  for (size_t i = 0; i < 3; ++i) {
    const at::Tensor& t = operands_.input(i);
    const uint64_t byte = !t.defined()
        ? 0xffu
        : static_cast<uint64_t>(static_cast<uint8_t>(t.scalar_type()) & 0x3fu) |
            (t.dim() > 0 ? 0x40u : 0u) | (is_cpu_scalar(t) ? 0x80u : 0u);
    signature |= byte << (8 * (i + 1));
  }
  return signature;
}

bool Elementwise::make_host_twins_if_unchecked(const char* op, HostTwins& twins) const {
  const uint64_t signature = dtype_signature();
  for (const auto& [checked_op, checked_signature] : checked_on_host_twins) {
    if (checked_op == op && checked_signature == signature) {
      return false;
    }
  }
  bool any_dims = false;
  for (size_t i = 0; i < 3; ++i) {
    const at::Tensor& t = operands_.input(i);
    if (!t.defined() || is_cpu_scalar(t)) {
      twins.inputs[i] = t; // a CPU scalar is on the host already
      continue;
    }
    // One element, with dims when the operand has them: broadcasts with
    // anything, and promotes as the operand does.
    const bool dims = t.dim() > 0;
    any_dims = any_dims || dims;
    twins.inputs[i] = at::zeros(dims ? kOneElement : kScalar, at::TensorOptions().dtype(t.scalar_type()));
  }
  twins.out = at::empty(any_dims ? kOneElement : kScalar, at::TensorOptions().dtype(operands_.result().scalar_type()));
  return true;
}

void Elementwise::remember_checked(const char* op) const {
  checked_on_host_twins.emplace_back(op, dtype_signature());
}

InplaceElementwise::InplaceElementwise(const at::Tensor& self, TensorRefs others)
    : operands_(self, others) {
  if (operands_.native()) {
    operands_.wait(); // the caller runs the CPU kernel inline
  }
}

c10::Device result_device(TensorRefs operands) {
  for (const at::Tensor& t : operands) {
    if (t.defined() && !t.device().is_cpu()) {
      return t.device();
    }
  }
  return c10::Device(c10::DeviceType::CPU);
}

at::Tensor allocate(at::IntArrayRef size, at::ScalarType dtype, c10::Device device) {
  return empty(size, dtype, c10::kStrided, device, std::nullopt, std::nullopt);
}

} // namespace scaffold::runtime
