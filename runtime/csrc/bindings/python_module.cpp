// The Python extension module `_C`: the runtime's controls (device
// selection, seeding, memory statistics and limits) as plain functions.
//
// Written against the Python C API alone -- no pybind11, no
// libtorch_python -- so this TU compiles in about a second and the module
// links only against libtorch/libc10. Importing it also loads everything
// linked into the same shared object: the runtime's registrations and the
// backend's kernels. The friendly Python API (torch.<backend>.*) is built on
// top of these functions in the package's _device.py.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/core/Generator.h>
#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#include "allocator.h"
#include "blocking_wait.h"
#include "device.h"
#include "device_graph.h"
#include "generator.h"
#include "model_runner.h"
#include "python_memory.h"
#include "registration.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {
namespace {

// ---- C++ exceptions -> Python exceptions -----------------------------------

void set_python_error(PyObject* fallback_type, const char* message) {
  PyErr_SetString(fallback_type, message);
}

// torch.OutOfMemoryError lives in torch._C (libtorch_python). We do not link
// against that, but torch is always imported before us, so look it up.
void set_out_of_memory_error(const char* message) {
  PyObject* torch = PyImport_ImportModule("torch");
  PyObject* type = torch ? PyObject_GetAttrString(torch, "OutOfMemoryError") : nullptr;
  Py_XDECREF(torch);
  PyErr_Clear();
  if (type != nullptr && PyExceptionClass_Check(type)) {
    PyErr_SetString(type, message);
  } else {
    PyErr_SetString(PyExc_MemoryError, message);
  }
  Py_XDECREF(type);
}

// Runs `body` and converts any C++ exception into a Python exception,
// returning nullptr in that case (the C API's error convention).
template <typename Body>
PyObject* guarded(Body&& body) {
  try {
    return body();
  } catch (const c10::OutOfMemoryError& e) {
    set_out_of_memory_error(e.what_without_backtrace());
  } catch (const c10::IndexError& e) {
    set_python_error(PyExc_IndexError, e.what_without_backtrace());
  } catch (const c10::ValueError& e) {
    set_python_error(PyExc_ValueError, e.what_without_backtrace());
  } catch (const c10::TypeError& e) {
    set_python_error(PyExc_TypeError, e.what_without_backtrace());
  } catch (const c10::NotImplementedError& e) {
    set_python_error(PyExc_NotImplementedError, e.what_without_backtrace());
  } catch (const c10::Error& e) {
    set_python_error(PyExc_RuntimeError, e.what_without_backtrace());
  } catch (const std::exception& e) {
    set_python_error(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

// ---- Argument helpers ------------------------------------------------------

// Python passes a plain int; -1 means "current device".
c10::DeviceIndex device_arg(Py_ssize_t index) {
  TORCH_CHECK_INDEX(
      index >= -1 && index < kMaxDevices,
      "invalid ",
      c10::get_privateuse1_backend(),
      " device index ",
      index,
      " (device count: ",
      static_cast<int>(device_count()),
      ")");
  return resolve_device_index(static_cast<c10::DeviceIndex>(index));
}

bool parse_device(PyObject* args, c10::DeviceIndex* device) {
  Py_ssize_t index = -1;
  if (!PyArg_ParseTuple(args, "|n", &index)) {
    return false;
  }
  PyObject* ok = guarded([&]() -> PyObject* {
    *device = device_arg(index);
    Py_RETURN_NONE;
  });
  Py_XDECREF(ok);
  return ok != nullptr;
}

// Runs `body(device)` for the optional device-index argument of a module
// function (-1 or absent: the current device), with C++ errors translated.
template <typename Body>
PyObject* with_device(PyObject* args, Body&& body) {
  c10::DeviceIndex device = 0;
  if (!parse_device(args, &device)) {
    return nullptr;
  }
  return guarded([&] { return body(device); });
}

PyObject* to_py(uint64_t value) {
  return PyLong_FromUnsignedLongLong(value);
}

// ---- Devices ---------------------------------------------------------------

PyObject* py_device_count(PyObject*, PyObject*) {
  return guarded([] { return PyLong_FromLong(device_count()); });
}

PyObject* py_current_device(PyObject*, PyObject*) {
  return guarded([] { return PyLong_FromLong(current_device()); });
}

PyObject* py_set_device(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) {
    set_device(device);
    Py_RETURN_NONE;
  });
}

PyObject* py_synchronize(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) {
    {
      // Without the GIL while waiting: launched work may need it (dropping
      // the last reference to a tensor Python gave up).
      PyThreadState* saved = PyEval_SaveThread();
      try {
        synchronize_device(device);
      } catch (...) {
        PyEval_RestoreThread(saved);
        throw;
      }
      PyEval_RestoreThread(saved);
    }
    Py_RETURN_NONE;
  });
}

