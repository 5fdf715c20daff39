// torch.classes.foo.TensorQueue (see tensor_queue.h). The op that takes it,
// foo::for_each_add_, is a custom op of the YAML (custom_ops/for_each_add_.cpp).
#include "tensor_queue.h"

#include <c10/util/Exception.h>

#include <utility>

namespace foo {

TensorQueue::TensorQueue(at::Tensor init_tensor) : init_tensor_(std::move(init_tensor)) {
  TORCH_CHECK(init_tensor_.defined(), "TensorQueue: the init tensor must be a defined tensor");
}

TensorQueue::TensorQueue(PickledState state) : TensorQueue(std::move(std::get<0>(state))) {
  for (at::Tensor& tensor : std::get<1>(state)) {
    queue_.push_back(std::move(tensor));
  }
}

void TensorQueue::push(at::Tensor tensor) {
  TORCH_CHECK(tensor.defined(), "TensorQueue.push: the tensor must be a defined tensor");
  const std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(tensor));
}

at::Tensor TensorQueue::pop() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (queue_.empty()) {
    return init_tensor_;
  }
  at::Tensor front = std::move(queue_.front());
  queue_.pop_front();
  return front;
}

int64_t TensorQueue::size() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(queue_.size());
}

std::vector<at::Tensor> TensorQueue::get_raw_queue() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return {queue_.begin(), queue_.end()};
}

void TensorQueue::for_each_add_(const at::Tensor& inc) {
  TORCH_CHECK(inc.defined(), "foo::for_each_add_: inc must be a defined tensor");
  const std::lock_guard<std::mutex> lock(mutex_);
  for (size_t index = 0; index < queue_.size(); ++index) {
    at::Tensor& tensor = queue_[index];
    // A 0-dim CPU tensor is a scalar to every device's add_; anything else
    // must be where the queued tensor is. Checked here so the message names
    // this op and the queue position, not an add_ deep inside.
    TORCH_CHECK(
        tensor.device() == inc.device() || (inc.dim() == 0 && inc.is_cpu()),
        "foo::for_each_add_: queued tensor ", index, " is on ", tensor.device(),
        " but inc is on ", inc.device());
    tensor.add_(inc);
  }
}

TensorQueue::FlatState TensorQueue::obj_flatten() const {
  // The init tensor is cloned, as in PyTorch's guide: the fake object made
  // from this state must not alias the real object's tensors. The queued
  // tensors are the real ones (the tracer fakifies each).
  return FlatState(
      std::tuple<std::string, std::vector<at::Tensor>>("queue", get_raw_queue()),
      std::tuple<std::string, at::Tensor>("init_tensor_", init_tensor_.clone()));
}

TensorQueue::PickledState TensorQueue::pickled_state() const {
  return PickledState(init_tensor_, get_raw_queue());
}

} // namespace foo
