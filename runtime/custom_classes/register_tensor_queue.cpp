// Registers torch.classes.foo.TensorQueue (tensor_queue.h) and the op that
// takes it, foo::for_each_add_. TORCH_LIBRARY_FRAGMENT: the foo namespace is
// shared with the generated code (the CPU-fallback counters) and other
// custom ops.
#include <torch/custom_class.h>
#include <torch/library.h>

#include "tensor_queue.h"

TORCH_LIBRARY_FRAGMENT(foo, m) {
  m.class_<foo::TensorQueue>("TensorQueue")
      .def(torch::init<at::Tensor>())
      .def("push", &foo::TensorQueue::push)
      .def("pop", &foo::TensorQueue::pop)
      .def("size", &foo::TensorQueue::size)
      .def("get_raw_queue", &foo::TensorQueue::get_raw_queue)
      .def("for_each_add_", &foo::TensorQueue::for_each_add_)
      // What torch.compile / torch.export fakify the object from; the fake
      // class's __obj_unflatten__ (python/torch_foo/custom_classes.py) takes it.
      .def("__obj_flatten__", &foo::TensorQueue::obj_flatten)
      .def_pickle(
          [](const c10::intrusive_ptr<foo::TensorQueue>& self) { return self->pickled_state(); },
          [](foo::TensorQueue::PickledState state) {
            return c10::make_intrusive<foo::TensorQueue>(std::move(state));
          });
  // The queue's tensors are mutated, which a schema cannot say of a class
  // argument; tracing learns it from the fake kernel (custom_classes.py).
  m.def("for_each_add_(__torch__.torch.classes.foo.TensorQueue tq, Tensor inc) -> ()");
}

// The dispatcher picks the kernel by inc's backend (the queue carries no
// dispatch key), so both backends need one; the body is the same because
// each queued tensor's add_ dispatches to its own device.
TORCH_LIBRARY_IMPL(foo, CPU, m) {
  m.impl("for_each_add_", TORCH_FN(foo::for_each_add_));
}

TORCH_LIBRARY_IMPL(foo, PrivateUse1, m) {
  m.impl("for_each_add_", TORCH_FN(foo::for_each_add_));
}