// ---- Streams ------------------------------------------------------------------

// _pause_stream_for_testing(device, stream_id, paused): see
// drvTestingPauseStream. Streams are torch.Stream objects on the Python side;
// this takes their (device_index, stream_id).
PyObject* py_pause_stream_for_testing(PyObject*, PyObject* args) {
  int device = 0;
  long long id = 0;
  int paused = 0;
  if (!PyArg_ParseTuple(args, "iLp", &device, &id, &paused)) {
    return nullptr;
  }
  return guarded([&] {
    const auto index = static_cast<c10::DeviceIndex>(device);
    check_device_index(index);
    pause_stream_for_testing(
        c10::Stream(c10::Stream::UNSAFE, make_device(index), static_cast<c10::StreamId>(id)),
        paused != 0);
    Py_RETURN_NONE;
  });
}

PyObject* py_launch_blocking(PyObject*, PyObject*) {
  return guarded([] {
    int blocking = 0;
    SCAFFOLD_DRIVER_CHECK(drvGetLaunchBlocking(&blocking));
    return PyBool_FromLong(blocking);
  });
}

// get_device_properties(index) -> (name, total_memory, major, minor, multiprocessors)
PyObject* py_get_device_properties(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) -> PyObject* {
    drvDeviceProperties props{};
    SCAFFOLD_DRIVER_CHECK(drvGetDeviceProperties(&props, device));
    return Py_BuildValue(
        "(sKiii)",
        props.name,
        static_cast<unsigned long long>(props.total_memory),
        props.capability_major,
        props.capability_minor,
        props.multiprocessor_count);
  });
}

// ---- Random number generation ----------------------------------------------

PyObject* py_manual_seed(PyObject*, PyObject* args) {
  Py_ssize_t index = -1;
  unsigned long long seed = 0;
  // "K": any int, wrapped modulo 2**64 like a C++ uint64_t cast (so
  // negative seeds behave as on CPU).
  if (!PyArg_ParseTuple(args, "nK", &index, &seed)) {
    return nullptr;
  }
  return guarded([&] {
    at::Generator& gen = default_generator(device_arg(index));
    std::lock_guard<std::mutex> lock(gen.mutex());
    gen.set_current_seed(seed);
    Py_RETURN_NONE;
  });
}

PyObject* py_seed(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) {
    at::Generator& gen = default_generator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    return to_py(gen.seed());
  });
}

PyObject* py_initial_seed(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) {
    at::Generator& gen = default_generator(device);
    std::lock_guard<std::mutex> lock(gen.mutex());
    return to_py(gen.current_seed());
  });
}

PyObject* py_get_rng_state(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) {
    std::vector<uint8_t> state = get_rng_state_bytes(device);
    return PyBytes_FromStringAndSize(
        reinterpret_cast<const char*>(state.data()),
        static_cast<Py_ssize_t>(state.size()));
  });
}

PyObject* py_set_rng_state(PyObject*, PyObject* args) {
  Py_ssize_t index = -1;
  Py_buffer state;
  if (!PyArg_ParseTuple(args, "ny*", &index, &state)) {
    return nullptr;
  }
  PyObject* result = guarded([&] {
    set_rng_state_bytes(
        device_arg(index),
        static_cast<const uint8_t*>(state.buf),
        static_cast<size_t>(state.len));
    Py_RETURN_NONE;
  });
  PyBuffer_Release(&state);
  return result;
}

// ---- Memory ----------------------------------------------------------------

template <uint64_t DeviceMemoryStats::*Field>
PyObject* py_stat(PyObject*, PyObject* args) {
  return with_device(
      args, [&](c10::DeviceIndex device) { return to_py(memory_stats(device).*Field); });
}

PyObject* py_memory_stats(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) -> PyObject* {
    const DeviceMemoryStats s = memory_stats(device);
    const std::pair<const char*, uint64_t> fields[] = {
        {"allocated_bytes", s.allocated_bytes},
        {"reserved_bytes", s.reserved_bytes},
        {"peak_allocated_bytes", s.peak_allocated_bytes},
        {"capacity_bytes", s.capacity_bytes},
        {"active_blocks", s.active_blocks},
        {"segments", s.segments},
        {"alloc_requests", s.alloc_requests},
        {"segment_maps", s.segment_maps},
        {"segment_unmaps", s.segment_unmaps},
        {"oom_count", s.oom_count},
        {"reserved_bytes_peak", s.reserved_bytes_peak},
        {"active_blocks_peak", s.active_blocks_peak},
        {"segments_peak", s.segments_peak},
        {"allocated_bytes_total", s.allocated_bytes_total},
        {"freed_bytes_total", s.freed_bytes_total},
        {"requested_bytes", s.requested_bytes},
        {"requested_bytes_peak", s.requested_bytes_peak},
        {"requested_bytes_total", s.requested_bytes_total},
        {"requested_freed_total", s.requested_freed_total},
        {"pending_free_blocks", s.pending_free_blocks},
    };
    PyObject* dict = PyDict_New();
    if (dict == nullptr) {
      return nullptr;
    }
    for (const auto& [name, value] : fields) {
      PyObject* v = to_py(value);
      if (v == nullptr || PyDict_SetItemString(dict, name, v) != 0) {
        Py_XDECREF(v);
        Py_DECREF(dict);
        return nullptr;
      }
      Py_DECREF(v);
    }
    return dict;
  });
}

