"""The backend YAML as the model holds it: a `BackendConfig` of frozen dataclasses (torchgen's
gen_backend_stubs keys plus scaffold-backend's own sections: fallback policy, custom ops, custom
classes, autocast additions). parse/backend_yaml.py reads it."""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from torchgen.model import CustomClassType, FunctionSchema

from ..errors import SourceLocation
from .project import DEFAULT_DRIVER

FLATTEN_MEMBER = "obj_flatten"
"""The C++ member a custom class's __obj_flatten__ is bound to: identifiers with '__' are
reserved in C++."""
METHOD_PARSE_NAME = "custom_class_method"
"""torchgen parses a schema by its operator name; a custom class method's name is checked by our
own rules (a trailing '_' would make torchgen demand a mutable `self`), so its schema is parsed,
and kept, under this placeholder name."""



class FallbackDefault(enum.Enum):
    """What happens to a required op the backend does not implement."""

    CPU = "cpu"
    """Run it on the CPU through the boxed fallback (copies in and out)."""
    ERROR = "error"
    """Raise NotImplementedError naming the op and the backend."""


class FallbackMode(enum.Enum):
    """How the CPU fallback hands device tensors to the CPU kernel."""

    COPY = "copy"
    """Copy every tensor argument to the host and the results back (ATen's cpu_fallback)."""
    HOST_VIEW = "host_view"
    """Run the CPU kernel on host views of device memory, without copies, when the runtime says
    the device memory is host-addressable (else copy)."""


@dataclass(frozen=True)
class OpEntry:
    """An operator named in the backend YAML, with the line that names it."""

    op_name: str
    location: SourceLocation = field(compare=False)


class AutocastPolicy(enum.Enum):
    """How torch.autocast treats an op's floating-point tensor arguments: ATen's CastPolicy
    values, under the names PyTorch's lists (ATen/autocast_mode.h) use."""

    LOWER_PRECISION_FP = "lower_precision_fp"
    """Cast to the autocast dtype (bfloat16, float16) and run there."""
    FP32 = "fp32"
    """Cast to float32 and run there."""
    PROMOTE = "promote"
    """Cast to the widest floating type among the arguments."""


@dataclass(frozen=True)
class AutocastEntry:
    """An op the YAML's `autocast:` section adds to one of the autocast lists."""

    op: OpEntry
    policy: AutocastPolicy


@dataclass(frozen=True)
class FallbackPolicy:
    default: FallbackDefault = FallbackDefault.CPU
    mode: FallbackMode = FallbackMode.COPY
    """Copy, or run on host views of device memory (a runtime that is host-addressable)."""
    warn_once: bool = True
    """Warn the first time each op falls back, so silent slow paths get noticed."""
    never: tuple[OpEntry, ...] = ()
    """Ops that must never run on the CPU: the fallback raises an error naming op and backend."""
    explicit: tuple[OpEntry, ...] = ()
    """Ops that get a typed per-op CPU fallback wrapper (allowed even when default is error)."""


@dataclass(frozen=True)
class CustomOp:
    """One entry of the YAML's `custom_ops`: an operator the backend defines itself, in the
    namespace named after its device (`foo::mymuladd`). The schema is torchgen's, parsed from the
    YAML text, so `str(schema)` is the canonical form TORCH_LIBRARY receives."""

    namespace: str
    schema: FunctionSchema
    autograd: bool
    """Register a Python autograd formula (torch.library.register_autograd) from the user's file."""
    cpu: bool
    """Also register a CPU kernel, so the op runs on host tensors (and opcheck can compare)."""
    location: SourceLocation = field(compare=False)

    @property
    def op_name(self) -> str:
        """`name` or `name.overload`, as torch.library and m.impl() spell it inside the namespace."""
        return str(self.schema.name)

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}::{self.op_name}"

    @property
    def group(self) -> str:
        """The user's files for the op: its base name, shared by its overloads."""
        return str(self.schema.name.name)

    @property
    def takes_class(self) -> bool:
        """The op takes one of the backend's custom classes (`__torch__.torch.classes.<ns>.<C>`)."""
        return any(isinstance(argument.type, CustomClassType) for argument in self.schema.arguments.flat_all)


