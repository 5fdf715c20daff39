"""The YAML's `autocast:` section against PyTorch's own autocast lists.

The runtime registers PyTorch's lists for the device (csrc/ops/autocast.cpp: ATen's
AT_FORALL_LOWER_PRECISION_FP, AT_FORALL_FP32, ... for AutocastPrivateUse1); the section adds ops
to them, and the generator registers those (RegisterAutocastPrivateUse1.cpp). An op already on
PyTorch's lists would be registered twice for one dispatch key, the winner depending on the order
in which the library's files are loaded, so it is refused before anything is built.
"""

from __future__ import annotations

from torchgen.model import SchemaKind

from ..model.declarations import Declaration

# Every aten op torch 2.11-2.14 casts for AutocastCUDA, whose lists are the PrivateUse1 lists
# plus a few CUDA-only ops (cudnn, _cudnn_rnn, the banned binary_cross_entropy): computed with
# torch._C._dispatch_has_kernel_for_dispatch_key(op, "AutocastCUDA") over
# torch._C._dispatch_get_all_op_names(). A superset of what csrc/ops/autocast.cpp registers for any
# supported torch; tests/backend/test_autocast.py checks that it still covers the installed one.
PYTORCH_AUTOCAST_OPS = frozenset(
    [
        "_convolution", "_convolution.deprecated", "_cudnn_rnn",
        "_scaled_dot_product_flash_attention", "_thnn_fused_gru_cell", "_thnn_fused_lstm_cell",
        "_upsample_bicubic2d_aa", "_upsample_bilinear2d_aa", "_upsample_nearest_exact1d",
        "_upsample_nearest_exact2d", "_upsample_nearest_exact3d", "acos", "addbmm", "addcdiv",
        "addcmul", "addmm", "addmv", "addr", "asin", "atan2", "baddbmm", "bilinear",
        "binary_cross_entropy", "binary_cross_entropy_with_logits", "bmm", "cdist", "chain_matmul",
        "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d.input",
        "conv_transpose3d.input", "convolution", "cosh", "cosine_embedding_loss",
        "cosine_similarity", "cross", "cudnn_convolution", "cudnn_convolution_transpose", "cumprod",
        "cumprod.dimname", "cumsum", "cumsum.dimname", "dist", "dot", "einsum", "erfinv", "exp",
        "expm1", "frobenius_norm.dim", "grid_sampler", "group_norm", "gru_cell",
        "hinge_embedding_loss", "huber_loss", "index_put", "kl_div", "l1_loss", "layer_norm",
        "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "linalg_matrix_sqrth",
        "linalg_multi_dot", "linalg_vecdot", "linalg_vector_norm", "linear", "log", "log10",
        "log1p", "log2", "log_softmax.Dimname", "log_softmax.int", "logsumexp", "lstm_cell",
        "margin_ranking_loss", "matmul", "mm", "mse_loss", "multi_margin_loss",
        "multilabel_margin_loss", "mv", "native_layer_norm", "nll_loss", "nll_loss2d",
        "norm.Scalar", "norm.ScalarOpt_dim", "norm.names_ScalarOpt_dim", "nuclear_norm",
        "nuclear_norm.dim", "pdist", "poisson_nll_loss", "pow.Scalar", "pow.Tensor_Scalar",
        "pow.Tensor_Tensor", "prelu", "prod", "prod.dim_Dimname", "prod.dim_int", "reciprocal",
        "renorm", "rms_norm", "rnn_relu_cell", "rnn_tanh_cell", "rsqrt",
        "scaled_dot_product_attention", "scatter_add", "sinh", "smooth_l1_loss", "soft_margin_loss",
        "softmax.Dimname", "softmax.int", "softplus", "sum", "sum.dim_DimnameList",
        "sum.dim_IntList", "tan", "tensordot", "triplet_margin_loss", "upsample_bicubic2d",
        "upsample_bilinear2d", "upsample_linear1d", "upsample_nearest1d", "upsample_nearest2d",
        "upsample_nearest3d", "upsample_trilinear3d", "vdot",
    ]
)


def autocast_problem(declaration: Declaration) -> tuple[str, str] | None:
    """Why an op cannot join an autocast list (message, hint), or None."""
    schema = declaration.require_schema()
    name = declaration.op_name
    if name in PYTORCH_AUTOCAST_OPS:
        return (
            f"'{name}' is on PyTorch's autocast lists already",
            "the 'autocast' section adds ops PyTorch does not cast; to change how PyTorch's "
            "own lists treat an op, edit the runtime's csrc/ops/autocast.cpp",
        )
    if schema.kind() is not SchemaKind.functional:
        return (
            f"'{name}' is an {schema.kind().name} op; autocast casts the arguments of functional ops",
            "list the functional variant (e.g. gelu rather than gelu.out or gelu_)",
        )
    if not any(argument.type.is_tensor_like() for argument in schema.arguments.flat_all):
        return (f"'{name}' takes no tensor, so autocast has nothing to cast", "remove it")
    return None
