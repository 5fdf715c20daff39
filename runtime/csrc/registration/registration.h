// Registration of the runtime with PyTorch (guard, device allocator, host
// allocator, hooks), done by a static initializer in registration.cpp when
// the shared object is loaded -- kept apart from the components' logic.
#pragma once

#include <optional>
#include <string>

namespace scaffold::runtime {

// PyTorch supports one PrivateUse1 backend per process. When another backend
// had already registered itself when this library was loaded, this runtime
// registered nothing (so the other backend keeps working) and this returns
// the reason; the Python module refuses to import with it.
std::optional<std::string> registration_conflict();

} // namespace scaffold::runtime