@dataclass(frozen=True)
class DeviceGuardType:
    """The runtime's own device guard for the generated wrappers (`device_guard: {type, header}`),
    as torchgen's CUDA wrappers use c10::cuda::OptionalCUDAGuard rather than c10's device-generic
    guard, which reaches the runtime through virtual calls. Constructed from a c10::Device (a
    factory's device) or a std::optional<c10::Device> (the first tensor's, none when undefined);
    a device of another type must leave the current device alone."""

    cpp_type: str
    """Qualified C++ name, e.g. my_backend::DeviceGuard."""
    header: str
    """Its include target, written <...> or "..." as extra_headers are."""


@dataclass(frozen=True)
class BackendConfig:
    """A parsed backend YAML: torchgen's gen_backend_stubs keys plus scaffold-backend's own."""

    location: SourceLocation
    sha256: str
    backend: str
    """The dispatch key kernels register to, e.g. PrivateUse1."""
    autograd_key: str | None
    """Autograd<backend>, when PyTorch has such a key."""
    cpp_namespace: str
    class_name: str | None
    device: str
    """The device name users type in Python (`torch.device("foo")`)."""
    supported: tuple[OpEntry, ...]
    autograd: tuple[OpEntry, ...]
    symint: tuple[OpEntry, ...]
    use_out_as_primary: bool
    device_guard: bool
    extra_headers: tuple[str, ...]
    fallback: FallbackPolicy
    shards: int
    custom_classes: tuple[CustomClass, ...] = ()
    """The `custom_classes:` section."""
    custom_ops: tuple[CustomOp, ...] = ()
    """Operators the backend defines in its own namespace (the `custom_ops` section)."""
    autocast: tuple[AutocastEntry, ...] = ()
    """Ops added to PyTorch's autocast lists for the device (the `autocast:` section), in the
    YAML's order."""
    device_guard_type: DeviceGuardType | None = None
    """The guard the wrappers use when `device_guard` names one; None: c10's."""
    driver: str = DEFAULT_DRIVER
    """The `driver:` key: which of the drivers every project has it builds with
    (model/project.py's DRIVER_DIRECTORIES)."""

    @property
    def device_guard_headers(self) -> tuple[str, ...]:
        """What a file of wrappers includes for the runtime's own guard: its header, if any."""
        return (self.device_guard_type.header,) if self.device_guard_type is not None else ()

    @property
    def display_path(self) -> str:
        return self.location.path


@dataclass(frozen=True)
class ClassMethod:
    """One entry of a class's `methods:` list, e.g. `push(Tensor tensor) -> ()`."""

    name: str
    schema: FunctionSchema
    """The entry parsed by torchgen, under a placeholder operator name."""
    location: SourceLocation

    def __str__(self) -> str:
        return f"{self.name}{str(self.schema)[len(METHOD_PARSE_NAME):]}"


@dataclass(frozen=True)
class CustomClass:
    """One class of the `custom_classes:` section."""

    name: str
    """The class name in C++ and in `torch.classes.<device>.<name>`."""
    init: FunctionSchema
    """The constructor's arguments (returning nothing), under the placeholder name."""
    methods: tuple[ClassMethod, ...]
    location: SourceLocation

    @property
    def init_text(self) -> str:
        """The `init:` value in canonical form, e.g. `(Tensor init_tensor)`."""
        return str(self.init)[len(METHOD_PARSE_NAME):].removesuffix(" -> ()")

    @property
    def file_stem(self) -> str:
        """The stem of the class's files: TensorQueue -> tensor_queue."""
        return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", self.name).lower()
