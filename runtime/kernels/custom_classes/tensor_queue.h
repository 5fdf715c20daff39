// torch.classes.foo.TensorQueue: a thread-safe FIFO of tensors that Python,
// TorchScript, torch.compile and torch.export all see as one object (a
// torch::CustomClassHolder). It is the reference backend's example of a
// custom class, after PyTorch's "custom C++ classes in torch.compile /
// torch.export" guide; a backend keeps state that outlives one op (a
// communicator, a cache, a queue of in-flight work) in a class like this.
//
// Declared in yaml/foo.yaml (custom_classes); the generated
// generated/RegisterCustomClasses.cpp binds the methods below by name, with
// obj_flatten() as __obj_flatten__ and pickled_state() for pickling.
//
// What makes it traceable:
//  - obj_flatten() names the state as (name, value) pairs. torch.compile and
//    torch.export call it to build a fake object (FakeTensorQueue in
//    tensor_queue.py, whose __obj_unflatten__ takes these pairs) and to guard
//    on the state.
//  - Every method the traced code calls has a twin on that fake class.
//
// The queued tensors may live on any device (foo, CPU); the queue never
// copies them.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/custom_class.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace foo {

class TensorQueue : public torch::CustomClassHolder {
 public:
  // __obj_flatten__'s result: (("queue", queued tensors), ("init_tensor_",
  // what pop() returns on an empty queue)). The names are the keyword
  // arguments of the fake class's constructor.
  using FlatState = std::tuple<
      std::tuple<std::string, std::vector<at::Tensor>>,
      std::tuple<std::string, at::Tensor>>;
  // What pickling (torch.save, copy.deepcopy, TorchScript serialization)
  // stores: the init tensor and the queued tensors, front first.
  using PickledState = std::tuple<at::Tensor, std::vector<at::Tensor>>;

  explicit TensorQueue(at::Tensor init_tensor);
  explicit TensorQueue(PickledState state);

  void push(at::Tensor tensor);
  // The front tensor; the init tensor when the queue is empty.
  at::Tensor pop();
  int64_t size() const;
  // The queued tensors, front first (the same tensors, not copies).
  std::vector<at::Tensor> get_raw_queue() const;
  // Adds `inc` to every queued tensor in place: the kernels of
  // torch.ops.foo.for_each_add_ (custom_ops/for_each_add_.cpp) call it.
  void for_each_add_(const at::Tensor& inc);

  // Named obj_flatten, not __obj_flatten__: identifiers with a double
  // underscore are reserved in C++; the registration gives it the name
  // PyTorch looks for.
  FlatState obj_flatten() const;
  PickledState pickled_state() const;

 private:
  mutable std::mutex mutex_;
  std::deque<at::Tensor> queue_;
  at::Tensor init_tensor_;
};

} // namespace foo
