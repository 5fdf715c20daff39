"""The architectures the harness runs: real model code from torchvision, timm and Hugging Face
transformers, built from their constructors and configs with random weights (nothing is ever
downloaded), shrunk to a few layers and small inputs so that a CPU can check every gradient.

Each entry builds, under a fixed seed, a model in training mode with every dropout at zero (the
device and the CPU must compute the same function), example inputs on the CPU and the training
loss the library itself would use (cross-entropy on random labels, a language model's own loss).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

BATCH = 2
# Images: a batch norm in training mode normalises over batch x height x width, and a CNN's last
# stage is 1/32 of the image: at 64 x 64 in batches of 4 it still sees 16 values per channel (a
# batch of two 32 x 32 images leaves it two, and rounding differences become differences of
# order one, in float32 under Inductor's reordering as in bfloat16).
IMAGE_BATCH = 4
IMAGE_SIZE = 64
CLASSES = 10
SEQUENCE = 16
VOCAB = 128

# What a model family is, as the report groups them.
CNN = "cnn"
VISION_TRANSFORMER = "vision-transformer"
ENCODER = "encoder"
DECODER = "decoder"
ENCODER_DECODER = "encoder-decoder"


@dataclass
class Workload:
    """One model with its inputs: ``loss(model(**inputs))`` is what training minimises and
    ``output(model(**inputs))`` the tensor whose values are compared (logits)."""

    model: nn.Module
    inputs: dict[str, Any]
    loss: Callable[[Any], torch.Tensor]
    output: Callable[[Any], torch.Tensor]


@dataclass(frozen=True)
class ModelSpec:
    name: str
    library: str  # the distribution the model code comes from: torchvision, timm, transformers
    family: str
    build: Callable[[], Workload]
    ci: bool = False  # in the CI subset (tests/backend/test_models.py)

    def available(self) -> bool:
        return importlib.util.find_spec(self.library) is not None

    def why_unavailable(self) -> str:
        """What the report says of a model whose library is not installed."""
        extra = EXTRA_OF_LIBRARY.get(self.library)
        if extra is None:
            return f"{self.library} is not installed"
        if extra == "vision":
            return (f"{self.library} is not installed (the package's 'vision' extra: torchvision releases "
                    f"are built for one torch release each, and torch {torch.__version__} may have none yet)")
        return f"{self.library} is not installed (the package's '{extra}' extra)"


# Which extra of the package installs each library (its pyproject.toml).
EXTRA_OF_LIBRARY = {"torchvision": "vision", "timm": "vision", "transformers": "models"}


def _without_dropout(model: nn.Module) -> nn.Module:
    """Dropout and stochastic depth draw random numbers, which the device and the CPU draw
    differently: both are switched off, training mode otherwise stays (batch norm included)."""
    for module in model.modules():
        if isinstance(module, nn.modules.dropout._DropoutNd):
            module.p = 0.0
        elif type(module).__name__ in ("StochasticDepth", "DropPath"):
            for attribute in ("p", "drop_prob"):
                if hasattr(module, attribute):
                    setattr(module, attribute, 0.0)
    return model.train()


def _images() -> dict[str, Any]:
    return {"x": torch.randn(IMAGE_BATCH, 3, IMAGE_SIZE, IMAGE_SIZE)}


class _CrossEntropy:
    """Cross-entropy against fixed labels, copied to a device once, as the inputs are. Copying
    them in every loss would be a synchronous host-to-device copy in the middle of each step,
    waiting for the queued forward pass, which a training loop that moves its batch before the
    forward never does."""

    def __init__(self, labels: torch.Tensor) -> None:
        self.labels = labels
        self._on_device: dict[torch.device, torch.Tensor] = {}

    def __call__(self, logits: torch.Tensor) -> torch.Tensor:
        labels = self._on_device.get(logits.device)
        if labels is None:
            labels = self._on_device[logits.device] = self.labels.to(logits.device)
        return nn.functional.cross_entropy(logits, labels)


def _classifier(model: nn.Module, inputs: dict[str, Any] | None = None) -> Workload:
    return Workload(
        model=_without_dropout(model),
        inputs=inputs or _images(),
        loss=_CrossEntropy(torch.randint(0, CLASSES, (IMAGE_BATCH,))),
        output=lambda logits: logits,
    )


# ---- torchvision -------------------------------------------------------------------------------


def _torchvision(factory: str, **kwargs: Any) -> Callable[[], Workload]:
    def build() -> Workload:
        import torchvision

        return _classifier(getattr(torchvision.models, factory)(num_classes=CLASSES, **kwargs))

    return build


def _torchvision_vit() -> Workload:
    from torchvision.models import VisionTransformer

    return _classifier(
        VisionTransformer(image_size=IMAGE_SIZE, patch_size=16, num_layers=2, num_heads=2,
                          hidden_dim=32, mlp_dim=64, num_classes=CLASSES)
    )


def _torchvision_swin() -> Workload:
    from torchvision.models import SwinTransformer

    return _classifier(
        SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 4],
                        window_size=[4, 4], num_classes=CLASSES)
    )


def _torchvision_densenet() -> Workload:
    from torchvision.models import DenseNet

    return _classifier(DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16,
                                num_classes=CLASSES))


# ---- timm --------------------------------------------------------------------------------------


def _timm(name: str, **kwargs: Any) -> Callable[[], Workload]:
    def build() -> Workload:
        import timm

        return _classifier(timm.create_model(name, pretrained=False, num_classes=CLASSES, **kwargs))

    return build


# ---- transformers ------------------------------------------------------------------------------


def _config(name: str, **fields: Any) -> Any:
    import transformers

    # Quiet about what a small random config lacks (a tokenizer's special ids, a loss type).
    transformers.logging.set_verbosity_error()
    return getattr(transformers, name)(**fields)


def _language_model(model_class: str, config: Any, labels: str = "causal") -> Workload:
    import transformers

    model = getattr(transformers, model_class)(config)
    input_ids = torch.randint(3, VOCAB, (BATCH, SEQUENCE))
    inputs: dict[str, Any] = {"input_ids": input_ids,
                              "attention_mask": torch.ones(BATCH, SEQUENCE, dtype=torch.long)}
    if labels == "causal":
        inputs["labels"] = input_ids
    elif labels == "masked":
        masked = torch.full_like(input_ids, -100)
        masked[:, ::3] = input_ids[:, ::3]
        inputs["labels"] = masked
    elif labels == "seq2seq":
        inputs["labels"] = torch.randint(3, VOCAB, (BATCH, SEQUENCE // 2))
    elif labels == "class":
        inputs["labels"] = torch.randint(0, 3, (BATCH,))
    return Workload(
        model=_without_dropout(model),
        inputs=inputs,
        loss=lambda out: out.loss,
        output=lambda out: out.logits,
    )


_NO_DROPOUT_GPT = {"resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0}
_NO_DROPOUT_BERT = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}
_SMALL_LLAMA = {"vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
                "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64}


def _gpt2() -> Workload:
    return _language_model("GPT2LMHeadModel", _config(
        "GPT2Config", vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=2, **_NO_DROPOUT_GPT))


def _gpt_neox() -> Workload:
    return _language_model("GPTNeoXForCausalLM", _config(
        "GPTNeoXConfig", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, tie_word_embeddings=False))


def _opt() -> Workload:
    return _language_model("OPTForCausalLM", _config(
        "OPTConfig", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, ffn_dim=64, num_attention_heads=2,
        max_position_embeddings=64, word_embed_proj_dim=32, dropout=0.0, attention_dropout=0.0))


def _llama() -> Workload:
    return _language_model("LlamaForCausalLM", _config("LlamaConfig", **_SMALL_LLAMA, tie_word_embeddings=True))


def _mistral() -> Workload:
    return _language_model("MistralForCausalLM", _config("MistralConfig", **_SMALL_LLAMA, sliding_window=8))


def _qwen2() -> Workload:
    return _language_model("Qwen2ForCausalLM", _config("Qwen2Config", **_SMALL_LLAMA))


def _mixtral() -> Workload:
    # A mixture of experts the way transformers runs one on CUDA: its default experts
    # implementation (grouped_mm) counts tokens per expert with histc on int32 ids on any device
    # but the CPU and MPS (on the CPU twin: on float ids), then multiplies each expert's tokens in
    # one grouped matmul.
    return _language_model("MixtralForCausalLM", _config(
        "MixtralConfig", **_SMALL_LLAMA, num_local_experts=4, num_experts_per_tok=2))


def _bert() -> Workload:
    return _language_model("BertForMaskedLM", _config(
        "BertConfig", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, **_NO_DROPOUT_BERT), labels="masked")


def _roberta() -> Workload:
    return _language_model("RobertaForSequenceClassification", _config(
        "RobertaConfig", vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, num_labels=3, **_NO_DROPOUT_BERT), labels="class")


def _distilbert() -> Workload:
    return _language_model("DistilBertForMaskedLM", _config(
        "DistilBertConfig", vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
        max_position_embeddings=64, dropout=0.0, attention_dropout=0.0), labels="masked")


def _t5() -> Workload:
    return _language_model("T5ForConditionalGeneration", _config(
        "T5Config", vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
        dropout_rate=0.0, decoder_start_token_id=0, tie_word_embeddings=True), labels="seq2seq")


def _bart() -> Workload:
    return _language_model("BartForConditionalGeneration", _config(
        "BartConfig", vocab_size=VOCAB, d_model=32, encoder_layers=2, decoder_layers=2,
        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
        max_position_embeddings=64, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0),
        labels="seq2seq")


def _hf_vit() -> Workload:
    import transformers

    config = _config("ViTConfig", image_size=IMAGE_SIZE, patch_size=16, hidden_size=32, num_hidden_layers=2,
                     num_attention_heads=2, intermediate_size=64, num_labels=CLASSES, **_NO_DROPOUT_BERT)
    labels = torch.randint(0, CLASSES, (IMAGE_BATCH,))
    return Workload(
        model=_without_dropout(transformers.ViTForImageClassification(config)),
        inputs={"pixel_values": torch.randn(IMAGE_BATCH, 3, IMAGE_SIZE, IMAGE_SIZE), "labels": labels},
        loss=lambda out: out.loss,
        output=lambda out: out.logits,
    )


CATALOGUE: tuple[ModelSpec, ...] = (
    # CNNs
    ModelSpec("torchvision.resnet18", "torchvision", CNN, _torchvision("resnet18"), ci=True),
    ModelSpec("torchvision.mobilenet_v3_small", "torchvision", CNN, _torchvision("mobilenet_v3_small")),
    ModelSpec("torchvision.efficientnet_b0", "torchvision", CNN, _torchvision("efficientnet_b0")),
    ModelSpec("torchvision.shufflenet_v2_x0_5", "torchvision", CNN, _torchvision("shufflenet_v2_x0_5")),
    ModelSpec("torchvision.squeezenet1_1", "torchvision", CNN, _torchvision("squeezenet1_1")),
    ModelSpec("torchvision.densenet", "torchvision", CNN, _torchvision_densenet),
    ModelSpec("timm.resnet10t", "timm", CNN, _timm("resnet10t")),
    ModelSpec("timm.convnext_atto", "timm", CNN, _timm("convnext_atto")),
    ModelSpec("timm.regnetx_002", "timm", CNN, _timm("regnetx_002")),
    ModelSpec("timm.mobilenetv3_small_050", "timm", CNN, _timm("mobilenetv3_small_050")),
    # Vision transformers
    ModelSpec("torchvision.vit", "torchvision", VISION_TRANSFORMER, _torchvision_vit),
    ModelSpec("torchvision.swin", "torchvision", VISION_TRANSFORMER, _torchvision_swin),
    ModelSpec("timm.vit_tiny", "timm", VISION_TRANSFORMER,
              _timm("vit_tiny_patch16_224", img_size=IMAGE_SIZE, patch_size=16, depth=2)),
    ModelSpec("transformers.vit", "transformers", VISION_TRANSFORMER, _hf_vit),
    # Language models: encoders, decoders, encoder-decoders
    ModelSpec("transformers.bert", "transformers", ENCODER, _bert, ci=True),
    ModelSpec("transformers.roberta", "transformers", ENCODER, _roberta),
    ModelSpec("transformers.distilbert", "transformers", ENCODER, _distilbert),
    ModelSpec("transformers.gpt2", "transformers", DECODER, _gpt2, ci=True),
    ModelSpec("transformers.gpt_neox", "transformers", DECODER, _gpt_neox),
    ModelSpec("transformers.opt", "transformers", DECODER, _opt),
    ModelSpec("transformers.llama", "transformers", DECODER, _llama),
    ModelSpec("transformers.mistral", "transformers", DECODER, _mistral),
    ModelSpec("transformers.qwen2", "transformers", DECODER, _qwen2),
    ModelSpec("transformers.mixtral", "transformers", DECODER, _mixtral),
    ModelSpec("transformers.t5", "transformers", ENCODER_DECODER, _t5, ci=True),
    ModelSpec("transformers.bart", "transformers", ENCODER_DECODER, _bart),
)

BY_NAME = {spec.name: spec for spec in CATALOGUE}
