// Kernels of the custom op(s) foo::for_each_add_ for the foo backend: CPU and device.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when the schema changes and keeps every line you write.
#include "CustomOps.h"

#include <c10/util/Exception.h>

namespace foo::custom_ops {

// The dispatcher picks the kernel by inc's backend (the queue carries no dispatch key), so both
// backends need one. The body is the same: each queued tensor's add_ goes through the
// dispatcher to its own device's kernel (TensorQueue::for_each_add_ checks the devices).

void for_each_add__cpu(const c10::intrusive_ptr<foo::TensorQueue> & tq, const at::Tensor & inc) {
  TORCH_CHECK(tq, "foo::for_each_add_: tq must be a TensorQueue, not None");
  tq->for_each_add_(inc);
}

void for_each_add__foo(const c10::intrusive_ptr<foo::TensorQueue> & tq, const at::Tensor & inc) {
  TORCH_CHECK(tq, "foo::for_each_add_: tq must be a TensorQueue, not None");
  tq->for_each_add_(inc);
}

}  // namespace foo::custom_ops
