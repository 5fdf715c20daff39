// The `_C` functions of torch.<device>.memory's history and snapshots and
// of the profiler's testing hooks (python_memory.cpp); python_module.cpp
// adds them to the module. Include Python.h before this header.
#pragma once

namespace scaffold::runtime {

PyMethodDef* memory_methods();

} // namespace scaffold::runtime