PyObject* py_reset_peak_memory_stats(PyObject*, PyObject* args) {
  return with_device(args, [&](c10::DeviceIndex device) {
    reset_peak_memory_stats(device);
    Py_RETURN_NONE;
  });
}

PyObject* py_empty_cache(PyObject*, PyObject*) {
  return guarded([] {
    empty_cache();
    Py_RETURN_NONE;
  });
}

PyObject* py_set_memory_capacity(PyObject*, PyObject* args) {
  Py_ssize_t index = -1;
  unsigned long long bytes = 0;
  PyObject* bytes_obj = nullptr;
  if (!PyArg_ParseTuple(args, "nO", &index, &bytes_obj)) {
    return nullptr;
  }
  // Checked conversion: a negative or huge capacity is an error, not a wrap.
  bytes = PyLong_AsUnsignedLongLong(bytes_obj);
  if (PyErr_Occurred()) {
    return nullptr;
  }
  return guarded([&] {
    set_memory_capacity(device_arg(index), bytes);
    Py_RETURN_NONE;
  });
}

PyObject* py_get_memory_capacity(PyObject*, PyObject* args) {
  return with_device(
      args, [&](c10::DeviceIndex device) { return to_py(memory_capacity(device)); });
}

// ---- AOTInductor ------------------------------------------------------------

PyObject* py_register_aot_inductor_runner(PyObject*, PyObject*) {
  return guarded([] { return PyBool_FromLong(register_aot_inductor_runner() ? 1 : 0); });
}

// ---- Graphs ----------------------------------------------------------------

PyObject* py_register_graph_impl(PyObject*, PyObject*) {
  return guarded([] { return PyBool_FromLong(register_graph_impl() ? 1 : 0); });
}

PyObject* py_graph_pool_handle(PyObject*, PyObject*) {
  return guarded([] {
    const auto [first, second] = graph_pool_handle();
    return Py_BuildValue("(KK)", first, second);
  });
}

PyObject* py_is_current_stream_capturing(PyObject*, PyObject* args) {
  return with_device(
      args, [&](c10::DeviceIndex device) { return PyBool_FromLong(is_current_stream_capturing(device) ? 1 : 0); });
}

PyObject* py_pool_reserved_bytes(PyObject*, PyObject* args) {
  Py_ssize_t index = -1;
  unsigned long long first = 0;
  unsigned long long second = 0;
  if (!PyArg_ParseTuple(args, "nKK", &index, &first, &second)) {
    return nullptr;
  }
  return guarded([&] { return to_py(pool_reserved_bytes(device_arg(index), {first, second})); });
}

PyObject* py_in_bad_fork(PyObject*, PyObject*) {
  return PyBool_FromLong(in_bad_fork());
}

PyObject* py_memory_protection_enabled(PyObject*, PyObject*) {
  return guarded([] { return PyBool_FromLong(memory_protection_enabled()); });
}

PyObject* py_device_memory_is_host_addressable(PyObject*, PyObject*) {
  return guarded([] { return PyBool_FromLong(device_memory_is_host_addressable()); });
}

