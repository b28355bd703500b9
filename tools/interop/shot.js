// make check-interop: opens spark.html in headless Chromium (Debian's, SwiftShader WebGL) and
// saves the frame.   usage: node shot.js URL OUT.png W H
const puppeteer = require("puppeteer-core");
(async () => {
  const [url, out, w, h] = process.argv.slice(2);
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"],
  });
  try {
    const page = await browser.newPage();
    page.on("console", (m) => console.log("page:", m.text()));
    page.on("pageerror", (e) => console.log("page error:", e.message));
    await page.setViewport({ width: +w, height: +h, deviceScaleFactor: 1 });
    await page.goto(url, { waitUntil: "load" });
    await page.waitForFunction("window.__done || window.__error", { timeout: 120000, polling: 200 });
    const err = await page.evaluate("window.__error");
    if (err) throw new Error("the page failed: " + err);
    await page.screenshot({ path: out, clip: { x: 0, y: 0, width: +w, height: +h } });
  } finally {
    await browser.close();
  }
})().catch((e) => { console.error("shot.js:", e.message); process.exit(1); });
