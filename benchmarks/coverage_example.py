"""The workload of the coverage example (docs/what-to-implement-next.md): a few training steps of a
small CNN on random data, then its top-5 accuracy, on the PrivateUse1 device. Not a benchmark:
a script to record, on foo or on any backend `scaffold-backend init` makes:

    python -m torch_foo.coverage --json coverage.json --markdown coverage.md benchmarks/coverage_example.py
    scaffold-backend adopt coverage.json --top 1 --dry-run

Most of its ops have kernels on foo (convolution, batch norm, pooling, linear, cross entropy, SGD).
Some have none, as a new backend's workloads have: the activation (`softplus` and its backward),
the inputs' normalisation (`std`), and the accuracy's `topk`, which foo's YAML sends to the CPU on
purpose (`fallback.explicit`). So its report has native, fallback and composite rows.
"""

from __future__ import annotations

import argparse

import torch
from torch import nn


def small_cnn(classes: int) -> nn.Module:
    def block(channels_in: int, channels_out: int) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(channels_in, channels_out, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels_out),
            nn.Softplus(),
            nn.MaxPool2d(2),
        )

    return nn.Sequential(block(3, 16), block(16, 32), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, classes))


def normalised(images: torch.Tensor) -> torch.Tensor:
    """Each image to zero mean and unit standard deviation."""
    return (images - images.mean(dim=(1, 2, 3), keepdim=True)) / images.std(dim=(1, 2, 3), keepdim=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--steps", type=int, default=2, help="training steps (default %(default)s)")
    parser.add_argument("--batch", type=int, default=8, help="images a step (default %(default)s)")
    parser.add_argument(
        "--device",
        default=torch._C._get_privateuse1_backend_name(),
        help="the device (default: the installed backend's, %(default)s)",
    )
    args = parser.parse_args()

    torch.manual_seed(0)
    classes = 10
    model = small_cnn(classes).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    images = torch.randn(args.steps, args.batch, 3, 32, 32)
    labels = torch.randint(0, classes, (args.steps, args.batch))
    for step in range(args.steps):
        x, y = images[step].to(args.device), labels[step].to(args.device)
        loss = nn.functional.cross_entropy(model(normalised(x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")

    model.eval()
    with torch.no_grad():
        logits = model(normalised(images[0].to(args.device)))
        top5 = logits.topk(5, dim=1).indices
        hits = (top5 == labels[0].to(args.device).unsqueeze(1)).any(dim=1)
    print(f"top-5 accuracy: {hits.float().mean().item():.3f}")


if __name__ == "__main__":
    main()
