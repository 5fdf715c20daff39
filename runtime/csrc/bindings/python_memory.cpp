// The `_C` functions behind torch.<device>.memory's history and snapshots
// (python/torch_<device>/memory.py), and the profiler's testing hooks:
// plain Python C API, like python_module.cpp, which adds them to the module.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "allocator.h"
#include "device.h"
#include "memory_history.h"
#include "profiler.h"
#include "python_memory.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// A new reference that PyDict_SetItemString does not steal: set, then drop.
bool set_item(PyObject* dict, const char* key, PyObject* value) {
  if (value == nullptr) {
    return false;
  }
  const int status = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return status == 0;
}

PyObject* py_uint(uint64_t value) {
  return PyLong_FromUnsignedLongLong(value);
}

// Owns the Python objects a snapshot is built from; the frames of one
// stack are one list, shared by every block and trace entry it belongs to.
class SnapshotBuilder {
 public:
  ~SnapshotBuilder() {
    for (auto& [index, list] : frame_lists_) {
      Py_XDECREF(list);
    }
  }

  StackSymbolizer& symbolizer() {
    return symbolizer_;
  }

  // A new reference to the frames of stack `index` ([] for -1).
  PyObject* frames(int64_t index) {
    auto [it, inserted] = frame_lists_.try_emplace(index, nullptr);
    if (inserted) {
      it->second = build_frames(symbolizer_.frames(index));
    }
    Py_XINCREF(it->second);
    return it->second;
  }

  // The c10 stream id of a driver stream of `device`.
  int64_t stream_id(c10::DeviceIndex device, drvStream_t stream) {
    if (stream == nullptr) {
      return 0;
    }
    auto [it, inserted] = stream_ids_.try_emplace({device, stream}, 0);
    if (inserted) {
      it->second = stream_id_of(device, stream);
    }
    return it->second;
  }

 private:
  static PyObject* build_frames(const std::vector<Frame>& frames) {
    PyObject* list = PyList_New(static_cast<Py_ssize_t>(frames.size()));
    if (list == nullptr) {
      return nullptr;
    }
    for (size_t i = 0; i < frames.size(); ++i) {
      PyObject* frame = Py_BuildValue(
          "{s:s,s:K,s:s}",
          "filename", frames[i].filename.c_str(),
          "line", static_cast<unsigned long long>(frames[i].line),
          "name", frames[i].name.c_str());
      if (frame == nullptr) {
        Py_DECREF(list);
        return nullptr;
      }
      PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), frame);
    }
    return list;
  }

  StackSymbolizer symbolizer_;
  std::map<int64_t, PyObject*> frame_lists_;
  std::map<std::pair<c10::DeviceIndex, drvStream_t>, int64_t> stream_ids_;
};

const char* state_name(BlockState state) {
  switch (state) {
    case BlockState::ActiveAllocated: return "active_allocated";
    case BlockState::ActiveAwaitingFree: return "active_pending_free";
    case BlockState::Inactive: return "inactive";
  }
  return "inactive";
}

const char* action_name(TraceAction action) {
  switch (action) {
    case TraceAction::Alloc: return "alloc";
    case TraceAction::FreeRequested: return "free_requested";
    case TraceAction::FreeCompleted: return "free_completed";
    case TraceAction::SegmentAlloc: return "segment_alloc";
    case TraceAction::SegmentFree: return "segment_free";
    case TraceAction::Oom: return "oom";
    case TraceAction::Snapshot: return "snapshot";
  }
  return "alloc";
}

PyObject* build_block(SnapshotBuilder& builder, const BlockSnapshot& block, int64_t stack) {
  PyObject* dict = PyDict_New();
  if (dict == nullptr) {
    return nullptr;
  }
  const bool ok = set_item(dict, "address", py_uint(block.address)) && set_item(dict, "size", py_uint(block.size)) &&
      set_item(dict, "requested_size", py_uint(block.requested_size)) &&
      set_item(dict, "state", PyUnicode_FromString(state_name(block.state))) &&
      set_item(dict, "frames", builder.frames(stack));
  if (!ok) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict;
}

