#include "host_view_cache.h"

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "launch.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {

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

// True when the one reference the caller holds is the only one to `view`,
// strong or weak, and to its storage, and the view is still a plain one:
// never seen by Python, and not something a fresh host view is not (an
// inference tensor, made under torch.inference_mode, refuses in-place updates
// outside it). Only such a view may be recycled, or kept borrowing past its
// op: one that something else refers to, if only weakly (the profiler's
// record of an op's inputs), is made owning when its op ends, while its
// device tensor is alive -- not later, when that tensor may be gone.
// (c10::raw::weak_intrusive_ptr::use_count counts strong references.)
bool unshared(c10::TensorImpl& view) {
  ViewImpl held = ViewImpl::reclaim(&view); // the caller's reference, borrowed to read the counts
  const bool alone = held.use_count() == 1 && held.weak_use_count() == 1;
  (void)held.release();
  return alone && view.unsafe_storage().use_count() == 1 && view.pyobj_slot()->load_pyobj() == nullptr &&
      view.allow_tensor_metadata_change() && view.autograd_meta() == nullptr && !view.is_wrapped_number() &&
      !view.is_inference();
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

} // namespace

ThreadViewCache& thread_view_cache() {
  return t_cache;
}

StorageRef caller_held() {
  return launch_blocking() ? StorageRef::Borrowed : StorageRef::Owning;
}

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

at::Tensor host_view_sharing_storage(const at::Tensor& host, const at::Tensor& t) {
  auto impl = c10::make_intrusive<c10::TensorImpl>(
      c10::Storage(host.storage()), c10::DispatchKeySet(c10::DispatchKey::CPU), t.dtype());
  impl->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
  impl->_set_conj(t.is_conj());
  impl->_set_neg(t.is_neg());
  return at::Tensor(std::move(impl));
}

void recycle_host_view(at::Tensor& view, ThreadViewCache& cache) noexcept {
  if (!view.defined()) {
    return;
  }
  c10::TensorImpl* impl = view.unsafeGetTensorImpl();
  if (unshared(*impl)) {
    impl->unsafe_storage().unsafeGetStorageImpl()->set_data_ptr_noswap(no_host_data());
    give_back_view(ViewImpl::reclaim(view.unsafeReleaseTensorImpl()), cache);
  } else {
    make_owning(*impl->unsafe_storage().unsafeGetStorageImpl());
  }
  view.reset();
}

namespace {

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

} // namespace

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

void end_sticky_use(at::Tensor& view, ThreadViewCache& cache) noexcept {
  c10::TensorImpl* impl = view.unsafeGetTensorImpl();
  for (ThreadViewCache::Sticky& entry : cache.sticky) {
    if (entry.view == impl) {
      view.reset(); // the entry's reference remains
      if (!unshared(*impl)) {
        make_owning(*impl->unsafe_storage().unsafeGetStorageImpl());
        ViewImpl::reclaim(std::exchange(entry.view, nullptr)); // the other holder keeps it
      }
      return;
    }
  }
  recycle_host_view(view, cache);
}

} // namespace scaffold::runtime
