"""Real models on the device: architectures from torchvision, timm and Hugging Face transformers
(random weights, small inputs, never the network), each checked against the CPU from the same
weights: forward + backward + an AdamW step (the output, every gradient by parameter name, tied
parameters), the forward under torch.compile (Inductor), forward + backward under torch.autocast,
and a compiled AMP training step. The backend's CPU-fallback calls are counted per model.

    python -m <package>.models                  # the CI subset
    python -m <package>.models --all            # the whole catalogue
    python -m <package>.models --models transformers.gpt2 --stages eager --json report.json
    python -m <package>.models --all --compare old.json

The model libraries are the package's `models` (transformers) and `vision` (torchvision, timm)
extras; a model whose library is not installed is reported as skipped, with the reason. Every
model runs in its own subprocess (`worker.py`), so a crash is recorded against it and the run goes
on. This package is device-name agnostic: `scaffold-backend init` copies it into every project.
"""
