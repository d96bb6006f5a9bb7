"""Draw the LLM Space icon with Pillow: a rounded indigo square with an orbit and a planet.

Writes `assets/llmspace.png` (512 px; Linux), `assets/llmspace.ico` (16–256 px; Windows),
`assets/llmspace.icns` (16–1024 px; macOS) and the window icons
`llmspace/assets/icons/llmspace-256.png` and `-64.png` (package data; the 256 px one is also
the Linux desktop-entry icon). Run by hand or by `build/llmspace.spec` when a file is
missing: `python build/make_icon.py`.
"""

from __future__ import annotations

from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent


def draw(size: int = 512) -> Image.Image:
    s = 4  # supersample
    n = size * s
    img = Image.new("RGBA", (n, n), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    top, bottom = (79, 70, 229), (14, 165, 233)
    for y in range(n):
        t = y / (n - 1)
        c = tuple(int(top[i] + (bottom[i] - top[i]) * t) for i in range(3))
        d.line([(0, y), (n, y)], fill=(*c, 255))
    mask = Image.new("L", (n, n), 0)
    ImageDraw.Draw(mask).rounded_rectangle([0, 0, n - 1, n - 1], radius=n // 5, fill=255)
    img.putalpha(mask)
    d = ImageDraw.Draw(img)
    w = n // 40
    d.ellipse([n * 0.14, n * 0.36, n * 0.86, n * 0.64], outline=(255, 255, 255, 230), width=w)
    r = n * 0.2
    d.ellipse([n / 2 - r, n / 2 - r, n / 2 + r, n / 2 + r], fill=(255, 255, 255, 255))
    r2 = n * 0.06
    cx, cy = n * 0.78, n * 0.4
    d.ellipse([cx - r2, cy - r2, cx + r2, cy + r2], fill=(250, 204, 21, 255))
    return img.resize((size, size), Image.LANCZOS)


def main() -> None:
    big = draw(512)
    (ROOT / "assets").mkdir(exist_ok=True)
    big.save(ROOT / "assets" / "llmspace.png")
    big.save(ROOT / "assets" / "llmspace.ico", sizes=[(16, 16), (32, 32), (48, 48), (64, 64), (128, 128), (256, 256)])
    draw(1024).save(ROOT / "assets" / "llmspace.icns")  # Pillow writes every size up to 512@2x
    icons = ROOT / "llmspace" / "assets" / "icons"
    icons.mkdir(parents=True, exist_ok=True)
    big.resize((256, 256), Image.LANCZOS).save(icons / "llmspace-256.png")
    big.resize((64, 64), Image.LANCZOS).save(icons / "llmspace-64.png")


if __name__ == "__main__":
    main()
