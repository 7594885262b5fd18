// The demo page's check: serves SITE_DIR, opens index.html?image=sample.png in headless Chromium,
// and compares the top-5 the page computes with PyTorch's (sample_top5.txt, make_sample.py).
//   node check.mjs SITE_DIR EXPECTED_TOP5   (NNVM_CHROMIUM: the browser, default chromium)
// The page reports on its console ("nnvm-result top5=K:P,... ms=M"), which Chromium prints on
// stderr with --enable-logging=stderr; the browser runs in real time, so the latency is real.
import { spawn } from "child_process";
import fs from "fs";
import { serve } from "./serve.mjs";

const [site, expectedFile] = process.argv.slice(2);
if (!site || !expectedFile) {
  console.error("usage: node check.mjs SITE_DIR EXPECTED_TOP5");
  process.exit(2);
}
const expected = fs.readFileSync(expectedFile, "utf8").trim().split("\n").map((l) => l.split(" ").map(Number));
const server = await serve(site);
const url = `http://127.0.0.1:${server.address().port}/index.html?image=sample.png`;
const browserPath = process.env.NNVM_CHROMIUM || "chromium";
const browser = spawn(browserPath, ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                    "--no-first-run", "--enable-logging=stderr", "--v=0", url]);
let log = "";
const line = await new Promise((resolve) => {
  const timer = setTimeout(() => resolve(null), 300000);
  browser.on("error", (e) => {
    console.error(`cannot start ${browserPath}: ${e.message}`);
    resolve(null);
  });
  browser.on("exit", () => resolve(null));
  browser.stderr.on("data", (chunk) => {
    log += chunk;
    const m = log.match(/nnvm-(result|error) ([^"\n]*)/);
    if (m) {
      clearTimeout(timer);
      resolve(m[0]);
    }
  });
});
browser.kill("SIGKILL");
server.close();
if (!line || line.startsWith("nnvm-error")) {
  console.error(`FAIL: the page ${line ? `reported: ${line}` : "reported nothing within 300 s"}\n${log.slice(-4000)}`);
  process.exit(1);
}
const got = line.match(/top5=(\S+)/)[1].split(",").map((p) => p.split(":").map(Number));
console.log(`the page (headless Chromium): ${line}`);
let ok = got.length === expected.length;
expected.forEach(([cls, p], r) => {
  const [gotCls, gotP] = got[r] ?? [NaN, NaN];
  const same = gotCls === cls && Math.abs(gotP - p) <= 1e-4 * p;
  console.log(`  rank ${r + 1}: PyTorch class ${cls} p=${p}, page class ${gotCls} p=${gotP} ${same ? "ok" : "DIFFERS"}`);
  ok &&= same;
});
console.log(`  latency in the page: ${line.match(/ms=(\S+)/)[1]} ms median of 10 runs`);
console.log(ok ? "PASS" : "FAIL");
process.exit(ok ? 0 : 1);