PyMethodDef methods[] = {
    {"device_count", py_device_count, METH_NOARGS, "Number of simulated devices."},
    {"device_memory_is_host_addressable", py_device_memory_is_host_addressable, METH_NOARGS, "The driver's answer: may host code address device memory in place?"},
    {"current_device", py_current_device, METH_NOARGS, "This thread's current device."},
    {"set_device", py_set_device, METH_VARARGS, "set_device(index)"},
    {"synchronize", py_synchronize, METH_VARARGS, "synchronize(index=-1): wait for every stream of the device."},
    {"get_device_properties", py_get_device_properties, METH_VARARGS, "get_device_properties(index=-1) -> (name, total_memory, major, minor, multiprocessors)"},
    {"launch_blocking", py_launch_blocking, METH_NOARGS, "True when SCAFFOLD_LAUNCH_BLOCKING=1 (every stream runs synchronously)."},
    {"_pause_stream_for_testing", py_pause_stream_for_testing, METH_VARARGS, "_pause_stream_for_testing(device, stream_id, paused): tests only."},
    {"manual_seed", py_manual_seed, METH_VARARGS, "manual_seed(index, seed)"},
    {"seed", py_seed, METH_VARARGS, "seed(index=-1) -> int: non-deterministic reseed."},
    {"initial_seed", py_initial_seed, METH_VARARGS, "initial_seed(index=-1) -> int"},
    {"get_rng_state", py_get_rng_state, METH_VARARGS, "get_rng_state(index=-1) -> bytes"},
    {"set_rng_state", py_set_rng_state, METH_VARARGS, "set_rng_state(index, state: bytes-like)"},
    {"memory_allocated", py_stat<&DeviceMemoryStats::allocated_bytes>, METH_VARARGS, "memory_allocated(index=-1) -> int"},
    {"memory_reserved", py_stat<&DeviceMemoryStats::reserved_bytes>, METH_VARARGS, "memory_reserved(index=-1) -> int"},
    {"max_memory_allocated", py_stat<&DeviceMemoryStats::peak_allocated_bytes>, METH_VARARGS, "max_memory_allocated(index=-1) -> int"},
    {"memory_stats", py_memory_stats, METH_VARARGS, "memory_stats(index=-1) -> dict"},
    {"reset_peak_memory_stats", py_reset_peak_memory_stats, METH_VARARGS, "reset_peak_memory_stats(index=-1)"},
    {"empty_cache", py_empty_cache, METH_NOARGS, "Release cached, unused device memory on all devices."},
    {"set_memory_capacity", py_set_memory_capacity, METH_VARARGS, "set_memory_capacity(index, bytes)"},
    {"get_memory_capacity", py_get_memory_capacity, METH_VARARGS, "get_memory_capacity(index=-1) -> int"},
    {"_register_aot_inductor_runner", py_register_aot_inductor_runner, METH_NOARGS, "Registers the device's AOTInductor model runner, which aoti_load_package finds by the device's name (after the rename)."},
    {"_register_graph_impl", py_register_graph_impl, METH_NOARGS, "Registers the device's torch.accelerator.Graph implementation (after the rename); False on a torch without one."},
    {"graph_pool_handle", py_graph_pool_handle, METH_NOARGS, "graph_pool_handle() -> (int, int): a memory pool id graphs may share."},
    {"is_current_stream_capturing", py_is_current_stream_capturing, METH_VARARGS, "is_current_stream_capturing(index=-1) -> bool"},
    {"_pool_reserved_bytes", py_pool_reserved_bytes, METH_VARARGS, "_pool_reserved_bytes(index, a, b) -> int: bytes mapped for graph pool (a, b)."},
    {"in_bad_fork", py_in_bad_fork, METH_NOARGS, "True in a child forked after device memory was used."},
    {"memory_protection_enabled", py_memory_protection_enabled, METH_NOARGS, "False when SCAFFOLD_PROTECT_MEMORY=0."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "_C",
    "Runtime of a simulated PyTorch PrivateUse1 device.",
    -1,
    methods,
    nullptr, // m_slots
    nullptr, // m_traverse
    nullptr, // m_clear
    nullptr, // m_free
};

// The runtime's blocking waits release the GIL held by an op called from
// Python (blocking_wait.h).
void* release_gil_if_held() {
  return Py_IsInitialized() != 0 && PyGILState_Check() != 0 ? PyEval_SaveThread() : nullptr;
}

void restore_gil(void* thread_state) {
  PyEval_RestoreThread(static_cast<PyThreadState*>(thread_state));
}

} // namespace
} // namespace scaffold::runtime

PyMODINIT_FUNC PyInit__C() {
  using namespace scaffold::runtime;
  if (auto conflict = registration_conflict()) {
    PyErr_SetString(PyExc_ImportError, conflict->c_str());
    return nullptr;
  }
  // Fail the import, naming the variable, if the configuration is invalid.
  PyObject* ok = guarded([] {
    if (device_count() > 0) {
      (void)memory_capacity(0); // reads SCAFFOLD_DEVICE_MEMORY_CAPACITY
    }
    (void)memory_protection_enabled();
    Py_RETURN_NONE;
  });
  if (ok == nullptr) {
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyErr_SetObject(PyExc_ImportError, value);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return nullptr;
  }
  Py_DECREF(ok);
  set_blocking_wait_hooks({&release_gil_if_held, &restore_gil});
  PyObject* module = PyModule_Create(&module_def);
  if (module != nullptr && PyModule_AddFunctions(module, memory_methods()) != 0) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
