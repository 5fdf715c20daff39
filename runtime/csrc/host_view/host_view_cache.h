// Host views for one kernel call, made cheap: the per-thread cache of view
// objects that FunctionalOperands and InplaceElementwise take their host
// views from (memory_access.h makes plain ones).
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
// With launch blocking, a thread also keeps its last few borrowing views with
// the device tensor each was made for, and hands one back unchanged while
// that tensor has not changed (sticky_host_view): a loop of ops on the same
// tensors skips re-pointing its views.
#pragma once

#include <ATen/core/Tensor.h>

namespace scaffold::runtime {

// One thread's cache (host_view_cache.cpp).
struct ThreadViewCache;

// The calling thread's cache, looked up once per op and passed down (see
// ThreadViewCache).
ThreadViewCache& thread_view_cache();

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
StorageRef caller_held();

// host_view(t) for a strided tensor of this backend (checked by the
// caller), from a recycled view object when there is one.
at::Tensor recycled_host_view(const at::Tensor& t, ThreadViewCache& cache, StorageRef ref);

// Ends a view made by recycled_host_view: keeps its objects for the next one
// when nobody else holds them, else just lets go of it.
void recycle_host_view(at::Tensor& view, ThreadViewCache& cache) noexcept;

// A host view of `t` on the host storage of `host` (a host view of a device
// tensor sharing t's device storage).
at::Tensor host_view_sharing_storage(const at::Tensor& host, const at::Tensor& t);

// A borrowing host view of `t` (a strided tensor of this backend that the
// op's caller holds, with launch blocking), from the sticky ones when one
// still shows it. `*sticky` says whether it is one: end it with
// end_sticky_use, else with recycle_host_view.
at::Tensor sticky_host_view(const at::Tensor& t, ThreadViewCache& cache, bool* sticky);

// Ends an op's use of a view from sticky_host_view: it stays for the next op
// unless something else now holds it (a kernel kept it), which gets it
// owning, as recycle_host_view does. A view no longer filed (a nested op
// replaced its entry meanwhile) is ended as a recycled one.
void end_sticky_use(at::Tensor& view, ThreadViewCache& cache) noexcept;

} // namespace scaffold::runtime