PyObject* build_segment(
    SnapshotBuilder& builder,
    const SegmentSnapshot& segment,
    int64_t stack,
    const std::vector<int64_t>& block_stacks) {
  uint64_t allocated = 0;
  uint64_t active = 0;
  uint64_t requested = 0;
  PyObject* blocks = PyList_New(static_cast<Py_ssize_t>(segment.blocks.size()));
  if (blocks == nullptr) {
    return nullptr;
  }
  for (size_t i = 0; i < segment.blocks.size(); ++i) {
    const BlockSnapshot& block = segment.blocks[i];
    if (block.state == BlockState::ActiveAllocated) {
      allocated += block.size;
      requested += block.requested_size;
    }
    if (block.state != BlockState::Inactive) {
      active += block.size;
    }
    PyObject* b = build_block(builder, block, block_stacks[i]);
    if (b == nullptr) {
      Py_DECREF(blocks);
      return nullptr;
    }
    PyList_SET_ITEM(blocks, static_cast<Py_ssize_t>(i), b);
  }
  PyObject* dict = PyDict_New();
  if (dict == nullptr) {
    Py_DECREF(blocks);
    return nullptr;
  }
  const bool ok = set_item(dict, "blocks", blocks) && // our reference goes with it
      set_item(dict, "device", PyLong_FromLong(segment.device)) &&
      set_item(dict, "address", py_uint(segment.address)) && set_item(dict, "total_size", py_uint(segment.total_size)) &&
      set_item(dict, "allocated_size", py_uint(allocated)) && set_item(dict, "active_size", py_uint(active)) &&
      set_item(dict, "requested_size", py_uint(requested)) &&
      set_item(dict, "stream", PyLong_FromLongLong(builder.stream_id(segment.device, segment.stream))) &&
      set_item(dict, "segment_type", PyUnicode_FromString(segment.small ? "small" : "large")) &&
      set_item(dict, "segment_pool_id", Py_BuildValue("(KK)", segment.pool.first, segment.pool.second)) &&
      set_item(dict, "is_expandable", PyBool_FromLong(0)) && set_item(dict, "frames", builder.frames(stack));
  if (!ok) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict;
}

PyObject* build_trace_entry(SnapshotBuilder& builder, c10::DeviceIndex device, const TraceEntry& entry, int64_t stack) {
  PyObject* dict = PyDict_New();
  if (dict == nullptr) {
    return nullptr;
  }
  bool ok = set_item(dict, "action", PyUnicode_FromString(action_name(entry.action))) &&
      set_item(dict, "addr", py_uint(entry.address)) && set_item(dict, "size", py_uint(entry.size)) &&
      set_item(dict, "stream", PyLong_FromLongLong(builder.stream_id(device, entry.stream))) &&
      set_item(dict, "time_us", PyLong_FromLongLong(entry.time_us)) &&
      set_item(dict, "frames", builder.frames(stack)) && set_item(dict, "compile_context", PyUnicode_FromString("")) &&
      set_item(dict, "user_metadata", PyUnicode_FromString(""));
  if (ok && entry.action == TraceAction::Oom) {
    ok = set_item(dict, "device_free", py_uint(entry.device_free));
  }
  if (!ok) {
    Py_DECREF(dict);
    return nullptr;
  }
  return dict;
}

// _memory_snapshot(mark=True) -> {"segments": [...], "device_traces": [[...], ...]};
// `mark` records the snapshot in the history, as CUDA's does.
PyObject* build_snapshot(bool mark) {
  const c10::DeviceIndex devices = device_count();
  std::vector<SegmentSnapshot> segments;
  std::vector<std::vector<TraceEntry>> traces;
  for (c10::DeviceIndex device = 0; device < devices; ++device) {
    std::vector<SegmentSnapshot> of_device = memory_snapshot(device, mark);
    segments.insert(segments.end(), std::make_move_iterator(of_device.begin()), std::make_move_iterator(of_device.end()));
    traces.push_back(trace_of(device));
  }
  // Symbolize every stack at once: the frames many stacks share are resolved once.
  SnapshotBuilder builder;
  std::vector<int64_t> segment_stacks;
  std::vector<std::vector<int64_t>> block_stacks;
  std::vector<std::vector<int64_t>> entry_stacks;
  for (const SegmentSnapshot& segment : segments) {
    segment_stacks.push_back(builder.symbolizer().add(segment.stack));
    std::vector<int64_t>& stacks = block_stacks.emplace_back();
    for (const BlockSnapshot& block : segment.blocks) {
      stacks.push_back(builder.symbolizer().add(block.stack));
    }
  }
  for (const auto& trace : traces) {
    std::vector<int64_t>& stacks = entry_stacks.emplace_back();
    for (const TraceEntry& entry : trace) {
      stacks.push_back(builder.symbolizer().add(entry.stack));
    }
  }
  builder.symbolizer().symbolize();

  PyObject* segment_list = PyList_New(static_cast<Py_ssize_t>(segments.size()));
  PyObject* trace_lists = PyList_New(static_cast<Py_ssize_t>(traces.size()));
  PyObject* snapshot = PyDict_New();
  auto fail = [&]() -> PyObject* {
    Py_XDECREF(segment_list);
    Py_XDECREF(trace_lists);
    Py_XDECREF(snapshot);
    return nullptr;
  };
  if (segment_list == nullptr || trace_lists == nullptr || snapshot == nullptr) {
    return fail();
  }
  for (size_t i = 0; i < segments.size(); ++i) {
    PyObject* segment = build_segment(builder, segments[i], segment_stacks[i], block_stacks[i]);
    if (segment == nullptr) {
      return fail();
    }
    PyList_SET_ITEM(segment_list, static_cast<Py_ssize_t>(i), segment);
  }
  for (size_t d = 0; d < traces.size(); ++d) {
    PyObject* entries = PyList_New(static_cast<Py_ssize_t>(traces[d].size()));
    if (entries == nullptr) {
      return fail();
    }
    PyList_SET_ITEM(trace_lists, static_cast<Py_ssize_t>(d), entries);
    for (size_t i = 0; i < traces[d].size(); ++i) {
      PyObject* entry = build_trace_entry(builder, static_cast<c10::DeviceIndex>(d), traces[d][i], entry_stacks[d][i]);
      if (entry == nullptr) {
        return fail();
      }
      PyList_SET_ITEM(entries, static_cast<Py_ssize_t>(i), entry);
    }
  }
  PyObject* segments_ref = segment_list;
  PyObject* traces_ref = trace_lists;
  segment_list = nullptr; // set_item steals them
  trace_lists = nullptr;
  const bool segments_set = set_item(snapshot, "segments", segments_ref);
  const bool traces_set = set_item(snapshot, "device_traces", traces_ref);
  if (!segments_set || !traces_set) {
    return fail();
  }
  return snapshot;
}

