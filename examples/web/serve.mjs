// A static file server for the demo (browsers load ES modules and .wasm only over http):
//   node serve.mjs DIR [PORT]      (PORT 0 or none: any free port; prints the URL)
// check.mjs imports serve() to run the same server around headless Chromium.
import http from "http";
import fs from "fs";
import path from "path";
import { fileURLToPath } from "url";

const TYPES = { ".html": "text/html", ".mjs": "text/javascript", ".js": "text/javascript", ".wasm": "application/wasm",
                ".json": "application/json", ".png": "image/png", ".jpg": "image/jpeg" };

// Serves DIR on 127.0.0.1 only; resolves to the server once it listens (server.address().port).
export function serve(dir, port = 0) {
  const base = path.resolve(dir);
  const server = http.createServer((req, res) => {
    let file = path.join(base, decodeURIComponent(new URL(req.url, "http://localhost").pathname));
    if (file !== base && !file.startsWith(base + path.sep)) return res.writeHead(403).end();
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, "index.html");
    fs.readFile(file, (err, data) => {
      if (err) return res.writeHead(404).end();
      res.writeHead(200, { "Content-Type": TYPES[path.extname(file)] || "application/octet-stream" }).end(data);
    });
  });
  return new Promise((resolve) => server.listen(port, "127.0.0.1", () => resolve(server)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [dir, port = "0"] = process.argv.slice(2);
  if (!dir) {
    console.error("usage: node serve.mjs DIR [PORT]");
    process.exit(2);
  }
  const server = await serve(dir, Number(port));
  console.log(`open http://127.0.0.1:${server.address().port}/ (Ctrl-C stops)`);
}
