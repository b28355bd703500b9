// make check-interop: clsplat's viewer page in headless Chromium (Debian's, SwiftShader WebGL2),
// served by `clsplat view` or `clsplat train --view`.
//   node viewer_check.js still URL OUT_DIR CAMERA...
//       waits for the model, checks the canvas is not blank and the dashboard's charts of the
//       training log are drawn, shows camera 0's photo, saves the page (OUT_DIR/page.png, and its
//       top as OUT_DIR/view.png), then draws each training CAMERA at its own
//       resolution (OUT_DIR/renders/<img_name>.png) for a PSNR against clsplat's render
//   node viewer_check.js live URL SECONDS
//       watches a training run for SECONDS: the model's iteration and the dashboard's loss
//       points must both grow
// Every request must go to the page's own server (no CDN); a script error fails the check.
const puppeteer = require("puppeteer-core");
const fs = require("fs");
const path = require("path");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function open(url, problems) {
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium", headless: true,
    args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"],
  });
  const page = await browser.newPage();
  const origin = new URL(url).origin;
  await page.setRequestInterception(true);
  page.on("request", (r) => {
    const u = r.url();
    if (u.startsWith(origin + "/") || u.startsWith("data:") || u.startsWith("blob:")) r.continue();
    else problems.push("request outside the server: " + u), r.abort();
  });
  page.on("pageerror", (e) => problems.push("script error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console: " + m.text()); });
  await page.setViewport({ width: 1280, height: 1400, deviceScaleFactor: 1 });
  await page.goto(url, { waitUntil: "load" });
  return { browser, page };
}

// loss points of the dashboard's first chart, and the number of drawn charts
const dashboard = (page) => page.evaluate(() => {
  const svgs = [...document.querySelectorAll("#dash svg")];
  const drawn = svgs.filter((s) => [...s.querySelectorAll("polyline")].some((p) => p.points.numberOfItems > 0)).length;
  const first = svgs[0] ? [...svgs[0].querySelectorAll("polyline")].reduce((n, p) => n + p.points.numberOfItems, 0) : 0;
  return { charts: svgs.length, drawn, lossPoints: first };
});

async function still(url, out, cams, problems) {
  const { browser, page } = await open(url, problems);
  try {
    await page.waitForFunction("window.clsplatView && (window.clsplatView.state.ready || window.clsplatView.state.error)",
                               { timeout: 120000, polling: 200 });
    await page.waitForFunction("(window.clsplatView.state.dashboards || 0) > 0", { timeout: 30000, polling: 200 });
    const state = await page.evaluate(() => window.clsplatView.state);
    if (state.error) problems.push("viewer: " + state.error);
    // not blank: the canvas's pixels vary (a blank canvas is the background alone)
    const spread = await page.evaluate(() => {
      const c = document.getElementById("gl"), g = document.createElement("canvas");
      g.width = c.width, g.height = c.height;
      const x = g.getContext("2d");
      x.drawImage(c, 0, 0);
      const d = x.getImageData(0, 0, g.width, g.height).data;
      let lo = 255, hi = 0, lit = 0;
      for (let i = 0; i < d.length; i += 4) {
        const v = d[i] + d[i + 1] + d[i + 2];
        lo = Math.min(lo, v), hi = Math.max(hi, v), lit += v > 30 ? 1 : 0;
      }
      return { lo, hi, lit: lit / (d.length / 4) };
    });
    const dash = await dashboard(page);
    fs.mkdirSync(path.join(out, "renders"), { recursive: true });
    console.log(`viewer page: ${state.count} Gaussians of iteration ${state.iteration}, ${state.cameras} cameras; ` +
                `canvas values ${spread.lo}..${spread.hi}, ${(100 * spread.lit).toFixed(1)}% lit; dashboard: ${dash.drawn} of ` +
                `${dash.charts} charts drawn`);
    if (!(state.count > 0 && spread.hi - spread.lo > 60 && spread.lit > 0.02)) problems.push("the canvas is blank");
    if (!(dash.charts === 10 && dash.drawn === 10)) problems.push("the dashboard's charts are not drawn");
    // a click on a camera: its photo is shown beside the render
    await page.evaluate(() => window.clsplatView.showPhoto(0));
    await page.waitForFunction("document.getElementById('photo').complete && document.getElementById('photo').naturalWidth > 0",
                               { timeout: 30000, polling: 200 });
    await sleep(300);
    await page.screenshot({ path: path.join(out, "page.png"), fullPage: true });
    await page.screenshot({ path: path.join(out, "view.png"), clip: { x: 0, y: 0, width: 1280, height: 860 } });
    const names = await page.evaluate(() => window.clsplatView.names());
    for (const cam of cams) {
      await page.evaluate((i) => window.clsplatView.viewFromCamera(i, true), +cam);
      const url64 = await page.evaluate(() => window.clsplatView.pixels());
      fs.writeFileSync(path.join(out, "renders", names[+cam] + ".png"), Buffer.from(url64.split(",")[1], "base64"));
    }
  } finally {
    await browser.close();
  }
}

// the distinct positive values of KEY among the samples
const distinct = (seen, key) => new Set(seen.map((q) => q[key]).filter((v) => v > 0));

async function live(url, seconds, problems) {
  const { browser, page } = await open(url, problems);
  try {
    const seen = [];
    for (let t = 0; t < seconds; t += 2) {
      await sleep(2000);
      const s = await page.evaluate(() => window.clsplatView ? window.clsplatView.state : {});
      const d = await dashboard(page);
      seen.push({ iteration: s.iteration, loads: s.loads, loss: d.lossPoints });
      /* stop as soon as both have changed: a loaded machine trains slowly, so the window is a limit */
      if (distinct(seen, "iteration").size >= 2 && distinct(seen, "loss").size >= 2) break;
    }
    const its = distinct(seen, "iteration"), loss = distinct(seen, "loss");
    console.log(`live page over ${2 * seen.length} s (at most ${seconds}): model iterations ${[...its].join(" ")}, ` +
                `loss points ${[...loss].join(" ")}`);
    if (its.size < 2) problems.push("the page did not see the model change during training");
    if (loss.size < 2) problems.push("the dashboard's plots did not update during training");
  } finally {
    await browser.close();
  }
}

(async () => {
  const [what, url, ...rest] = process.argv.slice(2);
  const problems = [];
  if (what === "still") await still(url, rest[0], rest.slice(1), problems);
  else if (what === "live") await live(url, +rest[0], problems);
  else throw new Error("usage: viewer_check.js still URL OUT_DIR CAMERA... | live URL SECONDS");
  if (problems.length) {
    console.log("viewer_check.js: " + problems.join("; "));
    process.exitCode = 1;
  }
})().catch((e) => { console.error("viewer_check.js:", e.message); process.exit(1); });