// Runs `body`, turning a C++ exception into a RuntimeError.
template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body();
  } catch (const c10::Error& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what_without_backtrace());
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// _record_memory_history(record_state, record_trace, stacks_for_state,
//     stacks_for_allocs, stacks_for_frees, cpp_frames, max_entries, clear):
// memory.py turns CUDA's arguments into these.
PyObject* py_record_memory_history(PyObject*, PyObject* args) {
  int record_state = 0;
  int record_trace = 0;
  int stacks_for_state = 0;
  int stacks_for_allocs = 0;
  int stacks_for_frees = 0;
  int cpp_frames = 0;
  unsigned long long max_entries = 0;
  int clear = 0;
  if (!PyArg_ParseTuple(
          args, "ppppppKp", &record_state, &record_trace, &stacks_for_state, &stacks_for_allocs, &stacks_for_frees,
          &cpp_frames, &max_entries, &clear)) {
    return nullptr;
  }
  return guarded([&] {
    MemoryHistorySettings settings;
    settings.record_state = record_state != 0;
    settings.record_trace = record_trace != 0;
    settings.stacks_for_state = stacks_for_state != 0;
    settings.stacks_for_allocs = stacks_for_allocs != 0;
    settings.stacks_for_frees = stacks_for_frees != 0;
    settings.cpp_frames = cpp_frames != 0;
    settings.max_entries = static_cast<size_t>(max_entries);
    set_memory_history(settings, clear != 0);
    Py_RETURN_NONE;
  });
}

PyObject* py_memory_snapshot(PyObject*, PyObject* args) {
  int mark = 1;
  if (!PyArg_ParseTuple(args, "|p", &mark)) {
    return nullptr;
  }
  return guarded([&] { return build_snapshot(mark != 0); });
}

PyObject* py_device_activity_supported(PyObject*, PyObject*) {
  return guarded([] { return PyBool_FromLong(device_activity_supported()); });
}

// _device_busy_time_for_testing(device) -> ns, or None where the driver cannot tell.
PyObject* py_device_busy_time_for_testing(PyObject*, PyObject* args) {
  int device = 0;
  if (!PyArg_ParseTuple(args, "i", &device)) {
    return nullptr;
  }
  return guarded([&]() -> PyObject* {
    uint64_t ns = 0;
    const drvError_t status = drvTestingDeviceBusyTime(device, &ns);
    if (status == drvErrorNotSupported) {
      Py_RETURN_NONE;
    }
    SCAFFOLD_DRIVER_CHECK(status);
    return py_uint(ns);
  });
}

PyMethodDef methods[] = {
    {"_record_memory_history", py_record_memory_history, METH_VARARGS,
     "_record_memory_history(record_state, record_trace, stacks_for_state, stacks_for_allocs, stacks_for_frees, "
     "cpp_frames, max_entries, clear)"},
    {"_memory_snapshot", py_memory_snapshot, METH_VARARGS,
     "_memory_snapshot(mark=True): the allocator's segments, blocks and traces, as "
     "torch.cuda.memory._snapshot() gives them; mark: a 'snapshot' entry in the history."},
    {"_device_activity_supported", py_device_activity_supported, METH_NOARGS,
     "True when the driver times device work for the profiler."},
    {"_device_busy_time_for_testing", py_device_busy_time_for_testing, METH_VARARGS,
     "_device_busy_time_for_testing(device) -> ns the device's streams ran work while a profile recorded, or None."},
    {nullptr, nullptr, 0, nullptr},
};

} // namespace

PyMethodDef* memory_methods() {
  return methods;
}

} // namespace scaffold::runtime
