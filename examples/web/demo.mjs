// The demo page's logic: picture -> 224x224 NCHW float32 tensor -> model.wasm -> top-5 + latency.
// ?image=URL classifies that picture at once (what the headless-Chromium check uses).
import { load, inputs } from "./model.mjs";

const SIZE = 224, MEAN = [0.485, 0.456, 0.406], STD = [0.229, 0.224, 0.225], TIMED_RUNS = 10;
const result = document.getElementById("result");
const canvas = document.getElementById("view");
const ctx = canvas.getContext("2d", { willReadFrequently: true });

// Draws the largest centred square of the picture into the 224x224 canvas and reads it back as
// (pixel / 255 - mean) / std per channel, planar (NCHW), as torchvision's models expect.
function tensorOf(bitmap) {
  const side = Math.min(bitmap.width, bitmap.height);
  ctx.drawImage(bitmap, (bitmap.width - side) / 2, (bitmap.height - side) / 2, side, side, 0, 0, SIZE, SIZE);
  const rgba = ctx.getImageData(0, 0, SIZE, SIZE).data;
  const x = new Float32Array(3 * SIZE * SIZE);
  for (let c = 0; c < 3; ++c)
    for (let i = 0; i < SIZE * SIZE; ++i) x[c * SIZE * SIZE + i] = (rgba[4 * i + c] / 255 - MEAN[c]) / STD[c];
  return x;
}

function softmax(logits) {
  const top = Math.max(...logits);
  const e = Array.from(logits, (v) => Math.exp(v - top));
  const sum = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / sum);
}

async function classify(model, labels, blob) {
  const bitmap = await createImageBitmap(blob, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  const x = tensorOf(bitmap);
  const [logits] = model.run(x);
  const ms = [];
  for (let r = 0; r < TIMED_RUNS; ++r) {
    const t0 = performance.now();
    model.run(x);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const probs = softmax(logits);
  const top5 = [...probs.keys()].sort((a, b) => probs[b] - probs[a]).slice(0, 5);
  result.textContent =
    "top-5:\n" + top5.map((k, r) => `${r + 1}. class ${k} p=${probs[k].toPrecision(6)} ${labels[k]}`).join("\n") +
    `\nlatency: ${ms[TIMED_RUNS >> 1].toFixed(2)} ms median of ${TIMED_RUNS} runs (WebAssembly)`;
  // One console line for check.mjs (headless Chromium prints the console on stderr).
  console.log(`nnvm-result top5=${top5.map((k) => `${k}:${probs[k].toPrecision(9)}`).join(",")} ` +
              `ms=${ms[TIMED_RUNS >> 1].toFixed(3)}`);
}

function report(e) {
  result.textContent = `error: ${e.message}`;
  console.log(`nnvm-error ${e.message}`);
}

try {
  if (inputs.length !== 1 || inputs[0].size !== 3 * SIZE * SIZE)
    throw new Error(`this page feeds one 1x3x${SIZE}x${SIZE} image; the model takes ${JSON.stringify(inputs)}`);
  const [model, labels] = await Promise.all([load(), fetch("labels.json").then((r) => r.json())]);
  result.textContent = "model loaded: pick a picture";
  const run = (blob) => classify(model, labels, blob).catch(report);
  document.getElementById("file").addEventListener("change", (e) => e.target.files[0] && run(e.target.files[0]));
  const url = new URLSearchParams(location.search).get("image");
  if (url) await run(await (await fetch(url)).blob());
} catch (e) {
  report(e);
}
